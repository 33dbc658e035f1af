// Launch-configuration checks (kernels/launch_check.h): a launch within the typical
// limits of a compute 7.5-12.x GPU passes, and each limit, broken on its own, is refused
// with the kernel, the device, the offending value, the limit and the whole configuration
// in the message, cudaErrorInvalidConfiguration as the error name (for grid, block and
// shared memory) and a hint. And, from the sources: every kernel launch in
// kernels/cuda/*.cu is preceded by its check, so a new kernel cannot skip it.
#define _POSIX_C_SOURCE 200809L

#include <dirent.h>
#include <stdint.h>
#include <stdlib.h>

#include "check.h"
#include "kernels/launch_check.h"

static LaunchLimits typical(void) {
    LaunchLimits limits;
    launch_limits_typical(&limits);
    return limits;
}

// 256 threads over 1000 blocks, 0 shared bytes, a million elements indexed with int.
static LaunchConfig plain_config(void) {
    LaunchConfig config = {.kernel = "test_kernel",
                           .grid = {1000, 1, 1},
                           .block = {256, 1, 1},
                           .shared_bytes = 0,
                           .elements = 1000000,
                           .index_bits = 32};
    return config;
}

static void typical_limits_are_those_of_current_gpus(void) {
    LaunchLimits limits = typical();
    CHECK_INT_EQ(limits.max_threads_per_block, 1024);
    CHECK_INT_EQ(limits.max_block_dim[0], 1024);
    CHECK_INT_EQ(limits.max_block_dim[1], 1024);
    CHECK_INT_EQ(limits.max_block_dim[2], 64);
    CHECK_INT_EQ(limits.max_grid_dim[0], 2147483647);
    CHECK_INT_EQ(limits.max_grid_dim[1], 65535);
    CHECK_INT_EQ(limits.max_grid_dim[2], 65535);
    CHECK_INT_EQ(limits.max_shared_per_block, 49152);
    CHECK(strcmp(limits.device, "cuda (typical)") == 0);
}

// Configurations at the edge of every limit, and the shapes our kernels use, all pass
// and leave the status untouched.
static void launches_within_the_limits_pass(void) {
    LaunchLimits limits = typical();
    LaunchConfig valid[12];
    int count = 0;
    valid[count++] = plain_config();
    LaunchConfig c = plain_config();
    c.grid[0] = 2147483647u;                     // the largest grid.x
    valid[count++] = c;
    c = plain_config();
    c.grid[0] = 65535, c.grid[1] = 65535, c.grid[2] = 65535;
    valid[count++] = c;
    c = plain_config();
    c.block[0] = 1024;                           // the most threads, along x
    valid[count++] = c;
    c = plain_config();
    c.block[0] = 1, c.block[1] = 1024;           // ... along y
    valid[count++] = c;
    c = plain_config();
    c.block[0] = 16, c.block[1] = 1, c.block[2] = 64;  // the deepest block
    valid[count++] = c;
    c = plain_config();
    c.block[0] = 32, c.block[1] = 32;            // 1024 threads as a product
    valid[count++] = c;
    c = plain_config();
    c.shared_bytes = 49152;                      // all the shared memory there is
    valid[count++] = c;
    c = plain_config();
    c.elements = 2147483647u;                    // the last element an int reaches
    valid[count++] = c;
    c = plain_config();
    c.elements = (size_t)1 << 40;                // a size_t index reaches anything
    c.index_bits = 64;
    valid[count++] = c;
    c = plain_config();
    c.elements = 0;
    valid[count++] = c;
    for (int i = 0; i < count; i++) {
        Status st;
        status_clear(&st);
        int rc = launch_check(&limits, &valid[i], &st);
        if (rc != 0) fprintf(stderr, "config %d refused: %s (%s)\n", i, st.message, st.hint);
        CHECK_INT_EQ(rc, 0);
        CHECK_INT_EQ(st.code, STATUS_OK);
        CHECK(st.message[0] == '\0' && st.error_name[0] == '\0');
    }
}

// One limit broken: the check refuses it with `needles` in the message.
typedef struct Violation {
    const char *what;
    LaunchConfig config;
    const char *needles[3];  // the value, the limit, the dimension (NULL: none)
} Violation;

static void expect_refused(const LaunchLimits *limits, const Violation *v, int invalid_config) {
    Status st;
    status_clear(&st);
    int rc = launch_check(limits, &v->config, &st);
    if (rc == 0) {
        fprintf(stderr, "%s: accepted\n", v->what);
        test_failures++;
        return;
    }
    CHECK_INT_EQ(rc, STATUS_RUNTIME_ERROR);
    CHECK_INT_EQ(st.code, STATUS_RUNTIME_ERROR);
    CHECK_CONTAINS(st.message, "test_kernel");
    CHECK_CONTAINS(st.message, limits->device);
    for (int i = 0; i < 3 && v->needles[i]; i++) CHECK_CONTAINS(st.message, v->needles[i]);
    // The whole configuration, whichever part of it is wrong.
    char grid[64], block[64];
    snprintf(grid, sizeof grid, "grid (%u,%u,%u)", v->config.grid[0], v->config.grid[1],
             v->config.grid[2]);
    snprintf(block, sizeof block, "block (%u,%u,%u)", v->config.block[0], v->config.block[1],
             v->config.block[2]);
    CHECK_CONTAINS(st.message, grid);
    CHECK_CONTAINS(st.message, block);
    CHECK_CONTAINS(st.message, "bytes of shared memory");
    CHECK(st.hint[0] != '\0');
    CHECK_CONTAINS(st.hint, "report it");
    if (invalid_config) CHECK(strcmp(st.error_name, "cudaErrorInvalidConfiguration") == 0);
    else CHECK(st.error_name[0] == '\0');
}

static void each_grid_and_block_limit_is_refused(void) {
    LaunchLimits limits = typical();
    Violation v[12];
    int count = 0;
    for (int axis = 0; axis < 3; axis++) {
        static const char *grid_names[] = {"grid.x", "grid.y", "grid.z"};
        static const char *block_names[] = {"block.x", "block.y", "block.z"};
        static const char *grid_over[] = {"2147483648", "65536", "65536"};
        static const char *grid_limit[] = {"2147483647", "65535", "65535"};
        static const char *block_over[] = {"1025", "1025", "65"};
        static const char *block_limit[] = {"1024", "1024", "64"};
        Violation g = {grid_names[axis], plain_config(),
                       {grid_over[axis], grid_limit[axis], grid_names[axis]}};
        g.config.grid[axis] = (unsigned)strtoul(grid_over[axis], NULL, 10);
        v[count++] = g;
        Violation b = {block_names[axis], plain_config(),
                       {block_over[axis], block_limit[axis], block_names[axis]}};
        // One thread along the other axes, so only this dimension's limit is broken.
        b.config.block[0] = b.config.block[1] = b.config.block[2] = 1;
        b.config.block[axis] = (unsigned)strtoul(block_over[axis], NULL, 10);
        v[count++] = b;
        // CUDA rejects a 0 anywhere; so do we, before the GPU sees it.
        Violation zg = {"zero grid", plain_config(), {grid_names[axis], "is 0", "minimum of 1"}};
        zg.config.grid[axis] = 0;
        v[count++] = zg;
        Violation zb = {"zero block", plain_config(),
                        {block_names[axis], "is 0", "minimum of 1"}};
        zb.config.block[axis] = 0;
        v[count++] = zb;
    }
    for (int i = 0; i < count; i++) expect_refused(&limits, &v[i], 1);
}

static void threads_per_block_and_shared_memory_are_refused(void) {
    LaunchLimits limits = typical();
    // Every dimension within its own limit, the product over 1024.
    Violation threads = {"threads", plain_config(), {"2048 threads", "limit of 1024", NULL}};
    threads.config.block[0] = 32, threads.config.block[1] = 32, threads.config.block[2] = 2;
    expect_refused(&limits, &threads, 1);
    Violation wide = {"wide", plain_config(), {"1048576 threads", "1024", NULL}};
    wide.config.block[0] = 1024, wide.config.block[1] = 1024;
    expect_refused(&limits, &wide, 1);
    Violation shared = {"shared", plain_config(), {"49153 bytes", "limit of 49152", NULL}};
    shared.config.shared_bytes = 49153;
    expect_refused(&limits, &shared, 1);
}

static void element_counts_past_a_32_bit_index_are_refused(void) {
    LaunchLimits limits = typical();
    Violation v = {"elements", plain_config(), {"2147483648 elements", "2147483647", "32-bit"}};
    v.config.elements = (size_t)2147483648u;
    expect_refused(&limits, &v, 0);
    Status st;
    status_clear(&st);
    launch_check(&limits, &v.config, &st);
    CHECK_CONTAINS(st.hint, "the tensor has 2147483648 elements, more than a 32-bit index "
                            "reaches; lower --batch");
}

// The device's own limits, not the typical ones, are what a launch is held to, and the
// first violation found is the one reported.
static void the_devices_limits_apply(void) {
    LaunchLimits limits = typical();
    limits.max_shared_per_block = 1024;
    limits.max_grid_dim[1] = 100;
    snprintf(limits.device, sizeof limits.device, "cuda:3");
    LaunchConfig c = plain_config();
    c.shared_bytes = 2048;
    Status st;
    status_clear(&st);
    CHECK_INT_EQ(launch_check(&limits, &c, &st), STATUS_RUNTIME_ERROR);
    CHECK_CONTAINS(st.message, "launch of test_kernel on cuda:3");
    CHECK_CONTAINS(st.message, "2048 bytes of shared memory per block");
    CHECK_CONTAINS(st.message, "limit of 1024");
    c.grid[1] = 101;
    status_clear(&st);
    CHECK_INT_EQ(launch_check(&limits, &c, &st), STATUS_RUNTIME_ERROR);
    CHECK_CONTAINS(st.message, "grid.y is 101, above the device's limit of 100");
}

// ---- every launch in the CUDA sources is checked -----------------------------------

#define MAX_LINES 4096
#define CHECK_WINDOW 8  // lines above a launch in which its check must be

static int ends_with(const char *s, const char *suffix) {
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

// The kernel launched on `line`: the identifier just before "<<<", template arguments
// dropped ("activation_forward_kernel<K><<<" -> "activation_forward_kernel").
static void launched_kernel(const char *line, const char *launch, char *name, size_t size) {
    const char *end = launch;
    if (end > line && end[-1] == '>') {  // template arguments: skip back to their '<'
        int depth = 0;
        while (end > line) {
            end--;
            if (*end == '>') depth++;
            else if (*end == '<' && --depth == 0) break;
        }
    }
    const char *start = end;
    while (start > line && (start[-1] == '_' || (start[-1] >= 'a' && start[-1] <= 'z') ||
                            (start[-1] >= 'A' && start[-1] <= 'Z') ||
                            (start[-1] >= '0' && start[-1] <= '9')))
        start--;
    size_t n = (size_t)(end - start) < size - 1 ? (size_t)(end - start) : size - 1;
    memcpy(name, start, n);
    name[n] = '\0';
}

// The second argument of the CUDA_CHECK_CONFIG( or CUDA_CHECK_LAUNCH( call on `line` when
// it is a variable, not a quoted name: a launch helper checks under the name its caller
// gives it. "" otherwise.
static void forwarded_name(const char *line, const char *call, char *name, size_t size) {
    name[0] = '\0';
    const char *p = strstr(line, call);
    if (!p) return;
    p += strlen(call);
    if (strcmp(call, "CUDA_CHECK_CONFIG(") == 0) {
        p = strchr(p, ',');
        if (!p) return;
        p++;
    }
    while (*p == ' ') p++;
    size_t n = strspn(p, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_");
    if (n == 0 || n >= size) return;
    memcpy(name, p, n);
    name[n] = '\0';
}

// A launch checked under a variable's name passes when that variable is what both the
// check before and the result check after it use; then every call that gives a helper a
// kernel's name must pass that same kernel beside it ("mse_backward_kernel",
// mse_backward_kernel), on its line or the next. The number of calls that do not.
static int misnamed_kernels_in(char lines[][256], int count, const char *path, int report) {
    int wrong = 0;
    for (int i = 0; i < count; i++) {
        if (strstr(lines[i], "CUDA_CHECK_CONFIG(") || strstr(lines[i], "CUDA_CHECK_LAUNCH("))
            continue;
        for (const char *q = strchr(lines[i], '"'); q; q = strchr(q + 1, '"')) {
            const char *close = strchr(q + 1, '"');
            if (!close) break;
            size_t n = (size_t)(close - q - 1);
            char name[128];
            if (n < 8 || n >= sizeof name || strncmp(close - 7, "_kernel", 7) != 0) {
                q = close;
                continue;
            }
            memcpy(name, q + 1, n);
            name[n] = '\0';
            const char *after = strstr(close + 1, name);
            if (!after && i + 1 < count) after = strstr(lines[i + 1], name);
            if (!after) {
                if (report)
                    fprintf(stderr, "%s:%d: \"%s\" names a kernel that is not passed beside it\n",
                            path, i + 1, name);
                wrong++;
            }
            q = close;
        }
    }
    return wrong;
}

// Scans one file: *launches counts its kernel launches, and the return value those
// without a check (each reported on stderr when `report`). -1 when unreadable.
static int unchecked_launches_in(const char *path, int *launches, int report) {
    *launches = 0;
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "%s: cannot open\n", path);
        return -1;
    }
    static char lines[MAX_LINES][256];
    int count = 0;
    while (count < MAX_LINES && fgets(lines[count], sizeof lines[count], f)) count++;
    fclose(f);
    CHECK(count < MAX_LINES);
    int unchecked = 0, previous_launch = -1, forwarded = 0;
    for (int i = 0; i < count; i++) {
        const char *launch = strstr(lines[i], "<<<");
        const char *comment = strstr(lines[i], "//");
        if (!launch || (comment && comment < launch)) continue;
        (*launches)++;
        char kernel[128], quoted[132], variable[128] = "";
        launched_kernel(lines[i], launch, kernel, sizeof kernel);
        snprintf(quoted, sizeof quoted, "\"%s\"", kernel);
        // CUDA_CHECK_CONFIG naming this kernel (or a variable holding its name), in the few
        // lines above and after the previous launch (each launch has its own check).
        int first = i - CHECK_WINDOW > previous_launch + 1 ? i - CHECK_WINDOW : previous_launch + 1;
        int checked = 0;
        for (int j = first; j < i && !checked; j++) {
            if (!strstr(lines[j], "CUDA_CHECK_CONFIG(")) continue;
            for (int k = j; k < i && !checked; k++) checked = strstr(lines[k], quoted) != NULL;
            if (!checked) forwarded_name(lines[j], "CUDA_CHECK_CONFIG(", variable, sizeof variable);
            checked = checked || variable[0];
        }
        // And the launch's own result checked after it, as before.
        int reported = 0;
        for (int j = i + 1; j < count && j <= i + CHECK_WINDOW && !reported; j++) {
            char after[128];
            forwarded_name(lines[j], "CUDA_CHECK_LAUNCH(", after, sizeof after);
            reported = strstr(lines[j], "CUDA_CHECK_LAUNCH(") &&
                       (strstr(lines[j], quoted) || (variable[0] && !strcmp(after, variable)));
        }
        forwarded += variable[0] != 0;
        if (!checked || !reported || !kernel[0]) {
            if (report)
                fprintf(stderr, "%s:%d: the launch of '%s' %s\n", path, i + 1, kernel,
                        !checked ? "has no CUDA_CHECK_CONFIG naming it in the lines above"
                                 : "has no CUDA_CHECK_LAUNCH naming it in the lines below");
            unchecked++;
        }
        previous_launch = i;
    }
    if (forwarded) unchecked += misnamed_kernels_in(lines, count, path, report);
    return unchecked;
}

// kernels/cuda/*.cu, but for the lab's kernels, which launch bad configurations on
// purpose (cuda_lab.cu; kernels/cuda/lab/ is a folder, which this does not descend into).
static void every_cuda_launch_is_checked(void) {
    const char *folder = TRAINER_SOURCE_DIR "/kernels/cuda";
    DIR *dir = opendir(folder);
    if (!dir) {
        fprintf(stderr, "%s: cannot open\n", folder);
        test_failures++;
        return;
    }
    int files = 0, launches = 0;
    struct dirent *entry;
    while ((entry = readdir(dir))) {
        if (!ends_with(entry->d_name, ".cu") || strcmp(entry->d_name, "cuda_lab.cu") == 0)
            continue;
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", folder, entry->d_name);
        int in_file = 0;
        CHECK_INT_EQ(unchecked_launches_in(path, &in_file, 1), 0);
        launches += in_file;
        files++;
    }
    closedir(dir);
    fprintf(stderr, "%d kernel launches in %d files under %s\n", launches, files, folder);
    // The backend had 26 launches in 10 files when this test was written: a scan that
    // finds far fewer has lost its way, and would pass for the wrong reason.
    CHECK(files >= 8);
    CHECK(launches >= 20);
}

// The scan itself: it finds an unchecked launch, and the name of a templated kernel.
static void the_scan_finds_an_unchecked_launch(void) {
    char path[] = "/tmp/test_launch_check_XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    if (fd < 0) return;
    FILE *f = fdopen(fd, "w");
    fputs("static int ok(Status *st) {\n"
          "    CUDA_CHECK_CONFIG(ctx, \"good_kernel\", grid, 256, 0, n, 64);\n"
          "    good_kernel<K><<<grid, 256, 0, stream>>>(x);\n"
          "    CUDA_CHECK_LAUNCH(\"good_kernel\");\n"
          "    // a comment about <<<launches>>>\n"
          "    bad_kernel<<<grid, 256, 0, stream>>>(x);\n"
          "    CUDA_CHECK_LAUNCH(\"bad_kernel\");\n"
          "}\n",
          f);
    fclose(f);
    int launches = 0;
    CHECK_INT_EQ(unchecked_launches_in(path, &launches, 0), 1);
    CHECK_INT_EQ(launches, 2);
    remove(path);
    // A helper that checks under its caller's name, and callers that pass the kernel they
    // name, but for one.
    snprintf(path, sizeof path, "/tmp/test_launch_check_XXXXXX");
    fd = mkstemp(path);
    CHECK(fd >= 0);
    if (fd < 0) return;
    f = fdopen(fd, "w");
    fputs("static int launch(const char *name, Kernel kernel, Status *st) {\n"
          "    CUDA_CHECK_CONFIG(ctx, name, grid, 256, 0, n, 64);\n"
          "    kernel<<<grid, 256, 0, stream>>>(x);\n"
          "    CUDA_CHECK_LAUNCH(name);\n"
          "}\n"
          "    launch(\"left_kernel\", left_kernel, st);\n"
          "    launch(\"right_kernel\",\n"
          "           right_kernel, st);\n"
          "    launch(\"up_kernel\", left_kernel, st);\n",
          f);
    fclose(f);
    CHECK_INT_EQ(unchecked_launches_in(path, &launches, 0), 1);
    CHECK_INT_EQ(launches, 1);
    remove(path);
    char name[64];
    const char *line = "    activation_forward_kernel<K><<<grid, 256>>>(x);";
    launched_kernel(line, strstr(line, "<<<"), name, sizeof name);
    CHECK(strcmp(name, "activation_forward_kernel") == 0);
}

// What `trainer lab bad-launch` accepts from the runtime for a 2048-thread block: CUDA 12's
// cudaErrorInvalidConfiguration (9) and CUDA 13's cudaErrorInvalidValue (1, seen on an
// H100), nothing else.
static void both_cuda_answers_to_a_bad_block_are_accepted(void) {
    CHECK(launch_error_is_bad_configuration(9));
    CHECK(launch_error_is_bad_configuration(1));
    CHECK(!launch_error_is_bad_configuration(0));
    CHECK(!launch_error_is_bad_configuration(2));    // out of memory
    CHECK(!launch_error_is_bad_configuration(209));  // no kernel image
}

int main(void) {
    both_cuda_answers_to_a_bad_block_are_accepted();
    typical_limits_are_those_of_current_gpus();
    launches_within_the_limits_pass();
    each_grid_and_block_limit_is_refused();
    threads_per_block_and_shared_memory_are_refused();
    element_counts_past_a_32_bit_index_are_refused();
    the_devices_limits_apply();
    every_cuda_launch_is_checked();
    the_scan_finds_an_unchecked_launch();
    return test_exit_code("test_launch_check");
}

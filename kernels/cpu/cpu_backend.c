#define _DEFAULT_SOURCE  // sysconf's _SC_PHYS_PAGES
#include <cblas.h>
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>
#if defined(__SSE__)
#include <xmmintrin.h>
#endif

#include "kernels/cpu/cpu_ops.h"

// 64-byte alignment: a cache line, and what AVX-512 loads want.
enum { CPU_ALIGNMENT = 64 };

// ---- what the host can still give ---------------------------------------------------------
// Linux overcommits: malloc of more than is free succeeds, and the process is killed
// (SIGKILL, nothing saved, no message) when it first touches pages the host does not have.
// `trainer bench conv --device cpu --batch 100000` grew to 24 GB that way and was killed.
// So a large allocation is first held against what the host reports it can give, and its
// pages are touched at once, so that the next check's figure already counts them. A
// refusal is then an out-of-memory status like a GPU's, which the allocator, `bench` and
// training's micro-batching already act on.

enum {
    // Below this, reading /proc costs more than what one allocation could add; the
    // allocator caches blocks, so training asks the host for memory a few hundred times.
    CPU_CHECKED_BYTES = 1 << 20,
    CPU_HOST_MARGIN = 64 << 20,  // MemAvailable is an estimate: leave the host some slack
    CPU_PAGE_STRIDE = 4096,
    CPU_FILE_TEXT = 8192,
};

// The number after `key` at the start of a line of `text` ("MemAvailable:   123 kB"),
// times `unit`, into *out: 1, or 0 when no line has it.
static int text_number(const char *text, const char *key, size_t unit, size_t *out) {
    size_t key_length = strlen(key);
    for (const char *line = text; line && *line;) {
        const char *next = strchr(line, '\n');
        if (strncmp(line, key, key_length) != 0) {
            line = next ? next + 1 : NULL;
            continue;
        }
        char *end;
        errno = 0;
        unsigned long long n = strtoull(line + key_length, &end, 10);
        if (end == line + key_length || errno) return 0;
        *out = n > SIZE_MAX / unit ? SIZE_MAX : (size_t)n * unit;
        return 1;
    }
    return 0;
}

size_t cpu_available_memory_from(const char *meminfo, const char *const (*levels)[3],
                                 int level_count) {
    size_t best = SIZE_MAX, available = 0, swap_free = 0;
    if (meminfo && (text_number(meminfo, "MemAvailable:", 1024, &available) ||
                    text_number(meminfo, "MemFree:", 1024, &available))) {
        text_number(meminfo, "SwapFree:", 1024, &swap_free);
        best = available > SIZE_MAX - swap_free ? SIZE_MAX : available + swap_free;
    }
    // Each cgroup level's limit less what the level holds, page cache aside: the kernel
    // reclaims that before it kills. "max" (v2) or a huge number (v1) is no limit.
    for (int i = 0; i < level_count; i++) {
        const char *limit_text = levels[i][0], *usage_text = levels[i][1];
        size_t limit = 0, usage = 0, cache = 0;
        if (!limit_text || !usage_text || !text_number(limit_text, "", 1, &limit) ||
            !text_number(usage_text, "", 1, &usage))
            continue;
        if (levels[i][2] && !text_number(levels[i][2], "file ", 1, &cache))
            text_number(levels[i][2], "total_cache ", 1, &cache);
        size_t held = usage > cache ? usage - cache : 0;
        size_t room = limit > held ? limit - held : 0;
        if (room < best) best = room;
    }
    return best;
}

// The file's first CPU_FILE_TEXT - 1 bytes as text in `buffer`, or NULL.
static const char *read_text(const char *path, char *buffer) {
    FILE *f = fopen(path, "r");
    if (!f) return NULL;
    size_t n = fread(buffer, 1, CPU_FILE_TEXT - 1, f);
    fclose(f);
    buffer[n] = '\0';
    return n ? buffer : NULL;
}

enum { CPU_CGROUP_LEVELS = 16, CPU_CGROUP_PATH = 1024 };

// Whether the comma-separated `list` names `name`.
static int list_has(const char *list, const char *name) {
    size_t length = strlen(name);
    for (const char *p = list; p; p = strchr(p, ','), p = p ? p + 1 : NULL)
        if (strncmp(p, name, length) == 0 && (p[length] == ',' || p[length] == '\0')) return 1;
    return 0;
}

// This process's memory cgroup levels, innermost first, as folders: v1's memory controller
// ("4:memory:/a/b" in /proc/self/cgroup) where there is one, else v2's unified hierarchy
// ("0::/a/b"). Inside a container the path is usually "/", the container's own level.
static int cgroup_folders(char folders[CPU_CGROUP_LEVELS][CPU_CGROUP_PATH], int *v1) {
    char text[CPU_FILE_TEXT], path[CPU_CGROUP_PATH] = "";
    if (!read_text("/proc/self/cgroup", text)) return 0;
    const char *root = NULL;
    for (char *line = text; line && *line;) {
        char *next = strchr(line, '\n');
        if (next) *next++ = '\0';
        char *controllers = strchr(line, ':');
        char *own = controllers ? strchr(controllers + 1, ':') : NULL;
        if (own) {
            *own++ = '\0';
            controllers++;
            int unified = controllers[0] == '\0', memory = list_has(controllers, "memory");
            if ((memory || (unified && !root)) && strlen(own) < sizeof path) {
                snprintf(path, sizeof path, "%s", own);
                root = memory ? "/sys/fs/cgroup/memory" : "/sys/fs/cgroup";
                *v1 = memory;
            }
        }
        line = next;
    }
    if (!root || path[0] != '/') return 0;
    int count = 0;
    for (;;) {
        int n = snprintf(folders[count], CPU_CGROUP_PATH, "%s%s", root,
                         strcmp(path, "/") == 0 ? "" : path);
        if (n > 0 && n < CPU_CGROUP_PATH) count++;
        if (strcmp(path, "/") == 0 || count == CPU_CGROUP_LEVELS) break;
        char *slash = strrchr(path, '/');
        if (slash == path) slash[1] = '\0';
        else *slash = '\0';
    }
    return count;
}

size_t cpu_host_available_memory(void) {
    char meminfo[CPU_FILE_TEXT], folders[CPU_CGROUP_LEVELS][CPU_CGROUP_PATH];
    size_t best = cpu_available_memory_from(read_text("/proc/meminfo", meminfo), NULL, 0);
    int v1 = 0, count = cgroup_folders(folders, &v1);
    static const char *const names[2][3] = {
        {"memory.max", "memory.current", "memory.stat"},
        {"memory.limit_in_bytes", "memory.usage_in_bytes", "memory.stat"}};
    // A level at a time: three small files each, read into the one set of buffers.
    for (int i = 0; i < count; i++) {
        char texts[3][CPU_FILE_TEXT];
        const char *level[1][3];
        for (int f = 0; f < 3; f++) {
            char path[CPU_CGROUP_PATH + 32];
            int n = snprintf(path, sizeof path, "%s/%s", folders[i], names[v1][f]);
            level[0][f] = n > 0 && (size_t)n < sizeof path ? read_text(path, texts[f]) : NULL;
        }
        size_t room = cpu_available_memory_from(NULL, (const char *const(*)[3])level, 1);
        if (room < best) best = room;
    }
    return best;
}

// What to do about either refusal below: the same two ways out.
static int host_memory_hint(StatusCode code, Status *st) {
    status_hint(st, "lower --batch (or bench's --batch, --bytes), or free host memory that "
                    "other processes hold");
    return code;
}

// Refuses `bytes` the host cannot give; 0 when it can, or when it cannot tell.
static int host_room_check(size_t bytes, const char *what, StatusCode code, Status *st) {
    if (bytes < CPU_CHECKED_BYTES) return 0;
    size_t available = cpu_host_available_memory();
    if (available == SIZE_MAX) return 0;
    size_t usable = available > CPU_HOST_MARGIN ? available - CPU_HOST_MARGIN : 0;
    if (bytes <= usable) return 0;
    const double mib = 1024.0 * 1024.0;
    status_fail(st, code, "cpu: %s of %.1f MiB, but the host can give %.1f MiB (MemAvailable "
                "and free swap, within any memory cgroup's limit) and keeps %d MiB of it", what,
                (double)bytes / mib, (double)available / mib, CPU_HOST_MARGIN >> 20);
    return host_memory_hint(code, st);
}

// A checked allocation's pages, faulted in now (why: above).
static void touch_pages(void *p, size_t bytes) {
    if (bytes < CPU_CHECKED_BYTES) return;
    volatile char *c = p;
    for (size_t i = 0; i < bytes; i += CPU_PAGE_STRIDE) c[i] = 0;
}

// Host memory for the backend: 64-byte aligned, held against what the host can give, its
// pages used at once (above). `what` names it in messages; `code` is the failure's.
static int host_alloc(size_t bytes, const char *what, StatusCode code, void **ptr,
                      Status *st) {
    *ptr = NULL;
    TRY(host_room_check(bytes, what, code, st));
    size_t rounded = (bytes + CPU_ALIGNMENT - 1) / CPU_ALIGNMENT * CPU_ALIGNMENT;
    *ptr = aligned_alloc(CPU_ALIGNMENT, rounded ? rounded : CPU_ALIGNMENT);
    if (!*ptr) {
        status_fail(st, code, "cpu: no host memory for %s of %zu bytes: %s", what, bytes,
                    strerror(errno));
        return host_memory_hint(code, st);
    }
    touch_pages(*ptr, rounded);
    return 0;
}

static int cpu_raw_alloc(const Backend *b, size_t bytes, void **ptr, Status *st) {
    return host_alloc(bytes, "an allocation", STATUS_OUT_OF_MEMORY, ptr, st);
}

static void cpu_raw_free(const Backend *b, void *ptr) { free(ptr); }

static size_t cpu_total_memory(const Backend *b) {
    long pages = sysconf(_SC_PHYS_PAGES), page_size = sysconf(_SC_PAGESIZE);
    return pages > 0 && page_size > 0 ? (size_t)pages * (size_t)page_size : 0;
}

static int cpu_copy(const Backend *b, void *dst, const void *src, size_t bytes, Status *st) {
    if (bytes) memmove(dst, src, bytes);
    return 0;
}

static int cpu_fill(const Backend *b, float *x, float value, size_t n, Status *st) {
    if (value == 0.0f) {
        memset(x, 0, n * sizeof *x);
    } else {
        for (size_t i = 0; i < n; i++) x[i] = value;
    }
    return 0;
}

static int cpu_synchronize(const Backend *b, Status *st) { return 0; }

// The CPU's "device" is host memory and its copies are memmove, finished on return: a
// pinned buffer is ordinary memory and its fence is always passed.
static int cpu_pinned_alloc(const Backend *b, size_t bytes, void **ptr, Status *st) {
    return host_alloc(bytes, "a staging buffer", STATUS_RUNTIME_ERROR, ptr, st);
}

static void cpu_pinned_free(const Backend *b, void *ptr) { free(ptr); }

static int cpu_pinned_fence(const Backend *b, void *ptr, Status *st) { return 0; }

static int cpu_pinned_wait(const Backend *b, void *ptr, Status *st) { return 0; }

// A CPU op has finished when it returns (OpenBLAS and our thread pool join before
// returning), so the clock read when the mark is placed is when the work before it ended.
static int cpu_timer_create(const Backend *b, void **timer, Status *st) {
    *timer = calloc(1, sizeof(struct timespec));
    if (!*timer) return status_out_of_host_memory(st, sizeof(struct timespec), "for a timer");
    return 0;
}

static int cpu_timer_record(const Backend *b, void *timer, Status *st) {
    clock_gettime(CLOCK_MONOTONIC, (struct timespec *)timer);
    return 0;
}

static int cpu_timer_elapsed(const Backend *b, void *start, void *end, double *ms, Status *st) {
    const struct timespec *t0 = start, *t1 = end;
    *ms = (double)(t1->tv_sec - t0->tv_sec) * 1e3 + (double)(t1->tv_nsec - t0->tv_nsec) * 1e-6;
    return 0;
}

static void cpu_timer_destroy(const Backend *b, void *timer) { free(timer); }

// Storage in f32, bf16 and f16 in either layout; GEMMs and convolutions in f32 only.
static int cpu_supports(const Backend *b, OpFamily family, DType dtype, Layout layout) {
    return backend_supports_on(0, family, dtype, layout);
}

// The memory, pinned-buffer and timer ops live here; each math family fills its own slots
// from its file (cpu_ops.h). make_current and range_push/pop stay NULL: one device, no
// profiler. The three copies are one memmove on the CPU.
static void cpu_register_memory_ops(Backend *table) {
    table->supports = cpu_supports;
    table->raw_alloc = cpu_raw_alloc;
    table->raw_free = cpu_raw_free;
    table->total_memory = cpu_total_memory;
    table->copy_to_device = cpu_copy;
    table->copy_to_host = cpu_copy;
    table->copy_on_device = cpu_copy;
    table->fill = cpu_fill;
    table->synchronize = cpu_synchronize;
    table->pinned_alloc = cpu_pinned_alloc;
    table->pinned_free = cpu_pinned_free;
    table->pinned_fence = cpu_pinned_fence;
    table->pinned_wait = cpu_pinned_wait;
    table->timer_create = cpu_timer_create;
    table->timer_record = cpu_timer_record;
    table->timer_elapsed = cpu_timer_elapsed;
    table->timer_destroy = cpu_timer_destroy;
}

static Backend cpu_backend_table = {.name = "cpu", .kind = BACKEND_CPU};
static pthread_once_t cpu_backend_filled = PTHREAD_ONCE_INIT;

static void cpu_backend_fill(void) {
    Backend *table = &cpu_backend_table;
    cpu_register_memory_ops(table);
    cpu_register_data_ops(table);
    cpu_register_convert_ops(table);
    cpu_register_gemm_ops(table);
    cpu_register_reduce_ops(table);
    cpu_register_elementwise_ops(table);
    cpu_register_loss_ops(table);
    cpu_register_batchnorm_ops(table);
    cpu_register_conv_ops(table);
    cpu_register_pool_ops(table);
    cpu_register_norm_ops(table);
    cpu_register_optimizer_ops(table);
}

// Filled on first use, once, whichever thread asks first. A slot a family's register
// function forgot stays NULL: backend_missing_ops finds it, which the device opener runs on
// this table as on CUDA's, and tests/unit/test_cpu_backend_ops.c at build time.
const Backend *cpu_backend(void) {
    pthread_once(&cpu_backend_filled, cpu_backend_fill);
    return &cpu_backend_table;
}

void cpu_backend_set_threads(int threads) {
    if (threads > 0) openblas_set_num_threads(threads);
}

const char *cpu_blas_core_name(void) {
    const char *core = openblas_get_corename();
    return core ? core : "unknown";
}

const char *cpu_blas_better_core(void) {
    // OpenBLAS 0.3.21 does not know newer Xeons (e.g. family 6 model 207) and falls back
    // to its SSE3 "Prescott" kernels, 3-4x slower than the AVX-512 ones the CPU can run.
    const char *core = openblas_get_corename();
    if (!core || strcasecmp(core, "prescott") != 0) return NULL;
#if defined(__x86_64__) || defined(__i386__)
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw")) return "SkylakeX";
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return "Haswell";
#endif
    return NULL;
}

void cpu_backend_flush_denormals(void) {
#if defined(__SSE__)
    // Late in training, Adam's second moments and small activations drift into denormal
    // range, where x86 arithmetic is ~100x slower; flushing them to zero changes no
    // result that matters and keeps every epoch as fast as the first.
    _mm_setcsr(_mm_getcsr() | 0x8040);  // FTZ | DAZ
#endif
}

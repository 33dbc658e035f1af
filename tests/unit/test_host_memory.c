// What the CPU backend holds a large allocation against (kernels/cpu/cpu_backend.c): the
// host's available memory, and the room under each memory cgroup level. Linux overcommits,
// so without this check an allocation the host cannot back succeeds and the kernel's OOM
// killer ends the process when the pages are touched (`bench conv --device cpu --batch
// 100000` was killed at 24 GB); with it, the request is refused as out of memory.
#include "check.h"
#include "kernels/backend.h"

#include <stdint.h>
#include <stdlib.h>
#include <sys/sysinfo.h>

enum { KIB = 1024, MIB = 1024 * 1024 };

static const char meminfo[] = "MemTotal:       24683656 kB\n"
                              "MemFree:         1000000 kB\n"
                              "MemAvailable:    2000000 kB\n"
                              "Buffers:          120000 kB\n"
                              "SwapTotal:       4000000 kB\n"
                              "SwapFree:        1000000 kB\n";

static size_t from(const char *text, const char *const (*levels)[3], int count) {
    return cpu_available_memory_from(text, levels, count);
}

int main(void) {
    // The host: MemAvailable and free swap (swap too is memory the OOM killer waits for).
    CHECK(from(meminfo, NULL, 0) == (size_t)3000000 * KIB);
    CHECK(from("MemTotal: 100 kB\nMemFree: 40 kB\n", NULL, 0) == (size_t)40 * KIB);
    CHECK(from(NULL, NULL, 0) == SIZE_MAX);
    CHECK(from("nothing of use\n", NULL, 0) == SIZE_MAX);

    // A cgroup v2 level: its limit less what it holds, page cache ("file") aside.
    const char *const v2[1][3] = {
        {"1073741824\n", "536870912\n", "anon 1\nfile_mapped 9\nfile 268435456\n"}};
    CHECK(from(NULL, v2, 1) == (size_t)768 * MIB);
    // The smaller of the host's figure and the level's room.
    CHECK(from(meminfo, v2, 1) == (size_t)768 * MIB);
    const char *const tight[1][3] = {{"1073741824\n", "1073741824\n", NULL}};
    CHECK(from(meminfo, tight, 1) == 0);
    const char *const over[1][3] = {{"100\n", "400\n", "file 100\n"}};
    CHECK(from(meminfo, over, 1) == 0);
    // "max" is no limit at that level; an outer level's limit still holds.
    const char *const nested[2][3] = {{"max\n", "4096\n", "file 0\n"},
                                      {"1048576\n", "524288\n", "file 0\n"}};
    CHECK(from(meminfo, nested, 2) == (size_t)512 * KIB);
    // A level whose files are missing says nothing.
    const char *const missing[1][3] = {{NULL, "1\n", NULL}};
    CHECK(from(meminfo, missing, 1) == (size_t)3000000 * KIB);
    // cgroup v1: no limit is a huge number; its cache is "total_cache".
    const char *const v1[2][3] = {{"9223372036854771712\n", "1000\n", "cache 0\n"},
                                  {"2097152\n", "1572864\n", "cache 5\ntotal_cache 524288\n"}};
    CHECK(from(meminfo, v1, 2) == (size_t)1 * MIB);

    // This machine: /proc/meminfo is there, so the figure is known and not above it.
    size_t available = cpu_host_available_memory();
    printf("available to this process: %zu MiB\n", available / MIB);
    CHECK(available != SIZE_MAX && available > 0);

    // A request past it is refused as out of memory, saying what the host can give, with
    // no pointer; one that fits is granted.
    const Backend *cpu = cpu_backend();
    Status st;
    status_clear(&st);
    void *p = (void *)1;
    // More than the host has at all (RAM and swap), so no memory freed meanwhile by another
    // process can make it fit.
    struct sysinfo host;
    CHECK(sysinfo(&host) == 0);
    size_t too_much = ((size_t)host.totalram + (size_t)host.totalswap) * host.mem_unit +
                      (size_t)1024 * MIB;
    CHECK_INT_EQ(cpu->raw_alloc(cpu, too_much, &p, &st), STATUS_OUT_OF_MEMORY);
    CHECK(p == NULL);
    CHECK_CONTAINS(st.message, "the host can give");
    status_clear(&st);
    CHECK_INT_EQ(cpu->pinned_alloc(cpu, too_much, &p, &st), STATUS_RUNTIME_ERROR);
    CHECK_CONTAINS(st.message, "a staging buffer of");
    status_clear(&st);
    CHECK_INT_EQ(cpu->raw_alloc(cpu, (size_t)8 * MIB, &p, &st), 0);
    CHECK(p != NULL);
    if (p) cpu->raw_free(cpu, p);
    return test_exit_code("test_host_memory");
}

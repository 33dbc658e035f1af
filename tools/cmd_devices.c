// `trainer devices`: what this process can train on (Caffe's device_query): the CPU, and
// every visible GPU with its compute capability, SM count and memory.
#include <stdio.h>
#include <stdlib.h>

#include "diagnostics/machine_facts.h"
#include "tools/cli.h"

static const OptionSpec devices_options[] = {
    {NULL, NULL, NULL},
};

const Command devices_command = {
    .name = "devices",
    .usage = "",
    .summary = "list the devices trainer can use: cpu and every visible GPU",
    .options = devices_options,
    .run = run_devices,
};

int run_devices(const Command *cmd, const ParsedArgs *args) {
    if (args->positional_count) {
        Status st;
        status_clear(&st);
        status_fail(&st, STATUS_BAD_INPUT, "trainer devices takes no arguments");
        status_hint(&st, "usage: trainer devices");
        return report_failure(&st);
    }
    printf("cpu       the host, BLAS: OpenBLAS (%s kernels)\n", cpu_blas_core_name());
    const char *visible = getenv("CUDA_VISIBLE_DEVICES");
    if (visible) printf("CUDA_VISIBLE_DEVICES=\"%s\"\n", visible);
    enum { MAX_DEVICES = 64 };
    CudaDeviceInfo devices[MAX_DEVICES];
    int count = 0;
    Status st;
    status_clear(&st);
    if (machine_list_gpus(devices, MAX_DEVICES, &count, &st)) {
        printf("cuda      none: %s\n", st.message);
        if (st.hint[0]) printf("          hint: %s\n", st.hint);
        return 0;
    }
    if (count == 0) printf("cuda      none visible\n");
    for (int i = 0; i < count; i++) {
        char memory[32];
        printf("cuda:%-4d %s, compute %d.%d, %d SMs, %s\n", i, devices[i].name,
               devices[i].compute_major, devices[i].compute_minor, devices[i].multiprocessors,
               alloc_format_bytes(devices[i].total_memory, memory, sizeof memory));
    }
    return 0;
}

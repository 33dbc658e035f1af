// One `trainer bench` run: the request's benchmarks in order, with the device's defaults,
// and whether what it measured is worth an exit 0. Apart from bench.c, which the benchmarks
// call back into.
#include <stdlib.h>
#include <string.h>

#include "diagnostics/bench.h"

static int asks_for(const BenchRequest *r, const char *name) {
    return strcmp(r->benchmark, name) == 0 || (strcmp(r->benchmark, "all") == 0 &&
                                               strcmp(name, "train") != 0);
}

void bench_request_defaults(BenchRequest *r, const BenchDevice *dev) {
    static const int gpu_sizes[] = {1024, 4096, 8192}, cpu_sizes[] = {256, 512, 1024};
    if (r->size_count == 0) {
        for (int i = 0; i < 3; i++) {
            int n = dev->is_gpu ? gpu_sizes[i] : cpu_sizes[i];
            r->sizes[i] = (BenchGemmSize){n, n, n};
        }
        r->size_count = 3;
    }
    if (r->byte_count == 0) {
        r->bytes[0] = (size_t)(dev->is_gpu ? 256 : 64) << 20;
        r->byte_count = 1;
    }
    if (r->batch == 0) r->batch = dev->is_gpu ? 128 : 8;  // conv's; train's is the model's
}

int bench_run(Device *d, const BenchDevice *dev, const BenchRequest *r, Graph *g,
              const RunConfig *config, BenchReports *out, Status *st) {
    memset(out, 0, sizeof *out);
    if (asks_for(r, "gemm")) {
        out->gemm = calloc(1, sizeof *out->gemm);
        if (!out->gemm)
            return status_out_of_host_memory(st, sizeof *out->gemm, "for the GEMM results");
        TRY(bench_gemm(d, dev, &r->options, r->sizes, r->size_count, r->precisions, out->gemm,
                       st));
    }
    if (asks_for(r, "memory")) {
        out->memory = calloc(1, sizeof *out->memory);
        if (!out->memory)
            return status_out_of_host_memory(st, sizeof *out->memory, "for the memory results");
        TRY(bench_memory(d, dev, &r->options, r->bytes, r->byte_count, out->memory, st));
    }
    if (asks_for(r, "conv")) {
        out->conv = calloc(1, sizeof *out->conv);
        if (!out->conv)
            return status_out_of_host_memory(st, sizeof *out->conv, "for the convolution results");
        TRY(bench_conv(d, dev, &r->options, r->batch, out->conv, st));
    }
    if (asks_for(r, "train")) {
        out->has_train = 1;
        TRY(bench_train(d, dev, &r->options, g, config, r->batch, r->steps, r->per_layer,
                        &out->train, st));
    }
    return 0;
}

void bench_reports_free(BenchReports *r) {
    free(r->gemm);
    free(r->memory);
    free(r->conv);
    bench_train_report_free(&r->train);
}

// A memory benchmark whose every copy was refused (out of memory at the sizes asked)
// printed its reasons and measured nothing, so it fails, with them.
int bench_memory_measured(const BenchMemoryReport *r, Status *st) {
    const char *reason = NULL;
    for (int i = 0; r && i < r->row_count; i++) {
        if (r->rows[i].available) return 0;
        if (!reason || strncmp(reason, "no device", 9) == 0) reason = r->rows[i].unavailable;
    }
    if (!r || !r->row_count) return 0;
    status_fail(st, STATUS_RUNTIME_ERROR, "bench memory measured nothing: %s", reason);
    status_hint(st, "give smaller sizes, e.g. --bytes 64M,256M");
    return STATUS_RUNTIME_ERROR;
}

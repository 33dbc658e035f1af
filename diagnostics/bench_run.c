// One `trainer bench` run: the request's benchmarks in order, and whether what it measured
// is worth an exit 0. Apart from bench.c, which the benchmarks call back into.
#include <stdlib.h>
#include <string.h>

#include "diagnostics/bench.h"

static int asks_for(const BenchRequest *r, const char *name) {
    return strcmp(r->benchmark, name) == 0 || (strcmp(r->benchmark, "all") == 0 &&
                                               strcmp(name, "train") != 0);
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

// `trainer doctor`'s device lines as diagnostics/doctor_text.c writes them, for a diagnosis
// made here (a GPU machine's facts on any machine): a CPU-only run of doctor lists no
// device, so the e2e test cannot see them. One device passed its smoke test; the other is
// unnamed, has an error and failed it.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "diagnostics/doctor.h"

typedef struct Collected {
    char text[8192];
    size_t length;
} Collected;

static void collect(void *user, const char *text, size_t length) {
    Collected *c = user;
    if (c->length + length >= sizeof c->text) length = sizeof c->text - 1 - c->length;
    memcpy(c->text + c->length, text, length);
    c->length += length;
    c->text[c->length] = '\0';
}

static void two_devices(Diagnosis *d) {
    d->report.built_with_cuda = 1;
    d->report.device_count = d->report.devices_listed = 2;
    for (int i = 0; i < 2; i++) {
        DoctorDevice *dev = &d->report.devices[i];
        dev->compute_major = 9;
        dev->multiprocessors = 132;
        dev->total_memory = (size_t)140 << 30;
        dev->free_memory = (size_t)(i + 1) << 30;
        dev->clock_khz = 1980000;
        dev->memory_clock_khz = 2619000;
        dev->memory_bus_bits = 6144;
        snprintf(d->image_text[i], sizeof d->image_text[i], "sass for sm_90");
        d->smoke[i].ran = 1;
    }
    snprintf(d->report.devices[0].name, sizeof d->report.devices[0].name, "NVIDIA H200");
    d->report.devices[0].binary_version = 90;
    d->report.devices[0].ptx_version = 90;
    d->smoke[0].passed = 1;
    d->smoke[0].gemm_error = 1.5e-7;
    d->smoke[0].conv_error = 2e-6;
    snprintf(d->report.devices[1].error, sizeof d->report.devices[1].error, "busy");
    snprintf(d->smoke[1].error, sizeof d->smoke[1].error, "GEMM differs");
    d->problem_count = 2;
    d->problems[1].severity = SEVERITY_WARNING;
    snprintf(d->problems[0].what, sizeof d->problems[0].what, "cuda:1 failed");
    snprintf(d->problems[0].fix, sizeof d->problems[0].fix, "reset it");
    snprintf(d->problems[1].what, sizeof d->problems[1].what, "old driver");
    snprintf(d->problems[1].fix, sizeof d->problems[1].fix, "update it");
}

int main(void) {
    Diagnosis *d = calloc(1, sizeof *d);
    Collected *c = calloc(1, sizeof *c);
    two_devices(d);
    doctor_text(&(TextOut){collect, NULL, c}, d);
    CHECK_CONTAINS(c->text, "devices\n  cuda:0 NVIDIA H200, compute 9.0, 132 SMs, 140.0 GiB "
                            "(1.0 GiB free)\n    clocks: SM 1980 MHz, memory 2619 MHz, "
                            "6144-bit bus; PCI unknown\n    kernel image: sass for sm_90 "
                            "(runtime: binary 90, PTX 90)\n    smoke test: passed (GEMM");
    CHECK_CONTAINS(c->text, "error 1.5e-07, conv2d 3->4 3x3 error 2.0e-06, against the CPU)\n");
    CHECK_CONTAINS(c->text, "  cuda:1 (unknown), compute 9.0, 132 SMs, 140.0 GiB (2.0 GiB "
                            "free)\n");
    CHECK_CONTAINS(c->text, "    kernel image: sass for sm_90\n    error: busy\n    smoke "
                            "test: FAILED: GEMM differs\n");
    CHECK_CONTAINS(c->text, "fixes:\n  1. cuda:1 failed\n     fix: reset it\n  2. (warning) old "
                            "driver\n     fix: update it\n");
    free(c);
    free(d);
    return test_exit_code("test_doctor_text");
}

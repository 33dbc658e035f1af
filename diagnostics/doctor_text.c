// `trainer doctor`'s report as text: the build, the versions built with and loaded, the
// environment, each device with its smoke test, the notes, the verdict and the fixes.
#include <stdio.h>
#include <string.h>

#include "base/escape.h"
#include "core/alloc.h"
#include "diagnostics/doctor.h"

static void build_text(const TextOut *out, const DoctorReport *r) {
    text_printf(out, "trainer %s doctor\n", TRAINER_VERSION);
    text_printf(out, "build\n  CUDA backend           %s\n",
                !r->built_with_cuda    ? "not built in"
                : r->backend_error[0] ? "built in, did not load (see the problems below)"
                                      : "built in");
    if (r->built_with_cuda)
        text_printf(out, "  architectures          %s\n",
                    r->architectures[0] ? r->architectures : "unknown");
    DoctorVersionTable table;
    doctor_version_table(r, &table);
    for (int i = 0; i < table.count; i++) text_printf(out, "%s\n", table.lines[i]);
}

static void environment_text(const TextOut *out, const DoctorReport *r) {
    text_put(out, "environment\n");
    // Anyone's bytes (an ESC in them would drive the terminal): escaped.
    char visible[4 * sizeof r->cuda_visible_devices], library_path[4 * sizeof r->ld_library_path];
    text_escape(r->cuda_visible_devices, strlen(r->cuda_visible_devices), visible,
                sizeof visible);
    text_escape(r->ld_library_path, strlen(r->ld_library_path), library_path,
                sizeof library_path);
    text_printf(out, "  CUDA_VISIBLE_DEVICES   %s%s%s\n", r->cuda_visible_devices_set ? "\"" : "",
                r->cuda_visible_devices_set ? visible : "(not set)",
                r->cuda_visible_devices_set ? "\"" : "");
    text_printf(out, "  LD_LIBRARY_PATH        %s\n",
                r->ld_library_path_set ? library_path : "(not set)");
}

static void device_text(const TextOut *out, const Diagnosis *d, int i) {
    const DoctorDevice *dev = &d->report.devices[i];
    char total[32], free_text[32];
    text_printf(out, "  cuda:%d %s, compute %d.%d, %d SMs, %s (%s free)\n", i,
                dev->name[0] ? dev->name : "(unknown)", dev->compute_major, dev->compute_minor,
                dev->multiprocessors, alloc_format_bytes(dev->total_memory, total, sizeof total),
                alloc_format_bytes(dev->free_memory, free_text, sizeof free_text));
    text_printf(out, "    clocks: SM %d MHz, memory %d MHz, %d-bit bus; PCI %s\n",
                dev->clock_khz / 1000, dev->memory_clock_khz / 1000, dev->memory_bus_bits,
                dev->pci_bus_id[0] ? dev->pci_bus_id : "unknown");
    text_printf(out, "    kernel image: %s", d->image_text[i]);
    if (dev->binary_version)
        text_printf(out, " (runtime: binary %d, PTX %d)", dev->binary_version, dev->ptx_version);
    text_put(out, "\n");
    if (dev->error[0]) text_printf(out, "    error: %s\n", dev->error);
    const SmokeTest *t = &d->smoke[i];
    if (t->ran && t->passed)
        text_printf(out, "    smoke test: passed (GEMM %dx%dx%d error %.1e, conv2d 3->4 3x3 "
                         "error %.1e, against the CPU)\n",
                    DOCTOR_SMOKE_M, DOCTOR_SMOKE_N, DOCTOR_SMOKE_K, t->gemm_error,
                    t->conv_error);
    else if (t->error[0])
        text_printf(out, "    smoke test: FAILED: %s\n", t->error);
}

static void verdict_text(const TextOut *out, const Diagnosis *d) {
    for (int i = 0; i < d->note_count; i++) text_printf(out, "note: %s\n", d->notes[i]);
    text_printf(out, "\nverdict: %s\n", d->verdict);
    for (int i = 0; i < d->problem_count; i++) {
        const Problem *p = &d->problems[i];
        if (i == 0) text_put(out, "fixes:\n");
        text_printf(out, "  %d. %s%s\n     fix: %s\n", i + 1,
                    p->severity == SEVERITY_WARNING ? "(warning) " : "", p->what, p->fix);
    }
}

void doctor_text(const TextOut *out, const Diagnosis *d) {
    const DoctorReport *r = &d->report;
    build_text(out, r);
    environment_text(out, r);
    text_put(out, "devices\n");
    if (r->device_count_error[0]) text_printf(out, "  none: %s\n", r->device_count_error);
    else if (r->device_count == 0) text_put(out, "  none visible\n");
    for (int i = 0; i < r->devices_listed; i++) device_text(out, d, i);
    verdict_text(out, d);
}

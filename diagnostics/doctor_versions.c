// The driver and library table of `trainer doctor`, which `trainer lab version-report`
// shows too: each library's version built with, loaded, and where it was loaded from.
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "diagnostics/doctor.h"

static void add_line(DoctorVersionTable *table, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void add_line(DoctorVersionTable *table, const char *fmt, ...) {
    if (table->count >= DOCTOR_VERSION_LINES_MAX) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(table->lines[table->count++], sizeof table->lines[0], fmt, ap);
    va_end(ap);
}

static void add_driver_lines(const DoctorReport *r, DoctorVersionTable *table) {
    char driver[32];
    // A CUDA build whose backend did not load asked the driver nothing either.
    int asked = r->built_with_cuda && !r->backend_error[0];
    add_line(table, "driver");
    add_line(table, "  NVIDIA kernel module   %s",
             r->kernel_module[0] ? r->kernel_module : "none (no /proc/driver/nvidia/version)");
    add_line(table, "  libcuda                %s",
             r->driver_library[0] ? r->driver_library
             : asked              ? "not loaded"
             : r->built_with_cuda ? "not looked for (the CUDA backend did not load)"
                                  : "not loaded (built without CUDA, so never looked for)");
    add_line(table, "  newest CUDA supported  %s",
             doctor_version_known(&r->driver_cuda)
                 ? doctor_version_format(&r->driver_cuda, 0, driver, sizeof driver)
             : asked              ? "none: no driver is loaded (cudaDriverGetVersion reports 0)"
             : r->built_with_cuda ? "not asked (the CUDA backend did not load)"
                                  : "not asked (built without CUDA)");
}

static void add_library_lines(const DoctorReport *r, DoctorVersionTable *table) {
    add_line(table, "libraries       built with  loaded      loaded from");
    for (int i = 0; i < DOCTOR_LIBRARY_COUNT; i++) {
        const DoctorLibraryInfo *library = &r->libraries[i];
        int with_patch = i != DOCTOR_CUDART;
        char built[32], loaded[32];
        if (r->built_with_cuda && !r->backend_error[0]) {
            doctor_version_format(&library->built, with_patch, built, sizeof built);
            doctor_version_format(&library->loaded, with_patch, loaded, sizeof loaded);
        } else {
            snprintf(built, sizeof built, "-");
            snprintf(loaded, sizeof loaded, "-");
        }
        add_line(table, "  %-13s %-11s %-11s %s", library->name, built, loaded,
                 library->path[0] ? library->path : "-");
    }
}

void doctor_version_table(const DoctorReport *r, DoctorVersionTable *table) {
    memset(table, 0, sizeof *table);
    add_driver_lines(r, table);
    add_library_lines(r, table);
}

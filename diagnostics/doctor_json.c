// `trainer doctor --json`: the diagnosis as one cJSON object with the same facts as the
// text, the verdict and the fixes.
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "base/json.h"
#include "diagnostics/doctor.h"

static cJSON *json_version(const DoctorVersion *v, int with_patch) {
    char text[32];
    if (!doctor_version_known(v)) return cJSON_CreateNull();
    return json_text(doctor_version_format(v, with_patch, text, sizeof text));
}

// A non-finite error (a NaN from a broken GPU) is JSON null: JSON has no NaN.
static cJSON *json_number(double value) {
    return isfinite(value) ? cJSON_CreateNumber(value) : cJSON_CreateNull();
}

static cJSON *json_architectures(const DoctorReport *r) {
    cJSON *list = cJSON_CreateArray();
    char copy[256];
    snprintf(copy, sizeof copy, "%s", r->architectures);
    for (char *word = strtok(copy, " ;"); word; word = strtok(NULL, " ;"))
        cJSON_AddItemToArray(list, json_text(word));
    return list;
}

static cJSON *json_driver(const DoctorReport *r) {
    cJSON *driver = cJSON_CreateObject();
    cJSON_AddBoolToObject(driver, "loaded", doctor_version_known(&r->driver_cuda));
    cJSON_AddItemToObject(driver, "cuda_version", json_version(&r->driver_cuda, 0));
    json_add_text(driver, "kernel_module", r->kernel_module[0] ? r->kernel_module : NULL);
    json_add_text(driver, "library", r->driver_library[0] ? r->driver_library : NULL);
    return driver;
}

static cJSON *json_libraries(const DoctorReport *r) {
    static const DoctorVersion none = {0, 0, 0};
    cJSON *libraries = cJSON_CreateObject();
    for (int i = 0; i < DOCTOR_LIBRARY_COUNT; i++) {
        const DoctorLibraryInfo *lib = &r->libraries[i];
        int with_patch = i != DOCTOR_CUDART;
        cJSON *entry = cJSON_CreateObject();
        json_add_text(entry, "name", lib->name);
        cJSON_AddItemToObject(entry, "built",
                              json_version(r->built_with_cuda ? &lib->built : &none, with_patch));
        cJSON_AddItemToObject(entry, "loaded", json_version(&lib->loaded, with_patch));
        json_add_text(entry, "path", lib->path[0] ? lib->path : NULL);
        cJSON_AddItemToObject(libraries, lib->key, entry);
    }
    return libraries;
}

static cJSON *json_environment(const DoctorReport *r) {
    cJSON *environment = cJSON_CreateObject();
    json_add_text(environment, "CUDA_VISIBLE_DEVICES",
                  r->cuda_visible_devices_set ? r->cuda_visible_devices : NULL);
    json_add_text(environment, "LD_LIBRARY_PATH",
                  r->ld_library_path_set ? r->ld_library_path : NULL);
    return environment;
}

// The errors are null when the test did not run to a comparison.
static cJSON *json_smoke_test(const SmokeTest *t) {
    int compared = t->ran && !t->error[0];
    cJSON *smoke = cJSON_CreateObject();
    cJSON_AddBoolToObject(smoke, "ran", t->ran);
    cJSON_AddBoolToObject(smoke, "passed", t->passed);
    cJSON_AddItemToObject(smoke, "gemm_error",
                          compared ? json_number(t->gemm_error) : cJSON_CreateNull());
    cJSON_AddItemToObject(smoke, "conv2d_error",
                          compared ? json_number(t->conv_error) : cJSON_CreateNull());
    json_add_text(smoke, "error", t->error[0] ? t->error : NULL);
    return smoke;
}

static cJSON *json_device(const Diagnosis *d, int i) {
    const DoctorDevice *dev = &d->report.devices[i];
    char capability[16];
    snprintf(capability, sizeof capability, "%d.%d", dev->compute_major, dev->compute_minor);
    cJSON *device = cJSON_CreateObject();
    cJSON_AddNumberToObject(device, "ordinal", i);
    json_add_text(device, "name", dev->name);
    json_add_text(device, "pci_bus_id", dev->pci_bus_id[0] ? dev->pci_bus_id : NULL);
    json_add_text(device, "compute_capability", capability);
    cJSON_AddNumberToObject(device, "multiprocessors", dev->multiprocessors);
    cJSON_AddNumberToObject(device, "memory_total_bytes", (double)dev->total_memory);
    cJSON_AddNumberToObject(device, "memory_free_bytes", (double)dev->free_memory);
    cJSON_AddNumberToObject(device, "clock_mhz", dev->clock_khz / 1000);
    cJSON_AddNumberToObject(device, "memory_clock_mhz", dev->memory_clock_khz / 1000);
    cJSON_AddNumberToObject(device, "memory_bus_bits", dev->memory_bus_bits);
    json_add_text(device, "kernel_image", doctor_image_kind_name(d->image[i]));
    json_add_text(device, "kernel_image_detail", d->image_text[i]);
    cJSON_AddNumberToObject(device, "binary_version", dev->binary_version);
    cJSON_AddNumberToObject(device, "ptx_version", dev->ptx_version);
    json_add_text(device, "error", dev->error[0] ? dev->error : NULL);
    cJSON_AddBoolToObject(device, "usable", d->usable[i]);
    cJSON_AddItemToObject(device, "smoke_test", json_smoke_test(&d->smoke[i]));
    return device;
}

static cJSON *json_devices(const Diagnosis *d) {
    cJSON *devices = cJSON_CreateArray();
    for (int i = 0; i < d->report.devices_listed; i++)
        cJSON_AddItemToArray(devices, json_device(d, i));
    return devices;
}

static cJSON *json_notes(const Diagnosis *d) {
    cJSON *notes = cJSON_CreateArray();
    for (int i = 0; i < d->note_count; i++) cJSON_AddItemToArray(notes, json_text(d->notes[i]));
    return notes;
}

static cJSON *json_problems(const Diagnosis *d) {
    cJSON *problems = cJSON_CreateArray();
    for (int i = 0; i < d->problem_count; i++) {
        cJSON *problem = cJSON_CreateObject();
        json_add_text(problem, "severity", doctor_severity_name(d->problems[i].severity));
        json_add_text(problem, "what", d->problems[i].what);
        json_add_text(problem, "fix", d->problems[i].fix);
        cJSON_AddItemToArray(problems, problem);
    }
    return problems;
}

cJSON *doctor_json(const Diagnosis *d) {
    const DoctorReport *r = &d->report;
    cJSON *root = cJSON_CreateObject();
    json_add_text(root, "trainer_version", TRAINER_VERSION);
    cJSON_AddBoolToObject(root, "built_with_cuda", r->built_with_cuda);
    json_add_text(root, "backend_error", r->backend_error[0] ? r->backend_error : NULL);
    cJSON_AddItemToObject(root, "architectures", json_architectures(r));
    cJSON_AddItemToObject(root, "driver", json_driver(r));
    cJSON_AddItemToObject(root, "libraries", json_libraries(r));
    cJSON_AddItemToObject(root, "environment", json_environment(r));
    cJSON_AddNumberToObject(root, "device_count", r->device_count);
    json_add_text(root, "device_error", r->device_count_error[0] ? r->device_count_error : NULL);
    cJSON_AddItemToObject(root, "devices", json_devices(d));
    cJSON_AddNumberToObject(root, "usable_devices", d->usable_count);
    cJSON_AddItemToObject(root, "notes", json_notes(d));
    cJSON_AddItemToObject(root, "problems", json_problems(d));
    json_add_text(root, "verdict", d->verdict);
    cJSON_AddNumberToObject(root, "exit_code", d->exit_code);
    return root;
}

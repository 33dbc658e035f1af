// The machine's side of an explanation: environment, devices and versions, asked at the
// moment an error is explained; and the device list and versions `trainer devices` and
// `trainer --version` print.
#include "diagnostics/machine_facts.h"
#include "kernels/cuda/cuda_device.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

// ---- the visible GPUs and the CUDA versions ---------------------------------------------

int machine_list_gpus(CudaDeviceInfo *gpus, int max, int *count, Status *st) {
    return cuda_list_devices(gpus, max, count, st);
}

void machine_cuda_versions(CudaVersions *out) { cuda_versions(out); }

const char *machine_cuda_unavailable(void) { return cuda_backend_unavailable(NULL); }
const char *machine_cuda_module_path(void) { return cuda_backend_module_path(); }

// ---- facts from this machine ----------------------------------------------------------------

#define FACT_DEVICES_MAX 16

static void add_fact(ErrorFacts *facts, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void add_fact(ErrorFacts *facts, const char *fmt, ...) {
    if (facts->count >= ERROR_FACTS_MAX) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(facts->lines[facts->count++], sizeof facts->lines[0], fmt, ap);
    va_end(ap);
}

// CUDA versions are written major*1000 + minor*10 (13000 is 13.0).
static void driver_fact(const CudaVersions *v, ErrorFacts *facts) {
    if (!v->built_with_cuda) {
        add_fact(facts, "this trainer was built without CUDA (`trainer --version` says \"CUDA: "
                        "not built in\"), so it cannot use a GPU on any machine");
        return;
    }
    const char *unavailable = machine_cuda_unavailable();
    if (unavailable) {
        add_fact(facts, "%s; until it loads no GPU can be used", unavailable);
        return;
    }
    int runtime_major = v->runtime_version / 1000, runtime_minor = v->runtime_version % 1000 / 10;
    if (v->driver_version == 0) {
        add_fact(facts, "no NVIDIA driver is loaded (CUDA runtime %d.%d is built in); without a "
                        "driver the runtime answers cudaErrorInsufficientDriver",
                 runtime_major, runtime_minor);
        return;
    }
    int driver_major = v->driver_version / 1000, driver_minor = v->driver_version % 1000 / 10;
    if (driver_major < runtime_major)
        add_fact(facts, "the driver supports CUDA up to %d.%d, older than the CUDA %d.%d runtime "
                        "built in: expect cudaErrorInsufficientDriver",
                 driver_major, driver_minor, runtime_major, runtime_minor);
    else
        add_fact(facts, "the driver supports CUDA up to %d.%d; the runtime built in is CUDA %d.%d",
                 driver_major, driver_minor, runtime_major, runtime_minor);
}

static void library_fact(const CudaVersions *v, ErrorFacts *facts) {
    if (!v->built_with_cuda || machine_cuda_unavailable()) return;
    add_fact(facts, "libraries loaded: cuBLAS %ld.%ld.%ld, cuDNN %ld.%ld.%ld, NCCL %d.%d.%d",
             v->cublas_version / 10000, v->cublas_version / 100 % 100, v->cublas_version % 100,
             v->cudnn_version / 10000, v->cudnn_version / 100 % 100, v->cudnn_version % 100,
             v->nccl_version / 10000, v->nccl_version / 100 % 100, v->nccl_version % 100);
}

static void visible_devices_fact(ErrorFacts *facts) {
    const char *visible = getenv("CUDA_VISIBLE_DEVICES");
    if (!visible)
        add_fact(facts, "CUDA_VISIBLE_DEVICES is unset: every GPU the driver sees is visible");
    else if (!visible[0])
        add_fact(facts, "CUDA_VISIBLE_DEVICES is set but empty: it hides every GPU");
    else
        add_fact(facts, "CUDA_VISIBLE_DEVICES=\"%s\": only those GPUs are visible, renumbered "
                        "cuda:0, cuda:1, ... in the order listed", visible);
}

static void devices_fact(ErrorFacts *facts) {
    CudaDeviceInfo devices[FACT_DEVICES_MAX];
    int count = 0;
    Status st;
    status_clear(&st);
    if (machine_list_gpus(devices, FACT_DEVICES_MAX, &count, &st)) {
        add_fact(facts, "visible GPUs: none (%s)", st.message);
        return;
    }
    char list[sizeof facts->lines[0]] = "";
    size_t used = 0;
    for (int i = 0; i < count && used < sizeof list; i++)
        used += (size_t)snprintf(list + used, sizeof list - used,
                                 "%s cuda:%d %s (compute %d.%d, %.0f GiB)",
                                 i ? "," : "", devices[i].ordinal, devices[i].name,
                                 devices[i].compute_major, devices[i].compute_minor,
                                 (double)devices[i].total_memory / (1024.0 * 1024 * 1024));
    add_fact(facts, "visible GPUs: %d:%s", count, list);
}

void error_catalog_machine_facts(const ErrorEntry *entry, ErrorFacts *facts) {
    memset(facts, 0, sizeof *facts);
    unsigned wanted = entry ? entry->facts
                            : (ERROR_FACT_DRIVER | ERROR_FACT_DEVICES | ERROR_FACT_LIBRARIES);
    CudaVersions versions;
    machine_cuda_versions(&versions);
    if (wanted & ERROR_FACT_DRIVER) driver_fact(&versions, facts);
    if (wanted & ERROR_FACT_LIBRARIES) library_fact(&versions, facts);
    if (wanted & ERROR_FACT_DEVICES) {
        visible_devices_fact(facts);
        // After a context-poisoning error the runtime may answer every call with that error;
        // the device list would only repeat it.
        if (!(entry && entry->poisons_context)) devices_fact(facts);
    }
}

// ---- the verdict ----------------------------------------------------------------------------

// Whether an NVIDIA driver is loaded: the CUDA backend asks the driver itself; without the
// backend (a build without CUDA, or trainer_cuda.so not loading) the kernel module's file
// tells, or WSL's GPU device, where the driver has no kernel module of its own.
static int driver_loaded(void) {
    CudaVersions v;
    machine_cuda_versions(&v);
    if (v.built_with_cuda && !machine_cuda_unavailable()) return v.driver_version != 0;
    return access("/proc/driver/nvidia/version", F_OK) == 0 || access("/dev/dxg", F_OK) == 0;
}

// CUDA_VISIBLE_DEVICES lists GPUs until the first entry that is not one: empty, "-1", or
// SLURM's "NoDevFiles" hide them all.
static int hides_every_gpu(const char *visible) {
    if (!visible) return 0;
    while (*visible == ' ') visible++;
    return !isdigit((unsigned char)*visible) && strncmp(visible, "GPU-", 4) != 0 &&
           strncmp(visible, "MIG-", 4) != 0;
}

int error_catalog_verdict(const ErrorEntry *entry, ErrorVerdict *v) {
    memset(v, 0, sizeof *v);
    if (!entry || !entry->finds_gpu) return 0;
    const char *visible = getenv("CUDA_VISIBLE_DEVICES");
    if (!driver_loaded()) {
        snprintf(v->cause, sizeof v->cause,
                 "No NVIDIA driver is loaded on this machine (/proc/driver/nvidia/version does "
                 "not exist), so no program here can use a GPU: if the error came from this "
                 "machine, the missing driver is the cause, whatever device the message "
                 "names.");
        v->next[v->next_count++] = "nvidia-smi";
    } else if (hides_every_gpu(visible)) {
        char shown[64];
        snprintf(shown, sizeof shown, "%s", visible);
        for (char *c = shown; *c; c++)
            if (!isprint((unsigned char)*c)) *c = '?';
        snprintf(v->cause, sizeof v->cause,
                 "CUDA_VISIBLE_DEVICES=\"%s\" hides every GPU from programs started here: if "
                 "the error came from this machine, that is the cause.", shown);
        v->next[v->next_count++] = "unset CUDA_VISIBLE_DEVICES";
        v->next[v->next_count++] = "nvidia-smi -L";
    } else {
        return 0;
    }
    v->next[v->next_count++] = "trainer doctor";
    return 1;
}

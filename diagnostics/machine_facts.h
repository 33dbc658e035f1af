// Facts about this machine: the GPUs this process sees and the CUDA versions it loads
// (what `trainer devices` and `trainer --version` print), and the facts that bear on an
// error for the error catalog's explanations: the catalog's table (base/error_catalog.h)
// says which facts bear on an error; this asks the machine.
#ifndef TRAINER_MACHINE_FACTS_H
#define TRAINER_MACHINE_FACTS_H

#include "base/error_catalog.h"
#include "base/status.h"
#include "kernels/device_facts.h"

// The visible GPUs: up to `max` of them, and *count. With no driver, no device, or a
// build without CUDA: STATUS_NO_DEVICE with the reason and a hint.
int machine_list_gpus(CudaDeviceInfo *gpus, int max, int *count, Status *st);

// The CUDA runtime, driver and library versions; built_with_cuda 0 in a CPU-only build.
void machine_cuda_versions(CudaVersions *out);

// Why no CUDA backend can be used at all (built without it, or trainer_cuda.so did not
// load), or NULL when it loaded.
const char *machine_cuda_unavailable(void);
// The CUDA module's file (cuda_backend_module_path), NULL when none was found or built.
const char *machine_cuda_module_path(void);

// Facts about this machine that bear on an entry: CUDA_VISIBLE_DEVICES, the visible GPUs
// and their compute capabilities, the driver, runtime and library versions, and what they
// imply (e.g. "the driver supports CUDA 12.4, older than the runtime 13.0"). All of them
// when entry is NULL. Never touches the GPU for an entry that poisons the context.
#define ERROR_FACTS_MAX 6
typedef struct ErrorFacts {
    char lines[ERROR_FACTS_MAX][320];
    int count;
} ErrorFacts;
void error_catalog_machine_facts(const ErrorEntry *entry, ErrorFacts *facts);

// When this machine's facts decide the cause of an entry that is about finding a GPU
// (finds_gpu): no NVIDIA driver is loaded here, or CUDA_VISIBLE_DEVICES hides every GPU.
// The verdict in words and the commands to run next, first one first; 0 when the facts
// decide nothing.
#define ERROR_VERDICT_NEXT_MAX 3
typedef struct ErrorVerdict {
    char cause[400];
    const char *next[ERROR_VERDICT_NEXT_MAX];
    int next_count;
} ErrorVerdict;
int error_catalog_verdict(const ErrorEntry *entry, ErrorVerdict *verdict);

#endif

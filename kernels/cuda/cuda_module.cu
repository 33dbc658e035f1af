// The table trainer_cuda.so hands to cuda_loader.c (see cuda_entries.h for why the backend
// is a module). Linked into a program directly (the GPU tests), the entries are called by
// name and this file only answers that the backend is there.
#include "kernels/cuda/cuda_entries.h"

extern "C" const CudaModule *trainer_cuda_module(void) {
    static const CudaModule module = {
        cuda_module_layout(),
        TRAINER_VERSION,
#define CUDA_ENTRY(type, name, parameters, arguments, absent) name,
#define CUDA_ENTRY_VOID(name, parameters, arguments, absent) name,
        CUDA_ENTRIES
#undef CUDA_ENTRY
#undef CUDA_ENTRY_VOID
    };
    return &module;
}

extern "C" const char *cuda_backend_unavailable(const char **hint) {
    if (hint) *hint = "";
    return NULL;
}

// Inside the module, core's --version text is never asked for; the loader's copy answers.
extern "C" const char *cuda_backend_module_path(void) { return NULL; }

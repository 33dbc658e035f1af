// What the entry points answer when no CUDA backend can be used. The *_absent.c files are
// the whole backend of a build without CUDA; in a build with it they are compiled into
// cuda_loader.c's library under other names (absent_cuda_list_devices, ...), and answer
// when trainer_cuda.so did not load. Either way they say why through
// cuda_backend_unavailable(), so a message never claims "built without CUDA" of a build
// that has it.
#ifndef TRAINER_CUDA_ABSENT_H
#define TRAINER_CUDA_ABSENT_H

#include "base/status.h"
#include "kernels/cuda/cuda_device.h"

#ifdef TRAINER_CUDA_LOADER
#define CUDA_ABSENT(name) absent_##name
#define CUDA_ABSENT_BUILT_IN 1
#else
#define CUDA_ABSENT(name) name
#define CUDA_ABSENT_BUILT_IN 0
#endif

// Fails st with STATUS_NO_DEVICE, cuda_backend_unavailable()'s reason and its hint.
static inline int cuda_unavailable(Status *st) {
    const char *hint = "";
    const char *why = cuda_backend_unavailable(&hint);
    status_fail(st, STATUS_NO_DEVICE, "%s", why ? why : "the CUDA backend is not available");
    if (hint[0]) status_hint(st, "%s", hint);
    return STATUS_NO_DEVICE;
}

#endif

// A device to run on: its backend (op table) and its caching allocator.
#ifndef TRAINER_DEVICE_H
#define TRAINER_DEVICE_H

#include "core/alloc.h"
#include "kernels/backend.h"

typedef struct Device {
    const Backend *backend;
    Allocator alloc;
    char name[64];       // "cpu", "cuda:0"
    int owns_backend;    // a CUDA backend opened for this device, closed with it
} Device;

typedef struct DeviceOptions {
    const char *spec;          // "cpu", "auto", "cuda", "cuda:N"
    const char *memory_limit;  // NULL or "512M", "2G", "0.5"
    AllocMode mode;
    int threads;               // CPU threads for BLAS; <= 0: library default
    int no_tf32;               // keep fp32 GEMMs and convolutions off TF32 tensor cores
    // The GPU that "auto" and "cuda" mean: 0, or an mpirun process's local rank, so that
    // the processes on one host take one GPU each.
    int default_ordinal;
} DeviceOptions;

// Opens the device `options->spec` names. `notice` receives a one-line message for the
// user when the choice was not what they might expect ("auto" falling back to the CPU),
// or "" otherwise. An explicit CUDA request that cannot be met is STATUS_NO_DEVICE with
// the reason (no driver, no device, ordinal out of range) and what is visible.
int device_open(const DeviceOptions *options, Device *d, char *notice, size_t notice_size,
                Status *st);
void device_close(Device *d);

#endif

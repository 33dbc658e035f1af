// A device to run on: its backend (op table) and its caching allocator.
#ifndef TRAINER_DEVICE_H
#define TRAINER_DEVICE_H

#include "base/lever.h"
#include "base/precision.h"
#include "core/alloc.h"
#include "kernels/backend.h"

typedef struct Device {
    const Backend *backend;
    Allocator alloc;
    char name[64];       // "cpu", "cuda:0"
    int owns_backend;    // a CUDA backend opened for this device, closed with it
    // What its GEMMs and convolutions compute in: fp32 on the CPU; on a GPU the precision
    // asked for where it has it (core/precision_check.h refuses the rest before a run starts).
    Precision precision;
    char gpu[256];       // the GPU's name ("NVIDIA H100 80GB HBM3"); "" on the CPU
    int compute;         // its compute capability times ten (90 for 9.0); 0 on the CPU
    unsigned disabled_levers;  // the CUDA levers turned off (base/lever.h); 0 on the CPU
} Device;

typedef struct DeviceOptions {
    const char *spec;          // "cpu", "auto", "cuda", "cuda:N"
    // The option that chose the device, as a CUDA device's errors name it: NULL, "--device
    // SPEC: "; else "NAMED_BY: SPEC: " (a --gpus entry: "--gpus 0,1: cuda:1: ").
    const char *named_by;
    const char *memory_limit;  // NULL or "512M", "2G", "0.5"
    AllocMode mode;
    int threads;               // CPU threads for BLAS; <= 0: library default
    // What GEMMs and convolutions compute in on a GPU (base/precision.h). With
    // PRECISION_DEFAULT, no_tf32 (the older spelling of PRECISION_FP32) decides: fp32 with
    // it, else tf32 where the GPU has TF32. A precision the GPU lacks opens in fp32, for
    // precision_check (core/precision_check.h) to refuse with the layer it concerns.
    Precision precision;
    int no_tf32;
    // The GPU that "auto" and "cuda" mean: 0, or an mpirun process's local rank, so that
    // the processes on one host take one GPU each.
    int default_ordinal;
    // CUDA levers to turn off (base/lever.h's set), to measure each alone; the CPU has
    // none, and tools/ refuses a non-empty set there before opening it.
    unsigned disabled_levers;
    // --layout nhwc: the CUDA backend asks graph_set_layouts for NHWC images between
    // convolutions (Backend.nhwc_activations); tools/ refuses it on the CPU.
    int nhwc;
} DeviceOptions;

// Opens the device `options->spec` names. `notice` receives a one-line message for the
// user when the choice was not what they might expect ("auto" falling back to the CPU),
// or "" otherwise. An explicit CUDA request that cannot be met is STATUS_NO_DEVICE with
// the reason (no driver, no device, ordinal out of range) and what is visible.
int device_open(const DeviceOptions *options, Device *d, char *notice, size_t notice_size,
                Status *st);
// STATUS_BAD_INPUT: `spec` names none of the devices (cpu, auto, cuda, cuda:N).
int device_refuse_unknown(const char *spec, Status *st);
void device_close(Device *d);

#endif

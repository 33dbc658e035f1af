// A fault planted on purpose, for tests that must see how an asynchronous kernel error
// is reported (tests/gpu/test_sync_check.c): C-callable, implemented in cuda_fault.cu;
// without CUDA the loader's absent answer is STATUS_NO_DEVICE (cuda_entries.h).
#ifndef TRAINER_CUDA_FAULT_H
#define TRAINER_CUDA_FAULT_H

#include "kernels/backend.h"

#ifdef __cplusplus
extern "C" {
#endif

// Queues, on b's stream, a kernel that writes to an address no allocation holds. The
// launch itself succeeds; the illegal-address error surfaces at the next synchronizing
// call, and leaves the process's CUDA context unusable.
int cuda_plant_out_of_bounds_write(const Backend *b, Status *st);

#ifdef __cplusplus
}
#endif

#endif

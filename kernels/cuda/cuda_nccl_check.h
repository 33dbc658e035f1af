// The NCCL counterpart of CUDA_CHECK (cuda_internal.h): every failed NCCL call becomes a
// Status naming the call, the ncclResult_t's name and number, NCCL's own string and
// where it happened, with the StatusCode, hint and error-catalog entry of that result.
// For the CUDA backend's .cu files only.
#ifndef TRAINER_CUDA_NCCL_CHECK_H
#define TRAINER_CUDA_NCCL_CHECK_H

#include <nccl.h>

#include "base/status.h"

// Fill *st from a failed NCCL call (cuda_errors.cu); returns the StatusCode it stored.
int nccl_fail(Status *st, ncclResult_t r, const char *call, const char *file, int line);

// Inside a function that has `Status *st` and returns int. ncclInProgress is not a
// failure only for non-blocking communicators, which trainer does not create, so it is
// reported like any other result.
#define NCCL_CHECK(call)                                                              \
    do {                                                                              \
        ncclResult_t nccl_check_result_ = (call);                                     \
        if (nccl_check_result_ != ncclSuccess)                                        \
            return nccl_fail(st, nccl_check_result_, #call, __FILE__, __LINE__);      \
    } while (0)

#endif

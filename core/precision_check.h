// Whether a run can compute in the precision it asks for (`--precision`, `train
// precision=`) on the device it opened, checked before the first kernel runs, as DESIGN
// §2 asks of device capabilities: bf16 needs compute capability 8.0, fp16 7.0, and the
// CPU backend computes in fp32 only. A refusal names the first layer that would have run
// in that precision (a dense or conv2d layer) and the device.
#ifndef TRAINER_PRECISION_CHECK_H
#define TRAINER_PRECISION_CHECK_H

#include <stddef.h>

#include "core/device.h"
#include "core/graph.h"

// What the check needs to know of a device; precision_target fills it from an open one,
// and a test can describe a GPU it does not have.
typedef struct PrecisionTarget {
    const char *device;   // "cpu", "cuda:0"
    const char *gpu;      // "NVIDIA H100 80GB HBM3"; NULL or "" on the CPU
    int compute;          // compute capability times ten; 0 on the CPU
} PrecisionTarget;

PrecisionTarget precision_target(const Device *d);

// *effective = what `g` computes in on `t` under `asked`. Asked for a precision the device
// lacks: bf16 or fp16 on the CPU or on a GPU below its compute capability, that is
// STATUS_NO_DEVICE at the first layer that runs GEMMs or convolutions, naming the device.
// tf32 where there is no TF32 (the CPU, a GPU before 8.0) computes in fp32; when tf32 was
// asked for by name, `notice` gets one line saying so ("" otherwise), as for the default.
int precision_check(const Graph *g, const PrecisionConfig *asked, const PrecisionTarget *t,
                    Precision *effective, char *notice, size_t notice_size, Status *st);

// What computing in `p` means for GEMMs, convolutions and storage, for `trainer check`
// and the training header: "GEMM and convolution inputs rounded to bf16, fp32 sums; ...".
const char *precision_describe(Precision p, char *buf, size_t size);

#endif

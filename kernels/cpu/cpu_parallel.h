// A parallel for-loop for the CPU backend's memory-bound loops (im2col, col2im, pooling).
//
// OpenBLAS threads the GEMMs; everything between them ran on one core while OpenBLAS's
// workers spun idle on the others. These loops have independent iterations and enough of
// them, so splitting them over the cores pays as long as starting the split is cheap:
// the workers are started once and then woken per loop, not created per call.
#ifndef TRAINER_CPU_PARALLEL_H
#define TRAINER_CPU_PARALLEL_H

#include <stddef.h>

// fn(arg, begin, end) over [begin, end) ranges that together cover [0, n) exactly once.
typedef void (*CpuRangeFn)(void *arg, size_t begin, size_t end);

// Runs fn over [0, n), split into one contiguous range per thread (the caller runs one);
// as many threads as OpenBLAS is set to use. Runs serially when n * cost_per_item is
// under ~a few tens of microseconds of work, where waking the workers would cost more.
// `cost_per_item` is the work per iteration in rough units of one float touched.
// Calls from several threads take turns; fn must not call cpu_parallel_for itself.
void cpu_parallel_for(size_t n, size_t cost_per_item, CpuRangeFn fn, void *arg);

#endif

// The limits a launch is checked against when there is no GPU to ask. launch_check
// itself is inline in launch_check.h (the header says why).
#include "kernels/launch_check.h"

#include <stdio.h>

// What cudaGetDeviceProperties reports on every compute capability from 7.5 (Turing) to
// 12.x (Blackwell): the block and grid limits have not changed since Kepler, and 48 KiB
// is the shared memory a block gets without opting in to more.
void launch_limits_typical(LaunchLimits *limits) {
    limits->max_threads_per_block = 1024;
    limits->max_block_dim[0] = 1024;
    limits->max_block_dim[1] = 1024;
    limits->max_block_dim[2] = 64;
    limits->max_grid_dim[0] = 2147483647;
    limits->max_grid_dim[1] = 65535;
    limits->max_grid_dim[2] = 65535;
    limits->max_shared_per_block = (size_t)48 << 10;
    snprintf(limits->device, sizeof limits->device, "%s", "cuda (typical)");
}

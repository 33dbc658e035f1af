#include "kernels/cuda/cuda_fault.h"

int cuda_plant_out_of_bounds_write(const Backend *b, Status *st) {
    (void)b;
    status_fail(st, STATUS_NO_DEVICE, "this trainer was built without CUDA");
    return STATUS_NO_DEVICE;
}

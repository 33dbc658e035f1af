// The CUDA device query answers sanely on a real GPU; without one this test is skipped
// (exit 77) with the reason the runtime gave.
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "kernels/cuda/cuda_device.h"

int main(void) {
    CudaDeviceInfo devices[16];
    int count = 0;
    Status st;
    status_clear(&st);
    if (cuda_list_devices(devices, 16, &count, &st) || count == 0) {
        printf("skipped: no usable CUDA device: %s\n", st.message[0] ? st.message : "none visible");
        return 77;
    }
    for (int i = 0; i < count; i++) {
        printf("cuda:%d %s sm_%d%d, %d SMs, %zu MiB\n", i, devices[i].name,
               devices[i].compute_major, devices[i].compute_minor, devices[i].multiprocessors,
               devices[i].total_memory >> 20);
        CHECK_INT_EQ(devices[i].ordinal, i);
        CHECK(strlen(devices[i].name) > 0);
        CHECK(devices[i].compute_major >= 3);
        CHECK(devices[i].multiprocessors > 0);
        CHECK(devices[i].total_memory > 0);
    }
    CudaVersions v;
    cuda_versions(&v);
    CHECK(v.built_with_cuda);
    CHECK(v.runtime_version > 0);
    CHECK(v.driver_version > 0);
    CHECK(v.cudnn_version > 0);
    return test_exit_code("test_cuda_devices");
}

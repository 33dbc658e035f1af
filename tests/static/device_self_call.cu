// kernels/cuda/cuda_batchnorm_rows.cu as commit 4ff39e9 left it: the normalising loop moved
// into a helper, whose body became a call to itself. nvcc compiles it without a word and,
// at -O3, deletes the call, so the kernel never writes y. scripts/check-device-recursion.py
// must report it.
template <typename T>
__device__ static inline void normalise_rows(const T *x, T *y, long long rows, float scale) {
    normalise_rows(x, y, rows, scale);
}

template <typename T>
__global__ void normalise_kernel(const T *x, T *y, long long rows, float scale) {
    normalise_rows(x, y, rows, scale);
}

// The arithmetic of batch normalisation that every layout of its CUDA kernels shares: one
// block per channel and many blocks per channel (cuda_batchnorm.cu, [n, channels, spatial]
// tensors), and channels-last rows (cuda_batchnorm_rows.cu, [rows, channels]). One copy, so
// that the layouts differ only in which thread reads which value and in the order of the
// sums, never in how an element is rounded. Shared by those two .cu files only.
#ifndef TRAINER_CUDA_BATCHNORM_MATH_H
#define TRAINER_CUDA_BATCHNORM_MATH_H

#include <math.h>

#include "kernels/cuda/cuda_internal.h"
#include "kernels/cuda/cuda_storage.h"

// x * scale + shift, rounded after the multiply as the CPU's C (no FMA contraction)
// rounds it, so the elementwise part matches the reference bit for bit given the same
// statistics. The _rn intrinsics are never fused; the cost is nil in a memory-bound loop.
__device__ static inline float normalise(float x, float scale, float shift) {
    return __fadd_rn(__fmul_rn(x, scale), shift);
}

// 1 / sqrt(var + eps) from a channel's sum of squared deviations over m values, with the
// biased variance: what normalises, as in PyTorch.
__device__ static inline double channel_invstd(double squares, double m, float eps) {
    double var = squares / m;
    return 1.0 / sqrt(var + (double)eps);
}

// A channel's y = x * scale + shift. The CPU normalises in float with these float
// constants; so do we.
struct ChannelAffine {
    float scale, shift;
};

__device__ static inline ChannelAffine channel_affine(float mean, float invstd, float gamma,
                                                      float beta) {
    ChannelAffine a;
    a.scale = invstd * gamma;
    a.shift = __fsub_rn(beta, __fmul_rn(mean, a.scale));
    return a;
}

// What training forward keeps of channel c, from its mean and its sum of squared
// deviations over m values: save_mean and save_invstd (rounded to float, as the CPU saves
// them), and the running statistics. With one value the unbiased variance is 0/0: the
// running statistics are then left alone. One thread per channel calls it.
__device__ static inline void keep_statistics(int c, double mean, double squares, double m,
                                              float momentum, float eps, float *save_mean,
                                              float *save_invstd, float *running_mean,
                                              float *running_var) {
    save_mean[c] = (float)mean;
    save_invstd[c] = (float)channel_invstd(squares, m, eps);
    if (m > 1.0) {
        double unbiased = squares / (m - 1.0);
        running_mean[c] = (float)((1.0 - momentum) * running_mean[c] + momentum * mean);
        running_var[c] = (float)((1.0 - momentum) * running_var[c] + momentum * unbiased);
    }
}

// xhat rounded to float, as the CPU computes it.
__device__ static inline float channel_xhat(float x, float mean, float invstd) {
    return (x - mean) * invstd;
}

// dbeta = sum dy and dgamma = sum dy * xhat of channel c, added to what they hold when
// accumulate_params (otherwise they may hold garbage, and are only written).
__device__ static inline void write_param_gradients(int c, double sum_dy, double sum_dy_xhat,
                                                    int accumulate_params, float *dgamma,
                                                    float *dbeta) {
    dbeta[c] = (float)((accumulate_params ? (double)dbeta[c] : 0.0) + sum_dy);
    dgamma[c] = (float)((accumulate_params ? (double)dgamma[c] : 0.0) + sum_dy_xhat);
}

// One element's input gradient, scale * (dy - mean(dy) - xhat * mean(dy * xhat)) with
// scale = gamma * invstd (the means are 0 with fixed statistics), each operation rounded
// on its own as the CPU rounds it, and not fused into the accumulation that follows.
__device__ static inline float input_gradient(float x, float dy, float mean, float invstd,
                                              float scale, float mean_dy,
                                              float mean_dy_xhat) {
    float xhat = channel_xhat(x, mean, invstd);
    float centred = __fsub_rn(__fsub_rn(dy, mean_dy), __fmul_rn(xhat, mean_dy_xhat));
    return __fmul_rn(scale, centred);
}

// Element `at` of dx: input_gradient, added to what dx holds when accumulating (dx is read
// only then), rounded once on the store.
template <typename T>
__device__ static inline void store_input_gradient(const T *x, const T *dy, T *dx, size_t at,
                                                   float mean, float invstd, float scale,
                                                   float mean_dy, float mean_dy_xhat,
                                                   int accumulate_dx) {
    float g = input_gradient(storage_load(x, at), storage_load(dy, at), mean, invstd, scale,
                             mean_dy, mean_dy_xhat);
    storage_store(dx, at, accumulate_dx ? storage_load(dx, at) + g : g);
}

// One value's part of backward's two sums, dy and dy * xhat, xhat rounded to float as the
// CPU rounds it.
template <typename T>
__device__ static inline void add_backward_terms(const T *x, const T *dy, size_t at, float mean,
                                                 float invstd, double *sum_dy,
                                                 double *sum_dy_xhat) {
    float d = storage_load(dy, at);
    *sum_dy += (double)d;
    *sum_dy_xhat += (double)d * (double)channel_xhat(storage_load(x, at), mean, invstd);
}

// ---- --sync-batchnorm: statistics summed over processes ----------------------------------

// One value's part of a share's two sums: forward (dy NULL) x and x^2; backward dy and
// dy * xhat (add_backward_terms).
template <typename T>
__device__ static inline void add_share_value(const T *x, const T *dy, size_t at,
                                              float mean, float invstd, double *first,
                                              double *second) {
    if (dy) {
        add_backward_terms(x, dy, at, mean, invstd, first, second);
    } else {
        double v = (double)storage_load(x, at);
        *first += v;
        *second += v * v;
    }
}

// Channel c's two sums into `sums`; backward also writes this share's dgamma and dbeta.
__device__ static inline void keep_share_sums(int c, int channels, double first, double second,
                                              double *sums, float *dgamma, float *dbeta,
                                              int accumulate_params) {
    sums[c] = first;
    sums[channels + c] = second;
    if (dgamma) write_param_gradients(c, first, second, accumulate_params, dgamma, dbeta);
}

// A channel's statistics from the summed sum x and sum x^2 over m values (sums as
// keep_share_sums lays them out): the mean, the biased variance (clamped at 0, which
// E[x^2] - E[x]^2 can undershoot by rounding) and what normalises.
struct SummedStatistics {
    double mean, var;
    float invstd;
};

__device__ static inline SummedStatistics summed_statistics(const double *sums, int c,
                                                            int channels, double m, float eps) {
    SummedStatistics stats;
    stats.mean = sums[c] / m;
    stats.var = fmax(sums[channels + c] / m - stats.mean * stats.mean, 0.0);
    stats.invstd = (float)(1.0 / sqrt(stats.var + (double)eps));
    return stats;
}

// What training forward keeps of channel c from summed statistics: save_mean and
// save_invstd, and the running statistics unless the m values are one (0/0). One thread per
// channel calls it, on every rank, so that all keep the same running statistics.
__device__ static inline void keep_summed_statistics(int c, SummedStatistics stats, double m,
                                                     float momentum, float *save_mean,
                                                     float *save_invstd, float *running_mean,
                                                     float *running_var) {
    save_mean[c] = (float)stats.mean;
    save_invstd[c] = stats.invstd;
    if (m > 1.0) {
        double unbiased = stats.var * m / (m - 1.0);
        running_mean[c] = (float)((1.0 - momentum) * running_mean[c] + momentum * stats.mean);
        running_var[c] = (float)((1.0 - momentum) * running_var[c] + momentum * unbiased);
    }
}

#endif

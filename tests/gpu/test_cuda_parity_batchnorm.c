// The CUDA backend against the CPU reference, batch normalisation, --sync-batchnorm's split ops
// included (kernels/backend.h); parity_harness.c says how each op is checked and in which
// passes.

#include "parity_harness.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/cuda/cuda_batchnorm_rows_split.h"

typedef struct BnShape {
    int n, channels, spatial;
} BnShape;

// n * spatial == 1 (one value per channel: running statistics stay), dense layers
// (spatial 1), conv layers (spatial H*W), a large batch and a large image. Then the
// many-blocks-per-channel kernels (more than 16 384 values per channel, see
// cuda_channel_reduce.h): cnn-bn's two batchnorms at batch 1024 (49 and 13 blocks per
// channel), one sample of one channel (2 blocks), one channel whose 8 chunks end inside a
// sample's run, chunks not a multiple of the block (3 of 11 000), and spatial 1 (4 blocks).
// Then the channels-last rows kernels (cuda_batchnorm_rows.cu: spatial 1, at least 2^18
// values): cnn-bn's two batchnorms in NHWC at batch 128 (rows = n * h * w; 196 and 98
// chunks), five channels (51 threads each, one idle), 301 channels (two tiles of 151, the
// second with an idle thread), two channels (128 threads each), and 4000 channels over 16
// tiles, whose chunks the scratch cuts from 22 to 15.
static const BnShape bn_shapes[] = {
    {1, 1, 1}, {1, 3, 1}, {2, 3, 1}, {7, 1, 3}, {4, 5, 49}, {1, 8, 15},
    {128, 16, 1}, {3, 2, 1000}, {16, 32, 196},
    {1024, 32, 784}, {1024, 64, 196}, {1, 1, 16385}, {3, 1, 40000}, {33, 5, 1000},
    {50000, 3, 1},
    {100352, 32, 1}, {25088, 64, 1}, {70000, 5, 1}, {1500, 301, 1}, {131072, 2, 1},
    {1400, 4000, 1},
};
enum { BN_SHAPES = sizeof bn_shapes / sizeof bn_shapes[0] };

// Activations whose channels differ in mean (up to +-3) and spread (0.5 to 2), so a
// statistic taken over the wrong values shows.
static float *bn_input(const BnShape *s) {
    float *offset = uniform((size_t)s->channels, -3.0f, 3.0f);
    float *spread = uniform((size_t)s->channels, 0.5f, 2.0f);
    size_t count = (size_t)s->n * s->channels * s->spatial;
    float *x = floats(count);
    for (size_t i = 0; i < count; i++) {
        size_t c = i / (size_t)s->spatial % (size_t)s->channels;
        x[i] = offset[c] + spread[c] * (2.0f * rng_uniform(&rng) - 1.0f);
    }
    return x;
}

static size_t bn_channel(const BnShape *s, size_t i) {
    return i / (size_t)s->spatial % (size_t)s->channels;
}

// |gamma| (|xhat| + 1) + |beta|: what y = gamma * xhat + beta's error scales with, where
// xhat itself is off by ~1e-7 (and by ~1e-7 of one standard deviation from the mean).
static float *bn_output_magnitude(const BnShape *s, const float *x, const float *gamma,
                                  const float *beta, const float *mean, const float *invstd) {
    size_t count = (size_t)s->n * s->channels * s->spatial;
    float *mag = floats(count);
    for (size_t i = 0; i < count; i++) {
        size_t c = bn_channel(s, i);
        mag[i] = fabsf(gamma[c]) * (fabsf((x[i] - mean[c]) * invstd[c]) + 1.0f) + fabsf(beta[c]);
    }
    return mag;
}

static void batchnorm_training_case(const BnShape *s) {
    snprintf(shape, sizeof shape, "n=%d channels=%d spatial=%d", s->n, s->channels, s->spatial);
    Status st;
    status_clear(&st);
    size_t count = (size_t)s->n * s->channels * s->spatial, c = (size_t)s->channels;
    const float momentum = 0.1f, eps = 1e-5f;
    float *x = bn_input(s), *gamma = uniform(c, -1.5f, 1.5f), *beta = uniform(c, -1.0f, 1.0f);
    float *rm0 = uniform(c, -1.0f, 1.0f), *rv0 = uniform(c, 0.5f, 2.0f);
    float *d_x = dev_floats(x, count), *d_y = dev_poison_floats(count);
    float *d_gamma = dev_floats(gamma, c), *d_beta = dev_floats(beta, c);
    float *d_rm = dev_floats(rm0, c), *d_rv = dev_floats(rv0, c);
    float *d_mean = dev_poison_floats(c), *d_invstd = dev_poison_floats(c);
    BatchnormArgs args = {.n = s->n, .channels = s->channels, .spatial = s->spatial,
                          .momentum = momentum, .eps = eps};
    if (GPU_CALL(batchnorm_forward_training, &args, &(BatchnormForwardTensors){.x = d_x,
                 .y = d_y, .gamma = d_gamma, .beta = d_beta, .running_mean = d_rm,
                 .running_var = d_rv, .save_mean = d_mean, .save_invstd = d_invstd}))
        return;
    float *y = poisoned(count), *rm = copy_of(rm0, c), *rv = copy_of(rv0, c);
    float *mean = poisoned(c), *invstd = poisoned(c);
    if (CPU_CALL(batchnorm_forward_training, &args, &(BatchnormForwardTensors){.x = x,
                 .y = y, .gamma = gamma, .beta = beta, .running_mean = rm, .running_var = rv,
                 .save_mean = mean, .save_invstd = invstd}))
        return;
    // The mean's error scales with the channel's spread; the running mean's with what it
    // is made of; the variance and 1/std are sums of squares, relative to themselves.
    float *mean_mag = floats(c), *rm_mag = floats(c);
    for (size_t k = 0; k < c; k++) {
        mean_mag[k] = fabsf(mean[k]) + 1.0f / invstd[k];
        rm_mag[k] = (1.0f - momentum) * fabsf(rm0[k]) + momentum * mean_mag[k];
    }
    compare("batchnorm_forward_training", "y", fetch(d_y, count), y,
            bn_output_magnitude(s, x, gamma, beta, mean, invstd), count);
    compare("batchnorm_forward_training", "save_mean", fetch(d_mean, c), mean, mean_mag, c);
    compare("batchnorm_forward_training", "save_invstd", fetch(d_invstd, c), invstd, NULL, c);
    compare("batchnorm_forward_training", "running_mean", fetch(d_rm, c), rm, rm_mag, c);
    compare("batchnorm_forward_training", "running_var", fetch(d_rv, c), rv, NULL, c);
}

static void batchnorm_inference_case(const BnShape *s, int save) {
    snprintf(shape, sizeof shape, "n=%d channels=%d spatial=%d save=%s", s->n, s->channels,
             s->spatial, save ? "yes" : "NULL");
    Status st;
    status_clear(&st);
    size_t count = (size_t)s->n * s->channels * s->spatial, c = (size_t)s->channels;
    const float eps = 1e-5f;
    float *x = bn_input(s), *gamma = uniform(c, -1.5f, 1.5f), *beta = uniform(c, -1.0f, 1.0f);
    float *rm = uniform(c, -3.0f, 3.0f), *rv = uniform(c, 0.25f, 4.0f);
    float *d_x = dev_floats(x, count), *d_y = dev_poison_floats(count);
    float *d_gamma = dev_floats(gamma, c), *d_beta = dev_floats(beta, c);
    float *d_rm = dev_floats(rm, c), *d_rv = dev_floats(rv, c);
    float *d_mean = save ? dev_poison_floats(c) : NULL, *d_invstd = save ? dev_poison_floats(c) : NULL;
    BatchnormArgs args = {.n = s->n, .channels = s->channels, .spatial = s->spatial, .eps = eps};
    if (GPU_CALL(batchnorm_forward_inference, &args, &(BatchnormInferenceTensors){.x = d_x,
                 .y = d_y, .gamma = d_gamma, .beta = d_beta, .running_mean = d_rm,
                 .running_var = d_rv, .save_mean = d_mean, .save_invstd = d_invstd}))
        return;
    float *y = poisoned(count), *mean = poisoned(c), *invstd = poisoned(c);
    if (CPU_CALL(batchnorm_forward_inference, &args, &(BatchnormInferenceTensors){.x = x,
                 .y = y, .gamma = gamma, .beta = beta, .running_mean = rm, .running_var = rv,
                 .save_mean = mean, .save_invstd = invstd}))
        return;
    compare("batchnorm_forward_inference", "y", fetch(d_y, count), y,
            bn_output_magnitude(s, x, gamma, beta, mean, invstd), count);
    if (save) {
        compare_exact("batchnorm_forward_inference", "save_mean (= running_mean)", fetch(d_mean, c),
                      mean, c, 0, 0);
        compare("batchnorm_forward_inference", "save_invstd", fetch(d_invstd, c), invstd, NULL, c);
    }
    compare_exact("batchnorm_forward_inference", "running_mean (read only)", fetch(d_rm, c), rm,
                  c, 0, 0);
    compare_exact("batchnorm_forward_inference", "running_var (read only)", fetch(d_rv, c), rv, c, 0, 0);
}

static void batchnorm_backward_case(const BnShape *s, int batch_statistics, int with_dx,
                                    int accumulate_dx, int accumulate_params) {
    snprintf(shape, sizeof shape,
             "n=%d channels=%d spatial=%d batch_statistics=%d dx=%s accumulate_dx=%d "
             "accumulate_params=%d", s->n, s->channels, s->spatial, batch_statistics,
             with_dx ? "yes" : "NULL", accumulate_dx, accumulate_params);
    Status st;
    status_clear(&st);
    size_t count = (size_t)s->n * s->channels * s->spatial, c = (size_t)s->channels;
    float *x = bn_input(s), *dy = uniform(count, -1.0f, 1.0f);
    float *gamma = uniform(c, -1.5f, 1.5f), *beta = uniform(c, -1.0f, 1.0f);
    float *rm = uniform(c, -3.0f, 3.0f), *rv = uniform(c, 0.25f, 4.0f);
    // The saved statistics come from the CPU's forward, so only backward is compared.
    float *mean = floats(c), *invstd = floats(c), *scratch = floats(count);
    BatchnormArgs args = {.n = s->n, .channels = s->channels, .spatial = s->spatial,
                          .momentum = 0.1f, .eps = 1e-5f, .batch_statistics = batch_statistics,
                          .accumulate_dx = accumulate_dx, .accumulate_params = accumulate_params};
    int rc = batch_statistics
                 ? CPU_CALL(batchnorm_forward_training, &args, &(BatchnormForwardTensors){
                            .x = x, .y = scratch, .gamma = gamma, .beta = beta, .running_mean = rm,
                            .running_var = rv, .save_mean = mean, .save_invstd = invstd})
                 : CPU_CALL(batchnorm_forward_inference, &args, &(BatchnormInferenceTensors){
                            .x = x, .y = scratch, .gamma = gamma, .beta = beta, .running_mean = rm,
                            .running_var = rv, .save_mean = mean, .save_invstd = invstd});
    if (rc) return;
    float *dx0 = accumulate_dx ? uniform(count, -1.0f, 1.0f) : poisoned(count);
    float *dg0 = accumulate_params ? uniform(c, -1.0f, 1.0f) : poisoned(c);
    float *db0 = accumulate_params ? uniform(c, -1.0f, 1.0f) : poisoned(c);
    float *d_x = dev_floats(x, count), *d_dy = dev_floats(dy, count), *d_gamma = dev_floats(gamma, c);
    float *d_mean = dev_floats(mean, c), *d_invstd = dev_floats(invstd, c);
    float *d_dx = with_dx ? dev_floats(dx0, count) : NULL;
    float *d_dg = dev_floats(dg0, c), *d_db = dev_floats(db0, c);
    if (GPU_CALL(batchnorm_backward, &args, &(BatchnormBackwardTensors){.x = d_x, .dy = d_dy,
                 .gamma = d_gamma, .save_mean = d_mean, .save_invstd = d_invstd, .dx = d_dx,
                 .dgamma = d_dg, .dbeta = d_db}))
        return;
    float *dx = copy_of(dx0, count), *dg = copy_of(dg0, c), *db = copy_of(db0, c);
    if (CPU_CALL(batchnorm_backward, &args, &(BatchnormBackwardTensors){.x = x, .dy = dy,
                 .gamma = gamma, .save_mean = mean, .save_invstd = invstd,
                 .dx = with_dx ? dx : NULL, .dgamma = dg, .dbeta = db}))
        return;
    // Per channel: sum |dy| and sum |dy * xhat| (what dbeta's and dgamma's errors scale
    // with); dx's terms are dy, mean(dy) and xhat * mean(dy * xhat), times gamma * invstd.
    double *abs_dy = host_alloc(c * sizeof(double)), *abs_dy_xhat = host_alloc(c * sizeof(double));
    memset(abs_dy, 0, c * sizeof(double));
    memset(abs_dy_xhat, 0, c * sizeof(double));
    for (size_t i = 0; i < count; i++) {
        size_t k = bn_channel(s, i);
        abs_dy[k] += fabs((double)dy[i]);
        abs_dy_xhat[k] += fabs((double)dy[i] * ((x[i] - mean[k]) * invstd[k]));
    }
    float *dg_mag = floats(c), *db_mag = floats(c), *dx_mag = floats(count);
    for (size_t k = 0; k < c; k++) {
        db_mag[k] = (float)abs_dy[k] + (accumulate_params ? fabsf(db0[k]) : 0.0f);
        dg_mag[k] = (float)abs_dy_xhat[k] + (accumulate_params ? fabsf(dg0[k]) : 0.0f);
    }
    double m = (double)s->n * s->spatial;
    for (size_t i = 0; i < count; i++) {
        size_t k = bn_channel(s, i);
        double xhat = fabs((double)(x[i] - mean[k]) * invstd[k]);
        double terms = fabs(dy[i]);
        if (batch_statistics) terms += abs_dy[k] / m + xhat * abs_dy_xhat[k] / m;
        dx_mag[i] = (float)(fabs((double)gamma[k] * invstd[k]) * terms) +
                    (accumulate_dx ? fabsf(dx0[i]) : 0.0f);
    }
    compare("batchnorm_backward", "dbeta", fetch(d_db, c), db, db_mag, c);
    compare("batchnorm_backward", "dgamma", fetch(d_dg, c), dg, dg_mag, c);
    if (with_dx) compare("batchnorm_backward", "dx", fetch(d_dx, count), dx, dx_mag, count);
}

// ---- --sync-batchnorm's split ops: each op fed the same inputs on both backends ----

static double *dev_doubles_poisoned(size_t n) { return dev_poisoned(n * sizeof(double)); }

static double *fetch_doubles(const double *d, size_t n) {
    double *h = host_alloc(n * sizeof *h);
    memset(h, POISON_BYTE, n * sizeof *h);
    download(h, d, n * sizeof *h);
    return h;
}

// Two per-channel sums and the count, as floats for compare(): the sums against the sums
// of magnitudes in `mag` (2 * channels), the count exactly.
static void compare_channel_sums(const char *op, const double *got, const double *want,
                                 const float *mag, size_t c) {
    float *g = floats(2 * c), *w = floats(2 * c);
    for (size_t k = 0; k < 2 * c; k++) {
        g[k] = (float)got[k];
        w[k] = (float)want[k];
    }
    compare(op, "sums", g, w, mag, 2 * c);
    float gc = (float)got[2 * c], wc = (float)want[2 * c];
    compare_exact(op, "count", &gc, &wc, 1, 0, 0);
}

// batchnorm_channel_sums, then batchnorm_forward_with_sums from each backend's own sums
// (one rank's chain; the sum over ranks in between is NCCL's, not an op). `empty`: the
// second op on a share of no samples (n = 0) with the whole batch's sums, where only the
// saved and running statistics are written.
static void batchnorm_sync_forward_case(const BnShape *s, int empty) {
    snprintf(shape, sizeof shape, "n=%d channels=%d spatial=%d%s", s->n, s->channels, s->spatial,
             empty ? " (forward_with_sums on an empty share)" : "");
    Status st;
    status_clear(&st);
    size_t count = (size_t)s->n * s->channels * s->spatial, c = (size_t)s->channels;
    const float momentum = 0.1f;
    float *x = bn_input(s), *gamma = uniform(c, -1.5f, 1.5f), *beta = uniform(c, -1.0f, 1.0f);
    float *rm0 = uniform(c, -1.0f, 1.0f), *rv0 = uniform(c, 0.5f, 2.0f);
    float *d_x = dev_floats(x, count), *d_y = dev_poison_floats(count);
    float *d_gamma = dev_floats(gamma, c), *d_beta = dev_floats(beta, c);
    float *d_rm = dev_floats(rm0, c), *d_rv = dev_floats(rv0, c);
    float *d_mean = dev_poison_floats(c), *d_invstd = dev_poison_floats(c);
    double *d_sums = dev_doubles_poisoned(2 * c + 1);
    BatchnormArgs args = {.n = s->n, .channels = s->channels, .spatial = s->spatial,
                          .momentum = momentum, .eps = 1e-5f};
    BatchnormArgs share = args;
    share.n = empty ? 0 : s->n;
    if (GPU_CALL(batchnorm_channel_sums, &args, d_x, d_sums) ||
        GPU_CALL(batchnorm_forward_with_sums, &share, &(BatchnormForwardWithSumsTensors){.x = d_x,
                 .y = d_y, .gamma = d_gamma, .beta = d_beta, .sums = d_sums, .running_mean = d_rm,
                 .running_var = d_rv, .save_mean = d_mean, .save_invstd = d_invstd}))
        return;
    double *sums = host_alloc((2 * c + 1) * sizeof *sums);
    float *y = poisoned(count), *rm = copy_of(rm0, c), *rv = copy_of(rv0, c);
    float *mean = poisoned(c), *invstd = poisoned(c);
    if (CPU_CALL(batchnorm_channel_sums, &args, x, sums) ||
        CPU_CALL(batchnorm_forward_with_sums, &share, &(BatchnormForwardWithSumsTensors){.x = x,
                 .y = y, .gamma = gamma, .beta = beta, .sums = sums, .running_mean = rm,
                 .running_var = rv, .save_mean = mean, .save_invstd = invstd}))
        return;
    float *sums_mag = floats(2 * c), *mean_mag = floats(c), *rm_mag = floats(c);
    memset(sums_mag, 0, 2 * c * sizeof *sums_mag);
    for (size_t i = 0; i < count; i++) {
        sums_mag[bn_channel(s, i)] += fabsf(x[i]);
        sums_mag[c + bn_channel(s, i)] += x[i] * x[i];
    }
    for (size_t k = 0; k < c; k++) {
        mean_mag[k] = fabsf(mean[k]) + 1.0f / invstd[k];
        rm_mag[k] = (1.0f - momentum) * fabsf(rm0[k]) + momentum * mean_mag[k];
    }
    compare_channel_sums("batchnorm_channel_sums", fetch_doubles(d_sums, 2 * c + 1), sums,
                         sums_mag, c);
    if (!empty)
        compare("batchnorm_forward_with_sums", "y", fetch(d_y, count), y,
                bn_output_magnitude(s, x, gamma, beta, mean, invstd), count);
    else
        compare_exact("batchnorm_forward_with_sums", "y (untouched)", fetch(d_y, count),
                      poisoned(count), count, 0, 0);
    compare("batchnorm_forward_with_sums", "save_mean", fetch(d_mean, c), mean, mean_mag, c);
    // 1/std from sum x^2 / m - mean^2: relative to itself, as the two-pass one.
    compare("batchnorm_forward_with_sums", "save_invstd", fetch(d_invstd, c), invstd, NULL, c);
    compare("batchnorm_forward_with_sums", "running_mean", fetch(d_rm, c), rm, rm_mag, c);
    compare("batchnorm_forward_with_sums", "running_var", fetch(d_rv, c), rv, NULL, c);
}

// batchnorm_backward_channel_sums (with dgamma and dbeta), then
// batchnorm_backward_data_with_sums from each backend's own sums.
static void batchnorm_sync_backward_case(const BnShape *s, int accumulate_dx,
                                         int accumulate_params) {
    snprintf(shape, sizeof shape, "n=%d channels=%d spatial=%d accumulate_dx=%d "
             "accumulate_params=%d", s->n, s->channels, s->spatial, accumulate_dx,
             accumulate_params);
    Status st;
    status_clear(&st);
    size_t count = (size_t)s->n * s->channels * s->spatial, c = (size_t)s->channels;
    float *x = bn_input(s), *dy = uniform(count, -1.0f, 1.0f);
    float *gamma = uniform(c, -1.5f, 1.5f), *beta = uniform(c, -1.0f, 1.0f);
    float *rm = uniform(c, -3.0f, 3.0f), *rv = uniform(c, 0.25f, 4.0f);
    float *mean = floats(c), *invstd = floats(c), *scratch = floats(count);
    BatchnormArgs args = {.n = s->n, .channels = s->channels, .spatial = s->spatial,
                          .momentum = 0.1f, .eps = 1e-5f, .batch_statistics = 1,
                          .accumulate_dx = accumulate_dx, .accumulate_params = accumulate_params};
    if (CPU_CALL(batchnorm_forward_training, &args, &(BatchnormForwardTensors){.x = x,
                 .y = scratch, .gamma = gamma, .beta = beta, .running_mean = rm, .running_var = rv,
                 .save_mean = mean, .save_invstd = invstd}))
        return;
    float *dx0 = accumulate_dx ? uniform(count, -1.0f, 1.0f) : poisoned(count);
    float *dg0 = accumulate_params ? uniform(c, -1.0f, 1.0f) : poisoned(c);
    float *db0 = accumulate_params ? uniform(c, -1.0f, 1.0f) : poisoned(c);
    float *d_x = dev_floats(x, count), *d_dy = dev_floats(dy, count), *d_gamma = dev_floats(gamma, c);
    float *d_mean = dev_floats(mean, c), *d_invstd = dev_floats(invstd, c);
    float *d_dx = dev_floats(dx0, count), *d_dg = dev_floats(dg0, c), *d_db = dev_floats(db0, c);
    double *d_sums = dev_doubles_poisoned(2 * c + 1);
    if (GPU_CALL(batchnorm_backward_channel_sums, &args, &(BatchnormBackwardChannelSumsTensors){
                 .x = d_x, .dy = d_dy, .save_mean = d_mean, .save_invstd = d_invstd,
                 .sums = d_sums, .dgamma = d_dg, .dbeta = d_db}) ||
        GPU_CALL(batchnorm_backward_data_with_sums, &args, &(BatchnormBackwardDataWithSumsTensors){
                 .x = d_x, .dy = d_dy, .gamma = d_gamma, .save_mean = d_mean,
                 .save_invstd = d_invstd, .sums = d_sums, .dx = d_dx}))
        return;
    double *sums = host_alloc((2 * c + 1) * sizeof *sums);
    float *dx = copy_of(dx0, count), *dg = copy_of(dg0, c), *db = copy_of(db0, c);
    if (CPU_CALL(batchnorm_backward_channel_sums, &args, &(BatchnormBackwardChannelSumsTensors){
                 .x = x, .dy = dy, .save_mean = mean, .save_invstd = invstd, .sums = sums,
                 .dgamma = dg, .dbeta = db}) ||
        CPU_CALL(batchnorm_backward_data_with_sums, &args, &(BatchnormBackwardDataWithSumsTensors){
                 .x = x, .dy = dy, .gamma = gamma, .save_mean = mean, .save_invstd = invstd,
                 .sums = sums, .dx = dx}))
        return;
    // The magnitudes batchnorm_backward_case argues, per channel and per element.
    double *abs_dy = host_alloc(c * sizeof(double)), *abs_dy_xhat = host_alloc(c * sizeof(double));
    memset(abs_dy, 0, c * sizeof(double));
    memset(abs_dy_xhat, 0, c * sizeof(double));
    for (size_t i = 0; i < count; i++) {
        size_t k = bn_channel(s, i);
        abs_dy[k] += fabs((double)dy[i]);
        abs_dy_xhat[k] += fabs((double)dy[i] * ((x[i] - mean[k]) * invstd[k]));
    }
    float *sums_mag = floats(2 * c), *dg_mag = floats(c), *db_mag = floats(c);
    float *dx_mag = floats(count);
    for (size_t k = 0; k < c; k++) {
        sums_mag[k] = (float)abs_dy[k];
        sums_mag[c + k] = (float)abs_dy_xhat[k];
        db_mag[k] = (float)abs_dy[k] + (accumulate_params ? fabsf(db0[k]) : 0.0f);
        dg_mag[k] = (float)abs_dy_xhat[k] + (accumulate_params ? fabsf(dg0[k]) : 0.0f);
    }
    double m = (double)s->n * s->spatial;
    for (size_t i = 0; i < count; i++) {
        size_t k = bn_channel(s, i);
        double xhat = fabs((double)(x[i] - mean[k]) * invstd[k]);
        double terms = fabs(dy[i]) + abs_dy[k] / m + xhat * abs_dy_xhat[k] / m;
        dx_mag[i] = (float)(fabs((double)gamma[k] * invstd[k]) * terms) +
                    (accumulate_dx ? fabsf(dx0[i]) : 0.0f);
    }
    compare_channel_sums("batchnorm_backward_channel_sums", fetch_doubles(d_sums, 2 * c + 1), sums,
                         sums_mag, c);
    compare("batchnorm_backward_channel_sums", "dbeta", fetch(d_db, c), db, db_mag, c);
    compare("batchnorm_backward_channel_sums", "dgamma", fetch(d_dg, c), dg, dg_mag, c);
    compare("batchnorm_backward_data_with_sums", "dx", fetch(d_dx, count), dx, dx_mag, count);
}

// A rank with no samples in the step (n = 0): its forward and backward sums are zeros with
// a count of 0, dgamma and dbeta are zeros (or left as they were, accumulate_params), and
// backward_data_with_sums (given the whole batch's sums) leaves dx alone. All exact: the
// CPU writes the same zeros, and a launch of zero blocks would fail instead.
static void batchnorm_sync_empty_case(const BnShape *s, int accumulate_params) {
    snprintf(shape, sizeof shape, "n=0 (of %d) channels=%d spatial=%d accumulate_params=%d",
             s->n, s->channels, s->spatial, accumulate_params);
    Status st;
    status_clear(&st);
    size_t count = (size_t)s->n * s->channels * s->spatial, c = (size_t)s->channels;
    size_t words = 2 * (2 * c + 1);  // the sums as 32-bit words, for compare_exact
    float *x = bn_input(s), *dy = uniform(count, -1.0f, 1.0f), *gamma = uniform(c, -1.5f, 1.5f);
    float *mean = uniform(c, -1.0f, 1.0f), *invstd = uniform(c, 0.5f, 2.0f);
    float *dg0 = accumulate_params ? uniform(c, -1.0f, 1.0f) : poisoned(c);
    float *db0 = accumulate_params ? uniform(c, -1.0f, 1.0f) : poisoned(c);
    BatchnormArgs whole = {.n = s->n, .channels = s->channels, .spatial = s->spatial,
                           .momentum = 0.1f, .eps = 1e-5f, .batch_statistics = 1,
                           .accumulate_params = accumulate_params};
    BatchnormArgs empty = whole;
    empty.n = 0;
    float *d_x = dev_floats(x, count), *d_dy = dev_floats(dy, count);
    float *d_gamma = dev_floats(gamma, c), *d_mean = dev_floats(mean, c);
    float *d_invstd = dev_floats(invstd, c), *d_dg = dev_floats(dg0, c), *d_db = dev_floats(db0, c);
    float *d_dx = dev_poison_floats(count);
    double *d_forward = dev_doubles_poisoned(2 * c + 1), *d_backward = dev_doubles_poisoned(2 * c + 1);
    double *d_whole = dev_doubles_poisoned(2 * c + 1);
    if (GPU_CALL(batchnorm_channel_sums, &empty, d_x, d_forward) ||
        GPU_CALL(batchnorm_backward_channel_sums, &empty, &(BatchnormBackwardChannelSumsTensors){
                 .x = d_x, .dy = d_dy, .save_mean = d_mean, .save_invstd = d_invstd,
                 .sums = d_backward, .dgamma = d_dg, .dbeta = d_db}) ||
        GPU_CALL(batchnorm_backward_channel_sums, &whole, &(BatchnormBackwardChannelSumsTensors){
                 .x = d_x, .dy = d_dy, .save_mean = d_mean, .save_invstd = d_invstd,
                 .sums = d_whole, .dgamma = dev_poison_floats(c), .dbeta = dev_poison_floats(c)}) ||
        GPU_CALL(batchnorm_backward_data_with_sums, &empty, &(BatchnormBackwardDataWithSumsTensors){
                 .x = d_x, .dy = d_dy, .gamma = d_gamma, .save_mean = d_mean,
                 .save_invstd = d_invstd, .sums = d_whole, .dx = d_dx}))
        return;
    double *forward = host_alloc((2 * c + 1) * sizeof(double));
    double *backward = host_alloc((2 * c + 1) * sizeof(double));
    float *dg = copy_of(dg0, c), *db = copy_of(db0, c);
    if (CPU_CALL(batchnorm_channel_sums, &empty, x, forward) ||
        CPU_CALL(batchnorm_backward_channel_sums, &empty, &(BatchnormBackwardChannelSumsTensors){
                 .x = x, .dy = dy, .save_mean = mean, .save_invstd = invstd, .sums = backward,
                 .dgamma = dg, .dbeta = db}))
        return;
    compare_exact("batchnorm_channel_sums", "sums (empty share)",
                  fetch_doubles(d_forward, 2 * c + 1), forward, words, 0, 0);
    compare_exact("batchnorm_backward_channel_sums", "sums (empty share)",
                  fetch_doubles(d_backward, 2 * c + 1), backward, words, 0, 0);
    compare_exact("batchnorm_backward_channel_sums", "dgamma (empty share)", fetch(d_dg, c), dg,
                  c, 0, 0);
    compare_exact("batchnorm_backward_channel_sums", "dbeta (empty share)", fetch(d_db, c), db,
                  c, 0, 0);
    compare_exact("batchnorm_backward_data_with_sums", "dx (untouched)", fetch(d_dx, count),
                  poisoned(count), count, 0, 0);
}

static void test_batchnorm_sync(void) {
    if (HAVE(batchnorm_channel_sums) && HAVE(batchnorm_backward_channel_sums) &&
        HAVE(batchnorm_backward_data_with_sums))
        for (int s = 0; s < BN_SHAPES; s++)
            for (int acc = 0; acc <= 1; acc++) {
                batchnorm_sync_empty_case(&bn_shapes[s], acc);
                end_case();
            }
    if (HAVE(batchnorm_channel_sums) && HAVE(batchnorm_forward_with_sums))
        for (int s = 0; s < BN_SHAPES; s++)
            for (int empty = 0; empty <= 1; empty++) {
                batchnorm_sync_forward_case(&bn_shapes[s], empty);
                end_case();
            }
    if (HAVE(batchnorm_backward_channel_sums) && HAVE(batchnorm_backward_data_with_sums))
        for (int s = 0; s < BN_SHAPES; s++)
            for (int acc = 0; acc < 4; acc++) {
                batchnorm_sync_backward_case(&bn_shapes[s], acc & 1, acc >> 1);
                end_case();
            }
}

// The six rows shapes the comment above bn_shapes names must reach the rows kernels: one
// that missed would pass here on the other kernels.
static void check_rows_shapes(void) {
    int rows = 0;
    for (int s = 0; s < BN_SHAPES; s++)
        rows += batchnorm_rows_take(bn_shapes[s].n, bn_shapes[s].channels, bn_shapes[s].spatial);
    if (rows != 6) {
        fprintf(stderr, "FAIL batchnorm: %d of the shapes take the channels-last rows kernels, "
                "where the comment above bn_shapes names 6\n", rows);
        test_failures++;
    }
}

static void test_batchnorm(void) {
    if (HAVE(batchnorm_forward_training))
        for (int s = 0; s < BN_SHAPES; s++) {
            batchnorm_training_case(&bn_shapes[s]);
            end_case();
        }
    if (HAVE(batchnorm_forward_inference))
        for (int s = 0; s < BN_SHAPES; s++)
            for (int save = 0; save <= 1; save++) {
                batchnorm_inference_case(&bn_shapes[s], save);
                end_case();
            }
    if (HAVE(batchnorm_backward))
        for (int s = 0; s < BN_SHAPES; s++)
            for (int bs = 0; bs <= 1; bs++) {
                for (int acc = 0; acc < 4; acc++) {
                    batchnorm_backward_case(&bn_shapes[s], bs, 1, acc & 1, acc >> 1);
                    end_case();
                }
                batchnorm_backward_case(&bn_shapes[s], bs, 0, 0, bs);
                end_case();
            }
}

static void run(const ParityPass *pass) {
    if (pass->kind == PARITY_FP32) check_rows_shapes();
    if (section(pass->kind == PARITY_LEVERS_OFF
                    ? "batchnorm: one block per channel (batchnorm-split)"
                    : "batchnorm")) {
        test_batchnorm();
        test_batchnorm_sync();
    }
}

PARITY_MAIN("test_cuda_parity_batchnorm", BACKEND_BATCHNORM_OPS, PARITY_LEVERS_OFF, run)

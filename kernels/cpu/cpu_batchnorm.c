// Batch normalisation on [n, channels, spatial] tensors, the reference for the CUDA (cuDNN)
// version. One channel's values are n strided runs of `spatial` contiguous floats, so
// every loop walks a channel run by run and the inner loop stays contiguous.
//
// Sums are taken in double: a channel after a convolution holds batch * H * W values
// (128 * 32 * 32 = 131 072 for a CIFAR block), and a float sum of that many values loses
// about log2(131 072) = 17 of its 24 bits, enough to move the mean visibly.
//
// x, y, dy and dx may be stored in bf16 or f16 (BatchnormArgs.dtype): each op then widens
// its inputs into f32 scratch, runs the f32 arithmetic below unchanged, and rounds its one
// output (y or dx) once on the store, which is what the CUDA kernels do in registers.
#include <math.h>
#include <stdlib.h>

#include "kernels/cpu/cpu_ops.h"

static int check_sizes(int n, int channels, int spatial, Status *st) {
    if (n <= 0 || channels <= 0 || spatial <= 0)
        return status_fail(st, STATUS_RUNTIME_ERROR,
                           "batchnorm: bad sizes n=%d channels=%d spatial=%d", n, channels, spatial);
    return 0;
}

static const float *channel_run(const float *base, int sample, int c, int channels, int spatial) {
    return base + ((size_t)sample * (size_t)channels + (size_t)c) * (size_t)spatial;
}

static float *channel_run_mut(float *base, int sample, int c, int channels, int spatial) {
    return base + ((size_t)sample * (size_t)channels + (size_t)c) * (size_t)spatial;
}

// y = (x - mean) * invstd * gamma + beta over one channel.
static void normalise_channel(const float *x, float *y, int n, int c, int channels, int spatial,
                              float mean, float invstd, float gamma, float beta) {
    float scale = invstd * gamma, shift = beta - mean * scale;
    for (int s = 0; s < n; s++) {
        const float *xr = channel_run(x, s, c, channels, spatial);
        float *yr = channel_run_mut(y, s, c, channels, spatial);
        for (int k = 0; k < spatial; k++) yr[k] = xr[k] * scale + shift;
    }
}

// sum dy and sum dy * xhat over one channel: what both halves of backward reduce.
static void backward_sums_of_channel(const float *x, const float *dy, int n, int c, int channels,
                                     int spatial, float mean, float invstd, double *sum_dy,
                                     double *sum_dy_xhat) {
    double dy_total = 0.0, dy_xhat_total = 0.0;
    for (int s = 0; s < n; s++) {
        const float *xr = channel_run(x, s, c, channels, spatial);
        const float *dyr = channel_run(dy, s, c, channels, spatial);
        for (int k = 0; k < spatial; k++) {
            dy_total += dyr[k];
            dy_xhat_total += (double)dyr[k] * ((xr[k] - mean) * invstd);
        }
    }
    *sum_dy = dy_total;
    *sum_dy_xhat = dy_xhat_total;
}

// dx over one channel from the channel's mean of dy and of dy * xhat: the same formula
// whether those means are this batch's or the sums over every rank's share.
static void input_gradient_of_channel(const float *x, const float *dy, float *dx, int n, int c,
                                      int channels, int spatial, float mean, float invstd,
                                      float scale, float mean_dy, float mean_dy_xhat,
                                      int accumulate) {
    for (int s = 0; s < n; s++) {
        const float *xr = channel_run(x, s, c, channels, spatial);
        const float *dyr = channel_run(dy, s, c, channels, spatial);
        float *dxr = channel_run_mut(dx, s, c, channels, spatial);
        for (int k = 0; k < spatial; k++) {
            float xhat = (xr[k] - mean) * invstd;
            float g = scale * (dyr[k] - mean_dy - xhat * mean_dy_xhat);
            dxr[k] = accumulate ? dxr[k] + g : g;
        }
    }
}

// running = (1 - momentum) * running + momentum * batch statistic, the variance unbiased.
static void update_running(float *running_mean, float *running_var, int c, float momentum,
                           double mean, double unbiased_var) {
    running_mean[c] = (float)((1.0 - momentum) * running_mean[c] + momentum * mean);
    running_var[c] = (float)((1.0 - momentum) * running_var[c] + momentum * unbiased_var);
}

// The end of both training forwards for channel c, from its statistics over m values:
// normalise with the biased variance `var`, save mean and invstd for backward, and update
// the running statistics with the unbiased variance, squares / (m - 1), where it is
// defined (m > 1). `squares` is the sum of squared deviations from the mean.
static void normalise_with_batch_statistics(const BatchnormArgs *a, const float *x, float *y,
                                            const BatchnormForwardTensors *t, int c, double m,
                                            double mean, double var, double squares) {
    double invstd = 1.0 / sqrt(var + (double)a->eps);
    t->save_mean[c] = (float)mean;
    t->save_invstd[c] = (float)invstd;
    normalise_channel(x, y, a->n, c, a->channels, a->spatial, (float)mean, (float)invstd,
                      t->gamma[c], t->beta[c]);
    if (m > 1.0)
        update_running(t->running_mean, t->running_var, c, a->momentum, mean,
                       squares / (m - 1.0));
}

// The forward ops compute on f32 x and y (staged from 16-bit storage by the caller) and
// take the rest of their tensors from t.
static int forward_training_f32(const BatchnormArgs *a, const float *x, float *y,
                                const BatchnormForwardTensors *t, Status *st) {
    int n = a->n, channels = a->channels, spatial = a->spatial;
    TRY(check_sizes(n, channels, spatial, st));
    double m = (double)n * (double)spatial;
    for (int c = 0; c < channels; c++) {
        double sum = 0.0;
        for (int s = 0; s < n; s++) {
            const float *xr = channel_run(x, s, c, channels, spatial);
            for (int k = 0; k < spatial; k++) sum += xr[k];
        }
        double mean = sum / m;
        // Two passes rather than E[x^2] - E[x]^2, which cancels badly when |mean| >> std.
        double squares = 0.0;
        for (int s = 0; s < n; s++) {
            const float *xr = channel_run(x, s, c, channels, spatial);
            for (int k = 0; k < spatial; k++) {
                double d = xr[k] - mean;
                squares += d * d;
            }
        }
        double var = squares / m;  // biased: what normalises, as in PyTorch
        normalise_with_batch_statistics(a, x, y, t, c, m, mean, var, squares);
    }
    return 0;
}

static int forward_inference_f32(const BatchnormArgs *a, const float *x, float *y,
                                 const BatchnormInferenceTensors *t, Status *st) {
    const float *gamma = t->gamma, *beta = t->beta;
    const float *running_mean = t->running_mean, *running_var = t->running_var;
    float *save_mean = t->save_mean, *save_invstd = t->save_invstd;
    int n = a->n, channels = a->channels, spatial = a->spatial;
    float eps = a->eps;
    TRY(check_sizes(n, channels, spatial, st));
    for (int c = 0; c < channels; c++) {
        float invstd = (float)(1.0 / sqrt((double)running_var[c] + (double)eps));
        if (save_mean) save_mean[c] = running_mean[c];
        if (save_invstd) save_invstd[c] = invstd;
        normalise_channel(x, y, n, c, channels, spatial, running_mean[c], invstd, gamma[c], beta[c]);
    }
    return 0;
}

// With xhat = (x - mean) * invstd and y = gamma * xhat + beta over m = n * spatial values:
//   dbeta = sum dy, dgamma = sum dy * xhat.
//   Fixed statistics: dx = dy * gamma * invstd.
//   Batch statistics, where mean and invstd depend on every x of the channel:
//   dx = gamma * invstd / m * (m * dy - dbeta - xhat * dgamma).
static int backward_f32(const BatchnormArgs *a, const float *x, const float *dy,
                        const float *gamma, const float *save_mean, const float *save_invstd,
                        float *dx, float *dgamma, float *dbeta, Status *st) {
    int n = a->n, channels = a->channels, spatial = a->spatial;
    int batch_statistics = a->batch_statistics, accumulate_dx = a->accumulate_dx;
    int accumulate_params = a->accumulate_params;
    TRY(check_sizes(n, channels, spatial, st));
    double m = (double)n * (double)spatial;
    for (int c = 0; c < channels; c++) {
        float mean = save_mean[c], invstd = save_invstd[c];
        double sum_dy, sum_dy_xhat;
        backward_sums_of_channel(x, dy, n, c, channels, spatial, mean, invstd, &sum_dy,
                                 &sum_dy_xhat);
        dbeta[c] = (float)((accumulate_params ? dbeta[c] : 0.0) + sum_dy);
        dgamma[c] = (float)((accumulate_params ? dgamma[c] : 0.0) + sum_dy_xhat);
        if (!dx) continue;
        float scale = gamma[c] * invstd;
        float mean_dy = batch_statistics ? (float)(sum_dy / m) : 0.0f;
        float mean_dy_xhat = batch_statistics ? (float)(sum_dy_xhat / m) : 0.0f;
        input_gradient_of_channel(x, dy, dx, n, c, channels, spatial, mean, invstd, scale,
                                  mean_dy, mean_dy_xhat, accumulate_dx);
    }
    return 0;
}

// ---- the same, cut where statistics are summed over processes (--sync-batchnorm) ----
//
// One sum over the ranks per direction, as PyTorch's SyncBatchNorm, so the forward
// statistics are sum x and sum x^2 rather than the two passes above (which would need a
// second sum over the ranks for the squared deviations from the global mean). Both are
// accumulated in double: the variance sum x^2 / m - mean^2 loses about
// 2 * log2(|mean| / std) of double's 53 bits to cancellation, so it still holds float's 24
// while |mean| < 2^14 std, far beyond what reaches a batchnorm (activations of a trained
// network have |mean| of a few std at most).

static int check_share_sizes(int n, int channels, int spatial, Status *st) {
    if (n < 0 || channels <= 0 || spatial <= 0)
        return status_fail(st, STATUS_RUNTIME_ERROR,
                           "batchnorm: bad sizes n=%d channels=%d spatial=%d", n, channels, spatial);
    return 0;
}

static int channel_sums_f32(const BatchnormArgs *a, const float *x, double *sums, Status *st) {
    int n = a->n, channels = a->channels, spatial = a->spatial;
    TRY(check_share_sizes(n, channels, spatial, st));
    for (int c = 0; c < channels; c++) {
        double sum = 0.0, squares = 0.0;
        for (int s = 0; s < n; s++) {
            const float *xr = channel_run(x, s, c, channels, spatial);
            for (int k = 0; k < spatial; k++) {
                double v = xr[k];
                sum += v;
                squares += v * v;
            }
        }
        sums[c] = sum;
        sums[channels + c] = squares;
    }
    sums[2 * channels] = (double)n * (double)spatial;
    return 0;
}

// The values per channel over every rank's share (the sums' last entry) into *m, checked:
// the ops that finish from the sums need at least one.
static int summed_count(const BatchnormArgs *a, const double *sums, double *m, Status *st) {
    TRY(check_share_sizes(a->n, a->channels, a->spatial, st));
    *m = sums[2 * a->channels];
    if (*m < 1.0)
        return status_fail(st, STATUS_RUNTIME_ERROR, "batchnorm: the ranks' shares hold %g values "
                           "per channel in all", *m);
    return 0;
}

static int forward_with_sums_f32(const BatchnormArgs *a, const float *x, float *y,
                                 const BatchnormForwardTensors *t, const double *sums,
                                 Status *st) {
    int channels = a->channels;
    double m;
    TRY(summed_count(a, sums, &m, st));
    for (int c = 0; c < channels; c++) {
        double mean = sums[c] / m;
        double var = sums[channels + c] / m - mean * mean;
        if (var < 0.0) var = 0.0;  // rounding, where every value is (nearly) the same
        normalise_with_batch_statistics(a, x, y, t, c, m, mean, var, var * m);
    }
    return 0;
}

static int backward_channel_sums_f32(const BatchnormArgs *a, const float *x, const float *dy,
                                     const float *save_mean, const float *save_invstd,
                                     double *sums, float *dgamma, float *dbeta, Status *st) {
    int n = a->n, channels = a->channels, spatial = a->spatial;
    TRY(check_share_sizes(n, channels, spatial, st));
    for (int c = 0; c < channels; c++) {
        float mean = save_mean[c], invstd = save_invstd[c];
        double sum_dy, sum_dy_xhat;
        backward_sums_of_channel(x, dy, n, c, channels, spatial, mean, invstd, &sum_dy,
                                 &sum_dy_xhat);
        sums[c] = sum_dy;
        sums[channels + c] = sum_dy_xhat;
        dbeta[c] = (float)((a->accumulate_params ? dbeta[c] : 0.0) + sum_dy);
        dgamma[c] = (float)((a->accumulate_params ? dgamma[c] : 0.0) + sum_dy_xhat);
    }
    sums[2 * channels] = (double)n * (double)spatial;
    return 0;
}

static int backward_data_with_sums_f32(const BatchnormArgs *a, const float *x, const float *dy,
                                       const float *gamma, const float *save_mean,
                                       const float *save_invstd, const double *sums, float *dx,
                                       Status *st) {
    int n = a->n, channels = a->channels, spatial = a->spatial;
    double m;
    TRY(summed_count(a, sums, &m, st));
    for (int c = 0; c < channels; c++) {
        float mean = save_mean[c], invstd = save_invstd[c], scale = gamma[c] * invstd;
        float mean_dy = (float)(sums[c] / m), mean_dy_xhat = (float)(sums[channels + c] / m);
        input_gradient_of_channel(x, dy, dx, n, c, channels, spatial, mean, invstd, scale,
                                  mean_dy, mean_dy_xhat, a->accumulate_dx);
    }
    return 0;
}

// ---- the ops: x, y, dy and dx stored as a->dtype ----------------------------------------

// What an op computes with: f32 views of its stored operands, each the stored memory
// itself in f32 or a copy in scratch (owned, freed by unstage). `out` is y or dx: a
// widened copy where the op adds to it (accumulate_dx), else uninitialised scratch.
typedef struct Staged {
    const float *x, *dy;
    float *out;
    float *owned[3];
} Staged;

static size_t stored_count(const BatchnormArgs *a) {
    return (size_t)(a->n > 0 ? a->n : 0) * (size_t)a->channels * (size_t)a->spatial;
}

static const float *stage_input(const void *src, DType dtype, size_t count, float **owned,
                                Status *st) {
    if (!src || dtype == DTYPE_F32) return src;
    *owned = cpu_widen(src, dtype, count, st);
    return *owned;
}

static void unstage_free(Staged *s) {
    for (int i = 0; i < 3; i++) free(s->owned[i]);
}

// Sizes are checked first: stored_count trusts them.
static int stage(const BatchnormArgs *a, const void *x, const void *dy, void *out, int read_out,
                 Staged *s, Status *st) {
    DType dtype = a->dtype;
    size_t count = stored_count(a);
    *s = (Staged){0};
    s->x = stage_input(x, dtype, count, &s->owned[0], st);
    if (x && !s->x) return st->code;
    s->dy = stage_input(dy, dtype, count, &s->owned[1], st);
    if (dy && !s->dy) {
        unstage_free(s);
        return st->code;
    }
    if (!out || dtype == DTYPE_F32) {
        s->out = out;
        return 0;
    }
    s->out = cpu_wide_room(out, dtype, count, read_out, st);
    if (!s->out) {
        unstage_free(s);
        return st->code;
    }
    s->owned[2] = s->out;
    return 0;
}

// Rounds the op's output into its storage once (when the op succeeded) and frees the
// scratch.
static int unstage(Staged *s, const BatchnormArgs *a, void *out, int rc) {
    if (!rc && out && s->out != out) cpu_narrow(s->out, out, a->dtype, stored_count(a));
    unstage_free(s);
    return rc;
}

static int check_args(const Backend *b, const BatchnormArgs *a, const char *op, int share,
                      Status *st) {
    TRY(backend_dtype_check(b, a->dtype, op, st));
    return share ? check_share_sizes(a->n, a->channels, a->spatial, st)
                 : check_sizes(a->n, a->channels, a->spatial, st);
}

static int cpu_batchnorm_forward_training(const Backend *b, const BatchnormArgs *a,
                                          const BatchnormForwardTensors *t, Status *st) {
    TRY(check_args(b, a, "batchnorm_forward_training", 0, st));
    Staged s;
    TRY(stage(a, t->x, NULL, t->y, 0, &s, st));
    return unstage(&s, a, t->y, forward_training_f32(a, s.x, s.out, t, st));
}

static int cpu_batchnorm_forward_inference(const Backend *b, const BatchnormArgs *a,
                                           const BatchnormInferenceTensors *t, Status *st) {
    TRY(check_args(b, a, "batchnorm_forward_inference", 0, st));
    Staged s;
    TRY(stage(a, t->x, NULL, t->y, 0, &s, st));
    return unstage(&s, a, t->y, forward_inference_f32(a, s.x, s.out, t, st));
}

static int cpu_batchnorm_backward(const Backend *b, const BatchnormArgs *a,
                                  const BatchnormBackwardTensors *t, Status *st) {
    TRY(check_args(b, a, "batchnorm_backward", 0, st));
    Staged s;
    TRY(stage(a, t->x, t->dy, t->dx, a->accumulate_dx, &s, st));
    return unstage(&s, a, t->dx,
                   backward_f32(a, s.x, s.dy, t->gamma, t->save_mean, t->save_invstd, s.out,
                                t->dgamma, t->dbeta, st));
}

static int cpu_batchnorm_channel_sums(const Backend *b, const BatchnormArgs *a, const void *x,
                                      double *sums, Status *st) {
    TRY(check_args(b, a, "batchnorm_channel_sums", 1, st));
    Staged s;
    TRY(stage(a, x, NULL, NULL, 0, &s, st));
    return unstage(&s, a, NULL, channel_sums_f32(a, s.x, sums, st));
}

static int cpu_batchnorm_forward_with_sums(const Backend *b, const BatchnormArgs *a,
                                           const BatchnormForwardWithSumsTensors *t, Status *st) {
    TRY(check_args(b, a, "batchnorm_forward_with_sums", 1, st));
    Staged s;
    // Its tensors but the sums, as the other training forward takes them.
    const BatchnormForwardTensors forward = {t->x, t->y, t->gamma, t->beta, t->running_mean,
                                             t->running_var, t->save_mean, t->save_invstd};
    TRY(stage(a, t->x, NULL, t->y, 0, &s, st));
    return unstage(&s, a, t->y, forward_with_sums_f32(a, s.x, s.out, &forward, t->sums, st));
}

static int cpu_batchnorm_backward_channel_sums(const Backend *b, const BatchnormArgs *a,
                                               const BatchnormBackwardChannelSumsTensors *t,
                                               Status *st) {
    TRY(check_args(b, a, "batchnorm_backward_channel_sums", 1, st));
    Staged s;
    TRY(stage(a, t->x, t->dy, NULL, 0, &s, st));
    return unstage(&s, a, NULL,
                   backward_channel_sums_f32(a, s.x, s.dy, t->save_mean, t->save_invstd, t->sums,
                                             t->dgamma, t->dbeta, st));
}

static int cpu_batchnorm_backward_data_with_sums(const Backend *b, const BatchnormArgs *a,
                                                 const BatchnormBackwardDataWithSumsTensors *t,
                                                 Status *st) {
    TRY(check_args(b, a, "batchnorm_backward_data_with_sums", 1, st));
    Staged s;
    TRY(stage(a, t->x, t->dy, t->dx, a->accumulate_dx, &s, st));
    return unstage(&s, a, t->dx,
                   backward_data_with_sums_f32(a, s.x, s.dy, t->gamma, t->save_mean, t->save_invstd,
                                               t->sums, s.out, st));
}

void cpu_register_batchnorm_ops(Backend *table) {
    table->batchnorm_forward_training = cpu_batchnorm_forward_training;
    table->batchnorm_forward_inference = cpu_batchnorm_forward_inference;
    table->batchnorm_backward = cpu_batchnorm_backward;
    table->batchnorm_channel_sums = cpu_batchnorm_channel_sums;
    table->batchnorm_forward_with_sums = cpu_batchnorm_forward_with_sums;
    table->batchnorm_backward_channel_sums = cpu_batchnorm_backward_channel_sums;
    table->batchnorm_backward_data_with_sums = cpu_batchnorm_backward_data_with_sums;
}

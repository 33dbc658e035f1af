// The CUDA batchnorm ops on bf16 and f16 activations against the CPU ops in the same
// storage (kernels/cpu/cpu_batchnorm.c, which tests/unit/test_storage16_batchnorm.c holds
// to f32 storage rounded once): all seven ops, in both layouts of cuda_batchnorm.cu, one
// block per channel (many channels, or any shape with the batchnorm-split lever off) and
// many blocks per channel (few channels of many values each, cut by channel_split), and
// on channels-last rows (cuda_batchnorm_rows.cu: large shapes with spatial 1).
//
// Tolerances, and why. Both sides widen the same stored values exactly and sum them in
// double, in different orders: the statistics and sums then agree to double's rounding
// (1e-9 of the sum of |terms| is far above it) and, rounded to f32, within a unit of f32
// (1e-4 of the magnitude, the fp32 parity bound of tests/gpu/parity_harness.c). Given
// those, y and dx are the same f32 arithmetic (cuda_batchnorm.cu rounds each operation as
// the CPU does) and then one rounding to the storage type of two values that close: up to
// one unit in the last place apart, 2^-8 of the value in bf16, 2^-11 in f16. So y and dx
// are held to 2 such units of the CPU's value plus 1e-4 of the element's magnitude (the
// sum of the |terms| that make it); a wrong index, a missed element or a second rounding
// is off by far more.
//
// Skipped (77) when no CUDA backend opens; bf16 alone is skipped below compute capability
// 8.0.
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "base/lever.h"
#include "base/rng.h"
#include "kernels/backend.h"
#include "cuda_or_skip.h"
#include "device_buffers.h"
#include "stored16.h"
#include "kernels/cuda/cuda_batchnorm_rows_split.h"
#include "kernels/cuda/cuda_device.h"

#define F32_RTOL 1e-4
#define SUMS_RTOL 1e-9

static const Backend *gpu, *cpu;
static DType storage;
static const char *layout = "";  // the case being run, for messages
static char shape[256];

// ---- host and device buffers ------------------------------------------------------------

static void fail_status(const char *what, const Status *st) {
    fprintf(stderr, "FAIL %s [%s %s]: %s\n", what, dtype_name(storage), shape, st->message);
    test_failures++;
}

static DeviceBuffers dev = {.report = fail_status};

// n values uniform in [lo, hi) rounded to the storage type: bits and widened.
static uint16_t *stored_random(Rng *rng, size_t n, float lo, float hi, float *wide) {
    uint16_t *bits = calloc(n ? n : 1, sizeof *bits);
    for (size_t i = 0; bits && i < n; i++) {
        float v = lo + (hi - lo) * rng_uniform(rng);
        bits[i] = stored16_from_f32(v, storage);
        wide[i] = stored16_to_f32(bits[i], storage);
    }
    return bits;
}

static void random_floats(Rng *rng, float *v, size_t n, float lo, float hi) {
    for (size_t i = 0; i < n; i++) v[i] = lo + (hi - lo) * rng_uniform(rng);
}

// ---- comparisons --------------------------------------------------------------------------

// got within units * ulp(storage) of |want| plus F32_RTOL of mag (both widened to f32).
static void compare_stored(const char *op, const char *what, const uint16_t *got,
                           const uint16_t *want, const double *mag, size_t n) {
    double unit = storage == DTYPE_BF16 ? 1.0 / 256.0 : 1.0 / 2048.0;
    size_t bad = 0, first = 0;
    double worst = 0.0;
    for (size_t i = 0; i < n; i++) {
        double g = stored16_to_f32(got[i], storage), w = stored16_to_f32(want[i], storage);
        double bound = 2.0 * unit * fabs(w) + F32_RTOL * mag[i];
        double ratio = fabs(g - w) / (bound > 0.0 ? bound : 1e-30);
        if (!(ratio <= 1.0) && bad++ == 0) first = i;
        if (ratio > worst || ratio != ratio) worst = ratio;
    }
    if (bad) {
        fprintf(stderr, "FAIL %s %s [%s %s, %s]: %zu of %zu values off (first [%zu]: GPU %.8g "
                "CPU %.8g, magnitude %.3g)\n", op, what, dtype_name(storage), shape, layout, bad,
                n, first, stored16_to_f32(got[first], storage),
                stored16_to_f32(want[first], storage), mag[first]);
        test_failures++;
    } else {
        printf("  %-36s %-10s worst %.2f of the bound\n", op, what, worst);
    }
}

// f32 results (statistics, parameter gradients): within rtol of mag (|want| when NULL).
static void compare_floats(const char *op, const char *what, const float *got, const float *want,
                           const double *mag, size_t n) {
    for (size_t i = 0; i < n; i++) {
        double m = mag ? mag[i] : fabs(want[i]);
        if (fabs((double)got[i] - want[i]) <= F32_RTOL * m) continue;
        fprintf(stderr, "FAIL %s %s [%s %s, %s]: [%zu] GPU %.9g CPU %.9g (magnitude %.3g)\n", op,
                what, dtype_name(storage), shape, layout, i, got[i], want[i], m);
        test_failures++;
        return;
    }
}

// The 2 * channels + 1 sums: each within SUMS_RTOL of its magnitude, the count exact.
static void compare_sums(const char *op, const double *got, const double *want,
                         const double *mag, int channels) {
    for (int i = 0; i < 2 * channels; i++) {
        if (fabs(got[i] - want[i]) <= SUMS_RTOL * mag[i]) continue;
        fprintf(stderr, "FAIL %s sums [%s %s, %s]: [%d] GPU %.17g CPU %.17g\n", op,
                dtype_name(storage), shape, layout, i, got[i], want[i]);
        test_failures++;
        return;
    }
    CHECK(got[2 * channels] == want[2 * channels]);
}

// ---- one shape ----------------------------------------------------------------------------

typedef struct BnShape {
    int n, channels, spatial;
} BnShape;

// Everything one shape's cases read: host inputs (stored and widened), the CPU's statistics
// from a training forward, and per-element magnitudes.
typedef struct Case {
    BnShape s;
    size_t count, c;
    uint16_t *x, *dy, *dx_before;
    float *xw, *dyw, *dx_before_w;
    float *gamma, *beta, *rm, *rv, *mean, *invstd;
} Case;

// The channel of element i of [n, channels, spatial].
static size_t channel_of(const Case *k, size_t i) {
    return (i / (size_t)k->s.spatial) % k->c;
}

static int case_make(Case *k, const BnShape *s, Rng *rng) {
    memset(k, 0, sizeof *k);
    k->s = *s;
    k->count = (size_t)s->n * s->channels * s->spatial;
    k->c = (size_t)s->channels;
    size_t n = k->count ? k->count : 1;
    k->xw = calloc(n, sizeof(float));
    k->dyw = calloc(n, sizeof(float));
    k->dx_before_w = calloc(n, sizeof(float));
    float *per_channel = calloc(6 * k->c, sizeof(float));
    k->gamma = per_channel;  // case_free frees the block through it, whatever fails below
    if (!k->xw || !k->dyw || !k->dx_before_w || !per_channel) return -1;
    k->beta = per_channel + k->c;
    k->rm = per_channel + 2 * k->c;
    k->rv = per_channel + 3 * k->c;
    k->mean = per_channel + 4 * k->c;
    k->invstd = per_channel + 5 * k->c;
    k->x = stored_random(rng, k->count, -1.0f, 3.0f, k->xw);  // off centre: the mean matters
    k->dy = stored_random(rng, k->count, -1.0f, 1.0f, k->dyw);
    k->dx_before = stored_random(rng, k->count, -0.5f, 0.5f, k->dx_before_w);
    random_floats(rng, k->gamma, k->c, 0.5f, 1.5f);
    random_floats(rng, k->beta, k->c, -0.5f, 0.5f);
    random_floats(rng, k->rm, k->c, -0.2f, 0.2f);
    random_floats(rng, k->rv, k->c, 0.5f, 2.0f);
    if (!k->x || !k->dy || !k->dx_before) return -1;
    // this batch's statistics, as a training forward saves them for backward
    float *rm = malloc(2 * k->c * sizeof *rm);
    uint16_t *y = calloc(n, sizeof *y);
    if (!rm || !y) {
        free(rm);
        free(y);
        return -1;
    }
    memcpy(rm, k->rm, 2 * k->c * sizeof *rm);
    BatchnormArgs args = {.n = s->n, .channels = s->channels, .spatial = s->spatial,
                          .momentum = 0.1f, .eps = 1e-5f, .dtype = storage};
    Status st;
    status_clear(&st);
    int rc = cpu->batchnorm_forward_training(cpu, &args, &(BatchnormForwardTensors){
                                             .x = k->x, .y = y, .gamma = k->gamma, .beta = k->beta,
                                             .running_mean = rm, .running_var = rm + k->c,
                                             .save_mean = k->mean, .save_invstd = k->invstd}, &st);
    if (rc) fail_status("the CPU's forward", &st);
    free(rm);
    free(y);
    return rc;
}

static void case_free(Case *k) {
    free(k->x);
    free(k->dy);
    free(k->dx_before);
    free(k->xw);
    free(k->dyw);
    free(k->dx_before_w);
    free(k->gamma);  // the per-channel block
}

// |x * scale| + |shift| per element: what y = x * scale + shift rounds with.
static double *y_magnitudes(const Case *k, const float *mean, const float *invstd) {
    double *mag = calloc(k->count ? k->count : 1, sizeof *mag);
    for (size_t i = 0; mag && i < k->count; i++) {
        size_t c = channel_of(k, i);
        double scale = (double)invstd[c] * k->gamma[c];
        mag[i] = fabs(k->xw[i] * scale) + fabs(k->beta[c] - mean[c] * scale);
    }
    return mag;
}

// dx = gamma * invstd * (dy - mean(dy) - xhat * mean(dy * xhat)) (+ dx before): the sum of
// its terms' sizes per element, with the means from the same widened values.
static double *dx_magnitudes(const Case *k, int batch_statistics, int accumulate) {
    double *mag = calloc(k->count ? k->count : 1, sizeof *mag);
    double *means = calloc(2 * k->c, sizeof *means);
    if (!mag || !means) {
        free(means);
        return mag;
    }
    double m = (double)k->s.n * k->s.spatial;
    for (size_t i = 0; batch_statistics && i < k->count; i++) {
        size_t c = channel_of(k, i);
        double xhat = ((double)k->xw[i] - k->mean[c]) * k->invstd[c];
        means[c] += k->dyw[i] / m;
        means[k->c + c] += k->dyw[i] * xhat / m;
    }
    for (size_t i = 0; i < k->count; i++) {
        size_t c = channel_of(k, i);
        double xhat = ((double)k->xw[i] - k->mean[c]) * k->invstd[c];
        double terms = fabs(k->dyw[i]) + fabs(means[c]) + fabs(xhat * means[k->c + c]);
        mag[i] = fabs((double)k->gamma[c] * k->invstd[c]) * terms +
                 (accumulate ? fabs(k->dx_before_w[i]) : 0.0);
    }
    free(means);
    return mag;
}

// Per channel: sum |dy| and sum |dy * xhat| (dbeta's and dgamma's magnitudes, and the
// backward sums'), or sum |x| and sum x^2 (the forward sums').
static void channel_magnitudes(const Case *k, int backward, double *first, double *second) {
    for (size_t c = 0; c < k->c; c++) first[c] = second[c] = 0.0;
    for (size_t i = 0; i < k->count; i++) {
        size_t c = channel_of(k, i);
        if (backward) {
            double xhat = ((double)k->xw[i] - k->mean[c]) * k->invstd[c];
            first[c] += fabs(k->dyw[i]);
            second[c] += fabs(k->dyw[i] * xhat);
        } else {
            first[c] += fabs(k->xw[i]);
            second[c] += (double)k->xw[i] * k->xw[i];
        }
    }
}

static void forward_cases(const Case *k) {
    size_t count = k->count, c = k->c, bytes = count * 2;
    BatchnormArgs args = {.n = k->s.n, .channels = k->s.channels, .spatial = k->s.spatial,
                          .momentum = 0.1f, .eps = 1e-5f, .dtype = storage};
    Status st;
    status_clear(&st);
    uint16_t *y = calloc(count, 2), *got = calloc(count, 2);
    float *stats = calloc(8 * c, sizeof *stats);  // CPU mean, invstd, rm, rv; then the GPU's
    if (!y || !got || !stats) goto done;
    memcpy(stats + 2 * c, k->rm, 2 * c * sizeof *stats);
    memcpy(stats + 6 * c, k->rm, 2 * c * sizeof *stats);
    // y starts as NaN bits, so that an element the op skips shows
    void *d_x = device_upload(&dev, k->x, bytes), *d_y = device_poisoned(&dev, bytes);
    float *d_gamma = device_upload(&dev, k->gamma, 2 * c * sizeof(float));  // gamma, beta
    float *d_stats = device_upload(&dev, stats + 4 * c, 4 * c * sizeof(float));
    if (dev.broken) goto done;
    if (cpu->batchnorm_forward_training(cpu, &args, &(BatchnormForwardTensors){.x = k->x,
                                        .y = y, .gamma = k->gamma, .beta = k->beta,
                                        .running_mean = stats + 2 * c,
                                        .running_var = stats + 3 * c, .save_mean = stats,
                                        .save_invstd = stats + c}, &st))
        fail_status("CPU batchnorm_forward_training", &st);
    if (gpu->batchnorm_forward_training(gpu, &args, &(BatchnormForwardTensors){.x = d_x,
                                        .y = d_y, .gamma = d_gamma, .beta = d_gamma + c,
                                        .running_mean = d_stats + 2 * c,
                                        .running_var = d_stats + 3 * c, .save_mean = d_stats,
                                        .save_invstd = d_stats + c}, &st))
        fail_status("GPU batchnorm_forward_training", &st);
    device_download(&dev, got, d_y, bytes);
    device_download(&dev, stats + 4 * c, d_stats, 4 * c * sizeof(float));
    double *mag = y_magnitudes(k, stats, stats + c);
    double *mean_mag = calloc(2 * c, sizeof *mean_mag);
    if (mag && mean_mag) {
        compare_stored("batchnorm_forward_training", "y", got, y, mag, count);
        channel_magnitudes(k, 0, mean_mag, mean_mag + c);
        for (size_t j = 0; j < c; j++) mean_mag[j] /= (double)k->s.n * k->s.spatial;
        compare_floats("batchnorm_forward_training", "save_mean", stats + 4 * c, stats, mean_mag,
                       c);
        compare_floats("batchnorm_forward_training", "save_invstd", stats + 5 * c, stats + c, NULL,
                       c);
        for (size_t j = 0; j < c; j++) mean_mag[j] += fabs(k->rm[j]);
        compare_floats("batchnorm_forward_training", "running_mean", stats + 6 * c, stats + 2 * c,
                       mean_mag, c);
        compare_floats("batchnorm_forward_training", "running_var", stats + 7 * c, stats + 3 * c,
                       NULL, c);
    }
    free(mag);
    free(mean_mag);

    // evaluation, from the running statistics, saving them for backward
    if (cpu->batchnorm_forward_inference(cpu, &args, &(BatchnormInferenceTensors){.x = k->x,
                                         .y = y, .gamma = k->gamma, .beta = k->beta,
                                         .running_mean = k->rm, .running_var = k->rv,
                                         .save_mean = stats, .save_invstd = stats + c}, &st))
        fail_status("CPU batchnorm_forward_inference", &st);
    float *d_running = device_upload(&dev, k->rm, 2 * c * sizeof(float));
    if (dev.broken) goto done;
    if (gpu->batchnorm_forward_inference(gpu, &args, &(BatchnormInferenceTensors){.x = d_x,
                                         .y = d_y, .gamma = d_gamma, .beta = d_gamma + c,
                                         .running_mean = d_running, .running_var = d_running + c,
                                         .save_mean = d_stats, .save_invstd = d_stats + c}, &st))
        fail_status("GPU batchnorm_forward_inference", &st);
    device_download(&dev, got, d_y, bytes);
    device_download(&dev, stats + 4 * c, d_stats, 2 * c * sizeof(float));
    mag = y_magnitudes(k, stats, stats + c);
    if (mag) compare_stored("batchnorm_forward_inference", "y", got, y, mag, count);
    // save_mean is the running mean, copied: within F32_RTOL of itself.
    compare_floats("batchnorm_forward_inference", "save_mean", stats + 4 * c, stats, NULL, c);
    compare_floats("batchnorm_forward_inference", "save_invstd", stats + 5 * c, stats + c, NULL,
                   c);
    free(mag);
done:
    free(y);
    free(got);
    free(stats);
    device_free_all(&dev);
}

// batchnorm_backward from the CPU's saved statistics (or, fixed statistics, the same
// values standing in for running ones); dx written, added to, or not asked for.
static void backward_case(const Case *k, int batch_statistics, int accumulate, int with_dx) {
    size_t count = k->count, c = k->c, bytes = count * 2;
    BatchnormArgs args = {.n = k->s.n, .channels = k->s.channels, .spatial = k->s.spatial,
                          .batch_statistics = batch_statistics, .accumulate_dx = accumulate,
                          .accumulate_params = accumulate, .dtype = storage};
    Status st;
    status_clear(&st);
    uint16_t *dx = calloc(count, 2), *got = calloc(count, 2);
    float *grads = calloc(4 * c, sizeof *grads);  // CPU dgamma, dbeta; the GPU's
    if (!dx || !got || !grads) goto done;
    memcpy(dx, k->dx_before, bytes);
    for (size_t j = 0; j < 4 * c; j++) grads[j] = 0.25f;
    void *d_x = device_upload(&dev, k->x, bytes), *d_dy = device_upload(&dev, k->dy, bytes);
    void *d_dx = device_upload(&dev, k->dx_before, bytes);
    float *d_gamma = device_upload(&dev, k->gamma, c * sizeof(float));
    float *d_mean = device_upload(&dev, k->mean, 2 * c * sizeof(float));  // mean, invstd
    float *d_grads = device_upload(&dev, grads + 2 * c, 2 * c * sizeof(float));
    if (dev.broken) goto done;
    if (cpu->batchnorm_backward(cpu, &args, &(BatchnormBackwardTensors){.x = k->x, .dy = k->dy,
                                .gamma = k->gamma, .save_mean = k->mean, .save_invstd = k->invstd,
                                .dx = with_dx ? dx : NULL, .dgamma = grads, .dbeta = grads + c},
                                    &st))
        fail_status("CPU batchnorm_backward", &st);
    if (gpu->batchnorm_backward(gpu, &args, &(BatchnormBackwardTensors){.x = d_x, .dy = d_dy,
                                .gamma = d_gamma, .save_mean = d_mean, .save_invstd = d_mean + c,
                                .dx = with_dx ? d_dx : NULL, .dgamma = d_grads, .dbeta = d_grads + c
                                }, &st))
        fail_status("GPU batchnorm_backward", &st);
    device_download(&dev, got, d_dx, bytes);
    device_download(&dev, grads + 2 * c, d_grads, 2 * c * sizeof(float));
    double *mag = dx_magnitudes(k, batch_statistics, accumulate);
    double *param_mag = calloc(2 * c, sizeof *param_mag);
    if (mag && param_mag) {
        // without dx, the GPU's dx buffer must still hold what it held
        if (with_dx) compare_stored("batchnorm_backward", "dx", got, dx, mag, count);
        else CHECK(memcmp(got, k->dx_before, bytes) == 0);
        channel_magnitudes(k, 1, param_mag + c, param_mag);  // dgamma's, then dbeta's
        for (size_t j = 0; j < 2 * c; j++) param_mag[j] += accumulate ? 0.25 : 0.0;
        compare_floats("batchnorm_backward", "dgamma", grads + 2 * c, grads, param_mag, c);
        compare_floats("batchnorm_backward", "dbeta", grads + 3 * c, grads + c, param_mag + c, c);
    }
    free(mag);
    free(param_mag);
done:
    free(dx);
    free(got);
    free(grads);
    device_free_all(&dev);
}

// --sync-batchnorm's four ops on one share, each fed the same inputs on both backends
// (the forward and the input gradient from the CPU's sums).
static void sync_cases(const Case *k) {
    size_t count = k->count, c = k->c, bytes = count * 2, nsums = 2 * c + 1;
    BatchnormArgs args = {.n = k->s.n, .channels = k->s.channels, .spatial = k->s.spatial,
                          .momentum = 0.1f, .eps = 1e-5f, .accumulate_dx = 1, .dtype = storage};
    Status st;
    status_clear(&st);
    uint16_t *out = calloc(count, 2), *got = calloc(count, 2);
    double *sums = calloc(2 * nsums, sizeof *sums), *mag = calloc(2 * c, sizeof *mag);
    float *stats = calloc(12 * c, sizeof *stats);  // CPU mean, invstd, rm, rv, dg, db; GPU's
    double *elem_mag = NULL;
    if (!out || !got || !sums || !mag || !stats) goto done;
    void *d_x = device_upload(&dev, k->x, bytes), *d_dy = device_upload(&dev, k->dy, bytes);
    void *d_out = device_upload(&dev, got, bytes);
    double *d_sums = device_upload(&dev, sums, nsums * sizeof(double));
    float *d_gamma = device_upload(&dev, k->gamma, 2 * c * sizeof(float));
    float *d_saved = device_upload(&dev, k->mean, 2 * c * sizeof(float));
    memcpy(stats + 2 * c, k->rm, 2 * c * sizeof *stats);
    memcpy(stats + 8 * c, k->rm, 2 * c * sizeof *stats);
    float *d_stats = device_upload(&dev, stats + 6 * c, 6 * c * sizeof(float));
    if (dev.broken) goto done;

    if (cpu->batchnorm_channel_sums(cpu, &args, k->x, sums, &st))
        fail_status("CPU batchnorm_channel_sums", &st);
    if (gpu->batchnorm_channel_sums(gpu, &args, d_x, d_sums, &st))
        fail_status("GPU batchnorm_channel_sums", &st);
    device_download(&dev, sums + nsums, d_sums, nsums * sizeof(double));
    channel_magnitudes(k, 0, mag, mag + c);
    compare_sums("batchnorm_channel_sums", sums + nsums, sums, mag, k->s.channels);

    if (gpu->copy_to_device(gpu, d_sums, sums, nsums * sizeof(double), &st)) {
        fail_status("upload", &st);
        goto done;
    }
    if (cpu->batchnorm_forward_with_sums(cpu, &args, &(BatchnormForwardWithSumsTensors){.x = k->x,
                                         .y = out, .gamma = k->gamma, .beta = k->beta,
                                         .sums = sums, .running_mean = stats + 2 * c,
                                         .running_var = stats + 3 * c, .save_mean = stats,
                                         .save_invstd = stats + c}, &st))
        fail_status("CPU batchnorm_forward_with_sums", &st);
    if (gpu->batchnorm_forward_with_sums(gpu, &args, &(BatchnormForwardWithSumsTensors){.x = d_x,
                                         .y = d_out, .gamma = d_gamma, .beta = d_gamma + c,
                                         .sums = d_sums, .running_mean = d_stats + 2 * c,
                                         .running_var = d_stats + 3 * c, .save_mean = d_stats,
                                         .save_invstd = d_stats + c}, &st))
        fail_status("GPU batchnorm_forward_with_sums", &st);
    device_download(&dev, got, d_out, bytes);
    device_download(&dev, stats + 6 * c, d_stats, 4 * c * sizeof(float));
    elem_mag = y_magnitudes(k, stats, stats + c);
    if (elem_mag) compare_stored("batchnorm_forward_with_sums", "y", got, out, elem_mag, count);
    free(elem_mag);
    elem_mag = NULL;
    compare_floats("batchnorm_forward_with_sums", "save_invstd", stats + 7 * c, stats + c, NULL,
                   c);
    compare_floats("batchnorm_forward_with_sums", "running_var", stats + 9 * c, stats + 3 * c,
                   NULL, c);
    // The means against the mean of |x| (a mean near 0 of large values may differ by the
    // rounding of its sum), the running mean against that plus |its old value|.
    {
        double *mean_mag = calloc(c, sizeof *mean_mag);
        if (mean_mag) {
            for (size_t j = 0; j < c; j++) mean_mag[j] = mag[j] / ((double)k->s.n * k->s.spatial);
            compare_floats("batchnorm_forward_with_sums", "save_mean", stats + 6 * c, stats,
                           mean_mag, c);
            for (size_t j = 0; j < c; j++) mean_mag[j] += fabs(k->rm[j]);
            compare_floats("batchnorm_forward_with_sums", "running_mean", stats + 8 * c,
                           stats + 2 * c, mean_mag, c);
        }
        free(mean_mag);
    }

    if (cpu->batchnorm_backward_channel_sums(cpu, &args, &(BatchnormBackwardChannelSumsTensors){
                                             .x = k->x, .dy = k->dy, .save_mean = k->mean,
                                             .save_invstd = k->invstd, .sums = sums,
                                             .dgamma = stats + 4 * c, .dbeta = stats + 5 * c}, &st))
        fail_status("CPU batchnorm_backward_channel_sums", &st);
    if (gpu->batchnorm_backward_channel_sums(gpu, &args, &(BatchnormBackwardChannelSumsTensors){
                                             .x = d_x, .dy = d_dy, .save_mean = d_saved,
                                             .save_invstd = d_saved + c, .sums = d_sums,
                                             .dgamma = d_stats + 4 * c, .dbeta = d_stats + 5 * c},
                                             &st))
        fail_status("GPU batchnorm_backward_channel_sums", &st);
    device_download(&dev, sums + nsums, d_sums, nsums * sizeof(double));
    device_download(&dev, stats + 10 * c, d_stats + 4 * c, 2 * c * sizeof(float));
    channel_magnitudes(k, 1, mag, mag + c);  // sum |dy|, sum |dy * xhat|
    compare_sums("batchnorm_backward_channel_sums", sums + nsums, sums, mag, k->s.channels);
    compare_floats("batchnorm_backward_channel_sums", "dgamma", stats + 10 * c, stats + 4 * c,
                   mag + c, c);
    compare_floats("batchnorm_backward_channel_sums", "dbeta", stats + 11 * c, stats + 5 * c, mag,
                   c);

    // dx added to what it held, from the CPU's sums on both
    memcpy(out, k->dx_before, bytes);
    if (gpu->copy_to_device(gpu, d_sums, sums, nsums * sizeof(double), &st) ||
        gpu->copy_to_device(gpu, d_out, k->dx_before, bytes, &st)) {
        fail_status("upload", &st);
        goto done;
    }
    if (cpu->batchnorm_backward_data_with_sums(cpu, &args, &(BatchnormBackwardDataWithSumsTensors){
                                               .x = k->x, .dy = k->dy, .gamma = k->gamma,
                                               .save_mean = k->mean, .save_invstd = k->invstd,
                                               .sums = sums, .dx = out}, &st))
        fail_status("CPU batchnorm_backward_data_with_sums", &st);
    if (gpu->batchnorm_backward_data_with_sums(gpu, &args, &(BatchnormBackwardDataWithSumsTensors){
                                               .x = d_x, .dy = d_dy, .gamma = d_gamma,
                                               .save_mean = d_saved, .save_invstd = d_saved + c,
                                               .sums = d_sums, .dx = d_out}, &st))
        fail_status("GPU batchnorm_backward_data_with_sums", &st);
    device_download(&dev, got, d_out, bytes);
    elem_mag = dx_magnitudes(k, 1, 1);
    if (elem_mag)
        compare_stored("batchnorm_backward_data_with_sums", "dx", got, out, elem_mag, count);
done:
    free(elem_mag);
    free(out);
    free(got);
    free(sums);
    free(mag);
    free(stats);
    device_free_all(&dev);
}

static void run_shape(const BnShape *s, Rng *rng) {
    snprintf(shape, sizeof shape, "n=%d channels=%d spatial=%d", s->n, s->channels, s->spatial);
    Case k;
    if (case_make(&k, s, rng) == 0 && !dev.broken) {
        forward_cases(&k);
        for (int variant = 0; variant < 5 && !dev.broken; variant++)
            backward_case(&k, variant < 3, variant == 1 || variant == 4, variant != 2);
        if (!dev.broken) sync_cases(&k);
    } else {
        fprintf(stderr, "FAIL setting up %s\n", shape);
        test_failures++;
    }
    case_free(&k);
}

// Few channels of many values: channel_split cuts each over several blocks (a chunk is
// 256 * 64 values: 3 and 2 blocks per channel here). Many channels of few values: one block
// each. With the batchnorm-split lever off, the long channels run one block each too.
static const BnShape split_shapes[] = {{8, 3, 4900}, {5, 2, 4099}};
static const BnShape block_shapes[] = {{33, 40, 7}, {65, 37, 1}, {1, 3, 5}};
// Channels-last rows (cuda_batchnorm_rows.cu: spatial 1, at least 2^18 values): 32
// channels as after a convolution in NHWC (batch 16 of 28 x 28), six (42 threads each,
// four idle), and 301 (two tiles of 151 channels). With the lever off they run one block
// per channel.
static const BnShape rows_shapes[] = {{12544, 32, 1}, {70000, 6, 1}, {1500, 301, 1}};

// The shapes meant for a set of kernels must reach them: the rows kernels take a shape by
// its size (cuda_batchnorm_rows_split.h), and one that missed would test the other kernels
// under the rows' name.
static void check_path(const BnShape *shapes, size_t count, int rows, const char *which) {
    for (size_t i = 0; i < count; i++) {
        const BnShape *s = &shapes[i];
        if (batchnorm_rows_take(s->n, s->channels, s->spatial) == rows) continue;
        fprintf(stderr, "FAIL n=%d channels=%d spatial=%d is among the %s shapes, but the rows "
                "kernels %s it\n", s->n, s->channels, s->spatial, which,
                rows ? "do not take" : "take");
        test_failures++;
    }
}

static int run_storage(DType dtype, unsigned disabled_levers) {
    CudaBackendOptions options = {.ordinal = 0, .precision = PRECISION_FP32,
                                  .disabled_levers = disabled_levers};
    Status st;
    status_clear(&st);
    if (cuda_backend_open(&options, &gpu, &st)) {
        fail_status("cuda_backend_open", &st);
        return -1;
    }
    dev.gpu = gpu;
    storage = dtype;
    Rng rng;
    rng_seed(&rng, 1234);
    layout = disabled_levers ? "one block per channel: batchnorm-split off" : "split";
    printf("%s storage, %s\n", dtype_name(dtype), layout);
    for (size_t i = 0; i < sizeof split_shapes / sizeof *split_shapes && !dev.broken; i++)
        run_shape(&split_shapes[i], &rng);
    layout = "one block per channel";
    if (!disabled_levers)
        for (size_t i = 0; i < sizeof block_shapes / sizeof *block_shapes && !dev.broken; i++)
            run_shape(&block_shapes[i], &rng);
    layout = disabled_levers ? "one block per channel: batchnorm-split off" : "channels-last rows";
    for (size_t i = 0; i < sizeof rows_shapes / sizeof *rows_shapes && !dev.broken; i++)
        run_shape(&rows_shapes[i], &rng);
    cuda_backend_close(gpu);
    return 0;
}

int main(void) {
    cpu = cpu_backend();
    check_path(split_shapes, sizeof split_shapes / sizeof *split_shapes, 0, "split");
    check_path(block_shapes, sizeof block_shapes / sizeof *block_shapes, 0, "block");
    check_path(rows_shapes, sizeof rows_shapes / sizeof *rows_shapes, 1, "channels-last rows");
    int probe = cuda_probe_or_skip();
    if (probe) return probe;
    Status st;
    status_clear(&st);
    CudaDeviceInfo devices[16];
    int count = 0, compute = 0;
    if (cuda_list_devices(devices, 16, &count, &st) == 0 && count > 0)
        compute = devices[0].compute_major * 10 + devices[0].compute_minor;
    static const DType types[] = {DTYPE_F16, DTYPE_BF16};
    for (int t = 0; t < 2 && !dev.broken; t++) {
        if (types[t] == DTYPE_BF16 && compute && compute < 80) {
            printf("bf16: sm_%d is below compute capability 8.0; skipped\n", compute);
            continue;
        }
        run_storage(types[t], 0);
        if (!dev.broken) run_storage(types[t], LEVER_BIT(LEVER_BATCHNORM_SPLIT));
    }
    return test_exit_code("test_cuda_parity16_batchnorm");
}

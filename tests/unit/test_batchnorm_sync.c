// --sync-batchnorm's ops composed as the ranks of a launch compose them (each rank sums its
// share, the sums are added over the ranks, each rank finishes its share from the totals)
// give what batchnorm_forward_training and batchnorm_backward give on the whole batch:
// outputs, saved and running statistics, dx, and dgamma/dbeta once summed over the ranks
// as the gradient all-reduce sums them. Shares as the training loop cuts them (uneven, and
// empty where there are more ranks than samples), on the CPU reference.
#include "check.h"
#include "base/rng.h"
#include "kernels/cpu/cpu_ops.h"

#include <stdlib.h>

enum { MAX_RANKS = 4 };

typedef struct Case {
    int n, channels, spatial, ranks;
    float offset;  // added to x: a mean far from 0 is where sum x^2 - m mean^2 cancels
} Case;

static void fill_uniform(Rng *rng, float *v, size_t count, float offset) {
    for (size_t i = 0; i < count; i++) v[i] = offset + 2.0f * rng_uniform(rng) - 1.0f;
}

static float largest_magnitude(const float *v, size_t count) {
    float most = 0.0f;
    for (size_t i = 0; i < count; i++) most = fabsf(v[i]) > most ? fabsf(v[i]) : most;
    return most;
}

// Every value within tol * (the reference's largest magnitude): the statistics differ
// from the reference's two-pass ones by a few double roundings, which reach the floats
// as at most an ulp or two of each value; 1e-5 of the tensor's scale leaves room for that
// and nothing for a wrong sum or count.
static void check_close(const char *what, const Case *c, const float *got, const float *want,
                        size_t count, float tol) {
    float scale = largest_magnitude(want, count);
    scale = scale > 0.0f ? scale : 1.0f;
    for (size_t i = 0; i < count; i++)
        if (!(fabsf(got[i] - want[i]) <= tol * scale)) {
            fprintf(stderr, "n=%d channels=%d spatial=%d ranks=%d: %s[%zu] = %.9g, whole batch "
                    "%.9g (tolerance %g)\n", c->n, c->channels, c->spatial, c->ranks, what, i,
                    got[i], want[i], tol * scale);
            test_failures++;
            return;
        }
}

// The training loop's cut: rank r takes samples [r n / R, (r + 1) n / R).
static void share_of(int n, int ranks, int r, int *start, int *count) {
    *start = (int)((long)n * r / ranks);
    *count = (int)((long)n * (r + 1) / ranks) - *start;
}

// The simulated all-reduce: every rank's buffer becomes the sum, added in rank order.
static void sum_over_ranks(double sums[][64], int ranks, size_t count) {
    for (size_t i = 0; i < count; i++) {
        double total = 0.0;
        for (int r = 0; r < ranks; r++) total += sums[r][i];
        for (int r = 0; r < ranks; r++) sums[r][i] = total;
    }
}

static void split_matches_whole_batch(const Case *c, int accumulate) {
    const Backend *b = cpu_backend();
    Status st;
    status_clear(&st);
    int n = c->n, channels = c->channels, spatial = c->spatial, ranks = c->ranks;
    size_t sample = (size_t)channels * spatial, count = (size_t)n * sample;
    size_t sums_count = 2 * (size_t)channels + 1;
    float *x = malloc(count * sizeof *x), *dy = malloc(count * sizeof *dy);
    float *y_ref = malloc(count * sizeof *y_ref), *dx_ref = malloc(count * sizeof *dx_ref);
    float *y = malloc(count * sizeof *y), *dx = malloc(count * sizeof *dx);
    float gamma[16], beta[16], rm_ref[16], rv_ref[16], mean_ref[16], invstd_ref[16];
    float dg_ref[16], db_ref[16];
    Rng rng;
    rng_seed(&rng, (uint64_t)(n * 131 + channels * 7 + ranks));
    fill_uniform(&rng, x, count, c->offset);
    fill_uniform(&rng, dy, count, 0.0f);
    fill_uniform(&rng, gamma, (size_t)channels, 1.0f);
    fill_uniform(&rng, beta, (size_t)channels, 0.0f);
    for (int k = 0; k < channels; k++) {
        rm_ref[k] = 0.25f;
        rv_ref[k] = 2.0f;
        dg_ref[k] = db_ref[k] = accumulate ? 0.5f : 0.0f;
    }
    fill_uniform(&rng, dx_ref, count, 0.0f);
    memcpy(dx, dx_ref, count * sizeof *dx);

    BatchnormArgs whole = {.n = n, .channels = channels, .spatial = spatial, .momentum = 0.1f,
                           .eps = 1e-5f, .batch_statistics = 1, .accumulate_dx = accumulate,
                           .accumulate_params = accumulate};
    CHECK(b->batchnorm_forward_training(b, &whole, &(BatchnormForwardTensors){.x = x,
                                         .y = y_ref, .gamma = gamma, .beta = beta,
                                         .running_mean = rm_ref, .running_var = rv_ref,
                                         .save_mean = mean_ref, .save_invstd = invstd_ref},
                                             &st) == 0);
    CHECK(b->batchnorm_backward(b, &whole, &(BatchnormBackwardTensors){.x = x, .dy = dy,
                                 .gamma = gamma, .save_mean = mean_ref, .save_invstd = invstd_ref,
                                 .dx = dx_ref, .dgamma = dg_ref, .dbeta = db_ref}, &st) == 0);

    static double sums[MAX_RANKS][64];
    float rm[MAX_RANKS][16], rv[MAX_RANKS][16], mean[MAX_RANKS][16], invstd[MAX_RANKS][16];
    float dg[MAX_RANKS][16], db[MAX_RANKS][16];
    BatchnormArgs share[MAX_RANKS];
    int start[MAX_RANKS];
    for (int r = 0; r < ranks; r++) {
        share[r] = whole;
        share_of(n, ranks, r, &start[r], &share[r].n);
        for (int k = 0; k < channels; k++) {
            rm[r][k] = 0.25f;
            rv[r][k] = 2.0f;
            dg[r][k] = db[r][k] = accumulate && r == 0 ? 0.5f : 0.0f;  // one rank's old sum
        }
        CHECK(b->batchnorm_channel_sums(b, &share[r], x + start[r] * sample, sums[r], &st) == 0);
    }
    sum_over_ranks(sums, ranks, sums_count);
    CHECK_NEAR(sums[0][2 * channels], (double)n * spatial, 0.0);
    for (int r = 0; r < ranks; r++)
        CHECK(b->batchnorm_forward_with_sums(b, &share[r], &(BatchnormForwardWithSumsTensors){
                                              .x = x + start[r] * sample,
                                              .y = y + start[r] * sample, .gamma = gamma,
                                              .beta = beta, .sums = sums[r], .running_mean = rm[r],
                                              .running_var = rv[r], .save_mean = mean[r],
                                              .save_invstd = invstd[r]}, &st) == 0);
    for (int r = 0; r < ranks; r++)
        CHECK(b->batchnorm_backward_channel_sums(b, &share[r],
                                                  &(BatchnormBackwardChannelSumsTensors){
                                                  .x = x + start[r] * sample,
                                                  .dy = dy + start[r] * sample,
                                                  .save_mean = mean[r], .save_invstd = invstd[r],
                                                  .sums = sums[r], .dgamma = dg[r], .dbeta = db[r]
                                                  }, &st) == 0);
    sum_over_ranks(sums, ranks, sums_count);
    for (int r = 0; r < ranks; r++)
        CHECK(b->batchnorm_backward_data_with_sums(b, &share[r],
                                                    &(BatchnormBackwardDataWithSumsTensors){
                                                    .x = x + start[r] * sample,
                                                    .dy = dy + start[r] * sample, .gamma = gamma,
                                                    .save_mean = mean[r], .save_invstd = invstd[r],
                                                    .sums = sums[r], .dx = dx + start[r] * sample},
                                                    &st) == 0);
    // What the gradient all-reduce does to dgamma and dbeta: each rank's part, added once.
    float dg_total[16] = {0}, db_total[16] = {0};
    for (int r = 0; r < ranks; r++)
        for (int k = 0; k < channels; k++) {
            dg_total[k] += dg[r][k];
            db_total[k] += db[r][k];
        }

    check_close("y", c, y, y_ref, count, 1e-5f);
    check_close("dx", c, dx, dx_ref, count, 1e-5f);
    check_close("dgamma", c, dg_total, dg_ref, (size_t)channels, 1e-5f);
    check_close("dbeta", c, db_total, db_ref, (size_t)channels, 1e-5f);
    for (int r = 0; r < ranks; r++) {
        // Every rank, the empty ones too, keeps the same statistics, bit for bit.
        CHECK(memcmp(rm[r], rm[0], (size_t)channels * sizeof(float)) == 0);
        CHECK(memcmp(rv[r], rv[0], (size_t)channels * sizeof(float)) == 0);
        CHECK(memcmp(invstd[r], invstd[0], (size_t)channels * sizeof(float)) == 0);
    }
    check_close("save_mean", c, mean[0], mean_ref, (size_t)channels, 1e-5f);
    check_close("save_invstd", c, invstd[0], invstd_ref, (size_t)channels, 1e-5f);
    check_close("running_mean", c, rm[0], rm_ref, (size_t)channels, 1e-5f);
    check_close("running_var", c, rv[0], rv_ref, (size_t)channels, 1e-5f);
    if (st.code) fprintf(stderr, "status: %s\n", st.message);
    free(x);
    free(dy);
    free(y_ref);
    free(dx_ref);
    free(y);
    free(dx);
}

// A rank whose share is empty writes zero sums and the count 0, so it adds nothing.
static void empty_share_adds_nothing(void) {
    Status st;
    status_clear(&st);
    BatchnormArgs empty = {.n = 0, .channels = 3, .spatial = 4};
    double sums[7];
    for (int i = 0; i < 7; i++) sums[i] = 99.0;
    float dg[3] = {1, 1, 1}, db[3] = {1, 1, 1}, mean[3] = {0, 0, 0}, invstd[3] = {1, 1, 1};
    CHECK(cpu_backend()->batchnorm_channel_sums(cpu_backend(), &empty, NULL, sums, &st) == 0);
    for (int i = 0; i < 7; i++) CHECK_NEAR(sums[i], 0.0, 0.0);
    for (int i = 0; i < 7; i++) sums[i] = 99.0;
    CHECK(cpu_backend()->batchnorm_backward_channel_sums(cpu_backend(), &empty,
                                              &(BatchnormBackwardChannelSumsTensors){.x = NULL,
                                              .dy = NULL, .save_mean = mean, .save_invstd = invstd,
                                              .sums = sums, .dgamma = dg, .dbeta = db}, &st) == 0);
    for (int i = 0; i < 7; i++) CHECK_NEAR(sums[i], 0.0, 0.0);
    for (int k = 0; k < 3; k++) CHECK(dg[k] == 0.0f && db[k] == 0.0f);
}

int main(void) {
    static const Case cases[] = {
        {8, 3, 5, 1, 0.0f},     // one rank: the split ops alone
        {8, 3, 5, 2, 0.0f},     // even shares of a conv-like layer
        {7, 4, 6, 3, 3.0f},     // uneven shares, mean 3 std
        {6, 5, 1, 4, -2.0f},    // after dense: one value per channel per sample
        {3, 2, 9, 4, 1.0f},     // fewer samples than ranks: one rank has none
        {2, 3, 1, 2, 50.0f},    // two values per channel in all, |mean| 87 std
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        for (int accumulate = 0; accumulate < 2; accumulate++)
            split_matches_whole_batch(&cases[i], accumulate);
    empty_share_adds_nothing();
    return test_exit_code("test_batchnorm_sync");
}

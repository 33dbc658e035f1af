// batchnorm with 16-bit activation storage (--precision bf16|fp16), on the CPU, whose ops
// are the reference the CUDA ones are held to (tests/gpu/test_cuda_parity16_batchnorm.c).
//
// Op by op, the 16-bit path must be the f32 path on the widened values with its one output
// (y or dx) rounded once: every op on 16-bit x, dy (and dx, when it adds to it) against the
// same op on those values widened to f32 storage, y and dx equal to the f32 result rounded
// to nearest even, and every f32 result (statistics, running statistics, sums, dgamma,
// dbeta) equal bit for bit. Any second rounding (a 16-bit intermediate, or dx rounded
// before the accumulation) breaks the equality.
//
// In a graph: batchnorm stores what the dense layers around it store, so a dense ->
// batchnorm chain needs no cast (after dense's 1-D features, and after a reshape to
// CxHxW, whose channels batchnorm normalises over H and W); one step on 16-bit storage
// gives the loss, parameter gradients and running statistics of f32 storage within what
// rounding the stored activations moves them; inference as well; and a batchnorm whose
// input fans out adds its gradient into the 16-bit input gradient another reader wrote.
#include "storage16_net.h"
#include "stored16.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

// ---- op by op --------------------------------------------------------------------------

typedef struct Stored {
    uint16_t *bits;  // as the 16-bit op reads and writes them
    float *wide;     // the same values widened: what the f32 op reads and writes
} Stored;

// n values uniform in [lo, hi), rounded to dtype, in both forms.
static Stored stored_random(Rng *rng, size_t n, DType dtype, float lo, float hi) {
    Stored s = {calloc(n, sizeof *s.bits), calloc(n, sizeof *s.wide)};
    for (size_t i = 0; s.bits && s.wide && i < n; i++) {
        s.bits[i] = stored16_from_f32(lo + (hi - lo) * rng_uniform(rng), dtype);
        s.wide[i] = stored16_to_f32(s.bits[i], dtype);
    }
    return s;
}

static void stored_free(Stored *s) {
    free(s->bits);
    free(s->wide);
}

static float *floats_random(Rng *rng, size_t n, float lo, float hi) {
    float *v = calloc(n, sizeof *v);
    for (size_t i = 0; v && i < n; i++) v[i] = lo + (hi - lo) * rng_uniform(rng);
    return v;
}

// The 16-bit output holds the f32 output rounded once, every value.
static void check_rounded_once(const char *what, const uint16_t *got, const float *wide, size_t n,
                               DType dtype) {
    size_t bad = 0, first = 0;
    for (size_t i = 0; i < n; i++)
        if (got[i] != stored16_from_f32(wide[i], dtype) && bad++ == 0) first = i;
    if (bad) {
        fprintf(stderr, "  CHECK failed: %s %s: %zu of %zu values are not the f32 result rounded "
                "once (first [%zu]: %a, f32 %a)\n", dtype_name(dtype), what, bad, n, first,
                stored16_to_f32(got[first], dtype), wide[first]);
        test_failures++;
    }
}

static void check_same_floats(const char *what, const float *got, const float *want, size_t n,
                              DType dtype) {
    if (memcmp(got, want, n * sizeof *got) != 0) {
        fprintf(stderr, "  CHECK failed: %s %s differs from f32 storage's\n", dtype_name(dtype),
                what);
        test_failures++;
    }
}

static void check_same_doubles(const char *what, const double *got, const double *want, size_t n,
                               DType dtype) {
    if (memcmp(got, want, n * sizeof *got) != 0) {
        fprintf(stderr, "  CHECK failed: %s %s differs from f32 storage's\n", dtype_name(dtype),
                what);
        test_failures++;
    }
}

#define OP_OK(call)                                                                          \
    do {                                                                                     \
        Status op_st_;                                                                       \
        status_clear(&op_st_);                                                               \
        Status *st = &op_st_;                                                                \
        if ((call) != 0) {                                                                   \
            fprintf(stderr, "  CHECK failed: %s: %s\n", #call, op_st_.message);              \
            test_failures++;                                                                 \
        }                                                                                    \
    } while (0)

// One [n, channels, spatial] shape through all seven ops, 16-bit against f32 storage.
static void ops_round_once(DType dtype, int n, int channels, int spatial) {
    const Backend *b = cpu_backend();
    size_t count = (size_t)n * channels * spatial, c = (size_t)channels;
    Rng rng;
    rng_seed(&rng, 41u + (unsigned)count);
    // x off centre, so that the mean matters; dx's earlier value for the accumulating cases
    Stored x = stored_random(&rng, count, dtype, -1.0f, 3.0f);
    Stored dy = stored_random(&rng, count, dtype, -1.0f, 1.0f);
    Stored dx_before = stored_random(&rng, count, dtype, -0.5f, 0.5f);
    float *gamma = floats_random(&rng, c, 0.5f, 1.5f), *beta = floats_random(&rng, c, -0.5f, 0.5f);
    float *rm = floats_random(&rng, c, -0.2f, 0.2f), *rv = floats_random(&rng, c, 0.5f, 2.0f);
    uint16_t *y16 = calloc(count, sizeof *y16), *dx16 = calloc(count, sizeof *dx16);
    float *y32 = calloc(count, sizeof *y32), *dx32 = calloc(count, sizeof *dx32);
    float *stats16 = calloc(12 * c, sizeof *stats16), *stats32 = calloc(12 * c, sizeof *stats32);
    double *sums16 = calloc(2 * c + 1, sizeof *sums16), *sums32 = calloc(2 * c + 1, sizeof *sums32);
    if (!x.wide || !dy.wide || !dx_before.wide || !gamma || !beta || !rm || !rv || !y16 ||
        !dx16 || !y32 || !dx32 || !stats16 || !stats32 || !sums16 || !sums32) {
        fprintf(stderr, "out of host memory\n");
        test_failures++;
        goto done;
    }
    // stats: mean, invstd, running mean, running var, dgamma, dbeta (two of each: the
    // second three for the accumulating cases)
    float *mean16 = stats16, *invstd16 = stats16 + c, *rm16 = stats16 + 2 * c;
    float *rv16 = stats16 + 3 * c, *dg16 = stats16 + 4 * c, *db16 = stats16 + 5 * c;
    float *mean32 = stats32, *invstd32 = stats32 + c, *rm32 = stats32 + 2 * c;
    float *rv32 = stats32 + 3 * c, *dg32 = stats32 + 4 * c, *db32 = stats32 + 5 * c;
    BatchnormArgs wide = {.n = n, .channels = channels, .spatial = spatial, .momentum = 0.1f,
                          .eps = 1e-5f};
    BatchnormArgs half = wide;
    half.dtype = dtype;

    memcpy(rm16, rm, c * sizeof *rm);
    memcpy(rv16, rv, c * sizeof *rv);
    memcpy(rm32, rm, c * sizeof *rm);
    memcpy(rv32, rv, c * sizeof *rv);
    OP_OK(b->batchnorm_forward_training(b, &half, &(BatchnormForwardTensors){.x = x.bits,
                                        .y = y16, .gamma = gamma, .beta = beta,
                                        .running_mean = rm16, .running_var = rv16,
                                        .save_mean = mean16, .save_invstd = invstd16}, st));
    OP_OK(b->batchnorm_forward_training(b, &wide, &(BatchnormForwardTensors){.x = x.wide,
                                        .y = y32, .gamma = gamma, .beta = beta,
                                        .running_mean = rm32, .running_var = rv32,
                                        .save_mean = mean32, .save_invstd = invstd32}, st));
    check_rounded_once("batchnorm_forward_training y", y16, y32, count, dtype);
    check_same_floats("batchnorm_forward_training statistics", stats16, stats32, 4 * c, dtype);

    OP_OK(b->batchnorm_forward_inference(b, &half, &(BatchnormInferenceTensors){.x = x.bits,
                                         .y = y16, .gamma = gamma, .beta = beta,
                                         .running_mean = rm, .running_var = rv,
                                         .save_mean = mean16, .save_invstd = invstd16}, st));
    OP_OK(b->batchnorm_forward_inference(b, &wide, &(BatchnormInferenceTensors){.x = x.wide,
                                         .y = y32, .gamma = gamma, .beta = beta,
                                         .running_mean = rm, .running_var = rv,
                                         .save_mean = mean32, .save_invstd = invstd32}, st));
    check_rounded_once("batchnorm_forward_inference y", y16, y32, count, dtype);
    check_same_floats("batchnorm_forward_inference statistics", stats16, stats32, 2 * c, dtype);

    // backward from this batch's statistics (as training saves them), then fixed ones; dx
    // written, added to, or not asked for
    for (int variant = 0; variant < 4; variant++) {
        half.batch_statistics = wide.batch_statistics = variant != 3;
        half.accumulate_dx = wide.accumulate_dx = variant == 1 || variant == 3;
        half.accumulate_params = wide.accumulate_params = variant == 1;
        int with_dx = variant != 2;
        OP_OK(b->batchnorm_forward_training(b, &wide, &(BatchnormForwardTensors){
                                            .x = x.wide, .y = y32, .gamma = gamma, .beta = beta,
                                            .running_mean = rm32, .running_var = rv32,
                                            .save_mean = mean32, .save_invstd = invstd32}, st));
        memcpy(dx16, dx_before.bits, count * sizeof *dx16);
        memcpy(dx32, dx_before.wide, count * sizeof *dx32);
        for (size_t k = 0; k < c; k++) dg16[k] = dg32[k] = db16[k] = db32[k] = 0.25f;
        OP_OK(b->batchnorm_backward(b, &half, &(BatchnormBackwardTensors){.x = x.bits,
                                    .dy = dy.bits, .gamma = gamma, .save_mean = mean32,
                                    .save_invstd = invstd32, .dx = with_dx ? dx16 : NULL,
                                    .dgamma = dg16, .dbeta = db16}, st));
        OP_OK(b->batchnorm_backward(b, &wide, &(BatchnormBackwardTensors){.x = x.wide,
                                    .dy = dy.wide, .gamma = gamma, .save_mean = mean32,
                                    .save_invstd = invstd32, .dx = with_dx ? dx32 : NULL,
                                    .dgamma = dg32, .dbeta = db32}, st));
        if (with_dx) check_rounded_once("batchnorm_backward dx", dx16, dx32, count, dtype);
        check_same_floats("batchnorm_backward dgamma, dbeta", dg16, dg32, 2 * c, dtype);
    }

    // --sync-batchnorm's four, on one rank's share (sums over one rank are the share's)
    half.accumulate_dx = wide.accumulate_dx = 1;
    half.accumulate_params = wide.accumulate_params = 0;
    memcpy(rm16, rm, c * sizeof *rm);
    memcpy(rv16, rv, c * sizeof *rv);
    memcpy(rm32, rm, c * sizeof *rm);
    memcpy(rv32, rv, c * sizeof *rv);
    OP_OK(b->batchnorm_channel_sums(b, &half, x.bits, sums16, st));
    OP_OK(b->batchnorm_channel_sums(b, &wide, x.wide, sums32, st));
    check_same_doubles("batchnorm_channel_sums", sums16, sums32, 2 * c + 1, dtype);
    OP_OK(b->batchnorm_forward_with_sums(b, &half, &(BatchnormForwardWithSumsTensors){.x = x.bits,
                                         .y = y16, .gamma = gamma, .beta = beta, .sums = sums32,
                                         .running_mean = rm16, .running_var = rv16,
                                         .save_mean = mean16, .save_invstd = invstd16}, st));
    OP_OK(b->batchnorm_forward_with_sums(b, &wide, &(BatchnormForwardWithSumsTensors){.x = x.wide,
                                         .y = y32, .gamma = gamma, .beta = beta, .sums = sums32,
                                         .running_mean = rm32, .running_var = rv32,
                                         .save_mean = mean32, .save_invstd = invstd32}, st));
    check_rounded_once("batchnorm_forward_with_sums y", y16, y32, count, dtype);
    check_same_floats("batchnorm_forward_with_sums statistics", stats16, stats32, 4 * c, dtype);
    OP_OK(b->batchnorm_backward_channel_sums(b, &half, &(BatchnormBackwardChannelSumsTensors){
                                             .x = x.bits, .dy = dy.bits, .save_mean = mean32,
                                             .save_invstd = invstd32, .sums = sums16,
                                             .dgamma = dg16, .dbeta = db16}, st));
    OP_OK(b->batchnorm_backward_channel_sums(b, &wide, &(BatchnormBackwardChannelSumsTensors){
                                             .x = x.wide, .dy = dy.wide, .save_mean = mean32,
                                             .save_invstd = invstd32, .sums = sums32,
                                             .dgamma = dg32, .dbeta = db32}, st));
    check_same_doubles("batchnorm_backward_channel_sums", sums16, sums32, 2 * c + 1, dtype);
    check_same_floats("batchnorm_backward_channel_sums dgamma, dbeta", dg16, dg32, 2 * c, dtype);
    memcpy(dx16, dx_before.bits, count * sizeof *dx16);
    memcpy(dx32, dx_before.wide, count * sizeof *dx32);
    OP_OK(b->batchnorm_backward_data_with_sums(b, &half, &(BatchnormBackwardDataWithSumsTensors){
                                               .x = x.bits, .dy = dy.bits, .gamma = gamma,
                                               .save_mean = mean32, .save_invstd = invstd32,
                                               .sums = sums32, .dx = dx16}, st));
    OP_OK(b->batchnorm_backward_data_with_sums(b, &wide, &(BatchnormBackwardDataWithSumsTensors){
                                               .x = x.wide, .dy = dy.wide, .gamma = gamma,
                                               .save_mean = mean32, .save_invstd = invstd32,
                                               .sums = sums32, .dx = dx32}, st));
    check_rounded_once("batchnorm_backward_data_with_sums dx (added to)", dx16, dx32, count,
                       dtype);
done:
    stored_free(&x);
    stored_free(&dy);
    stored_free(&dx_before);
    free(gamma);
    free(beta);
    free(rm);
    free(rv);
    free(y16);
    free(dx16);
    free(y32);
    free(dx32);
    free(stats16);
    free(stats32);
    free(sums16);
    free(sums32);
}

// A dtype other than f32, bf16 and f16 is refused by name, as every 16-bit op refuses it.
static void ops_refuse_other_dtypes(void) {
    const Backend *b = cpu_backend();
    float x[4] = {1, 2, 3, 4}, y[4], one = 1.0f, zero = 0.0f, mean, invstd, rm = 0, rv = 1;
    BatchnormArgs args = {.n = 4, .channels = 1, .spatial = 1, .eps = 1e-5f,
                          .dtype = DTYPE_I32};
    Status st;
    status_clear(&st);
    CHECK(b->batchnorm_forward_training(b, &args, &(BatchnormForwardTensors){.x = x,
                                        .y = y, .gamma = &one, .beta = &zero, .running_mean = &rm,
                                        .running_var = &rv, .save_mean = &mean,
                                        .save_invstd = &invstd}, &st) != 0);
    CHECK_CONTAINS(st.message, "batchnorm_forward_training");
}

// A rank with no samples in the step (--sync-batchnorm) joins with zero sums and writes
// nothing, whatever the storage.
static void empty_share_in_16_bits(DType dtype) {
    const Backend *b = cpu_backend();
    uint16_t x[1] = {0}, dy[1] = {0}, dx[1] = {0x1234}, y[1] = {0x1234};
    float gamma[2] = {1, 1}, beta[2] = {0, 0}, mean[2] = {0, 0}, invstd[2] = {1, 1};
    float rm[2] = {0, 0}, rv[2] = {1, 1}, dg[2] = {7, 7}, db[2] = {7, 7};
    double sums[5] = {1, 1, 1, 1, 1}, totals[5] = {2, 4, 2, 8, 4};
    BatchnormArgs args = {.n = 0, .channels = 2, .spatial = 3, .momentum = 0.1f, .eps = 1e-5f,
                          .accumulate_dx = 1, .dtype = dtype};
    OP_OK(b->batchnorm_channel_sums(b, &args, x, sums, st));
    for (int i = 0; i < 5; i++) CHECK(sums[i] == 0.0);
    OP_OK(b->batchnorm_forward_with_sums(b, &args, &(BatchnormForwardWithSumsTensors){.x = x,
                                         .y = y, .gamma = gamma, .beta = beta, .sums = totals,
                                         .running_mean = rm, .running_var = rv, .save_mean = mean,
                                         .save_invstd = invstd}, st));
    CHECK(y[0] == 0x1234);
    OP_OK(b->batchnorm_backward_channel_sums(b, &args, &(BatchnormBackwardChannelSumsTensors){
                                             .x = x, .dy = dy, .save_mean = mean,
                                             .save_invstd = invstd, .sums = sums, .dgamma = dg,
                                             .dbeta = db}, st));
    CHECK(dg[0] == 0.0f && db[1] == 0.0f);
    OP_OK(b->batchnorm_backward_data_with_sums(b, &args, &(BatchnormBackwardDataWithSumsTensors){
                                               .x = x, .dy = dy, .gamma = gamma, .save_mean = mean,
                                               .save_invstd = invstd, .sums = totals, .dx = dx},
                                                   st));
    CHECK(dx[0] == 0x1234);
}

// ---- in a graph --------------------------------------------------------------------------

// What the three models share: the batch, 6 classes, inputs in [-0.5, 1.5) and the seeds.
#define BN16_SPEC(model_text)                                                            \
    {.model_name = "bn16.model", .text = (model_text), .batch = 20, .classes = 6,         \
     .input_low = -0.5f, .param_seed = 7, .ctx_seed = 3}

// dense -> batchnorm -> activation -> dense, batchnorm over 24 features
static const StorageNetSpec features_model = BN16_SPEC(
    "input shape=2x3x3\n"
    "flatten\n"
    "dense units=24 name=d1\n"
    "batchnorm name=bn\n"
    "tanh name=t\n"
    "dense units=6 name=d2\n"
    "loss softmax_cross_entropy\n");

// dense -> reshape to 3x4x4 -> batchnorm over 3 channels of 4x4 -> flatten -> dense: the
// 2-D case on its own, without a convolution before it.
static const StorageNetSpec channels_model = BN16_SPEC(
    "input shape=2x3x3\n"
    "flatten\n"
    "dense units=48 name=d1\n"
    "reshape shape=3x4x4\n"
    "batchnorm name=bn\n"
    "flatten\n"
    "dense units=6 name=d2\n"
    "loss softmax_cross_entropy\n");

// d1 read by two batchnorms: bn2's backward writes d1's gradient and bn1's adds to it.
static const StorageNetSpec fanout_model = BN16_SPEC(
    "input shape=2x3x3\n"
    "flatten\n"
    "dense units=24 name=d1\n"
    "batchnorm name=bn1\n"
    "batchnorm name=bn2 from=d1\n"
    "add from=bn1,bn2\n"
    "dense units=6 name=d2\n"
    "loss softmax_cross_entropy\n");

// Every net here is built with the batch drawn from this seed loaded.
enum { BATCH_SEED = 5 };

static int net_open_loaded(StorageNet *n, const StorageNetSpec *spec, DType storage) {
    if (storage_net_open(n, spec, storage)) return -1;
    Status st;
    status_clear(&st);
    if (!storage_net_load_batch(n, BATCH_SEED, &st)) return 0;
    fprintf(stderr, "load batch: %s\n", st.message);
    test_failures++;
    storage_net_free(n);
    return -1;
}

// batchnorm stores 16 bits and reads the dense layer before it with no cast between
// (through the reshape view in the 2-D model), and so does what reads it (the activation
// layer, or a view): a cast stands only before the loss.
static void casts_sit_where_storage_changes(const StorageNetSpec *spec, DType storage) {
    StorageNet n;
    if (net_open_loaded(&n, spec, storage)) return;
    check_reads_own_dtype(&n.g);
    const Layer *d1 = layer_named(&n.g, "d1"), *bn = layer_named(&n.g, "bn");
    const Layer *d2 = layer_named(&n.g, "d2");
    CHECK(d1 && bn && d2);
    if (d1 && bn && d2) {
        CHECK(bn->out_dtype == storage);
        const Layer *in = bn->inputs[0];
        while (in->kind->output_is_view) in = in->inputs[0];
        CHECK(in == d1);  // no cast between
        // d2 reads batchnorm's output through a view, or the activation's, uncast
        const Layer *d2_in = d2->inputs[0];
        CHECK(d2_in->out_dtype == storage);
        CHECK(strcmp(d2_in->kind->name, "cast") != 0);
    }
    const Layer *to_loss = n.g.loss->inputs[0];
    CHECK(is_cast(to_loss) && to_loss->out_dtype == DTYPE_F32);
    storage_net_free(&n);
}

// bound: what rounding the stored activations and gradients to 8 (bf16) or 11 (f16)
// significant bits may move a result, relative. Each stored value is off by up to half a
// unit in its last place (2^-9, 2^-12) and a handful of layers stack them; the bounds are
// about twice the largest difference measured over the three models (bf16 5.6e-3,
// f16 6.3e-4, both in a layer's parameter gradients; the running statistics and the
// losses move less).
static void matches_f32(const char *label, const StorageNetSpec *spec, DType storage,
                        double bound) {
    StoragePair p;
    double wide_eval = 0.0, half_eval = 0.0;
    // evaluation normalises with the running statistics the step moved
    if (!storage_pair_matches_f32(&p, spec, storage, BATCH_SEED, label, bound) &&
        !storage_pair_evaluate(&p, &wide_eval, &half_eval)) {
        char what[64];
        snprintf(what, sizeof what, "%s, evaluation,", label);
        check_losses_match(what, storage, half_eval, wide_eval, spec->batch, bound);
    }
    storage_pair_free(&p);
}

// bn1 adds its input gradient to the one bn2 wrote into d1's 16-bit gradient.
static void fanout_accumulates_into_16_bit(DType storage) {
    StorageNet n;
    if (net_open_loaded(&n, &fanout_model, storage)) return;
    const Layer *d1 = layer_named(&n.g, "d1");
    const Layer *bn1 = layer_named(&n.g, "bn1"), *bn2 = layer_named(&n.g, "bn2");
    CHECK(d1 && bn1 && bn2);
    if (d1 && bn1 && bn2) {
        CHECK(bn1->inputs[0] == d1 && bn2->inputs[0] == d1);
        CHECK(d1->grad.dtype == storage);
        CHECK_INT_EQ(bn1->input_grad_accumulate[0], 1);
        CHECK_INT_EQ(bn2->input_grad_accumulate[0], 0);
    }
    storage_net_free(&n);
}

int main(void) {
    static const DType halves[] = {DTYPE_BF16, DTYPE_F16};
    for (int t = 0; t < 2; t++) {
        ops_round_once(halves[t], 7, 5, 1);     // after dense: one value per sample
        ops_round_once(halves[t], 4, 3, 37);    // after CxHxW, an odd spatial size
        ops_round_once(halves[t], 1, 2, 1);     // one value per channel: running stats stay
    }
    ops_refuse_other_dtypes();
    empty_share_in_16_bits(DTYPE_BF16);
    empty_share_in_16_bits(DTYPE_F16);
    for (int t = 0; t < 2; t++) {
        casts_sit_where_storage_changes(&features_model, halves[t]);
        casts_sit_where_storage_changes(&channels_model, halves[t]);
        fanout_accumulates_into_16_bit(halves[t]);
    }
    matches_f32("features", &features_model, DTYPE_BF16, 0.012);
    matches_f32("features", &features_model, DTYPE_F16, 0.0013);
    matches_f32("channels", &channels_model, DTYPE_BF16, 0.012);
    matches_f32("channels", &channels_model, DTYPE_F16, 0.0013);
    matches_f32("fan-out", &fanout_model, DTYPE_BF16, 0.012);
    matches_f32("fan-out", &fanout_model, DTYPE_F16, 0.0013);
    return test_exit_code("test_storage16_batchnorm");
}

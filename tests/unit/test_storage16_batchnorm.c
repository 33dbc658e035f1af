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
#include "check.h"
#include "base/rng.h"
#include "core/graph.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

// ---- op by op --------------------------------------------------------------------------

typedef struct Stored {
    uint16_t *bits;  // as the 16-bit op reads and writes them
    float *wide;     // the same values widened: what the f32 op reads and writes
} Stored;

static uint16_t narrow_one(float v, DType dtype) {
    return dtype == DTYPE_BF16 ? f32_to_bf16(v) : f32_to_f16(v);
}

static float widen_one(uint16_t v, DType dtype) {
    return dtype == DTYPE_BF16 ? bf16_to_f32(v) : f16_to_f32(v);
}

// n values uniform in [lo, hi), rounded to dtype, in both forms.
static Stored stored_random(Rng *rng, size_t n, DType dtype, float lo, float hi) {
    Stored s = {calloc(n, sizeof *s.bits), calloc(n, sizeof *s.wide)};
    for (size_t i = 0; s.bits && s.wide && i < n; i++) {
        s.bits[i] = narrow_one(lo + (hi - lo) * rng_uniform(rng), dtype);
        s.wide[i] = widen_one(s.bits[i], dtype);
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
        if (got[i] != narrow_one(wide[i], dtype) && bad++ == 0) first = i;
    if (bad) {
        fprintf(stderr, "  CHECK failed: %s %s: %zu of %zu values are not the f32 result rounded "
                "once (first [%zu]: %a, f32 %a)\n", dtype_name(dtype), what, bad, n, first,
                widen_one(got[first], dtype), wide[first]);
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
    OP_OK(b->batchnorm_forward_training(b, &half, x.bits, y16, gamma, beta, rm16, rv16, mean16,
                                        invstd16, st));
    OP_OK(b->batchnorm_forward_training(b, &wide, x.wide, y32, gamma, beta, rm32, rv32, mean32,
                                        invstd32, st));
    check_rounded_once("batchnorm_forward_training y", y16, y32, count, dtype);
    check_same_floats("batchnorm_forward_training statistics", stats16, stats32, 4 * c, dtype);

    OP_OK(b->batchnorm_forward_inference(b, &half, x.bits, y16, gamma, beta, rm, rv, mean16,
                                         invstd16, st));
    OP_OK(b->batchnorm_forward_inference(b, &wide, x.wide, y32, gamma, beta, rm, rv, mean32,
                                         invstd32, st));
    check_rounded_once("batchnorm_forward_inference y", y16, y32, count, dtype);
    check_same_floats("batchnorm_forward_inference statistics", stats16, stats32, 2 * c, dtype);

    // backward from this batch's statistics (as training saves them), then fixed ones; dx
    // written, added to, or not asked for
    for (int variant = 0; variant < 4; variant++) {
        half.batch_statistics = wide.batch_statistics = variant != 3;
        half.accumulate_dx = wide.accumulate_dx = variant == 1 || variant == 3;
        half.accumulate_params = wide.accumulate_params = variant == 1;
        int with_dx = variant != 2;
        OP_OK(b->batchnorm_forward_training(b, &wide, x.wide, y32, gamma, beta, rm32, rv32,
                                            mean32, invstd32, st));
        memcpy(dx16, dx_before.bits, count * sizeof *dx16);
        memcpy(dx32, dx_before.wide, count * sizeof *dx32);
        for (size_t k = 0; k < c; k++) dg16[k] = dg32[k] = db16[k] = db32[k] = 0.25f;
        OP_OK(b->batchnorm_backward(b, &half, x.bits, dy.bits, gamma, mean32, invstd32,
                                    with_dx ? dx16 : NULL, dg16, db16, st));
        OP_OK(b->batchnorm_backward(b, &wide, x.wide, dy.wide, gamma, mean32, invstd32,
                                    with_dx ? dx32 : NULL, dg32, db32, st));
        check_rounded_once("batchnorm_backward dx", dx16, dx32, count, dtype);
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
    OP_OK(b->batchnorm_forward_with_sums(b, &half, x.bits, y16, gamma, beta, sums32, rm16, rv16,
                                         mean16, invstd16, st));
    OP_OK(b->batchnorm_forward_with_sums(b, &wide, x.wide, y32, gamma, beta, sums32, rm32, rv32,
                                         mean32, invstd32, st));
    check_rounded_once("batchnorm_forward_with_sums y", y16, y32, count, dtype);
    check_same_floats("batchnorm_forward_with_sums statistics", stats16, stats32, 4 * c, dtype);
    OP_OK(b->batchnorm_backward_channel_sums(b, &half, x.bits, dy.bits, mean32, invstd32,
                                             sums16, dg16, db16, st));
    OP_OK(b->batchnorm_backward_channel_sums(b, &wide, x.wide, dy.wide, mean32, invstd32,
                                             sums32, dg32, db32, st));
    check_same_doubles("batchnorm_backward_channel_sums", sums16, sums32, 2 * c + 1, dtype);
    check_same_floats("batchnorm_backward_channel_sums dgamma, dbeta", dg16, dg32, 2 * c, dtype);
    memcpy(dx16, dx_before.bits, count * sizeof *dx16);
    memcpy(dx32, dx_before.wide, count * sizeof *dx32);
    OP_OK(b->batchnorm_backward_data_with_sums(b, &half, x.bits, dy.bits, gamma, mean32,
                                               invstd32, sums32, dx16, st));
    OP_OK(b->batchnorm_backward_data_with_sums(b, &wide, x.wide, dy.wide, gamma, mean32,
                                               invstd32, sums32, dx32, st));
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
    CHECK(b->batchnorm_forward_training(b, &args, x, y, &one, &zero, &rm, &rv, &mean, &invstd,
                                        &st) != 0);
    CHECK_CONTAINS(st.message, "batchnorm_forward_training");
}

// A rank with no samples in the step (--sync-batchnorm) joins with zero sums and writes
// nothing, whatever the storage.
static void empty_share_in_16_bits(DType dtype) {
    const Backend *b = cpu_backend();
    uint16_t x[1] = {0}, dy[1] = {0}, dx[1] = {0x1234}, y[1] = {0x1234};
    float gamma[2] = {1, 1}, beta[2] = {0, 0}, mean[2] = {0, 0}, invstd[2] = {1, 1};
    float rm[2] = {0, 0}, rv[2] = {1, 1}, dg[2], db[2];
    double sums[5] = {1, 1, 1, 1, 1}, totals[5] = {2, 4, 2, 8, 4};
    BatchnormArgs args = {.n = 0, .channels = 2, .spatial = 3, .momentum = 0.1f, .eps = 1e-5f,
                          .accumulate_dx = 1, .dtype = dtype};
    OP_OK(b->batchnorm_channel_sums(b, &args, x, sums, st));
    for (int i = 0; i < 5; i++) CHECK(sums[i] == 0.0);
    OP_OK(b->batchnorm_forward_with_sums(b, &args, x, y, gamma, beta, totals, rm, rv, mean,
                                         invstd, st));
    CHECK(y[0] == 0x1234);
    OP_OK(b->batchnorm_backward_channel_sums(b, &args, x, dy, mean, invstd, sums, dg, db, st));
    CHECK(dg[0] == 0.0f && db[1] == 0.0f);
    OP_OK(b->batchnorm_backward_data_with_sums(b, &args, x, dy, gamma, mean, invstd, totals, dx,
                                               st));
    CHECK(dx[0] == 0x1234);
}

// ---- in a graph --------------------------------------------------------------------------

enum { BATCH = 20 };

// dense -> batchnorm -> activation -> dense, batchnorm over 24 features
static const char *const features_model =
    "input shape=2x3x3\n"
    "flatten\n"
    "dense units=24 name=d1\n"
    "batchnorm name=bn\n"
    "tanh name=t\n"
    "dense units=6 name=d2\n"
    "loss softmax_cross_entropy\n";

// dense -> reshape to 3x4x4 -> batchnorm over 3 channels of 4x4 -> flatten -> dense: the
// 2-D case without a convolution (those keep f32 storage for now).
static const char *const channels_model =
    "input shape=2x3x3\n"
    "flatten\n"
    "dense units=48 name=d1\n"
    "reshape shape=3x4x4\n"
    "batchnorm name=bn\n"
    "flatten\n"
    "dense units=6 name=d2\n"
    "loss softmax_cross_entropy\n";

// d1 read by two batchnorms: bn2's backward writes d1's gradient and bn1's adds to it.
static const char *const fanout_model =
    "input shape=2x3x3\n"
    "flatten\n"
    "dense units=24 name=d1\n"
    "batchnorm name=bn1\n"
    "batchnorm name=bn2 from=d1\n"
    "add from=bn1,bn2\n"
    "dense units=6 name=d2\n"
    "loss softmax_cross_entropy\n";

typedef struct Net {
    ModelFile file;
    Graph g;
    Allocator alloc;
    int built;
} Net;

static int net_build(Net *n, const char *text, DType storage, Status *st) {
    memset(n, 0, sizeof *n);
    TRY(model_file_parse_text("bn16.model", text, &n->file, st));
    TRY(graph_build(&n->file, &n->g, NULL, st));
    n->built = 1;
    TRY(graph_set_storage(&n->g, storage, st));
    const Backend *b = cpu_backend();
    TRY(alloc_init(&n->alloc, b, ALLOC_GROW, 0, st));
    TRY(graph_init_params(&n->g, b, &n->alloc, 7, st));
    TRY(graph_allocate(&n->g, b, &n->alloc, BATCH, NULL, st));
    float images[BATCH * 18];
    int32_t labels[BATCH];
    Rng rng;
    rng_seed(&rng, 5);
    for (int i = 0; i < BATCH * 18; i++) images[i] = 2.0f * rng_uniform(&rng) - 0.5f;
    for (int i = 0; i < BATCH; i++) labels[i] = (int32_t)rng_below(&rng, 6);
    return graph_load_batch(&n->g, b, images, labels, BATCH, st);
}

static void net_free(Net *n) {
    if (n->built) graph_free(&n->g);
    alloc_destroy(&n->alloc);
    model_file_free(&n->file);
}

// One forward (and, training, backward) pass; the batch's summed loss.
static int net_pass(Net *n, int training, double *loss, Status *st) {
    const Backend *b = cpu_backend();
    LayerContext ctx = {.backend = b, .alloc = &n->alloc, .batch = BATCH, .training = training,
                        .seed = 3, .labels = (const int32_t *)n->g.labels.data};
    TRY(graph_reset_loss_sums(&n->g, b, st));
    TRY(graph_forward(&n->g, &ctx, st));
    if (training) TRY(graph_backward(&n->g, &ctx, st));
    TRY(graph_add_loss_sums(&n->g, b, BATCH, 0, st));
    double correct;
    return graph_read_loss_sums(&n->g, b, loss, &correct, st);
}

static const Layer *layer_named(const Graph *g, const char *name) {
    for (int i = 0; i < g->count; i++)
        if (strcmp(g->layers[i]->name, name) == 0) return g->layers[i];
    return NULL;
}

// What every storage plan keeps: each layer reads the dtype it stores (a view passes its
// input's through), and every cast converts.
static void check_reads_own_dtype(const Graph *g) {
    for (int i = 0; i < g->count; i++) {
        const Layer *l = g->layers[i];
        int is_cast = strcmp(l->kind->name, "cast") == 0;
        for (int k = 0; k < l->input_count; k++) {
            int converts = l->inputs[k]->out_dtype != l->out_dtype;
            if (l->kind->output_is_view || converts == is_cast) continue;
            fprintf(stderr, "  CHECK failed: %s (%s) reads %s (%s)\n", l->name,
                    dtype_name(l->out_dtype), l->inputs[k]->name,
                    dtype_name(l->inputs[k]->out_dtype));
            test_failures++;
        }
    }
}

// batchnorm stores 16 bits and reads the dense layer before it with no cast between
// (through the reshape view in the 2-D model); a cast stands only where a reader keeps f32
// (the activation layer, for now, and the loss).
static void casts_sit_where_storage_changes(const char *text, DType storage) {
    Net n;
    Status st;
    status_clear(&st);
    if (net_build(&n, text, storage, &st)) {
        fprintf(stderr, "build: %s\n", st.message);
        test_failures++;
        net_free(&n);
        return;
    }
    check_reads_own_dtype(&n.g);
    const Layer *d1 = layer_named(&n.g, "d1"), *bn = layer_named(&n.g, "bn");
    const Layer *d2 = layer_named(&n.g, "d2");
    CHECK(d1 && bn && d2);
    if (d1 && bn && d2) {
        CHECK(bn->out_dtype == storage);
        const Layer *in = bn->inputs[0];
        while (in->kind->output_is_view) in = in->inputs[0];
        CHECK(in == d1);  // no cast between
        // d2 reads batchnorm's output (or the activation's, cast when that keeps f32)
        const Layer *d2_in = d2->inputs[0];
        CHECK(d2_in->out_dtype == storage);
        if (strcmp(d2_in->kind->name, "cast") == 0) CHECK(d2_in->inputs[0] != bn);
    }
    const Layer *to_loss = n.g.loss->inputs[0];
    CHECK(strcmp(to_loss->kind->name, "cast") == 0 && to_loss->out_dtype == DTYPE_F32);
    net_free(&n);
}

// The relative difference of two vectors, sqrt(sum (a - b)^2 / sum b^2); 0 when b is 0.
static double relative_difference(const float *got, const float *want, size_t n) {
    double diff = 0.0, norm = 0.0;
    for (size_t j = 0; j < n; j++) {
        diff += ((double)got[j] - want[j]) * ((double)got[j] - want[j]);
        norm += (double)want[j] * want[j];
    }
    return norm > 0.0 ? sqrt(diff / norm) : 0.0;
}

static void check_bound(const char *what, const char *name, double rel, double bound) {
    fprintf(stderr, "  %-4s %-16s relative difference %.2e\n", name, what, rel);
    if (!(rel < bound)) {
        fprintf(stderr, "  CHECK failed: %s %s: %.2e over the bound %.1e\n", name, what, rel,
                bound);
        test_failures++;
    }
}

// bound: what rounding the stored activations and gradients to 8 (bf16) or 11 (f16)
// significant bits may move a result, relative. Each stored value is off by up to half a
// unit in its last place (2^-9, 2^-12) and a handful of layers stack them; the bounds are
// about twice the largest difference measured over the three models (bf16 5.6e-3,
// f16 6.3e-4, both in a layer's parameter gradients; the running statistics and the
// losses move less).
static void matches_f32(const char *label, const char *text, DType storage, double bound) {
    Net wide, half;
    Status st;
    status_clear(&st);
    double wide_loss = 0.0, half_loss = 0.0, wide_eval = 0.0, half_eval = 0.0;
    int rc = net_build(&wide, text, DTYPE_F32, &st);
    if (!rc) rc = net_build(&half, text, storage, &st);
    if (!rc) rc = net_pass(&wide, 1, &wide_loss, &st);
    if (!rc) rc = net_pass(&half, 1, &half_loss, &st);
    if (rc) {
        fprintf(stderr, "%s %s: %s\n", label, dtype_name(storage), st.message);
        test_failures++;
        net_free(&wide);
        net_free(&half);
        return;
    }
    fprintf(stderr, "%s, %s storage: loss %.6f vs f32 %.6f\n", label, dtype_name(storage),
            half_loss / BATCH, wide_loss / BATCH);
    CHECK(half_loss != wide_loss);  // the 16-bit path did round something
    check_bound("training loss", "", fabs(half_loss - wide_loss) / wide_loss, bound);
    // Per layer over its parameter gradients together: the bias gradient of a dense layer
    // before a batchnorm over its features is zero but for rounding (the normalisation
    // takes every shift out), and would make any rounding look large alone.
    for (int i = 0; i < wide.g.count; i++) {
        const Layer *w = wide.g.layers[i];
        const Layer *h = layer_named(&half.g, w->name);
        if (!w->param_count) continue;
        CHECK(h != NULL);
        if (!h) continue;
        double diff = 0.0, norm = 0.0;
        for (int p = 0; p < w->param_count; p++) {
            size_t count = shape_numel(&w->params[p].shape);
            if (w->params[p].buffer) {  // the running statistics the step moved
                check_bound(w->params[p].name, w->name,
                            relative_difference(tensor_f32(&h->params[p].value),
                                                tensor_f32(&w->params[p].value), count),
                            bound);
                continue;
            }
            const float *got = tensor_f32(&h->params[p].grad);
            const float *want = tensor_f32(&w->params[p].grad);
            for (size_t j = 0; j < count; j++) {
                diff += ((double)got[j] - want[j]) * ((double)got[j] - want[j]);
                norm += (double)want[j] * want[j];
            }
        }
        if (norm > 0.0) check_bound("gradients", w->name, sqrt(diff / norm), bound);
    }
    // evaluation normalises with the running statistics the step moved
    rc = net_pass(&wide, 0, &wide_eval, &st);
    if (!rc) rc = net_pass(&half, 0, &half_eval, &st);
    if (rc) {
        fprintf(stderr, "%s %s evaluation: %s\n", label, dtype_name(storage), st.message);
        test_failures++;
    } else {
        check_bound("evaluation loss", "", fabs(half_eval - wide_eval) / wide_eval, bound);
    }
    net_free(&wide);
    net_free(&half);
}

// bn1 adds its input gradient to the one bn2 wrote into d1's 16-bit gradient.
static void fanout_accumulates_into_16_bit(DType storage) {
    Net n;
    Status st;
    status_clear(&st);
    if (net_build(&n, fanout_model, storage, &st)) {
        fprintf(stderr, "build: %s\n", st.message);
        test_failures++;
    } else {
        const Layer *d1 = layer_named(&n.g, "d1");
        const Layer *bn1 = layer_named(&n.g, "bn1"), *bn2 = layer_named(&n.g, "bn2");
        CHECK(d1 && bn1 && bn2);
        if (d1 && bn1 && bn2) {
            CHECK(bn1->inputs[0] == d1 && bn2->inputs[0] == d1);
            CHECK(d1->grad.dtype == storage);
            CHECK_INT_EQ(bn1->input_grad_accumulate[0], 1);
            CHECK_INT_EQ(bn2->input_grad_accumulate[0], 0);
        }
    }
    net_free(&n);
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
        casts_sit_where_storage_changes(features_model, halves[t]);
        casts_sit_where_storage_changes(channels_model, halves[t]);
        fanout_accumulates_into_16_bit(halves[t]);
    }
    matches_f32("features", features_model, DTYPE_BF16, 0.012);
    matches_f32("features", features_model, DTYPE_F16, 0.0013);
    matches_f32("channels", channels_model, DTYPE_BF16, 0.012);
    matches_f32("channels", channels_model, DTYPE_F16, 0.0013);
    matches_f32("fan-out", fanout_model, DTYPE_BF16, 0.012);
    matches_f32("fan-out", fanout_model, DTYPE_F16, 0.0013);
    return test_exit_code("test_storage16_batchnorm");
}

// 16-bit activation storage (graph_set_storage, --precision bf16|fp16), run on the CPU,
// whose ops store bf16 and f16 exactly as the CUDA ones are tested to (tests/gpu's parity
// cases): the same model from the same weights and batch, once with f32 activations and
// once with 16-bit ones, gives the same loss and parameter gradients within what rounding
// each stored activation to 8 (bf16) or 11 (f16) significant bits can move them; the casts
// sit where storage changes and go again with DTYPE_F32; and a training run in 16 bits
// learns. Finite differences cannot check rounded storage, so f32 is the reference.
#include "check.h"
#include "base/rng.h"
#include "core/optimizer.h"
#include "core/graph.h"
#include "core/nonfinite.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { BATCH = 24 };

// dense layers with fused and unfused activations (gelu cannot fuse), one read by two
// layers (an add: two casts of one f32 output would be one), dropout and a reshape view
// between them, and batchnorm, which stores 16 bits as dense does.
static const char *const model_text =
    "input shape=2x5x5\n"
    "flatten\n"
    "dense units=32 act=relu name=d1\n"
    "dense units=32 act=gelu name=d2\n"
    "dense units=32 name=d3\n"
    "add from=d1,d3\n"
    "dropout rate=0.25\n"
    "reshape shape=2x16\n"
    "flatten\n"
    "dense units=24 act=tanh name=d4\n"
    "batchnorm\n"
    "dense units=6 name=d5\n"
    "loss softmax_cross_entropy\n";

typedef struct Net {
    ModelFile file;
    Graph g;
    Allocator alloc;
    int built;
} Net;

static int net_build(Net *n, DType storage, Status *st) {
    memset(n, 0, sizeof *n);
    TRY(model_file_parse_text("storage.model", model_text, &n->file, st));
    TRY(graph_build(&n->file, &n->g, NULL, st));
    n->built = 1;
    TRY(graph_set_storage(&n->g, storage, st));
    const Backend *b = cpu_backend();
    TRY(alloc_init(&n->alloc, b, ALLOC_GROW, 0, st));
    TRY(graph_init_params(&n->g, b, &n->alloc, 5, st));
    return graph_allocate(&n->g, b, &n->alloc, BATCH, NULL, st);
}

static void net_free(Net *n) {
    if (n->built) graph_free(&n->g);
    alloc_destroy(&n->alloc);
    model_file_free(&n->file);
}

static int load_batch(Net *n, uint64_t seed, Status *st) {
    size_t values = (size_t)BATCH * shape_numel(&n->g.input->out_shape);
    float images[BATCH * 50];
    int32_t labels[BATCH];
    Rng rng;
    rng_seed(&rng, seed);
    for (size_t i = 0; i < values; i++) images[i] = 2.0f * rng_uniform(&rng) - 1.0f;
    for (int i = 0; i < BATCH; i++) labels[i] = (int32_t)rng_below(&rng, 6);
    return graph_load_batch(&n->g, cpu_backend(), images, labels, BATCH, st);
}

static int step(Net *n, double *loss, Status *st) {
    const Backend *b = cpu_backend();
    LayerContext ctx = {.backend = b, .alloc = &n->alloc, .batch = BATCH, .training = 1,
                        .seed = 99, .labels = (const int32_t *)n->g.labels.data};
    TRY(graph_reset_loss_sums(&n->g, b, st));
    TRY(graph_forward(&n->g, &ctx, st));
    TRY(graph_backward(&n->g, &ctx, st));
    TRY(graph_add_loss_sums(&n->g, b, BATCH, 0, st));
    double correct;
    return graph_read_loss_sums(&n->g, b, loss, &correct, st);
}

static const Layer *layer_named(const Graph *g, const char *name) {
    for (int i = 0; i < g->count; i++)
        if (strcmp(g->layers[i]->name, name) == 0) return g->layers[i];
    return NULL;
}

// Where the casts are: into d1 (from flatten); d5's logits into the loss. d2's gelu (an
// activation layer of its own), the add, dropout and batchnorm store 16 bits too, so
// nothing converts between d1 and d5. Wherever a layer reads a dtype, it is the one it
// stores, and every cast converts.
static void casts_sit_where_storage_changes(DType storage) {
    Net n;
    Status st;
    status_clear(&st);
    if (net_build(&n, storage, &st)) {
        fprintf(stderr, "build: %s\n", st.message);
        test_failures++;
        net_free(&n);
        return;
    }
    const char *half = dtype_name(storage);
    char name[64];
    int casts = 0;
    for (int i = 0; i < n.g.count; i++) {
        const Layer *l = n.g.layers[i];
        if (strcmp(l->kind->name, "cast") != 0) continue;
        casts++;
        // right after what it converts, its dtype the one its readers store
        CHECK(i > 0 && n.g.layers[i - 1] == l->inputs[0]);
        CHECK(l->out_dtype != l->inputs[0]->out_dtype);
    }
    CHECK_INT_EQ(casts, 2);
    snprintf(name, sizeof name, "flatten1:%s", half);
    CHECK(layer_named(&n.g, name) != NULL);
    CHECK(layer_named(&n.g, "d5:f32") != NULL);
    for (int i = 0; i < n.g.count; i++) {
        const Layer *l = n.g.layers[i];
        if (l->kind->output_is_view || strcmp(l->kind->name, "cast") == 0) continue;
        for (int k = 0; k < l->input_count; k++)
            if (l->inputs[k]->out_dtype != l->out_dtype) {
                fprintf(stderr, "  CHECK failed: %s (%s) reads %s (%s)\n", l->name,
                        dtype_name(l->out_dtype), l->inputs[k]->name,
                        dtype_name(l->inputs[k]->out_dtype));
                test_failures++;
            }
    }
    const Layer *d1 = layer_named(&n.g, "d1"), *d4 = layer_named(&n.g, "d4");
    const Layer *bn = layer_named(&n.g, "batchnorm1");
    CHECK(d1 && d1->out_dtype == storage);
    CHECK(d4 && d4->out_dtype == storage);
    CHECK(bn && bn->out_dtype == storage && bn->inputs[0] == layer_named(&n.g, "d4.act"));
    const Layer *reshape = layer_named(&n.g, "reshape1");
    CHECK(reshape && reshape->out_dtype == storage);  // a view of the 16-bit dropout
    int count = n.g.count;
    CHECK_INT_EQ(graph_set_storage(&n.g, DTYPE_F32, &st), 0);
    CHECK_INT_EQ(n.g.count, count - casts);
    for (int i = 0; i < n.g.count; i++) CHECK(n.g.layers[i]->out_dtype == DTYPE_F32);
    net_free(&n);
}

// bound: the relative gradient error rounding to the storage type may give. Each stored
// activation and gradient is off by at most half a unit in its last place (bf16 2^-9,
// f16 2^-12) and a dozen layers stack them; the bounds are about twice the largest layer's
// difference measured (bf16 2.6e-2, f16 8.7e-4, at the first layer, which every other
// layer's rounding reaches).
static void gradients_match_f32(DType storage, double bound) {
    Net wide, half;
    Status st;
    status_clear(&st);
    double wide_loss = 0.0, half_loss = 0.0;
    int rc = net_build(&wide, DTYPE_F32, &st);
    if (!rc) rc = net_build(&half, storage, &st);
    if (!rc) rc = load_batch(&wide, 3, &st);
    if (!rc) rc = load_batch(&half, 3, &st);
    if (!rc) rc = step(&wide, &wide_loss, &st);
    if (!rc) rc = step(&half, &half_loss, &st);
    if (rc) {
        fprintf(stderr, "%s: %s\n", dtype_name(storage), st.message);
        test_failures++;
    } else {
        fprintf(stderr, "%s storage: loss %.6f vs f32 %.6f\n", dtype_name(storage),
                half_loss / BATCH, wide_loss / BATCH);
        CHECK(fabs(half_loss - wide_loss) / wide_loss < bound);
        CHECK(half_loss != wide_loss);  // the 16-bit path did round something
        // Per layer, over its weight and bias gradients together: a bias whose gradient is
        // nearly zero (d4's, under batchnorm) alone would make any rounding look large.
        for (int i = 0; i < wide.g.count; i++) {
            const Layer *w = wide.g.layers[i];
            const Layer *h = layer_named(&half.g, w->name);
            CHECK(h != NULL);
            double diff = 0.0, norm = 0.0;
            for (int p = 0; h && p < w->param_count; p++) {
                if (w->params[p].buffer) continue;
                const float *got = tensor_f32(&h->params[p].grad);
                const float *want = tensor_f32(&w->params[p].grad);
                for (size_t j = 0; j < shape_numel(&w->params[p].shape); j++) {
                    diff += ((double)got[j] - want[j]) * ((double)got[j] - want[j]);
                    norm += (double)want[j] * want[j];
                }
            }
            if (norm == 0.0) continue;
            double rel = sqrt(diff / norm);
            fprintf(stderr, "  %-12s relative gradient difference %.2e\n", w->name, rel);
            if (!(rel < bound)) {
                fprintf(stderr, "  CHECK failed: %s: %.2e over the bound %.1e\n", w->name, rel,
                        bound);
                test_failures++;
            }
        }
    }
    net_free(&wide);
    net_free(&half);
}

// Twenty SGD steps on one batch in 16-bit storage bring the loss well down: the rounded
// gradients still point downhill and the f32 master weights take steps smaller than a
// bf16 unit in the last place.
static void sixteen_bit_training_learns(DType storage) {
    Net n;
    Status st;
    status_clear(&st);
    OptimizerConfig sgd = {.kind = OPTIMIZER_SGD, .lr = 0.1};
    double first = 0.0, last = 0.0;
    int rc = net_build(&n, storage, &st);
    if (!rc) rc = optimizer_prepare(&n.g, &sgd, cpu_backend(), &n.alloc, &st);
    if (!rc) rc = load_batch(&n, 11, &st);
    for (int i = 0; !rc && i < 20; i++) {
        rc = step(&n, i ? &last : &first, &st);
        if (!rc) rc = optimizer_step(&n.g, &sgd, cpu_backend(), i + 1, &st);
    }
    if (rc) {
        fprintf(stderr, "%s training: %s\n", dtype_name(storage), st.message);
        test_failures++;
    } else {
        fprintf(stderr, "%s training: loss %.4f -> %.4f\n", dtype_name(storage),
                first / BATCH, last / BATCH);
        CHECK(last < 0.5 * first);
    }
    net_free(&n);
}

// The search for where a value went non-finite reads 16-bit outputs widened, and names
// the first layer whose output holds a NaN: a NaN weight in d3 (no activation; a relu
// would turn NaN into 0) shows first in d3's own 16-bit output.
static void nonfinite_search_reads_16_bit_outputs(DType storage) {
    Net n;
    Status st;
    status_clear(&st);
    NonfiniteSite site = {0};
    int rc = net_build(&n, storage, &st);
    if (!rc) rc = load_batch(&n, 5, &st);
    const Layer *d3 = rc ? NULL : layer_named(&n.g, "d3");
    if (d3) tensor_f32(&d3->params[0].value)[3] = NAN;  // CPU tensors are host memory
    double loss;
    if (!rc) rc = step(&n, &loss, &st);
    if (!rc) rc = find_first_nonfinite(&n.g, cpu_backend(), &n.alloc, &site, &st);
    if (rc) {
        fprintf(stderr, "nonfinite search: %s\n", st.message);
        test_failures++;
    } else {
        CHECK(site.layer != NULL && strcmp(site.layer->name, "d3") == 0);
        CHECK_CONTAINS(site.what, "the output");
    }
    net_free(&n);
}

int main(void) {
    casts_sit_where_storage_changes(DTYPE_BF16);
    casts_sit_where_storage_changes(DTYPE_F16);
    gradients_match_f32(DTYPE_BF16, 0.05);
    gradients_match_f32(DTYPE_F16, 0.002);
    sixteen_bit_training_learns(DTYPE_BF16);
    sixteen_bit_training_learns(DTYPE_F16);
    nonfinite_search_reads_16_bit_outputs(DTYPE_BF16);
    nonfinite_search_reads_16_bit_outputs(DTYPE_F16);
    return test_exit_code("test_storage16");
}

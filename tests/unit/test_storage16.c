// 16-bit activation storage (graph_set_storage, --precision bf16|fp16), run on the CPU,
// whose ops store bf16 and f16 exactly as the CUDA ones are tested to (tests/gpu's parity
// cases): the same model from the same weights and batch, once with f32 activations and
// once with 16-bit ones, gives the same loss and parameter gradients within what rounding
// each stored activation to 8 (bf16) or 11 (f16) significant bits can move them; the casts
// sit where storage changes and go again with DTYPE_F32; and a training run in 16 bits
// learns. Finite differences cannot check rounded storage, so f32 is the reference.
#include "storage16_net.h"
#include "core/nonfinite.h"

#include <math.h>
#include <string.h>

// dense layers with fused and unfused activations (gelu cannot fuse), one read by two
// layers (an add: two casts of one f32 output would be one), dropout and a reshape view
// between them, and batchnorm, which stores 16 bits as dense does.
static const StorageNetSpec spec = {
    .model_name = "storage.model",
    .text = "input shape=2x5x5\n"
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
            "loss softmax_cross_entropy\n",
    .batch = 24, .classes = 6, .input_low = -1.0f, .param_seed = 5, .ctx_seed = 99};

// Where the casts are: into d1 (from flatten); d5's logits into the loss. d2's gelu (an
// activation layer of its own), the add, dropout and batchnorm store 16 bits too, so
// nothing converts between d1 and d5. Wherever a layer reads a dtype, it is the one it
// stores, and every cast converts.
static void casts_sit_where_storage_changes(DType storage) {
    StorageNet n;
    if (storage_net_open(&n, &spec, storage)) return;
    int casts = check_casts_follow_their_input(&n.g);
    CHECK_INT_EQ(casts, 2);
    char name[64];
    snprintf(name, sizeof name, "flatten1:%s", dtype_name(storage));
    CHECK(layer_named(&n.g, name) != NULL);
    CHECK(layer_named(&n.g, "d5:f32") != NULL);
    check_reads_own_dtype(&n.g);
    const Layer *d1 = layer_named(&n.g, "d1"), *d4 = layer_named(&n.g, "d4");
    const Layer *bn = layer_named(&n.g, "batchnorm1");
    CHECK(d1 && d1->out_dtype == storage);
    CHECK(d4 && d4->out_dtype == storage);
    CHECK(bn && bn->out_dtype == storage && bn->inputs[0] == layer_named(&n.g, "d4.act"));
    const Layer *reshape = layer_named(&n.g, "reshape1");
    CHECK(reshape && reshape->out_dtype == storage);  // a view of the 16-bit dropout
    check_f32_storage_removes_casts(&n.g, casts);
    storage_net_free(&n);
}

// Twenty SGD steps on one batch in 16-bit storage bring the loss well down: the rounded
// gradients still point downhill and the f32 master weights take steps smaller than a
// bf16 unit in the last place.
static void sixteen_bit_training_learns(DType storage) {
    OptimizerConfig sgd = {.kind = OPTIMIZER_SGD, .lr = 0.1};
    check_training_learns(&spec, storage, &sgd, 20, 11, 0.5);
}

// The search for where a value went non-finite reads 16-bit outputs widened, and names
// the first layer whose output holds a NaN: a NaN written into d3's own 16-bit output after
// a pass (the f32 weights stay finite, so no parameter is named first).
static void nonfinite_search_reads_16_bit_outputs(DType storage) {
    StorageNet n;
    Status st;
    status_clear(&st);
    NonfiniteSite site = {0};
    int rc = storage_net_build(&n, &spec, storage, &st);
    if (!rc) rc = storage_net_load_batch(&n, 5, &st);
    const Layer *d3 = rc ? NULL : layer_named(&n.g, "d3");
    double loss;
    if (!rc) rc = storage_net_pass(&n, 1, &loss, &st);
    // A quiet NaN in the storage type's bits; CPU tensors are host memory.
    if (!rc && d3) ((uint16_t *)d3->output.data)[3] = storage == DTYPE_BF16 ? 0x7fc0 : 0x7e00;
    if (!rc) rc = find_first_nonfinite(&n.g, cpu_backend(), &n.alloc, &site, &st);
    if (rc) {
        fprintf(stderr, "nonfinite search: %s\n", st.message);
        test_failures++;
    } else {
        CHECK(site.layer != NULL && strcmp(site.layer->name, "d3") == 0);
        CHECK_CONTAINS(site.what, "the output");
    }
    storage_net_free(&n);
}

int main(void) {
    casts_sit_where_storage_changes(DTYPE_BF16);
    casts_sit_where_storage_changes(DTYPE_F16);
    // bound: the relative gradient error rounding to the storage type may give. Each stored
    // activation and gradient is off by at most half a unit in its last place (bf16 2^-9,
    // f16 2^-12) and a dozen layers stack them; the bounds are about twice the largest layer's
    // difference measured (bf16 2.6e-2, f16 8.7e-4, at the first layer, which every other
    // layer's rounding reaches).
    check_storage_matches_f32(&spec, DTYPE_BF16, 3, 0.05);
    check_storage_matches_f32(&spec, DTYPE_F16, 3, 0.002);
    sixteen_bit_training_learns(DTYPE_BF16);
    sixteen_bit_training_learns(DTYPE_F16);
    nonfinite_search_reads_16_bit_outputs(DTYPE_BF16);
    nonfinite_search_reads_16_bit_outputs(DTYPE_F16);
    return test_exit_code("test_storage16");
}

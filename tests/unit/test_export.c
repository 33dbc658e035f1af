// What `trainer export` rests on: the protobuf writer's encodings (worked out by hand from
// the wire format), each layer's export description (an even kernel's pad=same pads
// bottom/right more, batchnorm's eps, dropout as identity), and the refusal of a layer whose
// kind has no description, at its statement. tests/e2e/export.sh runs the files in
// ONNX Runtime and PyTorch.
#include "check.h"
#include "base/protobuf.h"
#include "core/export.h"

#include <stdlib.h>
#include <string.h>

static void check_bytes(const char *what, const ProtoWriter *w, const uint8_t *want,
                        size_t size) {
    if (proto_finished(w) == size && memcmp(w->out, want, size) == 0) return;
    fprintf(stderr, "%s: %zu bytes, want %zu\n", what, proto_finished(w), size);
    test_failures++;
}

static void protobuf_fields_match_the_wire_format(void) {
    ProtoWriter w = proto_writer_growing();
    proto_put_varint_field(&w, 1, 300);    // 08 ac 02
    proto_put_int_field(&w, 2, -1);        // 10 ff*9 01: int64 -1 sign-extends to ten bytes
    proto_put_string_field(&w, 15, "ab");  // 7a 02 'a' 'b'
    proto_put_float_field(&w, 16, 2.0f);   // 85 01 00 00 00 40: field 16 needs a 2-byte key
    static const uint8_t want[] = {0x08, 0xAC, 0x02, 0x10, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF,
                                   0xFF, 0xFF, 0xFF, 0x01, 0x7A, 0x02, 'a', 'b', 0x85, 0x01,
                                   0x00, 0x00, 0x00, 0x40};
    check_bytes("fields", &w, want, sizeof want);
    ProtoWriter outer = proto_writer_growing();
    proto_put_message_field(&outer, 3, &w);  // 1a 18 + the 24 bytes
    CHECK_INT_EQ(proto_finished(&outer), 26);
    CHECK_INT_EQ(outer.out[0], 0x1A);
    CHECK_INT_EQ(outer.out[1], 24);
    proto_writer_free(&w);
    proto_writer_free(&outer);
}

static void a_full_fixed_writer_finishes_as_zero(void) {
    uint8_t bytes[4];
    ProtoWriter w = proto_writer_fixed(bytes, sizeof bytes);
    proto_put_string_field(&w, 1, "abc");  // 5 bytes into 4
    CHECK_INT_EQ(proto_finished(&w), 0);
    ProtoWriter parent = proto_writer_growing();
    proto_put_message_field(&parent, 1, &w);  // an overflowed part fails the whole
    CHECK_INT_EQ(proto_finished(&parent), 0);
    proto_writer_free(&parent);
}

static const char model_text[] =
    "input shape=1x8x8 dtype=f32\n"
    "conv2d filters=2 kernel=4 pad=same name=c\n"
    "batchnorm eps=0.001 act=relu\n"
    "dropout rate=0.5\n"
    "flatten\n"
    "dense units=3\n"
    "loss softmax_cross_entropy\n";

static int build(ModelFile *f, Graph *g) {
    Status st;
    status_clear(&st);
    int rc = model_file_parse_text("export.model", model_text, f, &st);
    if (!rc) rc = graph_build(f, g, NULL, &st);
    if (rc) fprintf(stderr, "build: %s\n", st.message);
    CHECK_INT_EQ(rc, 0);
    return rc;
}

static void layers_describe_their_inference_ops(void) {
    ModelFile f;
    Graph g;
    if (build(&f, &g)) return;
    ExportStep *steps;
    int count;
    Status st;
    status_clear(&st);
    CHECK_INT_EQ(export_describe(&g, &steps, &count, &st), 0);
    CHECK_INT_EQ(count, 6);  // conv, batchnorm, its relu, dropout, flatten, dense
    const ExportNode *conv = &steps[0].node;
    CHECK_INT_EQ(conv->op, EXPORT_CONV);
    CHECK_INT_EQ(conv->pad_before[0], 1);  // a span of 4: 1 above, 2 below
    CHECK_INT_EQ(conv->pad_after[0], 2);
    CHECK_INT_EQ(conv->pad_after[1], 2);
    CHECK_INT_EQ(conv->has_bias, 1);
    CHECK_INT_EQ(steps[1].node.op, EXPORT_BATCHNORM);
    CHECK_NEAR(steps[1].node.epsilon, 0.001, 1e-9);
    CHECK_INT_EQ(steps[2].node.op, EXPORT_ACTIVATION);
    CHECK_INT_EQ(steps[2].node.activation, ACTIVATION_RELU);
    CHECK_INT_EQ(steps[3].node.op, EXPORT_IDENTITY);
    CHECK_INT_EQ(steps[5].node.op, EXPORT_GEMM);
    CHECK(strcmp(export_value_name(&g, steps[0].layer->inputs[0]), "input") == 0);
    free(steps);
    graph_free(&g);
    model_file_free(&f);
}

static void a_kind_without_a_description_is_refused_at_its_line(void) {
    ModelFile f;
    Graph g;
    if (build(&f, &g)) return;
    LayerKind silent = *g.layers[4]->kind;  // the dropout
    silent.export_node = NULL;
    const LayerKind *own = g.layers[4]->kind;
    g.layers[4]->kind = &silent;
    ExportStep *steps;
    int count;
    Status st;
    status_clear(&st);
    CHECK_INT_EQ(export_describe(&g, &steps, &count, &st), STATUS_BAD_INPUT);
    CHECK_CONTAINS(st.message, "layer 'dropout1' (dropout) cannot be exported");
    CHECK_INT_EQ(st.line, 4);
    g.layers[4]->kind = own;
    graph_free(&g);
    model_file_free(&f);
}

int main(void) {
    protobuf_fields_match_the_wire_format();
    a_full_fixed_writer_finishes_as_zero();
    layers_describe_their_inference_ops();
    a_kind_without_a_description_is_refused_at_its_line();
    return test_exit_code("test_export");
}

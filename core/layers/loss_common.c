#include "core/layers/loss_common.h"

#include <stdlib.h>

int loss_infer_scores(Layer *l, int min_classes, Status *st) {
    const Layer *in = l->inputs[0];
    char shape[64];
    if (in->out_shape.rank != 1) {
        layer_fail(l, st, "loss %s needs a flat vector of class scores, but '%s' gives %s",
                   l->kind->name, in->name, shape_format(&in->out_shape, shape, sizeof shape));
        status_hint(st, "end the model with `flatten` and `dense units=CLASSES`");
        return STATUS_BAD_INPUT;
    }
    if (in->out_shape.dims[0] < min_classes) {
        layer_fail(l, st, "loss %s needs at least %d class scores, but '%s' gives %d",
                   l->kind->name, min_classes, in->name, in->out_shape.dims[0]);
        status_hint(st, "the last dense layer needs units= equal to the number of classes");
        return STATUS_BAD_INPUT;
    }
    l->out_shape = in->out_shape;
    l->out_dtype = DTYPE_F32;
    return 0;
}

int loss_allocate_rows(Layer *l, const LayerContext *ctx, int batch, Status *st) {
    LossRows *state = l->state;
    if (!state) {
        state = calloc(1, sizeof *state);
        if (!state)
            return status_out_of_host_memory(st, sizeof *state, "for layer %s's state", l->name);
        l->state = state;
    }
    Shape pair = shape_make1(2);
    tensor_free(&state->row_stats);
    tensor_set_shape(&state->row_stats, DTYPE_F32, batch, &pair);
    return tensor_alloc(&state->row_stats, ctx->alloc, st);
}

int loss_planned_rows(const Layer *l, const Backend *b, int batch, size_t *state,
                      size_t *workspace, Status *st) {
    Shape pair = shape_make1(2);  // row_stats
    *state = layer_batch_tensor_bytes(batch, &pair, sizeof(float));
    *workspace = 0;
    return 0;
}

void loss_release_rows(Layer *l) {
    LossRows *state = l->state;
    if (state) tensor_free(&state->row_stats);
    free(state);
    l->state = NULL;
}

const LossRows *loss_state_rows(const Layer *l) { return l->state; }

#include "core/optimizer.h"

#include <stdio.h>

int optimizer_state_slots(const OptimizerConfig *o) {
    if (o->kind == OPTIMIZER_SGD) return o->momentum != 0.0 ? 1 : 0;
    return 2;
}

const char *optimizer_state_name(const OptimizerConfig *o, int slot) {
    if (o->kind == OPTIMIZER_SGD) return "momentum";
    return slot == 0 ? "adam_m" : "adam_v";
}

int optimizer_prepare(Graph *g, const OptimizerConfig *o, const Backend *b, Allocator *a,
                      Status *st) {
    int slots = optimizer_state_slots(o);
    for (int i = 0; i < g->count; i++) {
        Layer *l = g->layers[i];
        for (int k = 0; k < l->param_count; k++) {
            Param *p = &l->params[k];
            if (p->buffer) continue;  // not trained: no optimizer state
            for (int s = 0; s < slots; s++) {
                if (p->state[s].data) continue;
                tensor_set_shape(&p->state[s], DTYPE_F32, 0, &p->shape);
                TRY(graph_alloc_tensor(&p->state[s], a, l, "optimizer state", 0, st));
                TRY(b->fill(b, tensor_f32(&p->state[s]), 0.0f, tensor_numel(&p->state[s]), st));
            }
        }
    }
    return 0;
}

static int update_params(Graph *g, const OptimizerConfig *o, const Backend *b, int step,
                         double lr, Status *st) {
    SgdHyper sgd = {.lr = (float)lr, .momentum = (float)o->momentum,
                    .weight_decay = (float)o->weight_decay, .nesterov = o->nesterov};
    AdamHyper adam = {.lr = (float)lr, .beta1 = (float)o->beta1, .beta2 = (float)o->beta2,
                      .eps = (float)o->eps, .weight_decay = (float)o->weight_decay,
                      .decoupled_weight_decay = o->kind == OPTIMIZER_ADAMW, .step = step};
    for (int i = 0; i < g->count; i++) {
        Layer *l = g->layers[i];
        for (int k = 0; k < l->param_count; k++) {
            Param *p = &l->params[k];
            if (p->buffer) continue;  // batchnorm's running statistics are set by forward
            size_t n = tensor_numel(&p->value);
            int rc = o->kind == OPTIMIZER_SGD
                         ? b->sgd_update(b, tensor_f32(&p->value), tensor_f32(&p->grad),
                                         tensor_f32(&p->state[0]), n, &sgd, st)
                         : b->adam_update(b, tensor_f32(&p->value), tensor_f32(&p->grad),
                                          tensor_f32(&p->state[0]), tensor_f32(&p->state[1]), n,
                                          &adam, st);
            if (rc) {
                status_prefix(st, "update of parameter '%s': ", p->name);
                status_set_place_if_unset(st, l->path, l->line, l->column);
                return rc;
            }
        }
    }
    return 0;
}

int optimizer_step_at(Graph *g, const OptimizerConfig *o, const Backend *b, int step, double lr,
                      Status *st) {
    if (b->range_push) b->range_push(b, "optimizer");
    int rc = update_params(g, o, b, step, lr, st);
    if (b->range_pop) b->range_pop(b);
    return rc;
}

int optimizer_step(Graph *g, const OptimizerConfig *o, const Backend *b, int step, Status *st) {
    return optimizer_step_at(g, o, b, step, o->lr, st);
}

const char *optimizer_describe(const OptimizerConfig *o, char *buf, size_t size) {
    int used;
    if (o->kind == OPTIMIZER_SGD)
        used = snprintf(buf, size, "sgd lr=%g momentum=%g nesterov=%s weight_decay=%g", o->lr,
                 o->momentum, o->nesterov ? "true" : "false", o->weight_decay);
    else
        used = snprintf(buf, size, "%s lr=%g beta1=%g beta2=%g eps=%g weight_decay=%g",
                 o->kind == OPTIMIZER_ADAM ? "adam" : "adamw", o->lr, o->beta1, o->beta2, o->eps,
                 o->weight_decay);
    if (o->clip_norm > 0.0 && used >= 0 && (size_t)used < size)
        snprintf(buf + used, size - (size_t)used, " clip_norm=%g", o->clip_norm);
    return buf;
}

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

// Trained parameters are updated in groups of up to OPTIMIZER_UPDATE_GROUP tensors
// (core/optimizer.h): one call of the backend's multi-tensor op per group (on CUDA one launch
// for up to 64 tensors, where one per tensor cost a launch each: lenet has 8 trained
// tensors, cnn-bn 10), or, for a backend without it, one call per tensor. The two give the
// same bits.

typedef struct UpdateGroup {
    OptimizerTensor tensors[OPTIMIZER_UPDATE_GROUP];
    const Param *params[OPTIMIZER_UPDATE_GROUP];
    const Layer *layers[OPTIMIZER_UPDATE_GROUP];
    int count;
} UpdateGroup;

typedef struct UpdateRule {
    int sgd;  // 1: SgdHyper; 0: AdamHyper (adam, adamw)
    SgdHyper sgd_hyper;
    AdamHyper adam_hyper;
} UpdateRule;

// Names the parameters [first, last] of the group in a failure, and the first one's layer.
static void blame(const UpdateGroup *group, int first, int last, Status *st) {
    if (first == last)
        status_prefix(st, "update of parameter '%s': ", group->params[first]->name);
    else
        status_prefix(st, "update of parameters '%s' to '%s': ", group->params[first]->name,
                      group->params[last]->name);
    const Layer *l = group->layers[first];
    status_set_place_if_unset(st, l->path, l->line, l->column);
}

static int update_one(const UpdateRule *r, const Backend *b, const OptimizerTensor *t,
                      Status *st) {
    return r->sgd ? b->sgd_update(b, &(SgdUpdateTensors){.param = t->param, .grad = t->grad,
                                  .velocity = t->state[0], .n = t->n}, &r->sgd_hyper, st)
                  : b->adam_update(b, &(AdamUpdateTensors){.param = t->param, .grad = t->grad,
                                   .m = t->state[0], .v = t->state[1], .n = t->n}, &r->adam_hyper,
                                   st);
}

// Updates the group's tensors and empties it.
static int update_group(UpdateGroup *group, const UpdateRule *r, const Backend *b,
                        Status *st) {
    int count = group->count;
    group->count = 0;
    if (count == 0) return 0;
    int rc = 0;
    if (r->sgd ? b->sgd_update_multi != NULL : b->adam_update_multi != NULL) {
        rc = r->sgd ? b->sgd_update_multi(b, group->tensors, count, &r->sgd_hyper, st)
                    : b->adam_update_multi(b, group->tensors, count, &r->adam_hyper, st);
        if (rc) blame(group, 0, count - 1, st);
        return rc;
    }
    for (int i = 0; i < count && !rc; i++) {
        rc = update_one(r, b, &group->tensors[i], st);
        if (rc) blame(group, i, i, st);
    }
    return rc;
}

static int update_params(Graph *g, const OptimizerConfig *o, const Backend *b, int step,
                         double lr, Status *st) {
    UpdateRule rule = {.sgd = o->kind == OPTIMIZER_SGD};
    rule.sgd_hyper = (SgdHyper){.lr = (float)lr, .momentum = (float)o->momentum,
                                .weight_decay = (float)o->weight_decay,
                                .nesterov = o->nesterov};
    rule.adam_hyper = (AdamHyper){.lr = (float)lr, .beta1 = (float)o->beta1,
                                  .beta2 = (float)o->beta2, .eps = (float)o->eps,
                                  .weight_decay = (float)o->weight_decay,
                                  .decoupled_weight_decay = o->kind == OPTIMIZER_ADAMW,
                                  .step = step};
    UpdateGroup group;
    group.count = 0;
    for (int i = 0; i < g->count; i++) {
        Layer *l = g->layers[i];
        for (int k = 0; k < l->param_count; k++) {
            Param *p = &l->params[k];
            if (p->buffer) continue;  // batchnorm's running statistics are set by forward
            int at = group.count++;
            group.tensors[at] = (OptimizerTensor){
                .param = tensor_f32(&p->value), .grad = tensor_f32(&p->grad),
                .state = {tensor_f32(&p->state[0]), tensor_f32(&p->state[1])},
                .n = tensor_numel(&p->value)};
            group.params[at] = p;
            group.layers[at] = l;
            if (group.count == OPTIMIZER_UPDATE_GROUP) TRY(update_group(&group, &rule, b, st));
        }
    }
    return update_group(&group, &rule, b, st);
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

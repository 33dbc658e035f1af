// Optimizer state and the update step over every parameter of a graph.
#ifndef TRAINER_OPTIMIZER_H
#define TRAINER_OPTIMIZER_H

#include "core/graph.h"

// Allocate and zero the per-parameter state the optimizer needs (velocity, moments).
int optimizer_prepare(Graph *g, const OptimizerConfig *o, const Backend *b, Allocator *a,
                      Status *st);
// The most trained tensors one call of the backend's multi-tensor update takes: a step makes
// one call per group of this many, in graph order, the last group holding the rest.
#define OPTIMIZER_UPDATE_GROUP 64
// One update of every parameter from its gradient; `step` counts from 1.
int optimizer_step(Graph *g, const OptimizerConfig *o, const Backend *b, int step, Status *st);
// The same at learning rate `lr` instead of o->lr: the rate a schedule chose for the step.
int optimizer_step_at(Graph *g, const OptimizerConfig *o, const Backend *b, int step, double lr,
                      Status *st);
// How many state tensors each trained parameter has (Param.state[0..n)), and their names
// in checkpoints: "momentum" for sgd with momentum, "adam_m" and "adam_v" for adam(w).
int optimizer_state_slots(const OptimizerConfig *o);
const char *optimizer_state_name(const OptimizerConfig *o, int slot);
const char *optimizer_describe(const OptimizerConfig *o, char *buf, size_t size);

#endif

// A plain weights file: every parameter by name, shape and f32 values. Stands in until
// the checkpoint format (with optimizer state) replaces it.
//
// Layout, little-endian: "TRNWEIGH" | u32 version=1 | u32 count | count x
//   { u32 name_length | name | u32 rank | u32 dims[rank] | f32 values[prod(dims)] }
#ifndef TRAINER_WEIGHTS_H
#define TRAINER_WEIGHTS_H

#include "core/graph.h"

// Written to PATH.tmp and renamed, so a crash mid-write never leaves a torn file.
int weights_save(const Graph *g, const Backend *b, const char *path, Status *st);
// Names and shapes must match the graph's parameters exactly.
int weights_load(Graph *g, const Backend *b, const char *path, Status *st);

#endif

// What `maxpool` and `avgpool` share: the keys `size=K|HxW stride=(size) pad=0`, the
// shape rule and the checks. The two kinds differ only in their backend ops.
#ifndef TRAINER_POOL_COMMON_H
#define TRAINER_POOL_COMMON_H

#include "core/layer.h"

typedef struct PoolConfig {
    int size[2], stride[2], pad[2];
    int size_column;
    char variant[48];
    Pool2dGeometry geometry;  // set by infer; batch is filled in per call
} PoolConfig;

extern const char *const pool_keys[];
int pool_configure(Layer *l, const ModelStatement *s, Status *st);
int pool_infer(Layer *l, Status *st);
// Pool2dGeometry for this step's batch.
Pool2dGeometry pool_geometry(const Layer *l, const LayerContext *ctx);
const char *pool_variant(const Layer *l);
double pool_flops(const Layer *l);
// The export description of a pooling layer computing `op` (maxpool, avgpool).
void pool_export(const Layer *l, ExportOp op, ExportNode *node);

#endif

#include "core/predict.h"

#include <stdlib.h>
#include <string.h>

int predict_image_input(const Graph *g, ImageInput *in, Status *st) {
    const Layer *input = g->input;
    const Shape *s = &input->out_shape;
    char shape[64];
    memset(in, 0, sizeof *in);
    if (s->rank == 3 && (s->dims[0] == 1 || s->dims[0] == 3)) {
        in->channels = s->dims[0];
        in->height = s->dims[1];
        in->width = s->dims[2];
        return 0;
    }
    if (s->rank == 1) {
        in->channels = 1;
        in->flat_values = s->dims[0];
        return 0;
    }
    status_fail_at(st, STATUS_BAD_INPUT, g->path, input->line, input->column,
                   "predict reads PNG images, but the model's input shape=%s is not an image",
                   shape_format(s, shape, sizeof shape));
    status_hint(st, "predict needs input shape=1xHxW (gray), 3xHxW (RGB) or N (a gray image of "
                    "N pixels)");
    return STATUS_BAD_INPUT;
}

// Host room for one batch's scores and one sample's ranking.
typedef struct Ranking {
    float *scores;
    double *probs;
    RankedClass *ranked;
} Ranking;

static void ranking_free(Ranking *r) {
    free(r->scores);
    free(r->probs);
    free(r->ranked);
}

static int ranking_alloc(Ranking *r, int batch, int classes, Status *st) {
    r->scores = malloc((size_t)batch * classes * sizeof *r->scores);
    r->probs = r->scores ? malloc((size_t)classes * sizeof *r->probs) : NULL;
    r->ranked = r->probs ? malloc((size_t)classes * sizeof *r->ranked) : NULL;
    if (r->ranked) return 0;
    return status_out_of_host_memory(
        st, (size_t)classes * (batch * sizeof *r->scores + sizeof *r->probs + sizeof *r->ranked),
        "ranking %d classes", classes);
}

int predict_batches(Run *run, const float *images, int count, int batch_cap, int sync_check,
                    const PredictHooks *hooks, Status *st) {
    const Graph *g = &run->graphs[0];
    int classes = graph_classes(g);
    size_t sample = shape_numel(&g->input->out_shape);
    int batch = count < batch_cap ? count : batch_cap;
    if (batch < 1) batch = 1;
    TRY(run_allocate(run, batch, st));
    Ranking r = {0};
    int rc = ranking_alloc(&r, batch, classes, st);
    if (!rc && hooks->start) rc = hooks->start(hooks->user, st);
    for (int first = 0; !rc && first < count; first += batch) {
        int n = count - first < batch ? count - first : batch;
        rc = run_forward_batch(run, images + (size_t)first * sample, n, sync_check, r.scores,
                               st);
        for (int i = 0; !rc && i < n; i++) {
            int ranked = !prediction_rank(r.scores + (size_t)i * classes, classes, r.probs,
                                          r.ranked);
            rc = hooks->sample(hooks->user, first + i, ranked ? r.ranked : NULL, st);
        }
    }
    ranking_free(&r);
    return rc;
}

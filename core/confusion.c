#include "core/confusion.h"

#include <stdlib.h>
#include <string.h>

int confusion_open(Confusion *c, int classes, int batch, Status *st) {
    memset(c, 0, sizeof *c);
    c->classes = classes;
    c->batch = batch;
    c->counts = calloc((size_t)classes * classes, sizeof *c->counts);
    c->scores = malloc((size_t)batch * classes * sizeof *c->scores);
    if (c->counts && c->scores) return 0;
    confusion_close(c);
    // Either request may be the one that failed: the size is the two together.
    size_t bytes = (size_t)classes * classes * sizeof *c->counts +
                   (size_t)batch * classes * sizeof *c->scores;
    return status_out_of_host_memory(st, bytes, "for a %dx%d confusion matrix", classes,
                                     classes);
}

void confusion_close(Confusion *c) {
    free(c->counts);
    free(c->scores);
    memset(c, 0, sizeof *c);
}

// The loss kernels' argmax (kernels/cpu/cpu_loss.c, and the CUDA one matches it), so the
// diagonal adds up to the accuracy they count, NaN scores included.
int confusion_argmax(const float *scores, int classes) {
    int best = 0;
    for (int k = 1; k < classes; k++)
        if (scores[k] > scores[best]) best = k;
    return best;
}

int confusion_add_batch(Confusion *c, const Graph *g, const Backend *b, const Dataset *ds,
                        const int32_t *indices, int n, Status *st) {
    if (n > c->batch) return status_fail(st, STATUS_RUNTIME_ERROR, "a batch of %d samples "
                                         "is past the confusion matrix's room for %d", n,
                                         c->batch);
    const Tensor *logits = &g->loss->inputs[0]->output;
    TRY(b->copy_to_host(b, c->scores, logits->data, (size_t)n * c->classes * sizeof *c->scores,
                        st));
    for (int i = 0; i < n; i++) {
        int label = ds->labels[indices[i]];
        if (label >= c->classes) continue;  // graph_check_dataset refuses such data first
        int predicted = confusion_argmax(c->scores + (size_t)i * c->classes, c->classes);
        c->counts[(size_t)label * c->classes + predicted]++;
    }
    return 0;
}

#include "core/eval_nonfinite.h"

#include <math.h>
#include <stdio.h>

#include "core/nonfinite.h"

// What the last batch's forward left non-finite first ("" when nothing, or the search
// failed: the rest of the message stands without it).
static void first_nonfinite_output(const Graph *g, Device *d, char *text, size_t size) {
    NonfiniteSite site;
    Status search;
    status_clear(&search);
    text[0] = '\0';
    if (!find_first_nonfinite_forward(g, d->backend, &d->alloc, &site, &search) && site.layer)
        snprintf(text, size, "; the first non-finite value: %s of layer '%s'", site.what,
                 site.layer->name);
}

// Above this a weight is no trained value: float32 sums of such products overflow.
#define HUGE_WEIGHT 1e6

int eval_nonfinite_loss(const Graph *g, Device *d, const char *split, const EvalResult *result,
                        const CheckpointLoaded *loaded, const char *weights, Status *st) {
    char why[900];
    if (loaded->nonfinite_count) {
        snprintf(why, sizeof why, "the weights hold NaN or infinite values in %d tensor%s: %s",
                 loaded->nonfinite_count, loaded->nonfinite_count == 1 ? "" : "s",
                 loaded->nonfinite);
    } else {
        char where[320];
        first_nonfinite_output(g, d, where, sizeof where);
        snprintf(why, sizeof why, "every weight is finite, the largest |value| %g (in %s)%s",
                 loaded->largest_value, loaded->largest_value_tensor, where);
    }
    status_fail_at(st, STATUS_RUNTIME_ERROR, weights, 0, 0, "the %s loss is %s over %d "
                   "sample%s, not a measurement: %s", split,
                   isnan(result->loss) ? "NaN" : "infinite", result->samples,
                   result->samples == 1 ? "" : "s", why);
    if (loaded->nonfinite_count || loaded->largest_value > HUGE_WEIGHT)
        status_hint(st, "the weights are broken (%s), e.g. saved from a training run that "
                    "diverged; evaluate an earlier checkpoint of that run, or retrain with a "
                    "lower --lr or --clip-norm 1", loaded->nonfinite_count
                        ? "NaN or infinity in them"
                        : "values this large overflow float32 in the layers' sums");
    else
        status_hint(st, "the weights look trained, so the samples may not: check that --data "
                    "and its normalization are the ones the weights were trained with");
    return STATUS_RUNTIME_ERROR;
}

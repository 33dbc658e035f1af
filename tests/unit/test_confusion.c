// core/confusion's predicted class is the one the loss kernels' accuracy counts
// (kernels/cpu/cpu_loss.c): the first of equal highest scores; a NaN is passed over when
// later, and stays when first (no comparison with it is true), so the confusion matrix's
// diagonal adds up to the accuracy printed beside it.
#include "check.h"
#include "core/confusion.h"

#include <math.h>

static void argmax_takes_the_first_of_equal_scores(void) {
    float scores[] = {0.1f, 2.0f, 2.0f, -1.0f};
    CHECK(confusion_argmax(scores, 4) == 1);
}

static void argmax_treats_nan_as_the_kernels_do(void) {
    float first_nan[] = {NAN, 0.5f, 0.25f};
    CHECK(confusion_argmax(first_nan, 3) == 0);
    float later_nan[] = {0.5f, NAN, 0.75f};
    CHECK(confusion_argmax(later_nan, 3) == 2);
}

static void open_makes_a_zeroed_matrix(void) {
    Confusion c;
    Status st;
    status_clear(&st);
    CHECK(confusion_open(&c, 3, 4, &st) == 0);
    long sum = 0;
    for (int i = 0; i < 9; i++) sum += c.counts[i];
    CHECK(sum == 0 && c.classes == 3 && c.batch == 4);
    confusion_close(&c);
    CHECK(c.counts == NULL && c.scores == NULL);
}

int main(void) {
    argmax_takes_the_first_of_equal_scores();
    argmax_treats_nan_as_the_kernels_do();
    open_makes_a_zeroed_matrix();
    return test_exit_code("test_confusion");
}

// predict's pieces below tools/, without a device: the ranking of a row of scores
// (data/prediction_output.c), the --classes file's rules (core/class_names.c) and the
// per-class text of eval (core/eval_report.c), written to a TextOut.
#include "check.h"
#include "core/class_names.h"
#include "core/eval_report.h"
#include "data/prediction_output.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static void rank_orders_by_probability_and_keeps_ties_in_class_order(void) {
    float scores[] = {1.0f, 3.0f, 1.0f, 2.0f};
    double probs[4];
    RankedClass ranked[4];
    CHECK(prediction_rank(scores, 4, probs, ranked) == 0);
    CHECK(ranked[0].index == 1 && ranked[1].index == 3);
    CHECK(ranked[2].index == 0 && ranked[3].index == 2);
    double sum = 0.0;
    for (int c = 0; c < 4; c++) sum += probs[c];
    CHECK(fabs(sum - 1.0) < 1e-12);
}

static void rank_refuses_non_finite_scores(void) {
    float scores[] = {0.0f, NAN, 1.0f};
    double probs[3];
    RankedClass ranked[3];
    CHECK(prediction_rank(scores, 3, probs, ranked) == -1);
}

static int write_file(const char *path, const char *text) {
    FILE *f = fopen(path, "w");
    if (!f) return -1;
    fputs(text, f);
    return fclose(f);
}

static void class_file_needs_one_name_a_line(void) {
    const char *path = "test_predict_rank_classes.txt";
    ClassNames cn = {0};
    Status st;
    status_clear(&st);
    CHECK(write_file(path, "cat \ndog\n\n") == 0);
    CHECK(class_names_from_file(path, 2, &cn, &st) == 0);
    CHECK(strcmp(cn.names[0], "cat") == 0 && strcmp(cn.names[1], "dog") == 0);
    class_names_free(&cn);
    CHECK(write_file(path, "cat\n\ndog\n") == 0);
    CHECK(class_names_from_file(path, 2, &cn, &st) == STATUS_BAD_INPUT);
    CHECK(strstr(st.message, "empty class name") != NULL);
    class_names_free(&cn);
    status_clear(&st);
    CHECK(class_names_known("fashion-mnist", 3, &cn, &st) == STATUS_BAD_INPUT);
    class_names_free(&cn);
    remove(path);
}

static void append(void *user, const char *text, size_t length) {
    strncat(user, text, length);
}

static void eval_report_text_goes_to_the_text_out(void) {
    long counts[] = {3, 1, 0, 2};
    Confusion c = {.classes = 2, .counts = counts};
    const char *names[] = {"yes", "no"};
    ClassLabels labels = {names, 2};
    char text[2048] = "";
    eval_report_text(&(TextOut){append, NULL, text}, &c, &labels);
    CHECK(strstr(text, "     0 yes           4     0.7500     1.0000\n") != NULL);
    CHECK(strstr(text, "     1 no            2     1.0000     0.6667\n") != NULL);
    CHECK(strstr(text, "confusion matrix") != NULL);
}

int main(void) {
    rank_orders_by_probability_and_keeps_ties_in_class_order();
    rank_refuses_non_finite_scores();
    class_file_needs_one_name_a_line();
    eval_report_text_goes_to_the_text_out();
    return test_exit_code("test_predict_rank");
}

// early_stop_update against losses worked out by hand from Keras's EarlyStopping rule
// (core/early_stop.h), the model file's `train early_stop=N` reaching the run config, and a
// patience without a validation split refused.
#include "check.h"
#include "core/early_stop.h"
#include "core/graph.h"

#include <math.h>

// Feeds losses for epochs 1, 2, ...; returns the epoch after which it said stop, 0 if never.
static int stopping_epoch(EarlyStop *watch, const double *losses, int count) {
    for (int i = 0; i < count; i++)
        if (early_stop_update(watch, i + 1, losses[i])) return i + 1;
    return 0;
}

static void improving_losses_never_stop(void) {
    EarlyStop watch = early_stop_start(1);
    const double losses[] = {2.0, 1.5, 1.2, 1.19, 0.5};
    CHECK_INT_EQ(stopping_epoch(&watch, losses, 5), 0);
    CHECK_INT_EQ(watch.best_epoch, 5);
    CHECK_NEAR(watch.best_loss, 0.5, 0.0);
    CHECK_INT_EQ(watch.epochs_without_improvement, 0);
}

static void stops_after_patience_epochs_without_improvement(void) {
    EarlyStop watch = early_stop_start(3);
    // Best at epoch 2; epochs 3, 4, 5 are no better: stop after epoch 5.
    const double losses[] = {1.0, 0.8, 0.9, 0.85, 1.3, 0.1};
    CHECK_INT_EQ(stopping_epoch(&watch, losses, 6), 5);
    CHECK_INT_EQ(watch.best_epoch, 2);
    CHECK_NEAR(watch.best_loss, 0.8, 0.0);
    CHECK_INT_EQ(watch.epochs_without_improvement, 3);
}

static void an_improvement_starts_the_count_again(void) {
    EarlyStop watch = early_stop_start(2);
    // Epoch 3 is worse, epoch 4 a new best; then 5 and 6 are worse: stop after 6, not 4.
    const double losses[] = {1.0, 0.9, 0.95, 0.7, 0.8, 0.75};
    CHECK_INT_EQ(stopping_epoch(&watch, losses, 6), 6);
    CHECK_INT_EQ(watch.best_epoch, 4);
}

static void an_equal_loss_is_not_an_improvement(void) {
    EarlyStop watch = early_stop_start(2);
    const double losses[] = {0.5, 0.5, 0.5};
    CHECK_INT_EQ(stopping_epoch(&watch, losses, 3), 3);
    CHECK_INT_EQ(watch.best_epoch, 1);
}

static void patience_one_stops_at_the_first_epoch_no_better(void) {
    EarlyStop watch = early_stop_start(1);
    const double losses[] = {1.0, 0.9, 0.91};
    CHECK_INT_EQ(stopping_epoch(&watch, losses, 3), 3);
    CHECK_INT_EQ(watch.best_epoch, 2);
}

static void non_finite_losses_never_improve(void) {
    EarlyStop watch = early_stop_start(2);
    CHECK_INT_EQ(early_stop_update(&watch, 1, NAN), 0);
    CHECK_INT_EQ(watch.best_epoch, 0);  // NaN did not become the best...
    CHECK_INT_EQ(early_stop_update(&watch, 2, 3.0), 0);
    CHECK_INT_EQ(watch.best_epoch, 2);  // ...so a finite loss after it still improves
    CHECK_INT_EQ(early_stop_update(&watch, 3, INFINITY), 0);
    CHECK_INT_EQ(early_stop_update(&watch, 4, NAN), 1);
    CHECK_INT_EQ(watch.best_epoch, 2);
    CHECK_NEAR(watch.best_loss, 3.0, 0.0);
}

static int train_config_of(const char *text, TrainConfig *out, Status *st) {
    ModelFile file;
    Graph g;
    RunConfig config;
    TRY(model_file_parse_text("test.model", text, &file, st));
    int rc = graph_build(&file, &g, &config, st);
    if (!rc) graph_free(&g);
    model_file_free(&file);
    *out = config.train;
    return rc;
}

static void train_statement_reads_early_stop(void) {
    static const char *const layers = "input shape=4\ndense units=3\nloss softmax_cross_entropy\n";
    char text[256];
    Status st;
    status_clear(&st);
    TrainConfig train;
    snprintf(text, sizeof text, "%strain epochs=20 early_stop=3\n", layers);
    CHECK_INT_EQ(train_config_of(text, &train, &st), 0);
    CHECK_INT_EQ(train.early_stop, 3);
    CHECK_INT_EQ(train.epochs, 20);
    snprintf(text, sizeof text, "%strain epochs=20\n", layers);
    CHECK_INT_EQ(train_config_of(text, &train, &st), 0);
    CHECK_INT_EQ(train.early_stop, 0);  // off unless asked for
    snprintf(text, sizeof text, "%strain early_stop=-2\n", layers);
    CHECK_INT_EQ(train_config_of(text, &train, &st), STATUS_BAD_INPUT);
    CHECK_CONTAINS(st.message, "early_stop=-2 is out of range [0, 1000000]");
    CHECK_INT_EQ(st.line, 4);
}

static void a_patience_needs_a_validation_split(void) {
    RunConfig config = {0};
    Status st;
    status_clear(&st);
    CHECK_INT_EQ(early_stop_check_split(&config, 0, 0, "m.model", &st), 0);  // off
    config.train.early_stop = 2;
    config.train.line = 9;
    CHECK_INT_EQ(early_stop_check_split(&config, 0, 1, "m.model", &st), 0);  // --val-split
    config.data.val_split = 0.1;
    CHECK_INT_EQ(early_stop_check_split(&config, 0, 0, "m.model", &st), 0);  // val_split=
    config.data.val_split = 0;
    CHECK_INT_EQ(early_stop_check_split(&config, 1, 0, "m.model", &st), STATUS_BAD_INPUT);
    CHECK_CONTAINS(st.message, "--early-stop 2 needs a validation split");
    CHECK_INT_EQ(early_stop_check_split(&config, 0, 0, "m.model", &st), STATUS_BAD_INPUT);
    CHECK_CONTAINS(st.message, "train early_stop=2 needs a validation split");
    CHECK_INT_EQ(st.line, 9);
    CHECK_CONTAINS(st.file, "m.model");
}

int main(void) {
    improving_losses_never_stop();
    stops_after_patience_epochs_without_improvement();
    an_improvement_starts_the_count_again();
    an_equal_loss_is_not_an_improvement();
    patience_one_stops_at_the_first_epoch_no_better();
    non_finite_losses_never_improve();
    train_statement_reads_early_stop();
    a_patience_needs_a_validation_split();
    return test_exit_code("test_early_stop");
}

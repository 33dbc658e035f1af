#define _POSIX_C_SOURCE 200809L  // sigaction
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "core/optimizer.h"
#include "core/train.h"
#include "core/weights.h"
#include "tools/cli.h"

static const OptionSpec train_options[] = {
    {"--data", "SPEC", "fashion-mnist (default) or idx:DIR"},
    {"--epochs", "N", "override the model file's train epochs="},
    {"--batch", "N", "override the model file's train batch="},
    {"--lr", "RATE", "override the optimizer's lr="},
    {"--seed", "N", "override the model file's train seed="},
    {"--save", "FILE", "write the weights to FILE after every epoch"},
    {"--train-limit", "N", "train on the first N samples only"},
    {"--test-limit", "N", "evaluate on the first N test samples only"},
    DEVICE_OPTION_SPECS,
    {NULL, NULL, NULL},
};

const Command train_command = {
    .name = "train",
    .usage = "MODEL [options]",
    .summary = "train a model on a dataset, evaluating on its test split after every epoch",
    .options = train_options,
    .run = run_train,
};

// Ctrl-C asks the loop to stop after the current step; with --save the weights as they
// are at that step are written, so no training is lost. A second Ctrl-C kills the
// process as usual.
static volatile sig_atomic_t interrupt_requested = 0;

static void on_interrupt(int signal_number) {
    interrupt_requested = 1;
    struct sigaction default_action = {.sa_handler = SIG_DFL};
    sigaction(signal_number, &default_action, NULL);
}

typedef struct TrainSession {
    ProgressBar bar;
    const char *save_path;
} TrainSession;

static int on_step(void *user, const StepReport *r) {
    TrainSession *session = user;
    progress_update(&session->bar, r->epoch, r->epochs, r->step, r->steps, r->loss,
                    r->samples_per_second, r->epoch_seconds);
    return interrupt_requested;
}

static int on_epoch(void *user, const EpochReport *r, Graph *g, Device *d, Status *st) {
    TrainSession *session = user;
    progress_clear(&session->bar);
    printf("epoch %d/%d  train loss %.4f acc %.4f", r->epoch, r->epochs, r->train_loss,
           r->train_accuracy);
    if (r->has_test) printf("  test loss %.4f acc %.4f", r->test.loss, r->test.accuracy);
    printf("  %.0f samples/s  %.1f s\n", r->samples_per_second, r->seconds);
    fflush(stdout);
    if (session->save_path) TRY(weights_save(g, d->backend, session->save_path, st));
    return 0;
}

static int apply_overrides(const Command *cmd, const ParsedArgs *args, Graph *g, Status *st) {
    long value;
    int present;
    TRY(args_int(cmd, args, "--epochs", 1, 1000000, &value, &present, st));
    if (present) g->train.epochs = (int)value;
    TRY(args_int(cmd, args, "--batch", 1, 1 << 20, &value, &present, st));
    if (present) g->train.batch = (int)value;
    TRY(args_int(cmd, args, "--seed", 0, 0x7fffffffL, &value, &present, st));
    if (present) g->train.seed = value;
    double lr;
    TRY(args_float(cmd, args, "--lr", 1e-12, 100.0, &lr, &present, st));
    if (present) g->optimizer.lr = lr;
    return 0;
}

static void print_memory(const Device *d) {
    char peak[32], reserved[32];
    const AllocStats *s = &d->alloc.stats;
    printf("memory on %s: peak %s in use, %s reserved, %ld allocations (%ld from cache), %ld "
           "out-of-memory\n",
           d->name, alloc_format_bytes(s->peak_in_use, peak, sizeof peak),
           alloc_format_bytes(s->peak_reserved, reserved, sizeof reserved), s->allocations,
           s->cache_hits, s->out_of_memory);
}

static int train_with(const Command *cmd, const ParsedArgs *args, Graph *g, Device *d,
                      Dataset *train, Dataset *test, Status *st) {
    TRY(graph_check_dataset(g, train, "the training set", st));
    TRY(graph_check_dataset(g, test, "the test set", st));
    TRY(graph_init_params(g, d->backend, &d->alloc, (uint64_t)g->train.seed, st));
    char count[32], optimizer[160];
    printf("model %s: %s parameters, %d layers\n", g->path,
           format_count(graph_parameter_count(g), count, sizeof count), g->count);
    printf("data %s: %d train, %d test samples; device %s\n", train->source, train->count,
           test->count, d->name);
    printf("optimizer %s; batch %d, %d epoch%s, seed %ld\n",
           optimizer_describe(&g->optimizer, optimizer, sizeof optimizer), g->train.batch,
           g->train.epochs, g->train.epochs == 1 ? "" : "s", g->train.seed);
    fflush(stdout);

    TrainSession session = {.save_path = args_get(cmd, args, "--save")};
    progress_init(&session.bar, stderr);
    TrainHooks hooks = {.user = &session, .on_step = on_step, .on_epoch = on_epoch};
    struct sigaction action = {.sa_handler = on_interrupt};
    sigaction(SIGINT, &action, NULL);
    int interrupted = 0;
    int rc = train_model(g, d, train, test, &hooks, &interrupted, st);
    progress_clear(&session.bar);
    if (interrupted && session.save_path) {
        Status save_status;
        status_clear(&save_status);
        if (weights_save(g, d->backend, session.save_path, &save_status) == 0)
            print_notice("saved the weights as they were when interrupted to %s", session.save_path);
        else
            report_failure(&save_status);
    }
    if (!rc) print_memory(d);
    return rc;
}

int run_train(const Command *cmd, const ParsedArgs *args) {
    Status st;
    status_clear(&st);
    ModelFile file;
    Graph g;
    Device device;
    Dataset train = {0}, test = {0};
    if (load_model(cmd, args, &file, &g, &st)) return report_failure(&st);
    int rc = apply_overrides(cmd, args, &g, &st);
    int device_open = 0;
    if (!rc) rc = open_device_from_args(cmd, args, &device, &st);
    if (!rc) device_open = 1;
    if (!rc) rc = load_dataset_from_args(cmd, args, "train", "--train-limit", &train, &st);
    if (!rc) rc = load_dataset_from_args(cmd, args, "test", "--test-limit", &test, &st);
    if (!rc) rc = train_with(cmd, args, &g, &device, &train, &test, &st);
    int exit_code = rc ? report_failure(&st) : 0;
    if (interrupt_requested && rc) exit_code = 130;
    dataset_free(&train);
    dataset_free(&test);
    graph_free(&g);
    if (device_open) device_close(&device);
    model_file_free(&file);
    return exit_code;
}

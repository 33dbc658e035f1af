#define _POSIX_C_SOURCE 200809L  // sigaction
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/directories.h"
#include "core/batch_auto.h"
#include "core/collective.h"
#include "core/early_stop.h"
#include "core/optimizer.h"
#include "core/step_graph.h"
#include "core/train.h"
#include "tools/cli.h"
#include "tools/result_sink.h"
#include "core/run_log.h"
#include "tools/train_schedule_args.h"
#include "tools/train_checkpoints.h"
#include "tools/train_events.h"
#include "tools/train_world.h"

static const OptionSpec train_options[] = {
    {"--data", "SPEC", "fashion-mnist (default), idx:DIR, cifar10:DIR, png:DIR or csv:FILE "
                       "(docs/data.md)"},
    {"--epochs", "N", "override the model file's train epochs="},
    {"--early-stop", "N", "stop once the val loss has not improved for N epochs in a row "
                          "(needs --val-split; 0: off; overrides train early_stop=)"},
    {"--batch", "N|auto", "override the model file's train batch=; auto: the largest that fits "
                          "the device (or --memory-limit)"},
    {"--lr", "RATE", "override the optimizer's lr="},
    {"--seed", "N", "override the model file's train seed="},
    {"--train-limit", "N", "train on N samples only: a seeded sample keeping each class's "
                           "share (see --limit-order)"},
    {"--test-limit", "N", "evaluate on the first N test samples only"},
    DATA_OPTION_SPECS,
    DATA_TRANSFORM_OPTION_SPECS,
    {"--gpus", "LIST", "data-parallel on these GPUs, e.g. 0,1: the batch is split across them"},
    {"--replicas", "N", "data-parallel with N replicas on the CPU (tests the --gpus path "
                        "without GPUs)"},
    SCHEDULE_OPTION_SPECS,
    {"--logdir", "DIR", "write DIR/metrics.jsonl and TensorBoard event files (created if "
                        "missing)"},
    CHECKPOINT_OPTION_SPECS,
    WORLD_OPTION_SPECS,
    CUDA_GRAPH_OPTION_SPEC,
    WITHOUT_OPTION_SPEC,
    LAYOUT_OPTION_SPEC,
    RESULT_OPTION_SPECS,
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

// Ctrl-C (SIGINT) or SIGTERM asks the loop to stop after the current step; a checkpoint
// (or with --save the weights) as they are at that step is written, so no training is
// lost, and the exit code is 128 + the signal. A second signal kills the process as usual.
// A closed stdout (`trainer train | head -1`) is asked to stop the same way: SIGPIPE is
// caught, so the write fails with EPIPE instead of killing the run before it saves, and the
// exit code is 141, what a shell reports for a process SIGPIPE ended. It stays caught, as
// every later write to that stdout raises it again. The first signal is the one reported.
static volatile sig_atomic_t interrupt_requested = 0;

static void on_interrupt(int signal_number) {
    if (!interrupt_requested) interrupt_requested = signal_number;
    if (signal_number == SIGPIPE) return;
    struct sigaction default_action = {.sa_handler = SIG_DFL};
    sigaction(signal_number, &default_action, NULL);
}

// SA_RESTART: a save or a log write the signal lands in goes on rather than failing with
// EINTR (slow devices and network file systems return it).
static void catch_signal(int signal_number) {
    struct sigaction action = {.sa_handler = on_interrupt, .sa_flags = SA_RESTART};
    sigaction(signal_number, &action, NULL);
}

// What stopped the run, for its error: "SIGTERM", or the closed stdout's words.
static const char *signal_words(int signal_number) {
    switch (signal_number) {
    case SIGINT: return "SIGINT (Ctrl-C)";
    case SIGTERM: return "SIGTERM";
    case SIGPIPE: return "SIGPIPE: standard output was closed (its reader went away)";
    default: return "a signal";
    }
}

// What a write that stopped the run wrote: a log's failure comes after the epoch's weights.
typedef enum WriteFailed { WRITES_OK, WEIGHTS_WRITE_FAILED, LOG_WRITE_FAILED } WriteFailed;

typedef struct TrainSession {
    ProgressBar bar;
    RunLog *log;            // --logdir; NULL without
    int log_failed;         // a step's log line could not be written: log_status says why
    Status log_status;
    WriteFailed write_failed;  // a write that stopped the run (a full disk), which kind
    CheckpointSession checkpoints;
    const char *evaluated;  // "test", or "val" when --val-split holds some training data out
    EarlyStop early_stop;   // patience 0: off
    int stopped_early;      // on_epoch stopped training because early_stop said so
    int last_epoch;         // the last epoch reported, for the log's final test row
    const MpiWorld *world;  // this process among an mpirun launch's
    const Command *cmd;     // the command as typed, repeated in the resume command
    const ParsedArgs *args;
    // The run's last evaluation, for --json's result: each epoch's, then the test split's.
    EvalResult last_result;
    const char *last_split;  // NULL: none yet
} TrainSession;

static int on_step(void *user, const StepReport *r) {
    TrainSession *session = user;
    progress_update(&session->bar, r->epoch, r->epochs, r->step, r->steps, r->loss,
                    r->samples_per_second, r->epoch_seconds);
    if (session->log && run_log_step(session->log, r, &session->log_status)) {
        session->log_failed = 1;
        return 1;
    }
    return interrupt_requested;
}

static int after_step(void *user, const StepPlace *place, Graph *g, Device *d, int *stop,
                      Status *st) {
    TrainSession *session = user;
    *stop = interrupt_requested != 0;
    if (!checkpoints_after_step(&session->checkpoints, place, g, d, st)) return 0;
    session->write_failed = WEIGHTS_WRITE_FAILED;
    return st->code;
}

static void on_eval_batch(void *user, const char *split, int done, int total) {
    TrainSession *session = user;
    progress_update_eval(&session->bar, split, done, total);
}

static int stop_requested(void *user) {
    (void)user;
    return interrupt_requested != 0;
}

// Named in the error when the loss goes non-finite: where a run can go back to.
static const char *last_checkpoint(void *user) {
    const TrainSession *session = user;
    return session->checkpoints.last_written[0] ? session->checkpoints.last_written : NULL;
}

// The training loop's notices can be one rank's alone (its share split after running out of
// memory): a rank other than 0 says them too, labelled.
static void on_notice(void *user, const char *line) {
    TrainSession *session = user;
    progress_clear(&session->bar);
    const MpiWorld *world = session->world;
    if (world && world->size > 1 && world->rank != 0)
        print_rank_notice(world->rank, world->size, world->host, line);
    else
        print_notice("%s", line);
}

// Runs after the epoch's checkpoints and --save, so the epoch training stops at is kept like
// any other. A nonzero return stops train_replicas; stopped_early tells train_with that
// the run finished rather than failed.
static int watch_validation_loss(TrainSession *session, const EpochReport *r, Status *st) {
    EarlyStop *watch = &session->early_stop;
    if (!watch->patience || !r->has_test || !early_stop_update(watch, r->epoch, r->test.loss))
        return 0;
    char best[64] = "no epoch had a finite one";
    if (watch->best_epoch)
        snprintf(best, sizeof best, "best %.4f at epoch %d", watch->best_loss, watch->best_epoch);
    printf("early stop: %s loss has not improved for %d epoch%s (%s); stopped after epoch %d "
           "of %d\n", session->evaluated, watch->epochs_without_improvement,
           watch->epochs_without_improvement == 1 ? "" : "s", best, r->epoch, r->epochs);
    flush_stdout();
    if (session->log) TRY(run_log_early_stop(session->log, watch, r, st));
    session->stopped_early = 1;
    return 1;
}

static int on_epoch(void *user, const EpochReport *r, Graph *g, Device *d, Status *st) {
    TrainSession *session = user;
    session->last_epoch = r->epoch;
    progress_clear(&session->bar);
    char test_loss[16], train_loss[16];
    loss_text(r->test.loss, test_loss, sizeof test_loss);
    if (r->evaluation_only) {
        printf("epoch %d/%d  (evaluated on resume)  %s loss %s acc %.4f  lr %.4g\n", r->epoch,
               r->epochs, session->evaluated, test_loss, r->test.accuracy, r->lr);
    } else {
        printf("epoch %d/%d  train loss %s acc %.4f", r->epoch, r->epochs,
               loss_text(r->train_loss, train_loss, sizeof train_loss), r->train_accuracy);
        // Resumed mid-epoch: the running means cover the steps this run took, not the epoch.
        if (r->first_step > 1) printf(" (steps %d-%d)", r->first_step, r->steps);
        if (r->has_test)
            printf("  %s loss %s acc %.4f", session->evaluated, test_loss, r->test.accuracy);
        printf("  lr %.4g  %.0f samples/s  %.1f s\n", r->lr, r->samples_per_second,
               r->seconds);
    }
    flush_stdout();
    train_emit_epoch(r, session->evaluated);
    if (r->has_test) {
        session->last_result = r->test;
        session->last_split = session->evaluated;
    }
    // The weights first: a log that cannot be written (its disk full) costs no epoch.
    if (checkpoints_after_epoch(&session->checkpoints, r, g, d, st)) {
        session->write_failed = WEIGHTS_WRITE_FAILED;
        return st->code;
    }
    int rc = session->log ? run_log_epoch(session->log, r, st) : 0;
    if (!rc) rc = watch_validation_loss(session, r, st);
    if (rc && !session->stopped_early) session->write_failed = LOG_WRITE_FAILED;
    return rc;
}

static int apply_overrides(const Command *cmd, const ParsedArgs *args, RunConfig *config,
                           Status *st) {
    TRY(cuda_graph_mode_read(args_get(cmd, args, "--cuda-graph"), &config->cuda_graph, st));
    long value;
    int present;
    TRY(args_int(cmd, args, "--epochs", 1, 1000000, &value, &present, st));
    if (present) config->train.epochs = (int)value;
    TRY(args_int(cmd, args, "--early-stop", 0, 1000000, &value, &present, st));
    if (present) config->train.early_stop = (int)value;
    TRY(args_int(cmd, args, "--seed", 0, 0x7fffffffL, &value, &present, st));
    if (present) config->train.seed = value;
    double lr;
    TRY(args_float_in(cmd, args, "--lr", 0.0, 100.0, RANGE_OPEN_LOW, &lr, &present, st));
    if (present) config->optimizer.lr = lr;
    return apply_schedule_overrides(cmd, args, config, st);
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

// The replicas of one run (core/run.h): their graphs and the devices they run on. With
// --replicas on the CPU every replica shares the one CPU device.
typedef struct Replicas {
    Run run;
    RunConfig config;       // the model file's, with the command line's overrides; shared
    MpiWorld world;         // the processes of an mpirun launch; size 1 without
    int disagreed;          // the ranks of a launch were started on different runs
} Replicas;

// The run opened through core's run_open: --gpus opens cuda:N for each N; --replicas N
// shares the CPU device N times; otherwise one device from --device.
static int open_replicas(const Command *cmd, const ParsedArgs *args, const ModelFile *file,
                         Graph *first, RunRequest *request, Replicas *r, Status *st) {
    long replicas = 0;
    // open_run owns `first` from here on, freeing it when it fails: so does a bad --replicas.
    if (args_int(cmd, args, "--replicas", 1, RUN_MAX_REPLICAS, &replicas, NULL, st)) {
        graph_free(first);
        return st->code;
    }
    request->replicas = (int)replicas;
    request->gpus = args_get(cmd, args, "--gpus");
    request->drop_remainder = args_get(cmd, args, "--drop-remainder") != NULL;
    request->world_size = r->world.size;
    request->world_rank = r->world.rank;
    request->default_ordinal = r->world.local_rank;
    request->precision = &r->config.precision;
    RunSetup setup = {.purpose = RUN_TRAIN, .file = file, .config = &r->config};
    return open_run(cmd, args, &setup, request, first, &r->run, st);
}

// --batch auto on replica 0's device, per replica: replicas on distinct GPUs each take
// that batch; replicas sharing the CPU each hold their own parameters, optimizer state and
// activations, so the choice is planned in their share of its memory (it was made for one
// replica in all of it, and the first step then ran out of memory) and tried with all of
// them holding theirs at once.
static int choose_batch(Replicas *r, const Dataset *train, const Dataset *test, Status *st) {
    BatchChoice choice;
    Device *d = r->run.device_list[0];
    int shared = 0;
    TRY(run_choose_batch(&r->run, &r->config, train, test, &choice, &shared, st));
    int batch = r->config.train.batch;
    char budget[32], planned[160];
    // The plan's own answer past the cap means nothing: it clamps a batch to the training
    // set, so past that size every batch "fits" (1048576 on 500 samples). The cap instead.
    if (choice.capped && train->count <= BATCH_AUTO_MAX)
        snprintf(planned, sizeof planned, "the whole training set, %d sample%s,", train->count,
                 train->count == 1 ? "" : "s");
    else if (choice.capped)
        snprintf(planned, sizeof planned, "%d or more (the cap: a bigger batch buys no speed)",
                 BATCH_AUTO_MAX);
    else snprintf(planned, sizeof planned, "%d", choice.planned);
    // A batch capped to the training set need not divide evenly: the first batch % count
    // replicas take one sample more (replica_share), and the message says so exactly.
    char replicas[128] = "";
    int each = batch / r->run.count, larger = batch % r->run.count, others = r->run.count - larger;
    char rest[48] = "the other";
    if (others > 1) snprintf(rest, sizeof rest, "each of the other %d", others);
    if (r->run.count > 1 && larger == 0)
        snprintf(replicas, sizeof replicas, "%d on each of %d replicas; ", each, r->run.count);
    else if (r->run.count > 1)
        snprintf(replicas, sizeof replicas, "%d on %d of %d replicas and %d on %s; ", each + 1,
                 larger, r->run.count, each, rest);
    printf("batch auto: %d (%sthe memory plan allows %s%s in %s %s %s, keeping 10%% free; "
           "%d trial step%s)\n", batch, replicas, planned, r->run.count > 1 ? " per replica" : "",
           alloc_format_bytes(choice.budget, budget, sizeof budget),
           shared > 1 ? "(each replica's share) on" : "on", d->name, choice.trials,
           choice.trials == 1 ? "" : "s");
    return 0;
}

// After a run that saved its weights, the commands that use them, ready to paste: the
// trainer and the model as they were typed.
static void print_next_commands(const ParsedArgs *args, const char *save) {
    if (!save) return;
    char common[8192] = "";
    const char *program = args->program && args->program[0] ? args->program : "trainer";
    const char *model = args->positionals[0];
    if (append_shell_word(common, sizeof common, model) ||
        append_shell_word(common, sizeof common, "--weights") ||
        append_shell_word(common, sizeof common, save))
        return;
    char shown_program[4200] = "";
    if (append_shell_word(shown_program, sizeof shown_program, program)) return;
    printf("next:\n  %s eval%s\n  %s predict%s IMAGE.png\n", shown_program + 1, common,
           shown_program + 1, common);
}

// With --val-split, the test split is evaluated once, after the last epoch. A signal stops
// it at the next batch (the run's weights and checkpoints are written by then), as it stops
// an epoch's evaluation.
static int evaluate_test_at_end(Replicas *r, const RunData *data, TrainSession *session,
                                const TrainHooks *hooks, Status *st) {
    if (!data->has_val || !data->has_test) return 0;
    int batch = r->config.train.batch < data->test.count ? r->config.train.batch
                                                          : data->test.count;
    EvalResult result;
    Graph *g = r->run.graph_list[0];
    int stopped = 0;
    TrainHooks test_hooks = *hooks;
    test_hooks.eval_split = "test";
    int rc = evaluate_model_stoppable(g, &r->config, r->run.device_list[0], &data->test, batch,
                                      &test_hooks, &stopped, NULL, &result, st);
    progress_clear(&((TrainSession *)hooks->user)->bar);
    TRY(rc);
    if (stopped) {
        const CheckpointSession *kept = &session->checkpoints;
        status_fail(st, STATUS_RUNTIME_ERROR, "interrupted during the test split's evaluation "
                    "after the last epoch; the training itself is finished%s",
                    kept->save_path || kept->folder ? " and saved" : ", but its weights were "
                    "not kept (no --save or --checkpoint)");
        if (kept->save_path || kept->folder)
            status_hint(st, "measure the test split later with `trainer eval %s --weights "
                        "FILE` (the --save file or a checkpoint)", g->path);
        else
            status_hint(st, "add --save FILE to keep a run's weights, and measure them with "
                        "`trainer eval %s --weights FILE`", g->path);
        return STATUS_RUNTIME_ERROR;
    }
    session->last_result = result;
    session->last_split = "test";
    char loss[16];
    printf("test loss %s acc %.4f  (%d sample%s)\n", loss_text(result.loss, loss, sizeof loss),
           result.accuracy, result.samples, result.samples == 1 ? "" : "s");
    if (!session->log) return 0;
    if (!run_log_test(session->log, g->optimizer_steps, session->last_epoch, result.loss,
                      result.accuracy, result.samples, st))
        return 0;
    session->write_failed = LOG_WRITE_FAILED;
    return st->code;
}

// The header's write found stdout closed: nothing is trained for no one to read. No
// checkpoint or --save either: there is nothing new to keep, and --save would replace a
// file with untrained weights.
static int stopped_before_training(Status *st) {
    status_fail(st, STATUS_RUNTIME_ERROR, "stopped before the first step; nothing was trained "
                "or written");
    status_hint(st, "read the output to its end (`| tail`, or a file) to let the run go on");
    return STATUS_RUNTIME_ERROR;
}

// After train_replicas returned `rc`: the last checkpoint, or the one a signal asks for;
// the test split's evaluation; and after a failed write (a full disk), what the run kept and
// the command that goes on from it.
static int after_training(Replicas *r, const RunData *data, TrainSession *session,
                          const TrainHooks *hooks, int rc, int interrupted, Status *st) {
    Graph *g = r->run.graph_list[0];
    CheckpointSession *kept = &session->checkpoints;
    if (session->log_failed) *st = session->log_status;
    if (session->stopped_early) rc = 0;  // a finished run: on_epoch's return only ended the loop
    if (!rc && !interrupted) {
        rc = checkpoints_finish(kept, g, r->run.device_list[0], st);
        if (rc) session->write_failed = WEIGHTS_WRITE_FAILED;
    }
    if (interrupted)
        checkpoints_interrupted(kept, g, r->run.device_list[0], session->cmd, session->args);
    if (!rc) rc = evaluate_test_at_end(r, data, session, hooks, st);
    if (rc && session->write_failed == LOG_WRITE_FAILED && kept->last_written[0])
        print_notice("the newest checkpoint: %s", kept->last_written);
    if (rc && session->write_failed) checkpoints_print_resume(kept, session->cmd, session->args);
    return rc;
}

// The ranks of an mpirun launch run the same run. Called once every rank has its data,
// parameters and resume point, at the first collective: the last moment before one whose
// size depends on the run.
static int check_ranks_agree(const Command *cmd, const ParsedArgs *args, Replicas *r,
                             const RunData *data, Status *st) {
    RunFacts facts = {data_spec_from_args(cmd, args, &r->config), data->train.count,
                      data->has_val ? data->val.count : -1,
                      data->has_test ? data->test.count : -1, r->run.precision};
    // Every rank runs what rank 0 runs: when they differ every rank fails with the same
    // message and r->disagreed is set, so the launch ends together (each rank exits 2, rank
    // 0 alone says why) rather than by mpirun killing it.
    return run_agreement_check_run(r->run.graph_list[0], &r->config, &facts, &r->disagreed,
                                   st);
}

// --json's run line: the header's facts.
static void emit_run_header(const Replicas *r, const RunData *data, const char *data_source,
                            const char *devices, const char *optimizer, const char *evaluated) {
    const Graph *g = r->run.graph_list[0];
    int batch = r->config.train.batch, train = data->train.count;
    train_emit_run(&(TrainRunFacts){
        .model = g->path, .data = data_source, .devices = devices, .optimizer = optimizer,
        .evaluated = evaluated, .parameters = graph_parameter_count(g),
        .seed = r->config.train.seed, .train_samples = train,
        .val_samples = data->has_val ? data->val.count : -1,
        .test_samples = data->has_test ? data->test.count : -1, .replicas = r->run.count,
        .processes = r->world.size, .batch = batch < train ? batch : train,
        .epochs = r->config.train.epochs});
}

// The data's normalization and checks, each replica's parameters, and --batch auto's
// choice, before the checkpoints resume.
static int prepare_training(const Command *cmd, const ParsedArgs *args, Replicas *r,
                            RunData *data, Status *st) {
    Graph *g = r->run.graph_list[0];
    const Dataset *train = &data->train;
    // Evaluated each epoch: the validation split when there is one, else the test split.
    const Dataset *test = data->has_val ? &data->val : &data->test;
    TRY(resolve_run_normalization(&r->config, g->path, data, st));
    if (data->normalization.count) r->config.normalization = &data->normalization;
    TRY(check_augment_option(cmd, args, &r->config, data, st));
    TRY(check_run_data(g, &r->config, data, st));
    TRY(run_init_params(&r->run, (uint64_t)r->config.train.seed, st));
    // A resumed run keeps the checkpoint's batch (its data order depends on it), so a
    // choice here would only cost trial steps and then be overridden.
    if (r->run.batch_auto && args_get(cmd, args, "--resume"))
        printf("batch auto: not chosen: --resume continues at the checkpoint's batch\n");
    else if (r->run.batch_auto) TRY(choose_batch(r, train, test, st));
    return 0;
}

// The checkpoints (a resume, --init-from), the inputs they record, and the ranks' agreement.
static int open_checkpoints(const Command *cmd, const ParsedArgs *args, Replicas *r,
                            RunData *data, ResumeSource *resume, TrainSession *session,
                            Status *st) {
    const Dataset *train = &data->train;
    const char *spec = data_spec_from_args(cmd, args, &r->config);
    // Every rank resumes from the checkpoint; only rank 0 writes.
    session->checkpoints.read_only = r->world.rank != 0;
    session->checkpoints.processes = r->world.size;
    session->world = &r->world;
    // Open fails before its resume or not at all (--init-from with --resume is refused first).
    TRY(checkpoints_read_options(cmd, args, r->run.graph_list[0]->path, &session->checkpoints,
                                 st));
    TRY(checkpoints_open(&session->checkpoints, &r->run, &r->config, resume,
                         args_get(cmd, args, "--init-from"), st));
    TRY(checkpoints_check_resumed_inputs(&session->checkpoints, r->config.data.normalize.kind,
                                         data, spec, st));
    checkpoints_record_inputs(&session->checkpoints, r->config.normalization, train, spec);
    session->checkpoints.inputs.held_out = data->held_out;
    TRY(check_ranks_agree(cmd, args, r, data, st));
    return world_print_ranks(&r->world, r->run.device_list[0]->name,
                             r->run.device_list[0]->backend->kind == BACKEND_CUDA, st);
}

// The run's header: model, data, devices, optimizer, batch, precision, schedule and data
// transforms; then --json's run line.
static void print_train_header(const Command *cmd, const ParsedArgs *args, const Replicas *r,
                               const RunData *data, const char *evaluated) {
    const Graph *g = r->run.graph_list[0];
    const Dataset *train = &data->train;
    char count[32], optimizer[160], devices[256] = "";
    size_t used = 0;
    for (int i = 0; i < r->run.count && used < sizeof devices; i++)
        used += (size_t)snprintf(devices + used, sizeof devices - used, "%s%s", i ? "," : "",
                                 r->run.device_list[i]->name);
    printf("model %s: %s parameters, %d layers\n", g->path,
           format_count(graph_parameter_count(g), count, sizeof count), g->count);
    char source[4096];
    const char *data_source = dataset_spec_source(data_spec_from_args(cmd, args, &r->config),
                                                  train, source, sizeof source);
    printf("data %s: %d train", data_source, train->count);
    if (data->has_val) printf(", %d val", data->val.count);
    if (data->has_test) printf(", %d test", data->test.count);
    printf(" samples; device %s", devices);
    if (r->run.count > 1) printf(" (%d data-parallel replicas)", r->run.count);
    if (r->world.size > 1) printf(" (rank 0 of %d processes)", r->world.size);
    char early_stop[48] = "";
    if (r->config.train.early_stop)
        snprintf(early_stop, sizeof early_stop, " (early stop: patience %d)",
                 r->config.train.early_stop);
    // A batch past the training set is one step of the whole set (core/train.c clamps it).
    char batch[96];
    if (r->config.train.batch > train->count)
        snprintf(batch, sizeof batch, "%d (the whole training set; %d asked)", train->count,
                 r->config.train.batch);
    else snprintf(batch, sizeof batch, "%d", r->config.train.batch);
    printf("\noptimizer %s; batch %s, %d epoch%s%s, seed %ld\n",
           optimizer_describe(&r->config.optimizer, optimizer, sizeof optimizer), batch,
           r->config.train.epochs, r->config.train.epochs == 1 ? "" : "s", early_stop,
           r->config.train.seed);
    print_precision(&r->config.precision, r->run.precision, r->run.device_list[0]->name);
    print_schedule(&r->config.schedule);
    print_run_normalization(&r->config, data);
    print_run_data_notes(data, 0);
    flush_stdout();
    emit_run_header(r, data, data_source, devices, optimizer, evaluated);
}

// --logdir (rank 0): a resumed run continues its log, the rows up to the checkpoint's step
// standing.
static int open_train_log(const Command *cmd, const ParsedArgs *args, const Replicas *r,
                          TrainSession *session, RunLog *log, Status *st) {
    const char *logdir = r->world.rank == 0 ? args_get(cmd, args, "--logdir") : NULL;
    if (!logdir) return 0;
    long resumed_step = args_get(cmd, args, "--resume") ? r->run.graph_list[0]->optimizer_steps
                                                        : -1;
    TRY(run_log_open(log, logdir, session->evaluated, resumed_step,
                     r->config.start.evaluate_first, st));
    session->log = log;
    // A cut-short last line has no step to place it by: counted apart from the rows
    // dropped for being after the resumed step.
    if (log->dropped_rows || log->cut_row)
        print_notice("%s: kept %d row%s up to step %ld; dropped %d, of steps trained or "
                     "evaluations done again%s", log->metrics_path, log->kept_rows,
                     log->kept_rows == 1 ? "" : "s", resumed_step, log->dropped_rows,
                     log->cut_row ? ", and an unfinished last line" : "");
    return 0;
}

static int train_with(const Command *cmd, const ParsedArgs *args, Replicas *r, RunData *data,
                      ResumeSource *resume, Status *st) {
    const Dataset *train = &data->train;
    const Dataset *test = data->has_val ? &data->val : &data->test;
    TRY(prepare_training(cmd, args, r, data, st));
    TrainSession session;
    memset(&session, 0, sizeof session);
    session.cmd = cmd;
    session.args = args;
    TRY(open_checkpoints(cmd, args, r, data, resume, &session, st));
    session.evaluated = data->has_val ? "val" : "test";
    print_train_header(cmd, args, r, data, session.evaluated);
    session.last_epoch = r->config.start.epochs_done;  // a resume with no epoch left to train
    // Counted from this run's first epoch, a resumed one too: checkpoints do not record it.
    session.early_stop = early_stop_start(r->config.train.early_stop);
    RunLog log;
    TRY(open_train_log(cmd, args, r, &session, &log, st));
    progress_init(&session.bar, stderr);
    TrainHooks hooks = {.user = &session, .on_step = on_step, .on_epoch = on_epoch,
                        .on_notice = on_notice, .after_step = after_step,
                        .last_checkpoint = last_checkpoint, .stop_requested = stop_requested,
                        .on_eval_batch = on_eval_batch, .eval_split = session.evaluated};
    catch_signal(SIGINT);
    catch_signal(SIGTERM);
    int interrupted = 0;
    int rc = interrupt_requested ? stopped_before_training(st)
             : train_replicas(r->run.graph_list, r->run.device_list, r->run.count, &r->config,
                              train, test, &hooks, &interrupted, st);
    progress_clear(&session.bar);
    rc = after_training(r, data, &session, &hooks, rc, interrupted, st);
    if (session.log) run_log_close(session.log);
    if (!rc) print_run_data_notes(data, 1);
    if (!rc)
        train_emit_result(session.last_epoch, session.last_split, &session.last_result,
                          session.stopped_early);
    if (!rc)
        for (int i = 0; i < r->run.devices_open; i++) print_memory(&r->run.devices[i]);
    if (!rc && !interrupted && r->world.rank == 0)
        print_next_commands(args, args_get(cmd, args, "--save"));
    return rc;
}

// Before the data load, which can take minutes: a --checkpoint folder or --logdir that
// another run is using, or that holds another run's checkpoints or rows, or a --save that
// cannot be written, is refused now.
// Locked here, they stay locked (for this process) when the run opens them; one that does
// not exist yet is made and locked then. Rank 0 only: the other processes of an mpirun
// launch write nothing.
static int check_run_folders(const Command *cmd, const ParsedArgs *args, ResumeSource *resume,
                             Status *st) {
    const char *folder = args_get(cmd, args, "--checkpoint");
    if (folder && path_is_directory(folder)) TRY(checkpoints_check_folder(folder, resume, st));
    const char *logdir = args_get(cmd, args, "--logdir");
    if (logdir && path_is_directory(logdir))
        TRY(run_log_check(logdir, resume->given != NULL, st));
    // After the folders above: --save into this run's own --checkpoint folder or --logdir
    // finds it held already.
    const char *save = args_get(cmd, args, "--save");
    if (save && args->positional_count)
        TRY(checkpoints_check_save(save, args->positionals[0], st));
    return 0;
}

// A signal after the last step (during the final save, say) found nothing left to stop:
// the run finished. Still 128 + the signal, as whatever sent it (a scheduler's SIGTERM, a
// closed pipe) is told that it landed.
static int finished_when_signalled(int signal_number, Status *st) {
    status_fail(st, STATUS_RUNTIME_ERROR, "%s after the last step: the run had finished, and "
                "what it writes (--save, --checkpoint, --logdir) was written",
                signal_words(signal_number));
    status_hint(st, "nothing to resume; the exit code says a stop was asked for");
    return STATUS_RUNTIME_ERROR;
}

int run_train(const Command *cmd, const ParsedArgs *args) {
    Status st;
    status_clear(&st);
    catch_signal(SIGPIPE);
    if (result_sink_open(cmd, args, &st)) return report_failure(&st);
    ModelFile file;
    Graph first;
    Replicas replicas;
    memset(&replicas, 0, sizeof replicas);
    RunData data = {0};
    // --resume's file, found by the first step that needs it and taken by the others.
    ResumeSource resume = {.given = args_get(cmd, args, "--resume")};
    if (world_open(&replicas.world, &st)) return report_failure(&st);
    if (load_model(cmd, args, &file, &first, &replicas.config, &st)) {
        world_label_error(&replicas.world, &st);
        int code = report_failure(&st);
        world_close(&replicas.world, code);
        return code;
    }
    RunRequest request = {0};
    int rc = world_apply(cmd, args, &replicas.world, &replicas.config, &st);
    if (!rc) rc = apply_overrides(cmd, args, &replicas.config, &st);
    if (!rc) rc = apply_data_transform_overrides(cmd, args, &replicas.config, &st);
    if (!rc)
        rc = early_stop_check_split(&replicas.config, args_get(cmd, args, "--early-stop") != NULL,
                                    args_get(cmd, args, "--val-split") != NULL, first.path, &st);
    if (!rc) rc = check_schedule_rates(cmd, args, &replicas.config, first.path, &st);
    if (!rc) rc = precision_from_args(cmd, args, &replicas.config.precision, &st);
    if (rc) graph_free(&first);
    if (!rc) rc = open_replicas(cmd, args, &file, &first, &request, &replicas, &st);
    Graph *g = replicas.run.graph_list[0];
    if (!rc && replicas.world.rank == 0) rc = check_run_folders(cmd, args, &resume, &st);
    if (!rc) rc = load_run_data(cmd, args, g, &replicas.config, &resume, &data, &st);
    if (!rc) rc = train_with(cmd, args, &replicas, &data, &resume, &st);
    int finished = !rc && interrupt_requested;
    if (finished) rc = finished_when_signalled(interrupt_requested, &st);
    int interrupted = interrupt_requested && rc;
    if (interrupted && !finished && interrupt_requested == SIGPIPE)
        status_prefix(&st, "%s: ", signal_words(SIGPIPE));
    if (rc) world_label_error(&replicas.world, &st);
    // After a signal every rank stopped at the same step, and ranks that disagree on the run
    // all know it: rank 0 says so for all.
    int together = interrupted || replicas.disagreed;
    int quiet = together && replicas.world.rank != 0;
    int exit_code = rc ? (quiet ? status_exit_code(&st) : report_failure(&st)) : 0;
    if (interrupted) exit_code = 128 + interrupt_requested;
    run_data_free(&data);
    run_close(&replicas.run);
    model_file_free(&file);
    // Every rank stopped at the same point after a signal or a disagreement, and each leaves
    // with its own code; any other failure ends them all.
    world_close(&replicas.world, together ? 0 : exit_code);
    return result_sink_close(exit_code);
}

#define _DEFAULT_SOURCE  // readlink, realpath
#include <ctype.h>
#include <limits.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "base/directories.h"
#include "base/escape.h"
#include "core/checkpoint.h"
#include "core/precision_check.h"
#include "core/recorded_resize.h"
#include "data/dataset_stats.h"
#include "data/image.h"
#include "tools/cli.h"

#ifndef TRAINER_MODELS_INSTALLED
#define TRAINER_MODELS_INSTALLED "../share/trainer/models"  // from the binary's folder
#endif
#ifndef TRAINER_MODELS_BUILT
#define TRAINER_MODELS_BUILT ""  // CMake passes the source tree's models/
#endif

// An installed tree finds its models from the binary (so it works wherever it is moved);
// a build tree from the source folder it was built from.
const char *bundled_models_folder(char *out, size_t size) {
    char self[4096];
    const char *exe = trainer_executable(self, sizeof self);
    const char *slash = strrchr(exe, '/');
    char installed[4200], resolved[PATH_MAX];
    snprintf(installed, sizeof installed, "%.*s/" TRAINER_MODELS_INSTALLED,
             slash ? (int)(slash - exe) : 1, slash ? exe : ".");
    if (path_is_directory(installed)) {  // said without the bin/.. it was found through
        snprintf(out, size, "%s", realpath(installed, resolved) ? resolved : installed);
        return out;
    }
    snprintf(out, size, "%s", TRAINER_MODELS_BUILT);
    return out[0] && path_is_directory(out) ? out : NULL;
}

const char *resolve_model_path(const char *typed, char *out, size_t size) {
    char folder[4096];
    if (strchr(typed, '/') || access(typed, F_OK) == 0 ||
        !bundled_models_folder(folder, sizeof folder))
        return typed;
    // A bare name (no '.') that is not a bundled model either is reported at the bundled
    // path, so the error says where it looked and suggests the nearest bundled model; a
    // missing `my.model` is the user's own file, reported (and suggested for) where it is.
    int bare = !strchr(typed, '.');
    int n = snprintf(out, size, "%s/%s%s", folder, typed, bare ? ".model" : "");
    if (n <= 0 || (size_t)n >= size) return typed;
    return bare || access(out, F_OK) == 0 ? out : typed;
}

// `eval MODEL WEIGHTS`: the second file is the weights, which --weights names.
static int refuse_extra_positionals(const Command *cmd, const ParsedArgs *args, Status *st) {
    int weights = find_option_spec(cmd, "--weights") && args->positional_count == 2;
    status_fail(st, STATUS_BAD_INPUT, "trainer %s takes one model file, got %d arguments%s%s%s",
                cmd->name, args->positional_count, weights ? "; did you mean --weights " : "",
                weights ? args->positionals[1] : "", weights ? "?" : "");
    if (weights)
        status_hint(st, "trainer %s %s --weights %s", cmd->name, args->positionals[0],
                    args->positionals[1]);
    else
        status_hint(st, "usage: trainer %s %s", cmd->name, cmd->usage);
    return STATUS_BAD_INPUT;
}

int load_model(const Command *cmd, const ParsedArgs *args, ModelFile *file, Graph *g,
               RunConfig *config, Status *st) {
    if (args->positional_count != 1) return refuse_extra_positionals(cmd, args, st);
    char found[4096];
    TRY(run_build_model(resolve_model_path(args->positionals[0], found, sizeof found),
                        args_get(cmd, args, "--no-fuse") != NULL, file, g, config, st));
    config->sync_check = args_get(cmd, args, "--sync-check") != NULL;
    return 0;
}

// More threads than cores only take turns on them, and a user who asked for 1000 on two
// cores likely meant otherwise; the run still goes on, as asked. Said once a process.
static void notice_threads_over_cores(long threads) {
    static int said;
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    if (said || cores <= 0 || threads <= cores) return;
    said = 1;
    print_notice("--threads %ld is more than the %ld %s here: the extra threads take turns on "
                 "them and add no speed (--threads %ld uses every core)", threads, cores,
                 cores == 1 ? "core" : "cores", cores);
}

// `--device auto` fell back to the CPU: said once a process (predict and eval may open a
// device twice), in one short line: the reason's first clause, and how to silence it.
static void notice_cpu_fallback(void *user, const char *notice) {
    (void)user;
    static int said;
    if (said++) return;
    size_t keep = strlen(notice);
    const char *cuts[] = {"; ", " (", ": "};
    const char *why = strstr(notice, "GPU: ");
    for (size_t i = 0; why && i < sizeof cuts / sizeof cuts[0]; i++) {
        const char *cut = strstr(why + 5, cuts[i]);
        if (cut && (size_t)(cut - notice) < keep) keep = (size_t)(cut - notice);
    }
    print_notice("%.*s (--device cpu: no notice)", (int)keep, notice);
}

// --memory-limit, --memory-mode, --threads, --without and --layout, read after the resolver
// decided the batch and replicas, as before the device opens; the levers and the layout go
// into *options. check reads --memory-limit alone.
static int device_args(const Command *cmd, const ParsedArgs *args, RunPurpose purpose,
                       DeviceOptions *device, RunOptions *options, Status *st) {
    *device = (DeviceOptions){.memory_limit = args_get(cmd, args, "--memory-limit"),
                              .mode = ALLOC_GROW};
    if (purpose == RUN_CHECK) return 0;
    TRY(run_options_read_memory_mode(args_get(cmd, args, "--memory-mode"),
                                     device->memory_limit, &device->mode, st));
    long threads = 0;
    TRY(args_int(cmd, args, "--threads", 1, 1024, &threads, NULL, st));
    device->threads = (int)threads;
    notice_threads_over_cores(threads);
    TRY(run_options_read_levers(args_get(cmd, args, "--without"), &options->disabled_levers,
                                st));
    return run_options_read_layout(args_get(cmd, args, "--layout"), &options->nhwc, st);
}

int open_run(const Command *cmd, const ParsedArgs *args, RunSetup *setup, RunRequest *request,
             Graph *first, Run *run, Status *st) {
    memset(run, 0, sizeof *run);
    RunOptions options;
    setup->options = &options;
    setup->notice = printed_notice;
    setup->fallback = (RunNotice){setup->purpose == RUN_CHECK ? print_notice_line
                                                              : notice_cpu_fallback, NULL};
    RunConfig none = {0};
    if (!request->device) request->device = args_get(cmd, args, "--device");
    if (setup->purpose == RUN_CHECK && !request->device) request->device = "cpu";
    request->batch = args_get(cmd, args, "--batch");  // NULL where the command has none
    request->purpose = setup->purpose;
    request->command = cmd->name;
    // The batch and replicas first, then the device options, as the device reads them.
    int rc = run_options_resolve(setup->config ? setup->config : &none, request,
                                 &setup->notice, &options, st);
    if (!rc) rc = device_args(cmd, args, setup->purpose, &setup->device, &options, st);
    if (rc && first) graph_free(first);
    if (!rc) rc = run_open(run, setup, first, st);
    for (int i = 0; i < run->devices_open; i++)
        if (strncmp(run->devices[i].name, "cuda", 4) == 0) note_cuda_device_opened();
    setup->options = NULL;  // they lived in this frame
    return rc;
}

int precision_from_args(const Command *cmd, const ParsedArgs *args, PrecisionConfig *precision,
                        Status *st) {
    return run_options_read_precision(args_get(cmd, args, "--precision"),
                                      args_get(cmd, args, "--no-tf32") != NULL, precision, st);
}

void print_precision(const PrecisionConfig *asked, Precision effective, const char *device) {
    char source[96], what[400];
    if (asked->precision == PRECISION_DEFAULT)
        snprintf(source, sizeof source, "the default; --precision to choose");
    else if (asked->line)
        snprintf(source, sizeof source, "train precision=%s, line %d",
                 precision_name(asked->precision), asked->line);
    else if (strcmp(asked->source, "--no-tf32") == 0)
        snprintf(source, sizeof source, "--no-tf32");
    else
        snprintf(source, sizeof source, "--precision %s", precision_name(asked->precision));
    printf("precision %s on %s (%s): %s\n", precision_name(effective), device, source,
           precision_describe(effective, what, sizeof what));
}

const char *data_spec_from_args(const Command *cmd, const ParsedArgs *args,
                                const RunConfig *config) {
    const char *spec = args_get(cmd, args, "--data");
    if (spec) return spec;
    return config && config->data.spec[0] ? config->data.spec : "fashion-mnist";
}

int place_in_data_statement(const Command *cmd, const ParsedArgs *args,
                            const RunConfig *config, int rc, Status *st) {
    return args_get(cmd, args, "--data") ? rc : place_in_data_spec(config, rc, st);
}

int load_data_split(const Command *cmd, const ParsedArgs *args, const RunConfig *config,
                    const char *split, const DatasetOptions *options, Dataset *ds,
                    int *skipped, Status *st) {
    DatasetOptions reading = options ? *options : (DatasetOptions){0};
    if (!reading.on_notice) reading.on_notice = print_notice_line;
    int rc = dataset_load_with(data_spec_from_args(cmd, args, config), split, &reading, ds,
                               skipped, st);
    return place_in_data_statement(cmd, args, config, rc, st);
}

// "train-limit: 10000 of 60000, stratified by class (seed 1)": what a limit kept.
static void limit_line(const char *option, int kept, int before, DatasetLimitOrder order,
                       uint64_t seed, char *out, size_t size) {
    if (order == LIMIT_STRATIFIED)
        snprintf(out, size, "%s: %d of %d, stratified by class (seed %llu)", option + 2, kept,
                 before, (unsigned long long)seed);
    else
        snprintf(out, size, "%s: %d of %d, the first ones (--limit-order first)", option + 2,
                 kept, before);
}

int apply_split_limit(Dataset *ds, const SplitLimit *limit, int *cut, Status *st) {
    return split_limit_apply(ds, limit, &printed_notice, cut, st);
}

int args_limit_order(const Command *cmd, const ParsedArgs *args, DatasetLimitOrder *order,
                     Status *st) {
    const char *word = args_get(cmd, args, "--limit-order");
    *order = word && strcmp(word, "first") == 0 ? LIMIT_FIRST : LIMIT_STRATIFIED;
    if (!word || strcmp(word, "first") == 0 || strcmp(word, "stratified") == 0) return 0;
    status_fail(st, STATUS_BAD_INPUT, "--limit-order %s: expected stratified or first", word);
    status_hint(st, "stratified (the default) keeps a seeded sample with each class's share; "
                    "first keeps the first N samples as stored");
    return STATUS_BAD_INPUT;
}

int load_dataset_from_args(const Command *cmd, const ParsedArgs *args, const RunConfig *config,
                           const char *split, const char *limit_option,
                           const DatasetOptions *options, Dataset *ds, int *skipped, Status *st) {
    TRY(load_data_split(cmd, args, config, split, options, ds, skipped, st));
    long limit = 0;
    int rc = args_int(cmd, args, limit_option, 1, 100000000, &limit, NULL, st);
    if (rc) {
        dataset_free(ds);
        return rc;
    }
    SplitLimit how = {limit, limit_option, strcmp(split, "test") == 0 ? "test" : "training",
                      LIMIT_STRATIFIED, (uint64_t)config->train.seed};
    int cut = 0;
    rc = args_limit_order(cmd, args, &how.order, st);
    if (!rc) rc = apply_split_limit(ds, &how, &cut, st);
    if (rc) dataset_free(ds);
    return rc;
}

void print_weights_notes(const char *path, const char *model_path,
                         const CheckpointLoaded *loaded) {
    if (loaded->model_changed)
        print_notice("%s was trained from another text than %s (its model_hash differs): the "
                     "layers match by name and shape, but a changed activation, dropout or "
                     "loss would not show; the file's model_text holds the text it was trained "
                     "from", path, model_path);
    if (loaded->nonfinite_count)
        fprintf(stderr, "trainer: warning: %s: %d tensor%s NaN or infinite values: %s\n",
                path, loaded->nonfinite_count,
                loaded->nonfinite_count == 1 ? " holds" : "s hold", loaded->nonfinite);
}

// An error of the statement read from an option: no file place, the option instead.
static int option_failed(const char *option, const char *spec, Status *st) {
    st->file[0] = '\0';
    st->line = st->column = 0;
    status_prefix(st, "%s '%s': ", option, spec);
    return st->code;
}

int read_statement_option(const char *option, const char *kind, const char *spec,
                          StatementReader read, void *out, Status *st) {
    char text[512];
    snprintf(text, sizeof text, "%s %s\n", kind, spec);
    ModelFile file;
    if (model_file_parse_text(option, text, &file, st)) return option_failed(option, spec, st);
    int rc = file.count == 1 ? read(option, &file.statements[0], out, st)
                             : status_fail(st, STATUS_BAD_INPUT, "no %s given", kind);
    if (rc && file.count != 1) status_hint(st, "e.g. %s %s", option,
                                           strcmp(kind, "schedule") == 0 ? "cosine" : "none");
    model_file_free(&file);
    return rc ? option_failed(option, spec, st) : 0;
}

// Images of another size than height x width resized to it.
static void set_resize(DatasetOptions *options, const Shape *input, int height, int width) {
    options->resize = 1;
    options->channels = input->rank == 3 ? options->channels : 1;
    options->height = height;
    options->width = width;
}

int dataset_options_for_weights(const Command *cmd, const ParsedArgs *args, const Graph *g,
                                const char *spec, const char *weights,
                                const LoadedInputs *recorded, DatasetOptions *options,
                                Status *st) {
    TRY(dataset_options_from_args(cmd, args, g, options, st));
    // Only image folders are resized: weights trained on images:DIR evaluate on
    // fashion-mnist as they are.
    if (!dataset_image_folder(spec)) return 0;
    const Shape *input = &g->input->out_shape;
    int height = 0, width = 0;
    if (!args_get(cmd, args, "--resize"))
        TRY(resize_as_recorded(input, weights, recorded, &printed_notice, &height, &width,
                               st));
    if (height) set_resize(options, input, height, width);
    return 0;
}

int dataset_options_from_args(const Command *cmd, const ParsedArgs *args, const Graph *g,
                              DatasetOptions *options, Status *st) {
    memset(options, 0, sizeof *options);
    const Shape *input = &g->input->out_shape;
    if (input->rank == 3) {
        options->channels = (int)input->dims[0];
        options->height = (int)input->dims[1];
        options->width = (int)input->dims[2];
    }
    int height = 0, width = 0;
    TRY(resize_read(args_get(cmd, args, "--resize"), input, &height, &width, st));
    if (height) set_resize(options, input, height, width);
    options->decode = DECODE_AUTO;
    const char *decode = args_get(cmd, args, "--decode");
    if (decode) {
        static const char *const words[] = {"upfront", "stream", "auto"};
        int found = -1;
        for (int i = 0; i < 3; i++)
            if (strcmp(decode, words[i]) == 0) found = i;
        if (found < 0) {
            status_fail(st, STATUS_BAD_INPUT, "--decode %s: expected auto, upfront or stream",
                        decode);
            status_hint(st, "upfront decodes every PNG before training; stream decodes each "
                            "as its batch is made; auto (the default) streams when they would "
                            "not fit in half the memory");
            return STATUS_BAD_INPUT;
        }
        options->decode = found == 0 ? DECODE_UPFRONT : found == 1 ? DECODE_STREAM : DECODE_AUTO;
    }
    return args_on_bad_sample(cmd, args, &options->skip_bad_samples, st);
}

int args_on_bad_sample(const Command *cmd, const ParsedArgs *args, int *skip, Status *st) {
    const char *bad = args_get(cmd, args, "--on-bad-sample");
    *skip = bad && strcmp(bad, "skip") == 0;
    if (!bad || strcmp(bad, "fail") == 0 || *skip) return 0;
    status_fail(st, STATUS_BAD_INPUT, "--on-bad-sample %s: expected fail or skip", bad);
    status_hint(st, "fail (the default) stops at the first unreadable image; skip leaves such "
                    "images out and counts them");
    return STATUS_BAD_INPUT;
}

// train --resume of an image folder reads the images as the checkpoint's run did
// (resize_as_resumed).
static int resize_as_resumed_from_args(const Command *cmd, const ParsedArgs *args,
                                       const Graph *g, ResumeSource *resume,
                                       DatasetOptions *options, Status *st) {
    LoadedInputs recorded;
    TRY(checkpoints_read_resumed_inputs(resume, &recorded, st));
    const Shape *input = &g->input->out_shape;
    int height = options->resize ? options->height : 0;
    int width = options->resize ? options->width : 0;
    int rc = resize_as_resumed(input, resume->file, &recorded, args_get(cmd, args, "--resize"), g->path,
                               &printed_notice, &height, &width, st);
    checkpoint_inputs_free(&recorded);
    if (!rc && height) set_resize(options, input, height, width);
    return rc;
}

int load_run_data(const Command *cmd, const ParsedArgs *args, const Graph *g,
                  const RunConfig *config, ResumeSource *resume, RunData *data, Status *st) {
    memset(data, 0, sizeof *data);
    RunDataRequest request = {.spec = data_spec_from_args(cmd, args, config),
                              .val_fraction = config->data.val_split,
                              .notice = printed_notice};
    int rc = run_data_check_splits(request.spec, args_get(cmd, args, "--val-split") != NULL,
                                   config, st);
    if (rc) return place_in_data_statement(cmd, args, config, rc, st);
    TRY(dataset_options_from_args(cmd, args, g, &request.options, st));
    if (resume && resume->given && dataset_image_folder(request.spec))
        TRY(resize_as_resumed_from_args(cmd, args, g, resume, &request.options, st));
    TRY(args_int(cmd, args, "--train-limit", 1, 100000000, &request.train_limit, NULL, st));
    TRY(args_limit_order(cmd, args, &request.limit_order, st));
    TRY(args_float_in(cmd, args, "--val-split", 0.0, 1.0, RANGE_OPEN, &request.val_fraction,
                      &request.val_given, st));
    TRY(args_int(cmd, args, "--test-limit", 1, 100000000, &request.test_limit, NULL, st));
    request.spec_in_model = !args_get(cmd, args, "--data");
    return run_data_load(&request, config, data, st);
}

void print_run_data_notes(const RunData *data, int at_end) {
    const Dataset *train = &data->train;
    if (!at_end && data->limited_from) {
        char line[160];
        limit_line("--train-limit", train->count + data->val.count, data->limited_from,
                   data->limit_order, data->limit_seed, line, sizeof line);
        printf("%s\n", line);
    }
    if (!at_end && train->resize)
        printf("images: resized to %dx%d (HxW) where another size, %s, at load as in "
               "predict --resize\n", train->height, train->width, IMAGE_RESIZE_FILTER);
    if (!at_end && train->paths)
        printf("images: decoded as each batch is made, on the loader thread (--decode "
               "stream); %d files\n", train->count + data->val.count + data->test.count);
    if (!at_end && train->class_count > 0) {
        printf("classes:");
        for (int i = 0; i < train->class_count; i++) {
            char name[DATASET_SHOWN_NAME];
            printf(" %d=%s", i, dataset_class_name_shown(train, i, name));
        }
        printf("\n");
    }
    if (at_end && data->skipped > 0)
        printf("skipped %d unreadable sample%s (--on-bad-sample skip)\n", data->skipped,
               data->skipped == 1 ? "" : "s");
}

// The kernel names a process after the file it executes, so executing /proc/self/exe would
// name it `exe` (pgrep, killall, ps -C and the OOM killer's log would not find `trainer`):
// the binary's own path instead. /proc/self/exe stays the fallback: readlink can fail, and
// a binary deleted or replaced since it started (a rebuild) reads " (deleted)", where only
// /proc/self/exe still reaches this one.
const char *trainer_executable(char *path, size_t size) {
    static const char deleted[] = " (deleted)";
    const size_t deleted_length = sizeof deleted - 1;
    ssize_t n = size > 1 ? readlink("/proc/self/exe", path, size - 1) : -1;
    if (n <= 0 || (size_t)n >= size - 1) return "/proc/self/exe";
    path[n] = '\0';
    if ((size_t)n > deleted_length && strcmp(path + n - deleted_length, deleted) == 0)
        return "/proc/self/exe";
    return path;
}


// `trainer predict MODEL --weights FILE IMAGE.png|FOLDER...`: the most likely classes of
// images (a folder's, and its subfolders' one level down: data/predict_inputs.h), or of a
// dataset's samples (--data SPEC: a CSV file's rows, say). Printed as text, as JSON lines
// (--json), and written to --output FILE.csv|FILE.jsonl (data/prediction_output.h).
//
// Every image is decoded once the weights are read (they record the size the run resized
// its images to: `--resize`), before the model runs, and a bad one (missing, not a PNG,
// damaged, wrong size) is reported by name; when any image is bad, each bad one gets its
// error on stderr, nothing is printed on stdout and the exit code is 2. So stdout holds
// either every prediction or none, and a script never reads a partial list.
//
// The model sees an image as its input shape says: CxHxW takes a C-channel (1 or 3)
// image of W x H pixels; a vector input N takes a gray image of any W x H with W*H == N
// (mlp.model's shape=784 takes 28x28 PNGs), colour converted to luminance.
#define _POSIX_C_SOURCE 200809L

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/escape.h"
#include "base/utf8.h"
#include "core/class_names.h"
#include "core/predict.h"
#include "core/recorded_resize.h"
#include "data/dataset_stats.h"
#include "data/predict_inputs.h"
#include "data/result_output.h"
#include "tools/cli.h"
#include "tools/result_sink.h"

#include <cjson/cJSON.h>

static const OptionSpec predict_options[] = {
    {"--weights", "FILE", "safetensors weights: from `trainer train --save`, or a checkpoint "
                          "(required)"},
    {"--top", "K", "print the K most likely classes of each image (default 3)"},
    {"--data", "SPEC", "classify a dataset's samples instead of images: csv:FILE (each row), "
                       "png:DIR, idx:DIR, cifar10:DIR, fashion-mnist (the test split when "
                       "there is one)"},
    {"--output", "FILE", "also write the predictions to FILE.csv (a row per sample and rank) "
                         "or FILE.jsonl (a JSON object per sample)"},
    RESULT_OPTION_SPECS,
    {"--digits", "D", "decimals of the printed probabilities (default 4; 8 to compare with "
                      "an exported model)"},
    {"--classes", "NAMES", "fashion-mnist or FILE, one name per line (default: the names the "
                           "weights file records, else class indices)"},
    RESIZE_AS_RECORDED_OPTION_SPEC,
    DEVICE_OPTION_SPECS,
    {NULL, NULL, NULL},
};

const Command predict_command = {
    .name = "predict",
    .usage = "MODEL --weights FILE (IMAGE|FOLDER)... | --data SPEC [options]",
    .summary = "classify PNG or JPEG images, folders of them, or a dataset's samples with "
               "trained weights: top classes and probabilities",
    .options = predict_options,
    .run = run_predict,
};

enum { ESCAPED_NAME_MAX = CHECKPOINT_CLASS_NAME_WRITTEN_MAX };

// The names a weights file records (a png:DIR's folders, CIFAR-10's), escaped when printed.
// Outputs past the list are `class N`; the mismatch is noticed on stderr.
static int use_recorded_names(const LoadedInputs *in, int classes, const char *weights,
                              ClassNames *cn, Status *st) {
    TRY(class_names_recorded(in, classes, cn, st));
    if (in->class_count < classes)
        print_notice("the model has %d outputs, but %s names %d class%s: outputs %d to %d are "
                     "shown as `class N`", classes, weights, in->class_count,
                     in->class_count == 1 ? "" : "es", in->class_count, classes - 1);
    else if (in->class_count > classes)
        print_notice("the model has %d outputs, but %s names %d classes: the names past "
                     "the first %d are not used", classes, weights, in->class_count, classes);
    return 0;
}

static int load_class_names(const Command *cmd, const ParsedArgs *args, int classes,
                            ClassNames *cn, Status *st) {
    const char *spec = args_get(cmd, args, "--classes");
    // Without --classes, the names are those the weights record (run_model), else indices:
    // Fashion-MNIST's names given to any 10-class model called MNIST digits "Dress".
    if (!spec) return 0;
    if (strcmp(spec, "fashion-mnist") != 0) return class_names_from_file(spec, classes, cn, st);
    return class_names_known(spec, classes, cn, st);
}

// Decodes every image; reports each bad one. Returns the exit code of the first failure.
static int read_images(const InputList *inputs, const ImageInput *in, size_t sample,
                       float *images) {
    int exit_code = 0;
    for (int i = 0; i < inputs->count; i++) {
        Status st;
        status_clear(&st);
        // The image's name is the user's, any bytes: escaped where the error names it.
        if (status_escape_place(&st, predict_read_image(inputs->paths[i], in,
                                                images + (size_t)i * sample, &st))) {
            int code = report_failure(&st);
            if (!exit_code) exit_code = code;
        }
    }
    return exit_code;
}

// Class c as printed: its name escaped (names come from files, and so do image paths,
// whose bytes could drive the terminal or split a result's lines), else `class c`.
static const char *shown_class_name(const ClassNames *cn, int c, char *out, size_t size) {
    if (!cn->names) snprintf(out, size, "class %d", c);
    else text_escape(cn->names[c], strlen(cn->names[c]), out, size);
    return out;
}

static void print_prediction(const char *image, const RankedClass *ranked, int k, int digits,
                             const ClassNames *cn, int name_width) {
    char shown[4 * 4096 + 8];
    printf("%s\n", text_escape(image, strlen(image), shown, sizeof shown));
    for (int r = 0; r < k; r++) {
        int c = ranked[r].index;
        double probability = ranked[r].probability;
        char name[ESCAPED_NAME_MAX];
        shown_class_name(cn, c, name, sizeof name);
        // Padded by the columns the name takes on the terminal, not its bytes ("猫": 3, 2).
        int pad = name_width - utf8_display_columns(name);
        // Never print 0.0000 for a probability that is not zero.
        if (probability >= 0.5 * pow(10.0, -digits) || probability == 0.0)
            printf("  %s%*s  %.*f\n", name, pad > 0 ? pad : 0, "", digits, probability);
        else
            printf("  %s%*s  %.*e\n", name, pad > 0 ? pad : 0, "", digits > 4 ? digits - 3 : 1,
                   probability);
    }
}

typedef struct PredictRun {
    const ParsedArgs *args;
    InputList inputs;        // the images, from positionals[1..] (folders listed)
    Dataset data;            // --data's samples instead (data_spec set)
    const char *data_spec;
    int32_t *labels;         // --data: each sample's label
    int count;               // samples to classify
    PredictionFile output;   // --output; file NULL without
    Graph *g;
    RunConfig config;        // the model file's train batch= caps the predict batch
    Run run;                 // the device, and the graph run_open took
    const char *weights;
    int top;                 // at most the class count
    int digits;              // decimals of the printed probabilities
    ImageInput input;
    ClassNames names;
    float *images;           // one sample per image, host f32
    int name_width;          // columns of the widest class name shown (at most 40)
    size_t sample;           // floats per sample
} PredictRun;

// The name a sample goes by: its image's path, or --data's SPEC#N (N from 1, in the
// dataset's order: a CSV file's N-th row).
static const char *sample_name(const PredictRun *run, int i, char *out, size_t size) {
    if (!run->data_spec) return run->inputs.paths[i];
    snprintf(out, size, "%s#%d", run->data_spec, i + 1);
    return out;
}

// One sample's top classes: as text, as a --json line, and into --output.
static void report_prediction(PredictRun *run, const Prediction *p) {
    const ClassNames *cn = &run->names;
    int named = cn->names ? graph_classes(run->g) : 0;
    print_prediction(p->path, p->ranked, p->top, run->digits, cn, run->name_width);
    prediction_output_write(&run->output, p, cn->names, named);
    if (!result_sink_json()) return;
    result_emit(prediction_json(p, cn->names, named, "prediction"));
}

static void emit_run_event(const PredictRun *run) {
    if (!result_sink_json()) return;
    RunRecord record = {.command = "predict", .model = run->g->path, .weights = run->weights,
                        .data = run->data_spec, .device = run->run.devices[0].name,
                        .samples = run->count, .top = run->top};
    result_emit(run_record_json(&record));
}

static int name_column_width(const PredictRun *run, int classes) {
    int name_width = 0;
    for (int c = 0; c < classes; c++) {
        char name[ESCAPED_NAME_MAX];
        int columns = utf8_display_columns(shown_class_name(&run->names, c, name, sizeof name));
        if (columns > name_width) name_width = columns < 40 ? columns : 40;
    }
    return name_width;
}

// One sample's ranked classes, reported; non-finite scores are an error naming it.
static int report_sample(void *user, int index, const RankedClass *ranked, Status *st) {
    PredictRun *run = user;
    char shown[4096];
    const char *name = sample_name(run, index, shown, sizeof shown);
    if (!ranked) {
        status_fail_at(st, STATUS_RUNTIME_ERROR, name, 0, 0,
                       "the model gives non-finite class scores (NaN or infinity)");
        status_hint(st, "the weights are broken, e.g. saved from a training run that "
                        "diverged; retrain with a lower --lr");
        return STATUS_RUNTIME_ERROR;
    }
    Prediction p = {name, run->labels ? run->labels[index] : -1, ranked, run->top};
    report_prediction(run, &p);
    return 0;
}

// Before the first batch: --output opened, and the run's JSON line.
static int start_reports(void *user, Status *st) {
    PredictRun *run = user;
    run->name_width = name_column_width(run, graph_classes(run->g));
    const char *output = args_get(&predict_command, run->args, "--output");
    if (output) TRY(prediction_output_open(&run->output, output, st));
    emit_run_event(run);
    return 0;
}

// Runs the samples through the model in batches of at most the model's train batch=, and
// reports each one's top classes.
static int predict_all(PredictRun *run, Status *st) {
    PredictHooks hooks = {run, start_reports, report_sample};
    int rc = predict_batches(&run->run, run->images, run->count, run->config.train.batch,
                             run->config.sync_check, &hooks, st);
    Status closing;
    status_clear(&closing);
    if (prediction_output_close(&run->output, &closing) && !rc) {
        *st = closing;
        rc = (int)st->code;
    }
    if (!rc && result_sink_json()) {
        cJSON *event = result_event("result");
        json_add_text(event, "command", "predict");
        cJSON_AddNumberToObject(event, "samples", run->count);
        json_add_text(event, "output", args_get(&predict_command, run->args, "--output"));
        result_emit(event);
    }
    return rc;
}

// --data SPEC's samples: its test split when it has one, else all of it (a CSV file); an
// image folder's images resized as the weights record unless --resize says.
static int load_data_samples(const Command *cmd, PredictRun *run, Status *st) {
    DatasetOptions options;
    TRY(dataset_options_for_weights(cmd, run->args, run->g, run->data_spec, run->weights,
                                    &run->run.loaded.inputs, &options, st));
    const char *split = dataset_has_test_split(run->data_spec) ? "test" : "train";
    TRY(load_data_split(cmd, run->args, &run->config, split, &options, &run->data, NULL, st));
    TRY(graph_check_dataset(run->g, &run->data, "the --data samples", st));
    run->count = run->data.count;
    run->labels = malloc((size_t)run->count * sizeof *run->labels);
    if (!run->labels)
        return status_out_of_host_memory(st, (size_t)run->count * sizeof *run->labels,
                                         "for %d labels", run->count);
    return 0;
}

// Everything that needs no device: options, the model's input geometry, class names, and
// the samples' list (images not yet decoded) or --data's dataset.
static int prepare(const Command *cmd, PredictRun *run, Status *st) {
    run->weights = args_get(cmd, run->args, "--weights");
    if (!run->weights) {
        status_fail(st, STATUS_BAD_INPUT, "trainer predict needs --weights FILE");
        status_hint(st, "train with `trainer train %s --save FILE` first", run->g->path);
        return STATUS_BAD_INPUT;
    }
    int classes = graph_classes(run->g);
    long top = 3;
    TRY(args_int(cmd, run->args, "--top", 1, 1000000, &top, NULL, st));
    run->top = top > classes ? classes : (int)top;
    const char *output = args_get(cmd, run->args, "--output");
    if (output) TRY(prediction_output_check(output, st));
    long digits = 4;
    TRY(args_int(cmd, run->args, "--digits", 1, 12, &digits, NULL, st));
    run->digits = (int)digits;
    TRY(load_class_names(cmd, run->args, classes, &run->names, st));
    run->data_spec = args_get(cmd, run->args, "--data");
    if (run->data_spec && run->args->positional_count > 1) {
        status_fail(st, STATUS_BAD_INPUT, "predict classifies images or --data %s, not both",
                    run->data_spec);
        status_hint(st, "run predict once for the images and once for --data");
        return STATUS_BAD_INPUT;
    }
    if (run->data_spec) return 0;
    TRY(predict_image_input(run->g, &run->input, st));
    TRY(resize_read(args_get(cmd, run->args, "--resize"), &run->g->input->out_shape,
                    &run->input.resize_height, &run->input.resize_width, st));
    TRY(predict_collect_inputs(run->args->positionals + 1, run->args->positional_count - 1,
                               &run->inputs, st));
    run->count = run->inputs.count;
    return 0;
}

// The samples on the host, read as the weights say the run read its own: --data's, or the
// images decoded (each bad one reported). Returns the exit code.
static int load_samples(const Command *cmd, PredictRun *run, Status *st) {
    int rc = 0;
    if (run->data_spec)
        rc = load_data_samples(cmd, run, st);
    else if (!args_get(cmd, run->args, "--resize"))
        rc = resize_as_recorded(&run->g->input->out_shape, run->weights,
                                &run->run.loaded.inputs, &printed_notice,
                                &run->input.resize_height, &run->input.resize_width, st);
    run->sample = shape_numel(&run->g->input->out_shape);
    size_t image_bytes = (size_t)run->count * run->sample * sizeof *run->images;
    if (!rc) run->images = malloc(image_bytes);
    if (!rc && !run->images)
        rc = status_out_of_host_memory(st, image_bytes, "for %d samples", run->count);
    if (rc) return report_failure(st);
    return run->data_spec ? 0 : read_images(&run->inputs, &run->input, run->sample,
                                            run->images);
}

// The samples normalized as the training samples were, by what the weights file records
// (or the model's given values).
static int prepare_samples(PredictRun *run, const CheckpointLoaded *loaded, Status *st) {
    Normalization n;
    int groups = run->data_spec ? dataset_stat_groups(&run->data) : run->input.channels;
    TRY(weights_normalization(&run->config, run->g->path, run->weights, loaded, groups, &n,
                              st));
    int rc = 0;
    if (run->data_spec)
        rc = predict_gather_samples(&run->data, run->count, &n, run->images, run->labels, st);
    else
        predict_normalize_images(run->images, run->count, run->sample, run->input.channels,
                                 &n);
    normalization_free(&n);
    return rc;
}

// The device opened and the weights loaded into the model.
static int open_model(const Command *cmd, PredictRun *run, Status *st) {
    // Only --precision: the model file's `train precision=` is about training.
    PrecisionConfig precision = {0};
    int rc = precision_from_args(cmd, run->args, &precision, st);
    RunSetup setup = {.purpose = RUN_PREDICT, .config = &run->config, .weights = run->weights};
    RunRequest request = {.precision = &precision};
    Graph *built = run->g;
    run->g = NULL;  // the run's once opened (freed with it, also on failure)
    if (rc) graph_free(built);
    TRY(rc);
    rc = open_run(cmd, run->args, &setup, &request, built, &run->run, st);
    run->g = &run->run.graphs[0];
    TRY(rc);
    print_weights_notes(run->weights, run->g->path, &run->run.loaded);
    return 0;
}

static int run_model(const Command *cmd, PredictRun *run, Status *st) {
    int rc = prepare_samples(run, &run->run.loaded, st);
    const LoadedInputs *in = &run->run.loaded.inputs;
    if (!rc && !args_get(cmd, run->args, "--classes") && in->class_count > 0)
        rc = use_recorded_names(in, graph_classes(run->g), run->weights, &run->names, st);
    else if (!rc && !args_get(cmd, run->args, "--classes")) {
        char shown[4 * 1024 + 8];
        print_notice("%s records no class names (its training data had none, as idx: and "
                     "csv: data do): classes are shown by index; --classes FILE or "
                     "--classes fashion-mnist names them",
                     text_escape(run->weights, strlen(run->weights), shown, sizeof shown));
    }
    return rc ? rc : predict_all(run, st);
}

static int run_predict_model(const Command *cmd, const ParsedArgs *args, Status *st) {
    ModelFile file;
    Graph g;
    PredictRun run = {.args = args, .g = &g};
    char found[4096];
    if (run_build_model(resolve_model_path(args->positionals[0], found, sizeof found),
                        args_get(cmd, args, "--no-fuse") != NULL, &file, &g, &run.config, st))
        return report_failure(st);
    int exit_code = prepare(cmd, &run, st) ? report_failure(st) : 0;
    if (!exit_code && open_model(cmd, &run, st)) exit_code = report_failure(st);
    // Bad images are reported one by one as they are read; then the model does not run.
    if (!exit_code) exit_code = load_samples(cmd, &run, st);
    if (!exit_code && run_model(cmd, &run, st)) exit_code = report_failure(st);
    free(run.images);
    free(run.labels);
    input_list_free(&run.inputs);
    dataset_free(&run.data);
    class_names_free(&run.names);
    if (run.g == &g) graph_free(&g);  // the model did not run
    run_close(&run.run);
    model_file_free(&file);
    return exit_code;
}

int run_predict(const Command *cmd, const ParsedArgs *args) {
    Status st;
    status_clear(&st);
    if (result_sink_open(cmd, args, &st)) return report_failure(&st);
    if (args->positional_count < 1 ||
        (args->positional_count < 2 && !args_get(cmd, args, "--data"))) {
        status_fail(&st, STATUS_BAD_INPUT,
                    "trainer predict takes a model file and one or more PNG images (or "
                    "folders of them, or --data SPEC), got %d argument%s",
                    args->positional_count, args->positional_count == 1 ? "" : "s");
        status_hint(&st, "usage: trainer predict %s", cmd->usage);
        return result_sink_close(report_failure(&st));
    }
    return result_sink_close(run_predict_model(cmd, args, &st));
}

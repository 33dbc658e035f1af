// `trainer predict MODEL --weights FILE IMAGE.png|FOLDER...`: the most likely classes of
// images (a folder's, and its subfolders' one level down: tools/predict_inputs.h), or of a
// dataset's samples (--data SPEC: a CSV file's rows, say). Printed as text, as JSON lines
// (--json), and written to --output FILE.csv|FILE.jsonl (tools/predict_output.h).
//
// Every image is decoded before the model runs, and a bad one (missing, not a PNG,
// damaged, wrong size) is reported by name; when any image is bad, each bad one gets its
// error on stderr, nothing is printed on stdout and the exit code is 2. So stdout holds
// either every prediction or none, and a script never reads a partial list.
//
// The model sees an image as its input shape says: CxHxW takes a C-channel (1 or 3)
// image of W x H pixels; a vector input N takes a gray image of any W x H with W*H == N
// (mlp.model's shape=784 takes 28x28 PNGs), colour converted to luminance.
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/escape.h"
#include "base/utf8.h"
#include "data/dataset_stats.h"
#include "data/image.h"
#include "tools/cli.h"
#include "tools/predict_inputs.h"
#include "tools/predict_output.h"
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
    RESIZE_OPTION_SPEC,
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

enum { FASHION_MNIST_CLASSES = 10, CLASS_FILE_MAX = 1 << 20 };

// Names of the classes in score order; names == NULL prints the class index instead.
typedef struct ClassNames {
    const char **names;
    char *text;  // the names file's contents, or a weights file's names, which names point into
} ClassNames;

static void class_names_free(ClassNames *cn) {
    free(cn->names);
    free(cn->text);
    memset(cn, 0, sizeof *cn);
}

enum { ESCAPED_NAME_MAX = CHECKPOINT_CLASS_NAME_WRITTEN_MAX };

// The names a weights file records (a png:DIR's folders, CIFAR-10's), escaped when printed.
// Used unless --classes names others, even when their count is not the model's: a model
// trained on 2 folders keeps 10 outputs if its file says units=10, and those are still the
// folders' classes, not Fashion-MNIST's. Outputs past the list are `class N`; the mismatch
// is noticed on stderr.
static int use_recorded_names(const LoadedInputs *in, int classes, const char *weights,
                              ClassNames *cn, Status *st) {
    class_names_free(cn);
    cn->names = malloc((size_t)classes * sizeof *cn->names);
    cn->text = malloc((size_t)classes * ESCAPED_NAME_MAX);
    if (!cn->names || !cn->text) return status_fail(st, STATUS_RUNTIME_ERROR, "out of host memory");
    for (int i = 0; i < classes; i++) {
        char *name = cn->text + (size_t)i * ESCAPED_NAME_MAX;
        if (i < in->class_count)
            snprintf(name, ESCAPED_NAME_MAX, "%s", in->class_names[i]);
        else
            snprintf(name, ESCAPED_NAME_MAX, "class %d", i);
        cn->names[i] = name;
    }
    if (in->class_count < classes)
        print_notice("the model has %d outputs, but %s names %d class%s: outputs %d to %d are "
                     "shown as `class N`", classes, weights, in->class_count,
                     in->class_count == 1 ? "" : "es", in->class_count, classes - 1);
    else if (in->class_count > classes)
        print_notice("the model has %d outputs, but %s names %d classes: the names past "
                     "the first %d are not used", classes, weights, in->class_count, classes);
    return 0;
}

static int read_text_file(const char *path, char **out, Status *st) {
    // Only a regular file: a FIFO would block the open, a directory read as nothing.
    FILE *f;
    long long bytes;
    if (dataset_open_regular(path, "a file of class names", &f, &bytes, st)) {
        status_hint(st, "--classes takes fashion-mnist or a file with one class name per line");
        return STATUS_BAD_INPUT;
    }
    char *text = malloc(CLASS_FILE_MAX + 1);
    size_t n = text ? fread(text, 1, CLASS_FILE_MAX + 1, f) : 0;
    int failed = !text || ferror(f);
    fclose(f);
    if (failed || n > CLASS_FILE_MAX) {
        if (!text) return status_fail(st, STATUS_RUNTIME_ERROR, "out of host memory");
        free(text);
        status_fail_at(st, STATUS_BAD_INPUT, path, 0, 0,
                       failed ? "cannot read class names" : "class names file is over 1 MB");
        status_hint(st, "--classes takes a file with one class name per line");
        return STATUS_BAD_INPUT;
    }
    text[n] = '\0';
    // A NUL would end the names there without a word ("has 1 class names"): a text file
    // holds none.
    const char *nul = memchr(text, '\0', n);
    if (nul) {
        int line, column;
        text_line_column(text, (size_t)(nul - text), &line, &column);
        free(text);
        status_fail_at(st, STATUS_BAD_INPUT, path, line, column,
                       "a NUL byte (0x00) in the class names");
        status_hint(st, "--classes takes a text file with one class name per line");
        return STATUS_BAD_INPUT;
    }
    *out = text;
    return 0;
}

// One name per line, line 1 naming class 0. Trailing blanks and a final empty line are
// ignored; an empty line inside the list would shift every later name, so it is an error.
static int parse_class_file(const char *path, int classes, ClassNames *cn, Status *st) {
    TRY(read_text_file(path, &cn->text, st));
    cn->names = calloc((size_t)classes, sizeof *cn->names);
    if (!cn->names) return status_fail(st, STATUS_RUNTIME_ERROR, "out of host memory");
    int count = 0, line = 0, empty_line = 0;
    char *p = cn->text;
    while (*p) {
        char *end = strchr(p, '\n');
        char *next = end ? end + 1 : p + strlen(p);
        if (end) *end = '\0';
        line++;
        size_t len = strlen(p);
        while (len && (p[len - 1] == '\r' || p[len - 1] == ' ' || p[len - 1] == '\t'))
            p[--len] = '\0';
        if (len == 0) {
            if (!empty_line) empty_line = line;
        } else {
            if (empty_line) {
                status_fail_at(st, STATUS_BAD_INPUT, path, empty_line, 1, "empty class name");
                status_hint(st, "write one name per line, in class order, with no blank lines");
                return STATUS_BAD_INPUT;
            }
            if (count < classes) cn->names[count] = p;
            count++;
        }
        p = next;
    }
    if (count != classes) {
        status_fail_at(st, STATUS_BAD_INPUT, path, 0, 0,
                       "has %d class names, but the model gives %d class scores", count, classes);
        status_hint(st, "write one name per line, in class order (line 1 names class 0)");
        return STATUS_BAD_INPUT;
    }
    return 0;
}

static int load_class_names(const Command *cmd, const ParsedArgs *args, int classes,
                            ClassNames *cn, Status *st) {
    const char *spec = args_get(cmd, args, "--classes");
    // Without --classes, the names are those the weights record (run_model), else indices:
    // Fashion-MNIST's names given to any 10-class model called MNIST digits "Dress".
    if (!spec) return 0;
    if (strcmp(spec, "fashion-mnist") != 0) return parse_class_file(spec, classes, cn, st);
    if (classes != FASHION_MNIST_CLASSES) {
        status_fail(st, STATUS_BAD_INPUT,
                    "--classes fashion-mnist names %d classes, but the model gives %d class scores",
                    FASHION_MNIST_CLASSES, classes);
        status_hint(st, "pass --classes FILE with one name per line, or leave it out to print "
                        "class indices");
        return STATUS_BAD_INPUT;
    }
    int known = 0;
    const char *const *names = dataset_known_class_names("fashion-mnist", &known);
    cn->names = malloc(FASHION_MNIST_CLASSES * sizeof *cn->names);
    if (!cn->names) return status_fail(st, STATUS_RUNTIME_ERROR, "out of host memory");
    for (int i = 0; i < FASHION_MNIST_CLASSES; i++) cn->names[i] = names[i];
    return 0;
}

// How images become the model's input: channels x height x width, or a gray image of
// any size whose pixel count equals a vector input's length (flat_values > 0).
typedef struct ImageInput {
    int channels, height, width;
    int flat_values;
    int resize_height, resize_width;  // --resize: every image resized to this; 0: none
} ImageInput;

static int image_input_of(const Graph *g, ImageInput *in, Status *st) {
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

static int read_image(const char *path, const ImageInput *in, float *out, Status *st) {
    // The reader, resize and rounding an images:DIR dataset goes through (data/image.c).
    if (in->resize_height)
        return image_read_sample(path, in->channels, in->resize_height, in->resize_width, 1,
                                 out, st);
    if (!in->flat_values)
        return image_read_sample(path, in->channels, in->height, in->width, 0, out, st);
    int width = 0, height = 0;
    TRY(image_read_size(path, &width, &height, st));
    if ((long)width * height != in->flat_values) {
        int side = (int)lround(sqrt((double)in->flat_values));
        if ((long)side * side == in->flat_values) {
            status_fail_at(st, STATUS_BAD_INPUT, path, 0, 0,
                           "image is %dx%d pixels (WxH), but the model takes %dx%d (input "
                           "shape=%d)", width, height, side, side, in->flat_values);
            status_hint(st, "add --resize model (as the model trained with it), or resize the "
                            "image to %dx%d, e.g. `convert IMAGE -resize %dx%d! out.png`",
                        side, side, side, side);
        } else {
            // No square holds N pixels: the model reads N numbers a row, as a csv: table
            // trains it, and no image fits (a 2x1 image is no answer).
            status_fail_at(st, STATUS_BAD_INPUT, path, 0, 0,
                           "the model takes %d numbers a sample (input shape=%d), not an "
                           "image: it was trained on a table (csv:), and predict reads PNG "
                           "images", in->flat_values, in->flat_values);
            status_hint(st, "measure it on rows of a table: trainer eval MODEL --weights FILE "
                            "--data csv:FILE");
        }
        return STATUS_BAD_INPUT;
    }
    return image_read_sample(path, 1, height, width, 0, out, st);
}

// Decodes every image; reports each bad one. Returns the exit code of the first failure.
static int read_images(const InputList *inputs, const ImageInput *in, size_t sample,
                       float *images) {
    int exit_code = 0;
    for (int i = 0; i < inputs->count; i++) {
        Status st;
        status_clear(&st);
        // The image's name is the user's, any bytes: escaped where the error names it.
        if (status_escape_place(&st, read_image(inputs->paths[i], in,
                                                images + (size_t)i * sample, &st))) {
            int code = report_failure(&st);
            if (!exit_code) exit_code = code;
        }
    }
    return exit_code;
}

// Softmax of one row of scores, in double: large logits neither overflow nor lose the
// small probabilities the top-k list shows.
static int softmax_row(const float *scores, int classes, double *probs) {
    double max = scores[0];
    for (int c = 0; c < classes; c++) {
        if (!isfinite(scores[c])) return -1;
        if (scores[c] > max) max = scores[c];
    }
    double sum = 0.0;
    for (int c = 0; c < classes; c++) sum += probs[c] = exp((double)scores[c] - max);
    for (int c = 0; c < classes; c++) probs[c] /= sum;
    return 0;
}

static int more_likely_first(const void *a, const void *b) {
    const RankedClass *x = a, *y = b;
    if (x->probability != y->probability) return x->probability < y->probability ? 1 : -1;
    return (x->index > y->index) - (x->index < y->index);
}

// Every class, most likely first; equal probabilities keep class order. One sort, not a
// selection per printed class: with --top near the class count (1,000 classes) that was
// K·C steps an image. `ranked` is room for `classes` entries.
static void rank_classes(const double *probs, int classes, RankedClass *ranked) {
    for (int c = 0; c < classes; c++) ranked[c] = (RankedClass){probs[c], c};
    qsort(ranked, (size_t)classes, sizeof *ranked, more_likely_first);
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
    size_t sample;           // floats per sample
} PredictRun;

// The images normalized as the training samples were, by what the weights file records
// (or the model's given values): value' = (value - mean[c]) / std[c].
static void normalize_images(PredictRun *run, const Normalization *n) {
    int channels = run->input.channels;
    size_t plane = run->sample / (size_t)channels;
    int count = run->count;
    // As training reads images: each value rounded to a byte (a dataset keeps bytes; the
    // luminance of colour and alpha compositing fall between them), then the byte mapped
    // as the gather op maps it. The decoded floats, normalized, differed in the last bits,
    // and by up to half a byte's step, from what the model saw in training.
    for (int i = 0; i < count; i++)
        for (int c = 0; c < channels; c++) {
            float *values = run->images + (size_t)i * run->sample + (size_t)c * plane;
            float scale, shift;
            byte_scale_shift(n->count ? n : NULL, c, &scale, &shift);
            for (size_t p = 0; p < plane; p++)
                values[p] = (float)(uint8_t)lrintf(values[p] * 255.0f) * scale + shift;
        }
}

// --data's samples as evaluation reads them: one batch of all, normalized by `n`.
static int gather_data_samples(PredictRun *run, const Normalization *n, Status *st) {
    Batcher batcher;
    TRY(batcher_init(&batcher, &run->data, run->count, 0, 0, st));
    DataTransform transform = {.normalization = n->count ? n : NULL};
    int rc = batcher_set_transform(&batcher, &transform, st);
    batcher_start_epoch(&batcher, 0);
    if (!rc && batcher_next(&batcher, run->images, run->labels) != run->count) {
        *st = batcher.failure;
        rc = st->code ? (int)st->code
                      : status_fail(st, STATUS_RUNTIME_ERROR, "could not read the --data samples");
    }
    batcher_free(&batcher);
    return rc;
}

// The name a sample goes by: its image's path, or --data's SPEC#N (N from 1, in the
// dataset's order: a CSV file's N-th row).
static const char *sample_name(const PredictRun *run, int i, char *out, size_t size) {
    if (!run->data_spec) return run->inputs.paths[i];
    snprintf(out, size, "%s#%d", run->data_spec, i + 1);
    return out;
}

// One sample's top classes: as text, as a --json line, and into --output.
static void report_prediction(PredictRun *run, const Prediction *p, int name_width) {
    const ClassNames *cn = &run->names;
    int named = cn->names ? graph_classes(run->g) : 0;
    print_prediction(p->path, p->ranked, p->top, run->digits, cn, name_width);
    prediction_output_write(&run->output, p, cn->names, named);
    if (!result_sink_json()) return;
    result_emit(prediction_json(p, cn->names, named, "prediction"));
}

static void emit_run_event(const PredictRun *run) {
    if (!result_sink_json()) return;
    cJSON *event = result_event("run");
    json_add_text(event, "command", "predict");
    json_add_text(event, "model", run->g->path);
    json_add_text(event, "weights", run->weights);
    json_add_text(event, "data", run->data_spec);
    cJSON_AddNumberToObject(event, "samples", run->count);
    cJSON_AddNumberToObject(event, "top", run->top);
    json_add_text(event, "device", run->run.devices[0].name);
    result_emit(event);
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

// The batch's scores as each sample's ranked classes, reported.
static int report_batch(PredictRun *run, int first, int n, const float *scores, double *probs,
                        RankedClass *ranked, int name_width, Status *st) {
    int classes = graph_classes(run->g);
    for (int i = 0; i < n; i++) {
        char shown[4096];
        const char *name = sample_name(run, first + i, shown, sizeof shown);
        if (softmax_row(scores + (size_t)i * classes, classes, probs)) {
            status_fail_at(st, STATUS_RUNTIME_ERROR, name, 0, 0,
                           "the model gives non-finite class scores (NaN or infinity)");
            status_hint(st, "the weights are broken, e.g. saved from a training run that "
                            "diverged; retrain with a lower --lr");
            return STATUS_RUNTIME_ERROR;
        }
        rank_classes(probs, classes, ranked);
        Prediction p = {name, run->labels ? run->labels[first + i] : -1, ranked, run->top};
        report_prediction(run, &p, name_width);
    }
    return 0;
}

// Runs the samples through the model in batches of at most the model's train batch=, and
// reports each one's top classes.
static int predict_all(PredictRun *run, Status *st) {
    int count = run->count;
    int classes = graph_classes(run->g);
    int batch = count < run->config.train.batch ? count : run->config.train.batch;
    if (batch < 1) batch = 1;
    TRY(run_allocate(&run->run, batch, st));
    int name_width = name_column_width(run, classes);
    float *scores = malloc((size_t)batch * classes * sizeof *scores);
    double *probs = malloc((size_t)classes * sizeof *probs);
    RankedClass *ranked = malloc((size_t)classes * sizeof *ranked);
    int rc = (!scores || !probs || !ranked)
                 ? status_fail(st, STATUS_RUNTIME_ERROR, "out of host memory")
                 : 0;
    const char *output = args_get(&predict_command, run->args, "--output");
    if (!rc && output) rc = prediction_output_open(&run->output, output, st);
    if (!rc) emit_run_event(run);
    for (int first = 0; !rc && first < count; first += batch) {
        int n = count - first < batch ? count - first : batch;
        rc = run_forward_batch(&run->run, run->images + (size_t)first * run->sample, n,
                               run->config.sync_check, scores, st);
        if (!rc) rc = report_batch(run, first, n, scores, probs, ranked, name_width, st);
    }
    Status closing;
    status_clear(&closing);
    if (prediction_output_close(&run->output, &closing) && !rc) {
        *st = closing;
        rc = (int)st->code;
    }
    if (!rc && result_sink_json()) {
        cJSON *event = result_event("result");
        json_add_text(event, "command", "predict");
        cJSON_AddNumberToObject(event, "samples", count);
        json_add_text(event, "output", output);
        result_emit(event);
    }
    free(scores);
    free(probs);
    free(ranked);
    return rc;
}

// --data SPEC's samples: its test split when it has one, else all of it (a CSV file).
static int load_data_samples(const Command *cmd, PredictRun *run, Status *st) {
    if (run->args->positional_count > 1) {
        status_fail(st, STATUS_BAD_INPUT, "predict classifies images or --data %s, not both",
                    run->data_spec);
        status_hint(st, "run predict once for the images and once for --data");
        return STATUS_BAD_INPUT;
    }
    DatasetOptions options;
    TRY(dataset_options_from_args(cmd, run->args, run->g, &options, st));
    const char *split = dataset_has_test_split(run->data_spec) ? "test" : "train";
    TRY(load_data_split(cmd, run->args, &run->config, split, &options, &run->data, NULL, st));
    TRY(graph_check_dataset(run->g, &run->data, "the --data samples", st));
    run->count = run->data.count;
    run->labels = malloc((size_t)run->count * sizeof *run->labels);
    if (!run->labels) return status_fail(st, STATUS_RUNTIME_ERROR, "out of host memory");
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
    if (run->data_spec) {
        TRY(load_data_samples(cmd, run, st));
    } else {
        TRY(image_input_of(run->g, &run->input, st));
        TRY(args_resize(cmd, run->args, &run->g->input->out_shape, &run->input.resize_height,
                        &run->input.resize_width, st));
        TRY(predict_collect_inputs(run->args->positionals + 1, run->args->positional_count - 1,
                                   &run->inputs, st));
        run->count = run->inputs.count;
    }
    run->sample = shape_numel(&run->g->input->out_shape);
    run->images = malloc((size_t)run->count * run->sample * sizeof *run->images);
    if (!run->images) return status_fail(st, STATUS_RUNTIME_ERROR, "out of host memory");
    return 0;
}

// The samples normalized as the training samples were, by what the weights file records
// (or the model's given values).
static int prepare_samples(PredictRun *run, const CheckpointLoaded *loaded, Status *st) {
    Normalization n;
    int groups = run->data_spec ? dataset_stat_groups(&run->data) : run->input.channels;
    TRY(weights_normalization(&run->config, run->g->path, run->weights, loaded, groups, &n,
                              st));
    int rc = 0;
    if (run->data_spec) rc = gather_data_samples(run, &n, st);
    else normalize_images(run, &n);
    normalization_free(&n);
    return rc;
}

static int run_model(const Command *cmd, PredictRun *run, Status *st) {
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
    rc = prepare_samples(run, &run->run.loaded, st);
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
    // Bad images are reported one by one as they are read; then the model does not run.
    if (!exit_code && !run.data_spec)
        exit_code = read_images(&run.inputs, &run.input, run.sample, run.images);
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

// Shared pieces of the `trainer` command line: option parsing, error printing, and the
// steps every subcommand takes (read the model, open the device, load the data).
#ifndef TRAINER_CLI_H
#define TRAINER_CLI_H

#include <stdio.h>

#include "core/device.h"
#include "core/graph.h"
#include "base/json.h"
#include "core/checkpoint_session.h"
#include "core/run.h"
#include "core/run_data.h"
#include "base/progress_line.h"
#include "base/status.h"
#include "base/text_out.h"
#include "core/checkpoint.h"
#include "data/dataset.h"
#include "data/transform.h"

// The most options one command lists: args_parse refuses a command that lists more, since
// ParsedArgs keeps a value per option.
#define CLI_MAX_OPTIONS 64

typedef struct OptionSpec {
    const char *name;        // "--epochs"
    const char *value_name;  // "N"; NULL for a flag; "FILE", "DIR", "DIR|FILE": a path
    const char *help;
} OptionSpec;


typedef struct ParsedArgs {
    const char *values[CLI_MAX_OPTIONS];  // by spec index; flags get "1"
    // As many as the command line holds (`predict MODEL dir/*/*.png`): pointers into argv,
    // in an array args_parse allocates.
    const char **positionals;
    int positional_count;
    int help;                             // --help / -h was given
    char *expanded[CLI_MAX_OPTIONS];      // the values that args_parse expanded `~` in
    const char *program;                  // argv[0], as the user ran trainer (main sets it)
} ParsedArgs;

typedef struct Command {
    const char *name;
    const char *usage;       // "MODEL [options]"
    const char *summary;
    const OptionSpec *options;  // terminated by {NULL}
    int (*run)(const struct Command *cmd, const ParsedArgs *args);
} Command;

// After a failure too, `out` is to be freed with args_free.
int args_parse(const Command *cmd, int argc, char **argv, ParsedArgs *out, Status *st);
void args_free(ParsedArgs *args);
const char *args_get(const Command *cmd, const ParsedArgs *args, const char *name);
int args_int(const Command *cmd, const ParsedArgs *args, const char *name, long min, long max,
             long *out, int *present, Status *st);
int args_float(const Command *cmd, const ParsedArgs *args, const char *name, double min,
               double max, double *out, int *present, Status *st);
// Which ends of args_float_in's range are excluded: (0, 1] is RANGE_OPEN_LOW.
typedef enum RangeEnds {
    RANGE_CLOSED = 0,
    RANGE_OPEN_LOW = 1,
    RANGE_OPEN_HIGH = 2,
    RANGE_OPEN = 3,
} RangeEnds;
int args_float_in(const Command *cmd, const ParsedArgs *args, const char *name, double min,
                  double max, RangeEnds ends, double *out, int *present, Status *st);
void command_print_help(const Command *cmd, FILE *out);

// Whether this process opened a CUDA device (open_run tells
// note_cuda_device_opened); report_failure, print_notice and the rest: tools/report.c.
void note_cuda_device_opened(void);
int cuda_device_opened(void);
// --quiet (result_sink_open): notices are not shown from now on, errors still are.
void turn_notices_off(void);
// Prints the status in the project's error format to stderr; returns its exit code; the
// error catalog's CUDA explanation follows for a CUDA error, and for one trainer caught
// itself only where a CUDA device was opened.
int report_failure(const Status *st);
// fflush(stdout) that remembers why the first failed flush failed, for finish_stdout.
void flush_stdout(void);
// At exit: when not everything written to stdout reached it (a full disk, /dev/full, a
// closed descriptor), prints the error and returns 1, or exit_code when the command had
// already failed; else returns exit_code.
int finish_stdout(int exit_code);
// A report composed below tools/ (base/text_out.h) written to stdout as it comes; lab's
// adds a flush of stdout and stderr before each long step.
void write_stdout_text(void *user, const char *text, size_t length);
extern const TextOut stdout_text;
// json_print of `item` to stdout (`lines` as there), then cJSON_Delete: a command's --json
// answer, made by diagnostics/ and handed over.
void print_and_delete_json(struct cJSON *item, int lines);
// The path to execute this trainer again by: its own (so the process is still named
// `trainer`), or "/proc/self/exe" when that cannot be known. `path` is the room for it.
const char *trainer_executable(char *path, size_t size);
// "trainer: notice: ..." on stderr; said by rank 0 alone under mpirun (every rank reads the
// same options and data, so the others would only repeat it).
void print_notice(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
// A notice only this rank of an mpirun launch can give (its own out-of-memory split, say),
// labelled as the rank's errors are: "rank R of N (HOST): LINE".
void print_rank_notice(int rank, int ranks, const char *host, const char *line);
// print_notice of one line, as a library's on_notice callback takes it (user unused).
void print_notice_line(void *user, const char *line);
// The RunNotice that prints each line with print_notice_line: what core/ is handed for the
// notices of a run, its data and its checkpoints.
extern const RunNotice printed_notice;

// The folder of the bundled .model files: share/trainer/models beside an installed binary,
// else the source tree's models/ of this build; NULL when neither is there.
const char *bundled_models_folder(char *out, size_t size);
// The model file `typed` names: itself when it exists or holds a '/', else the bundled
// model of that name ("mlp" or "mlp.model") in bundled_models_folder (when there is one).
const char *resolve_model_path(const char *typed, char *out, size_t size);
// Whether cmd lists the option `name`.
int find_option_spec(const Command *cmd, const char *name);
// Read and build the model named by the first positional argument (resolve_model_path).
int load_model(const Command *cmd, const ParsedArgs *args, ModelFile *file, Graph *g,
               RunConfig *config, Status *st);
// Opens setup->purpose's run of `first` (NULL: a device alone) through core's run_open:
// the device options read from the arguments (check: --device, default cpu, and
// --memory-limit alone), --batch as typed, `request` (what the command read of its own
// options, the model's precision included) resolved, notices printed; run->batch is the
// batch decided. `first` is the run's, also on failure;
// run_close frees what opened.
int open_run(const Command *cmd, const ParsedArgs *args, RunSetup *setup, RunRequest *request,
             Graph *first, Run *run, Status *st);
// --precision, and --no-tf32 (the same as --precision fp32), over *precision (the model
// file's `train precision=`, or the default): run_options_read_precision.
int precision_from_args(const Command *cmd, const ParsedArgs *args, PrecisionConfig *precision,
                        Status *st);
// "precision tf32 on cuda:0 (the default): GEMM and convolution inputs rounded ...".
void print_precision(const PrecisionConfig *asked, Precision effective, const char *device);
// data_spec_from_args's split "train" or "test", truncated by `limit_option`; read
// as `options` say (NULL: the defaults), *skipped (may be NULL) counting what was left out.
int load_dataset_from_args(const Command *cmd, const ParsedArgs *args, const RunConfig *config,
                           const char *split, const char *limit_option,
                           const DatasetOptions *options, Dataset *ds, int *skipped, Status *st);
// The dataset a run reads: --data, else the model file's `data spec=`, else fashion-mnist.
const char *data_spec_from_args(const Command *cmd, const ParsedArgs *args,
                                const RunConfig *config);
// A failure (rc) reading the dataset of the model file's `data spec=` (no --data given)
// points at that statement: its place when the error has none ("unknown dataset"), else a
// hint naming it. Returns rc.
int place_in_data_statement(const Command *cmd, const ParsedArgs *args,
                            const RunConfig *config, int rc, Status *st);
// dataset_load_with of data_spec_from_args's split, failures placed as above.
int load_data_split(const Command *cmd, const ParsedArgs *args, const RunConfig *config,
                    const char *split, const DatasetOptions *options, Dataset *ds,
                    int *skipped, Status *st);
// The datasets a run reads (core/run_data.h), from --data, --train-limit, --val-split,
// --test-limit and the dataset options; an image folder is read as the checkpoint `resume`
// names says (NULL, or a NULL resume->given: no resume).
int load_run_data(const Command *cmd, const ParsedArgs *args, const Graph *g,
                  const RunConfig *config, ResumeSource *resume, RunData *data, Status *st);
// "normalize: mean 0.2860 std 0.3530 (...how...)" and "augment: ..." when they apply.
void print_data_transform(const RunConfig *config, const Normalization *n, const char *how);
// The same for a run's data, saying where its normalization came from.
void print_run_normalization(const RunConfig *config, const RunData *data);
// An option's value read as the model file's statement `KIND SPEC`, so both take the same
// words and give the same errors (which then name the option).
typedef int (*StatementReader)(const char *path, const ModelStatement *s, void *out,
                               Status *st);
int read_statement_option(const char *option, const char *kind, const char *spec,
                          StatementReader read, void *out, Status *st);
// --normalize SPEC and --augment SPEC read as the statements `normalize SPEC`, `augment SPEC`.
int apply_data_transform_overrides(const Command *cmd, const ParsedArgs *args,
                                   RunConfig *config, Status *st);
// --augment checked against the training data, its error naming the option (the model
// file's augment statement is checked by check_run_data, at its line).
int check_augment_option(const Command *cmd, const ParsedArgs *args, const RunConfig *config,
                         const RunData *data, Status *st);
#define DATA_TRANSFORM_OPTION_SPECS                                                              {"--normalize", "auto|none|'mean=M std=S'", "per-channel normalization: auto computes "                                                  "mean and std on the training split "                                                        "(overrides the model's normalize)"},           {"--augment", "'crop=P flip=true'|none", "training-only augmentation: a random crop of "                                               "the image padded by P pixels, a random "                                                    "left-right flip (overrides augment)"}
// "classes: a=0 b=1 ..." for datasets with named classes, and the skipped count.
void print_run_data_notes(const RunData *data, int at_end);
// split_limit_apply (core/run_data.h), its notice printed.
int apply_split_limit(Dataset *ds, const SplitLimit *limit, int *cut, Status *st);
// --limit-order stratified|first (default stratified) into *order.
int args_limit_order(const Command *cmd, const ParsedArgs *args, DatasetLimitOrder *order,
                     Status *st);
#define LIMIT_ORDER_OPTION_SPEC                                                             \
    {"--limit-order", "stratified|first", "what a --train-limit/--test-limit N keeps: a "    \
                                          "seeded sample with each class's share (default), " \
                                          "or the first N samples as stored"}
#define RESIZE_OPTION_SPEC                                                                  \
    {"--resize", "model|HxW", "resize images of another size to the model's input (model, " \
                              "or HxW, which must match it; a flat input N takes any H*W = " \
                              "N) with a bilinear filter, antialiased when shrinking"}
// eval's and predict's: by default the size the weights record (core/recorded_resize.h).
#define RESIZE_AS_RECORDED_OPTION_SPEC                                                       \
    {"--resize", "model|HxW|none", "resize images of another size to the model's input "       \
                                   "(model, or HxW, which must match it) with a bilinear "     \
                                   "filter; default: as the weights record their run did"}
// --on-bad-sample fail|skip: *skip set for skip; another word is refused.
int args_on_bad_sample(const Command *cmd, const ParsedArgs *args, int *skip, Status *st);
// The reading options of a Graph's input: its shape and --on-bad-sample.
int dataset_options_from_args(const Command *cmd, const ParsedArgs *args, const Graph *g,
                              DatasetOptions *options, Status *st);
// dataset_options_from_args for eval and predict on the data `spec`: an image folder is
// resized as the weights record (core/recorded_resize.h) when --resize is not given.
int dataset_options_for_weights(const Command *cmd, const ParsedArgs *args, const Graph *g,
                                const char *spec, const char *weights,
                                const LoadedInputs *recorded, DatasetOptions *options,
                                Status *st);
#define DATA_OPTION_SPECS                                                                  \
    {"--val-split", "F", "hold out a seeded random fraction F (0 < F < 1) of the training "  \
                         "data as a validation split (train evaluates each epoch on it)"},   \
    {"--on-bad-sample", "fail|skip", "an unreadable image stops the run (fail, the default) " \
                                     "or is left out and counted (skip)"},                   \
    RESIZE_OPTION_SPEC, LIMIT_ORDER_OPTION_SPEC,                                             \
    {"--decode", "auto|upfront|stream", "png:DIR: decode every image before training "       \
                                        "(upfront), or each as its batch is made on the "    \
                                        "loader thread (stream); auto streams when the "     \
                                        "images would take over half the memory"}

// What loading weights from `path` (run_open, eval and predict) found: a model text changed since (a notice), tensors
// holding NaN or infinity (a warning naming them).
void print_weights_notes(const char *path, const char *model_path,
                         const CheckpointLoaded *loaded);

#define PRECISION_OPTION_SPEC                                                              \
    {"--precision", "fp32|tf32|bf16|fp16", "what GEMMs and convolutions compute in on a GPU " \
                                           "(default: tf32 where the GPU has it, else fp32); " \
                                           "bf16/fp16 also store some activations in 16 bits " \
                                           "(docs/cli.md)"}

#define NO_FUSE_OPTION_SPEC                                                                \
    {"--no-fuse", NULL, "run each act= activation as its own pass after its dense/conv2d "    \
                        "layer (as train fuse=false): for comparing and debugging"}

// Options every command that runs a model shares.
#define DEVICE_OPTION_SPECS                                                                \
    {"--device", "DEV", "cpu, auto (default: a GPU if usable, else cpu), cuda, cuda:N"},   \
    {"--memory-limit", "SIZE", "cap device memory: bytes, 512M, 2G, or a fraction like 0.5"}, \
    {"--memory-mode", "MODE", "grow (default: allocate on demand) or reserve (take the limit up front)"}, \
    {"--threads", "N", "CPU threads for BLAS (default: all cores)"},                           \
    PRECISION_OPTION_SPEC,                                                                 \
    {"--no-tf32", NULL, "the same as --precision fp32: full fp32 on GPUs with TF32"},         \
    {"--sync-check", NULL, "wait for the device after every layer, so an asynchronous CUDA "  \
                           "error names the layer that caused it (slow; for debugging)"},     \
    NO_FUSE_OPTION_SPEC

// --without LIST (train, bench train): the CUDA levers to turn off (base/lever.h). open_run
// reads it (run_options_read_levers); core/run_options.c refuses it off CUDA.
// The lever names for help texts, as base/lever.c's lever_names lists them.
#define LEVER_NAMES_TEXT \
    "bias-gradient,batchnorm-split,maxpool-scatter,multi-tensor,gemm-epilogue,conv-fused"
#define WITHOUT_OPTION_SPEC                                                                 \
    {"--without", "LIST", "turn CUDA levers off, to measure each alone: some of "          \
                          LEVER_NAMES_TEXT " (docs/cli.md)"}

// --layout nchw|nhwc (train, bench train): NHWC images between convolutions on a GPU
// (graph_set_layouts), as PyTorch's channels_last; NCHW, the default, without the option.
// open_run reads it; core/run_options.c refuses nhwc off CUDA.
#define LAYOUT_OPTION_SPEC                                                                  \
    {"--layout", "nchw|nhwc", "how images between convolutions lie on a GPU: nchw (the "   \
                              "default) or nhwc, as cuDNN's tensor-core convolutions read " \
                              "them (docs/cli.md)"}

// --cuda-graph off|auto|on (train, bench train): read by cuda_graph_mode_read
// (core/step_graph.h).
#define CUDA_GRAPH_OPTION_SPEC                                                              \
    {"--cuda-graph", "off|auto|on", "replay each training step from a CUDA Graph (default "  \
                                    "off; auto: where the run allows it, on: refused "      \
                                    "without a GPU; docs/cli.md)"}

// The man page, in roff, from the commands' help texts (tools/man_page.c).
void print_man_page(FILE *out, const Command *const *commands, int count);
// A completion script for `shell` ("bash" or "zsh"); another name is STATUS_BAD_INPUT.
int print_completion(FILE *out, const char *shell, const Command *const *commands, int count,
                     Status *st);

int run_train(const Command *cmd, const ParsedArgs *args);
int run_eval(const Command *cmd, const ParsedArgs *args);
int run_check(const Command *cmd, const ParsedArgs *args);
int run_predict(const Command *cmd, const ParsedArgs *args);
extern const Command predict_command;
extern const Command train_command, eval_command, check_command;
int run_plot(const Command *cmd, const ParsedArgs *args);
extern const Command plot_command;
int run_export(const Command *cmd, const ParsedArgs *args);
extern const Command export_command;
int run_devices(const Command *cmd, const ParsedArgs *args);
extern const Command devices_command;
int run_data(const Command *cmd, const ParsedArgs *args);
extern const Command data_command;
int run_explain(const Command *cmd, const ParsedArgs *args);
int run_doctor(const Command *cmd, const ParsedArgs *args);
int run_lab(const Command *cmd, const ParsedArgs *args);
extern const Command explain_command, doctor_command, lab_command;
int run_bench(const Command *cmd, const ParsedArgs *args);
extern const Command bench_command;

// Progress bar on a terminal (tools/progress.c).
typedef struct ProgressBar {
    FILE *out;
    int enabled;            // out is a terminal
    double last_draw;
    int drawn;              // a bar is on screen and must be cleared before other output
} ProgressBar;

void progress_init(ProgressBar *bar, FILE *out);
// From now on progress_init makes bars that draw nothing (--quiet).
void progress_hide(void);
void progress_update(ProgressBar *bar, int epoch, int epochs, int step, int steps, double loss,
                     double samples_per_second, double epoch_seconds);
// "evaluating test [#####...] 2048/10000": an evaluation's samples done.
void progress_update_eval(ProgressBar *bar, const char *split, int done, int total);
void progress_clear(ProgressBar *bar);

#endif

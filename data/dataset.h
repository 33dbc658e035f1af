// Datasets held in host memory as bytes, and the batches cut from them.
//
// Images stay u8 until a batch is made: 60 000 Fashion-MNIST images are 47 MB as
// bytes but 188 MB as floats, and the conversion is cheap next to a training step.
#ifndef TRAINER_DATASET_H
#define TRAINER_DATASET_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "base/rng.h"
#include "base/status.h"

// A place in a dataset's source file: 1-based line and column.
typedef struct SamplePlace {
    int line, column;
} SamplePlace;

typedef struct Dataset {
    char source[512];   // where it was read from, for messages
    int count;          // number of samples
    int channels;       // per-sample image shape; IDX images are 1 x rows x cols
    int height;
    int width;
    uint8_t *images;    // count * channels * height * width bytes, sample-major
    // Numeric features (csv:FILE), used as they are instead of images / 255; NULL for
    // images. f32 datasets are always staged (data/batch_source.c): the device gather op
    // takes bytes.
    float *features;
    // png:DIR decoded as training goes (--decode stream): sample i's file is paths[i] and
    // images is NULL; the loader decodes each sample as its batch is gathered
    // (dataset_sample_bytes). path_count: entries held, freed by dataset_free.
    char **paths;
    int path_count;
    uint8_t *labels;    // count bytes
    // csv:FILE: where each sample's label cell is in `source`, so a label the model cannot
    // take is reported at FILE:ROW:COLUMN; NULL for other kinds.
    SamplePlace *label_places;
    int label_max;      // largest label present, to validate against the model's classes
    int class_count;    // png:DIR: the class folders found (names below); 0 otherwise
    char (*class_names)[64];
    // images:DIR read with --resize: an image of another size than height x width was
    // resized to it (image_read_sample), at load and when a streamed sample is decoded.
    int resize;
} Dataset;

// What a spec's reader needs to know of the run.
typedef struct DatasetOptions {
    // The model's sample shape: PNG images are converted to `channels` (1 or 3) and must be
    // height x width; 0 takes the size most images have, in 1 channel (gray).
    int channels, height, width;
    int skip_bad_samples;   // --on-bad-sample skip: leave unreadable PNGs out, counted
    // --resize: images of another size than height x width are resized to it (both must
    // then be given) instead of refused.
    int resize;
    // png:DIR: keep the file list and decode each image when its batch is made, instead
    // of all of them at load (which then only reads each file's header). DECODE_AUTO
    // streams when the decoded images would take more than half the machine's memory.
    enum { DECODE_UPFRONT, DECODE_STREAM, DECODE_AUTO } decode;
    // Optional: a one-line message the user should see (an idx: folder holding FILE and a
    // FILE.gz of another size: which of the two is read). tools/ prints it; data/ never
    // does. NULL drops it.
    void (*on_notice)(void *user, const char *line);
    void *notice_user;
} DatasetOptions;

// ---- IDX files (MNIST / Fashion-MNIST layout), raw or gzip-compressed ----
// Each checks the magic (0x00000803 images, 0x00000801 labels), the dimensions
// (nonzero, not absurd) and that the payload is as long as the header says. A failure
// is STATUS_BAD_INPUT naming the file, what was expected and what was found, with a hint.
int idx_read_images(const char *path, uint8_t **pixels, int *count, int *rows, int *cols,
                    Status *st);
int idx_read_labels(const char *path, uint8_t **labels, int *count, Status *st);

// ---- named datasets ----
// spec: "fashion-mnist" (Debian's dataset-fashion-mnist, /usr/share/datasets/fashion-mnist)
//       "idx:DIR"       any folder holding the four files train-images-idx3-ubyte,
//                       train-labels-idx1-ubyte, t10k-images-idx3-ubyte,
//                       t10k-labels-idx1-ubyte (each optionally with .gz; a folder
//                       holding both reads the plain file, and tells options->on_notice
//                       when the two differ in size)
// split: "train" or "test". An unknown spec, missing folder or missing file is
// STATUS_BAD_INPUT with a hint (e.g. "apt-get install dataset-fashion-mnist").
int dataset_load(const char *spec, const char *split, Dataset *out, Status *st);
// The same, with the run's options; *skipped (may be NULL) counts the samples left out
// under skip_bad_samples. The splits: "train", "test".
int dataset_load_with(const char *spec, const char *split, const DatasetOptions *options,
                      Dataset *out, int *skipped, Status *st);
// images:DIR (or png:DIR, the same reader): the length of the kind's prefix, 7 or 4; 0 for
// any other spec.
size_t dataset_image_folder(const char *spec);
// The class names of a dataset known by its spec, in label order: Fashion-MNIST's ten
// ("T-shirt/top" ... "Ankle boot") for "fashion-mnist", CIFAR-10's ("airplane" ... "truck")
// for "cifar10:DIR"; NULL (and *count 0) for any other.
const char *const *dataset_known_class_names(const char *spec, int *count);
// Class c's name as a message shows it: escaped, since a png:DIR's folder names are bytes
// from the disk; "" when the dataset names no class c. `out` holds DATASET_SHOWN_NAME bytes.
enum { DATASET_SHOWN_NAME = 4 * 64 + 1 };
const char *dataset_class_name_shown(const Dataset *ds, int c, char *out);
// Whether the spec has a test split of its own (a png:DIR of class folders has none: it is
// all training data, and --val-split holds some of it out). A png:DIR that is no folder
// says 1, so that its loader reports the path rather than a missing split.
int dataset_has_test_split(const char *spec);
// Where a run's data comes from, as its header names it: png:DIR's DIR (the training split
// is read from DIR/train when there is a test/ beside it, but the user named DIR), else the
// training split's source. Returns `out` or train->source.
const char *dataset_spec_source(const char *spec, const Dataset *train, char *out,
                                size_t size);
// The folder `fashion-mnist` reads: $TRAINER_FASHION_MNIST_DIR, else Debian's.
const char *dataset_fashion_mnist_dir(void);
// Moves a random `fraction` (0 < fraction < 1, rounded to whole samples) of `train`,
// chosen from `seed`, into `val`; both keep their samples' order. Stratified: each class
// gives its share of the held-out count (within one sample of fraction * its samples), so
// a small or sorted split keeps its class proportions in both. Both keep at least one.
int dataset_split_off(Dataset *train, double fraction, uint64_t seed, Dataset *val,
                      Status *st);

// ---- readers behind the specs (data/dataset_*.c) ----
int dataset_load_idx(const char *spec, const char *split, const DatasetOptions *options,
                     Dataset *out, Status *st);
int dataset_load_cifar10(const char *dir, const char *split, Dataset *out, Status *st);
// images:DIR or png:DIR (the whole spec, for messages that name it as spelled).
int dataset_load_png(const char *spec, const char *split, const DatasetOptions *options,
                     Dataset *out, int *skipped, Status *st);
int dataset_load_csv(const char *spec, Dataset *out, Status *st);
// A path's leading `~/` (or a bare `~`) as $HOME, as a shell would have done had the path
// not followed `png:` (the shell expands `~` only at a word's start), and as Python's
// os.path.expanduser does for torchvision's dataset roots. `~user` and a path with $HOME
// unset or too long for `size` are copied unchanged. Returns `out`, or `path` itself when
// even that copy would not fit (never a path cut short).
const char *dataset_expand_home(const char *path, char *out, size_t size);
// The paths a spec names, one per call, so that every reader of a spec splits it the same
// way: the one after `kind:`, or each comma-separated part of idx:'s list (however many);
// csv:FILE,label=COLUMN's COLUMN is not a path, and elsewhere a comma may be in a name.
// Start with *part NULL; each call sets *part and *length (not NUL-terminated) to the next
// path and returns 1, or returns 0 after the last. "fashion-mnist" names none.
int dataset_spec_next_path(const char *spec, const char **part, size_t *length);
// A spec with each of its paths (dataset_spec_next_path) expanded so, however long and
// however many. Allocated (the caller frees it); NULL only when out of memory.
char *dataset_expand_spec(const char *spec);
// Helpers the readers share (data/dataset_helpers.c).
int dataset_largest_label(const uint8_t *labels, int count);
void dataset_set_source(Dataset *ds, const char *where);
int dataset_check_folder(const char *dir, const char *spec_kind, const char *hint, Status *st);
// A path may hold commas, so "FILE,labl=a" or "DIR,channels=3" reads as a path that does
// not exist. 1 when `path` does not exist, the part before its last comma is a regular file
// (a folder with `directory`) and what follows is NAME=VALUE: that part into `before`, the
// option (escaped) into `option`, for an "unknown option" error instead of a missing path.
int dataset_option_after_path(const char *path, int directory, char *before, size_t size,
                              char *option, size_t option_size);
// Opens PATH for reading if it is a regular file (never blocking on a FIFO); *bytes is its
// size. Anything else is STATUS_BAD_INPUT naming the file and what it is.
int dataset_open_regular(const char *path, const char *what, FILE **out, long long *bytes,
                         Status *st);
// How a limit (--train-limit, --test-limit) chooses its samples: a seeded sample in which
// each class keeps its share (the default), or the first N as stored (--limit-order first).
typedef enum { LIMIT_STRATIFIED, LIMIT_FIRST } DatasetLimitOrder;
// Keeps `count` samples of ds (nothing when count <= 0 or >= ds->count): LIMIT_FIRST the
// first ones (dataset_truncate); LIMIT_STRATIFIED a random sample drawn from `seed` in which
// each class has count * its samples / all of them, rounded so the shares sum to `count`
// (each within one of its exact share), kept in dataset order. The one limit every dataset
// kind goes through. *cut: 1 when samples were dropped. Fails only out of memory.
int dataset_limit(Dataset *ds, int count, DatasetLimitOrder order, uint64_t seed, int *cut,
                  Status *st);
// Keep only the first `count` samples (no-op when count <= 0 or >= ds->count). Returns 1
// when it cut samples, 0 when the limit cut nothing (which is then the same data as none).
int dataset_truncate(Dataset *ds, int count);
// Where a streamed dataset's samples are decoded, allocated once per batch (or pass) rather
// than once per image; empty (nothing allocated) for a dataset held in memory.
typedef struct SampleScratch {
    float *values;      // libpng's decode, sample_size floats
    uint8_t *bytes;     // the sample as bytes, sample_size
} SampleScratch;
int sample_scratch_open(const Dataset *ds, SampleScratch *s, Status *st);
void sample_scratch_close(SampleScratch *s);
// The `sample_size` bytes of sample `index`: in memory, or for a streamed dataset decoded
// from its file into s->bytes (which *bytes then points to). A file that no longer decodes
// is STATUS_BAD_INPUT naming it.
int dataset_sample_bytes(const Dataset *ds, int index, SampleScratch *s, const uint8_t **bytes,
                         Status *st);
// Decodes PNG `path` as `ds`'s samples are (its channels and size) into bytes: what
// dataset_load_png keeps, and what a streamed dataset's loader makes. `values` is scratch
// of dataset_sample_size(ds) floats.
int dataset_png_decode(const Dataset *ds, const char *path, float *values, uint8_t *out,
                       Status *st);
void dataset_free(Dataset *ds);
// Values (bytes) in one sample: channels * height * width.
// The bytes a Dataset's samples take on the host: 1 per value, 4 for features.
static inline size_t dataset_value_bytes(const Dataset *ds) { return ds->features ? 4 : 1; }
static inline size_t dataset_sample_size(const Dataset *ds) {
    return (size_t)ds->channels * ds->height * ds->width;
}

// ---- what a sample becomes on its way into a batch (data/transform.h) ----
typedef struct Normalization Normalization;
typedef struct DataTransform {
    const Normalization *normalization;  // NULL: none
    int crop_padding;                    // augmentation: 0 none; see SampleTransform
    int flip;
    uint64_t augment_key;                // data_transform_epoch_key of the epoch
} DataTransform;

// ---- batching ----
// Visits every sample once per epoch in an order shuffled from (seed, epoch), so a
// run is reproducible and resuming at epoch e gives the same order.
typedef struct Batcher {
    const Dataset *dataset;
    int batch_size;
    int *order;         // permutation of [0, count)
    int position;       // next index into order
    int shuffle;        // 0: dataset order (evaluation)
    uint64_t seed;
    DataTransform transform;  // zeroed: bytes / 255, features as they are
    Status failure;           // why batcher_next returned -1
} Batcher;

int batcher_init(Batcher *b, const Dataset *ds, int batch_size, int shuffle, uint64_t seed,
                 Status *st);
// Normalizes and augments what batcher_next writes from now on, after checking that `t`
// fits the dataset (data_transform_check); the augmentation key follows each epoch.
int batcher_set_transform(Batcher *b, const DataTransform *t, Status *st);
void batcher_start_epoch(Batcher *b, int epoch);
// Fills up to batch_size samples: images as f32, bytes / 255 unless a transform says more
// (sample-major, channels*height*width floats each), and labels as int32. Returns the
// number of samples written; 0 at the end of the epoch; -1 when a streamed sample's file
// no longer decodes (b->failure says which). The last batch of an epoch may be short.
int batcher_next(Batcher *b, float *images, int32_t *labels);
// The same batch as batcher_next, as sample indices only (for gathering on a device).
int batcher_next_indices(Batcher *b, int32_t *indices);
int batcher_steps_per_epoch(const Batcher *b);
// Samples `indices[0..count)` as batcher_next writes them (f32 transformed by t, which
// data_transform_check passed for ds, or NULL: bytes / 255; int32 labels). Fails only for
// a streamed dataset whose file no longer decodes.
int dataset_gather(const Dataset *ds, const DataTransform *t, const int32_t *indices,
                   int count, float *images, int32_t *labels, Status *st);
void batcher_free(Batcher *b);

#endif

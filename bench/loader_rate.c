// bench/loader_rate: how fast the loader turns a dataset into batches, on the host.
//
//   loader_rate SPEC [-s SPLIT] [-c CHANNELS] [-S] [-r REPEATS] [-m MIN_SECONDS] [BATCH...]
//
// Two rates, each the median of REPEATS (default 3) runs:
//   decode    dataset_load_with(SPEC, SPLIT): from the files to the whole split in memory
//             as bytes, through the trainer's own reader (file reads, gzip or libpng,
//             class folders). It runs once per training run, before the first step.
//             CHANNELS (png:DIR only; default 1) is what the model's input asks the reader
//             for: 3 decodes colour PNGs as RGB, as `trainer train` does for a 3xHxW
//             model. The files are in the page cache after the first run, so this is
//             decoding, not the disk.
//   assemble  batcher_next over whole epochs of the decoded split, shuffled as training
//             shuffles it: the u8 -> f32 batches the staged path's prefetch thread makes
//             for every step (on a resident dataset the backend's gather_samples runs the
//             same loop). Each run repeats epochs until MIN_SECONDS (default 0.25) have
//             passed, so one short epoch is not all timer noise.
// -S reads a png:DIR as `--decode stream` does: decode is then the header check of every
// file, and assemble decodes each sample's PNG as its batch is made, which is the whole
// work of the loader thread of a streamed run.
// One thread throughout, as the reader and the prefetch thread each use one.
//
// Prints one line per rate, `key=value` fields, for bench/loader_cpu.sh to read (the first
// is one line):
//   decode spec=fashion-mnist split=train samples=60000 shape=1x28x28 seconds=0.240
//          samples/s=250000
//   assemble batch=128 samples/s=812345
#define _POSIX_C_SOURCE 200809L

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "data/dataset.h"

static double now_seconds(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int compare_doubles(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

// The median, not the best: a shared two-core machine has slow outliers both ways.
static double median(double *values, int count) {
    qsort(values, (size_t)count, sizeof *values, compare_doubles);
    return count % 2 ? values[count / 2] : 0.5 * (values[count / 2 - 1] + values[count / 2]);
}

static int usage(void) {
    fprintf(stderr, "usage: loader_rate SPEC [-s SPLIT] [-c CHANNELS] [-S] [-r REPEATS] "
                    "[-m MIN_SECONDS] [BATCH...]\n");
    return 2;
}

static int fail(const Status *st) {
    char text[2048];
    status_format(st, text, sizeof text);
    fputs(text, stderr);
    return status_exit_code(st);
}

// Samples/s of batcher_next over whole epochs of `ds`, at least min_seconds of them.
static int assemble_rate(const Dataset *ds, int batch, double min_seconds, int repeat,
                         double *rate, Status *st) {
    size_t values = (size_t)batch * dataset_sample_size(ds);
    float *images = malloc(values * sizeof *images);
    int32_t *labels = malloc((size_t)batch * sizeof *labels);
    Batcher b;
    int rc = images && labels ? batcher_init(&b, ds, batch, 1, 1, st)
                              : status_fail(st, STATUS_OUT_OF_MEMORY, "no memory for a batch");
    if (rc) {
        free(images);
        free(labels);
        return rc;
    }
    long long samples = 0;
    double elapsed = 0;
    // Each epoch's order is shuffled (outside the timing: once per epoch, not per step),
    // so the gather reads the dataset in the scattered order training does.
    for (int epoch = repeat * 1000; elapsed < min_seconds; epoch++) {
        batcher_start_epoch(&b, epoch);
        double start = now_seconds();
        int n;
        while ((n = batcher_next(&b, images, labels)) > 0) samples += n;
        elapsed += now_seconds() - start;
        if (n < 0) {
            *st = b.failure;
            rc = st->code;
            break;
        }
    }
    *rate = (double)samples / elapsed;
    batcher_free(&b);
    free(images);
    free(labels);
    return rc;
}

int main(int argc, char **argv) {
    const char *split = "train";
    int repeats = 3, channels = 0, stream = 0;
    double min_seconds = 0.25;
    int opt;
    while ((opt = getopt(argc, argv, "s:c:Sr:m:")) != -1) {
        switch (opt) {
        case 's': split = optarg; break;
        case 'S': stream = 1; break;
        case 'c': channels = atoi(optarg); break;
        case 'r': repeats = atoi(optarg); break;
        case 'm': min_seconds = atof(optarg); break;
        default: return usage();
        }
    }
    // channels 0 is the reader's default (1); a PNG is read as gray or as RGB.
    if (optind >= argc || (channels != 0 && channels != 1 && channels != 3) || repeats < 1 ||
        repeats > 100 || !(min_seconds > 0))
        return usage();
    const char *spec = argv[optind++];

    Status st = {0};
    Dataset ds = {0};
    double seconds[100];
    // The model's channels; height and width 0 take the images' own size, which for
    // these folders is the model's.
    DatasetOptions options = {.channels = channels,
                              .decode = stream ? DECODE_STREAM : DECODE_UPFRONT};
    for (int r = 0; r < repeats; r++) {
        if (r) dataset_free(&ds);
        double start = now_seconds();
        if (dataset_load_with(spec, split, &options, &ds, NULL, &st)) return fail(&st);
        seconds[r] = now_seconds() - start;
    }
    double decode = median(seconds, repeats);
    printf("decode spec=%s split=%s samples=%d shape=%dx%dx%d seconds=%.3f samples/s=%.0f\n",
           spec, split, ds.count, ds.channels, ds.height, ds.width, decode,
           (double)ds.count / decode);
    fflush(stdout);

    for (int i = optind; i < argc; i++) {
        int batch = atoi(argv[i]);
        if (batch < 1) return usage();
        double rates[100];
        for (int r = 0; r < repeats; r++)
            if (assemble_rate(&ds, batch, min_seconds, r, &rates[r], &st)) return fail(&st);
        printf("assemble batch=%d samples/s=%.0f\n", batch, median(rates, repeats));
        fflush(stdout);
    }
    dataset_free(&ds);
    return 0;
}

// cifar10:DIR, the CIFAR-10 binary version: data_batch_1.bin ... data_batch_5.bin for
// training and test_batch.bin for testing, each a run of 3073-byte records (one label
// byte, then the 32x32 image as 1024 red, 1024 green and 1024 blue bytes: already the
// channel-major layout a Dataset keeps, so records are copied as they are).
#define _POSIX_C_SOURCE 200809L

#include "data/dataset.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define CIFAR_SIDE 32
#define CIFAR_IMAGE_BYTES (3 * CIFAR_SIDE * CIFAR_SIDE)
#define CIFAR_RECORD_BYTES (1 + CIFAR_IMAGE_BYTES)
#define CIFAR_CLASSES 10
#define CIFAR_TRAIN_FILES 5
// Records in one batch file of the format (each of data_batch_1..5.bin and test_batch.bin
// holds exactly this many). A larger file is refused by its size, before it is read: one
// of 3 million records was read for 48 s into 9 GB and ended in "out of host memory".
#define CIFAR_BATCH_RECORDS 10000
#define CIFAR_FOLDER_HINT                                                                 \
    "a cifar10:DIR folder must hold data_batch_1.bin ... data_batch_5.bin and "          \
    "test_batch.bin (the 'CIFAR-10 binary version', cifar-10-binary.tar.gz)"

static int exists(const char *path) {
    struct stat sb;
    return stat(path, &sb) == 0;
}

// The tarball unpacks into cifar-10-batches-bin/; accept the folder above it too.
static void batches_folder(const char *dir, char *out, size_t size) {
    snprintf(out, size, "%s/cifar-10-batches-bin", dir);
    if (!exists(out)) snprintf(out, size, "%s", dir);
}

static int fail_cut_record(const char *path, long long bytes, Status *st) {
    long long whole = bytes / CIFAR_RECORD_BYTES;
    status_fail_at(st, STATUS_BAD_INPUT, path, 0, 0,
                   "truncated: %lld bytes is %lld whole %d-byte records and %lld bytes of "
                   "record %lld", bytes, whole, CIFAR_RECORD_BYTES,
                   bytes % CIFAR_RECORD_BYTES, whole + 1);
    status_hint(st, "the download or copy was cut short; download the dataset again");
    return STATUS_BAD_INPUT;
}

static int fail_too_many_records(const char *path, long long bytes, Status *st) {
    status_fail_at(st, STATUS_BAD_INPUT, path, 0, 0, "%lld bytes is %lld records; a CIFAR-10 "
                   "batch file holds at most %d (%lld bytes)", bytes, bytes / CIFAR_RECORD_BYTES,
                   CIFAR_BATCH_RECORDS, (long long)CIFAR_BATCH_RECORDS * CIFAR_RECORD_BYTES);
    status_hint(st, "this is not a batch file of the CIFAR-10 binary version (each holds "
                    "10000 images); other data can be read as png: class folders");
    return STATUS_BAD_INPUT;
}

static int fail_out_of_memory(const char *path, long long bytes, Status *st) {
    status_out_of_host_memory(st, (size_t)bytes, "reading the file");
    status_set_place_if_unset(st, path, 0, 0);
    return STATUS_RUNTIME_ERROR;
}

static int check_labels(const char *path, const uint8_t *records, long long count,
                        Status *st) {
    for (long long r = 0; r < count; r++) {
        uint8_t label = records[r * CIFAR_RECORD_BYTES];
        if (label < CIFAR_CLASSES) continue;
        status_fail_at(st, STATUS_BAD_INPUT, path, 0, 0,
                       "record %lld (byte offset %lld) has label %u; CIFAR-10 labels are 0 "
                       "to %d", r + 1, r * CIFAR_RECORD_BYTES, (unsigned)label,
                       CIFAR_CLASSES - 1);
        status_hint(st, "this is not a CIFAR-10 binary batch (CIFAR-100's records are "
                        "3074 bytes, with two label bytes)");
        return STATUS_BAD_INPUT;
    }
    return 0;
}

// Appends the records of PATH to `out` (images and labels grow).
static int read_batch_file(const char *path, Dataset *out, Status *st) {
    FILE *file = NULL;
    long long bytes = 0;
    TRY(dataset_open_regular(path, "a CIFAR-10 binary batch", &file, &bytes, st));
    int rc = 0;
    uint8_t *records = NULL;
    long long count = bytes / CIFAR_RECORD_BYTES;
    if (bytes == 0) {
        rc = status_fail_at(st, STATUS_BAD_INPUT, path, 0, 0, "empty file: no records");
        status_hint(st, "download the dataset again");
    } else if (bytes % CIFAR_RECORD_BYTES) {
        rc = fail_cut_record(path, bytes, st);
    } else if (count > CIFAR_BATCH_RECORDS) {
        rc = fail_too_many_records(path, bytes, st);
    } else if (!(records = malloc((size_t)bytes))) {
        rc = fail_out_of_memory(path, bytes, st);
    } else if (fread(records, 1, (size_t)bytes, file) != (size_t)bytes) {
        rc = status_fail_at(st, STATUS_BAD_INPUT, path, 0, 0, "read error: the file shrank "
                            "or could not be read");
        status_hint(st, "check the disk, or copy the dataset again");
    }
    fclose(file);
    if (!rc) rc = check_labels(path, records, count, st);
    size_t total = (size_t)(out->count + count);
    uint8_t *images = rc ? NULL : realloc(out->images, total * CIFAR_IMAGE_BYTES);
    if (images) out->images = images;
    uint8_t *labels = rc || !images ? NULL : realloc(out->labels, total);
    if (labels) out->labels = labels;
    if (!rc && !labels) rc = fail_out_of_memory(path, bytes, st);
    for (long long r = 0; !rc && r < count; r++) {
        const uint8_t *record = records + r * CIFAR_RECORD_BYTES;
        out->labels[out->count + r] = record[0];
        memcpy(out->images + (size_t)(out->count + r) * CIFAR_IMAGE_BYTES, record + 1,
               CIFAR_IMAGE_BYTES);
    }
    if (!rc) out->count = (int)total;
    free(records);
    return rc;
}

// A subset of the training batches (data_batch_1 alone, say) is read as the first
// `present` files. One missing before another that is there is refused: reading up to the
// gap would leave the later batches out without a word (a lost download, 10,000 images).
static int check_batch_gap(const char *folder, int present, Status *st) {
    char missing[700], later[700];
    snprintf(missing, sizeof missing, "%s/data_batch_%d.bin", folder, present + 1);
    for (int i = present + 2; i <= CIFAR_TRAIN_FILES; i++) {
        snprintf(later, sizeof later, "%s/data_batch_%d.bin", folder, i);
        if (!exists(later)) continue;
        status_fail_at(st, STATUS_BAD_INPUT, missing, 0, 0, "missing data_batch_%d.bin in %s, "
                       "but data_batch_%d.bin is there", present + 1, folder, i);
        if (present == 1)
            status_hint(st, "restore the missing batch (download the dataset again), or keep "
                            "only data_batch_1.bin to train on fewer");
        else
            status_hint(st, "restore the missing batch (download the dataset again), or keep "
                            "only data_batch_1.bin ... data_batch_%d.bin to train on fewer",
                        present);
        return STATUS_BAD_INPUT;
    }
    return 0;
}

int dataset_load_cifar10(const char *dir, const char *split, Dataset *out, Status *st) {
    TRY(dataset_check_folder(dir, "cifar10", CIFAR_FOLDER_HINT, st));
    char folder[600], path[700];
    batches_folder(dir, folder, sizeof folder);
    dataset_set_source(out, folder);
    out->channels = 3;
    out->height = out->width = CIFAR_SIDE;
    int test = strcmp(split, "test") == 0;
    int files = test ? 1 : CIFAR_TRAIN_FILES;
    for (int i = 1; i <= files; i++) {
        if (test) snprintf(path, sizeof path, "%s/test_batch.bin", folder);
        else snprintf(path, sizeof path, "%s/data_batch_%d.bin", folder, i);
        if (!test && i > 1 && !exists(path)) {
            TRY(check_batch_gap(folder, i - 1, st));
            break;
        }
        if (!exists(path)) {
            status_fail_at(st, STATUS_BAD_INPUT, path, 0, 0, "missing %s in %s",
                           test ? "test_batch.bin" : "data_batch_1.bin", folder);
            status_hint(st, "%s", CIFAR_FOLDER_HINT);
            return STATUS_BAD_INPUT;
        }
        TRY(read_batch_file(path, out, st));
    }
    out->label_max = dataset_largest_label(out->labels, out->count);
    return 0;
}

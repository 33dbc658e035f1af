// A dataset written out as PNG class folders, DIR/CLASS/NNNNN.png: what png:DIR reads
// (data/dataset_export.c; `trainer data export`).
#ifndef TRAINER_DATASET_EXPORT_H
#define TRAINER_DATASET_EXPORT_H

#include "data/dataset.h"

// Labels are bytes: at most 256 classes.
typedef struct ExportFolders {
    int count;
    char names[256][96];
} ExportFolders;

// Called after each image written: `done` of `total`.
typedef void (*ExportProgress)(void *context, int done, int total);

// The class folders of a dataset read from `spec` whose largest label (over every split
// exported) is `label_max`: names that sort in label order, so png:DIR gives each image
// its label back (see data/dataset_export.c).
void dataset_export_folders(const char *spec, const Dataset *ds, int label_max,
                            ExportFolders *out);
// Makes DIR (with its parents). A DIR that exists and is not empty is STATUS_BAD_INPUT
// unless `force`.
int dataset_export_prepare(const char *dir, int force, Status *st);
// Refuses (STATUS_BAD_INPUT) a DIR that is a place `spec` reads from, lies inside one, or
// holds one (compared as real paths, links resolved; DIR need not exist yet): the export
// would write into the folders it reads, replacing and adding images.
int dataset_export_check_target(const char *spec, const char *dir, Status *st);
// Writes every sample of `ds` as DIR/FOLDER/NNNNN.png (NNNNN its index in `ds`, 1 channel
// as gray, 3 as RGB), making every folder of `folders`. `progress` may be NULL.
int dataset_export_split(const Dataset *ds, const ExportFolders *folders, const char *dir,
                         ExportProgress progress, void *context, Status *st);

// One split as dataset_export_splits wrote it, for the caller to report.
typedef struct ExportedSplit {
    const char *name;  // "train", "test"
    const Dataset *ds;
    const char *where;  // DIR/NAME, or DIR for a spec with one split
    int folders;        // class folders made
    double seconds;
} ExportedSplit;

// dataset_export_splits' callbacks, either may be NULL: after each image written of a
// split, and after each split.
typedef struct ExportHooks {
    void (*progress)(void *context, const char *split, int done, int total);
    void (*written)(void *context, const ExportedSplit *split);
    void *context;
} ExportHooks;

// Writes the `count` splits of `spec` (sets[i] called names[i]; train, and test when the
// spec has one) into DIR, made first as dataset_export_prepare does: DIR/NAME/CLASS with
// two splits, DIR/CLASS with one, as png:DIR reads them back. Every split is read before
// any is written, so the class folders' label width comes from the largest label of all.
int dataset_export_splits(const char *spec, const Dataset *sets, const char *const *names,
                          int count, const char *dir, int force, const ExportHooks *hooks,
                          Status *st);

#endif

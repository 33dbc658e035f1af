// The data a training run reads, checked against its model (core/run_data.h).
#include "core/run_data.h"

#include <stdio.h>
#include <string.h>

int place_in_data_spec(const RunConfig *config, int rc, Status *st) {
    if (!rc || !config || !config->data.spec[0]) return rc;
    const DataConfig *d = &config->data;
    if (!st->file[0]) {
        status_set_place_if_unset(st, d->model_path, d->line, d->spec_column);
        return rc;
    }
    // The error names the dataset's own file: the statement is named in the hint.
    status_hint_append(st, " (the dataset is %.200s:%d's `data spec=`; --data overrides it)",
                       d->model_path, d->line);
    return rc;
}

int run_data_check_splits(const char *spec, int val_given, const RunConfig *config,
                          Status *st) {
    if (dataset_has_test_split(spec) || val_given || config->data.val_split) return 0;
    status_fail(st, STATUS_BAD_INPUT, "dataset %s has no test split to evaluate on", spec);
    status_hint(st, "hold out part of the training data: --val-split 0.1");
    return STATUS_BAD_INPUT;
}

// What PNG folders alone allow: decoding per batch, resizing.
static int check_image_options(const char *spec, const DatasetOptions *options, Status *st) {
    if (options->decode == DECODE_STREAM && !dataset_image_folder(spec)) {
        status_fail(st, STATUS_BAD_INPUT, "--decode stream decodes PNG folders as batches are "
                    "made, but %s is read whole", spec);
        status_hint(st, "leave --decode out: IDX, CIFAR-10 and CSV files need no decoding");
        return STATUS_BAD_INPUT;
    }
    if (options->resize && !dataset_image_folder(spec)) {
        status_fail(st, STATUS_BAD_INPUT, "--resize resizes the images of image folders "
                    "(images:DIR), but %s has one size", spec);
        status_hint(st, "leave --resize out");
        return STATUS_BAD_INPUT;
    }
    return 0;
}

int split_limit_apply(Dataset *ds, const SplitLimit *limit, const RunNotice *notice, int *cut,
                      Status *st) {
    if (limit->limit > ds->count)
        run_notice_say(notice, "%s %ld is more than the %d %s samples: all %d are used",
                       limit->option, limit->limit, ds->count, limit->split, ds->count);
    return dataset_limit(ds, (int)limit->limit, limit->order, limit->seed, cut, st);
}

static int load_split(const RunDataRequest *r, const RunConfig *config, const char *split,
                      Dataset *ds, int *skipped, Status *st) {
    DatasetOptions reading = r->options;
    if (!reading.on_notice) {
        reading.on_notice = r->notice.say;
        reading.notice_user = r->notice.user;
    }
    int rc = dataset_load_with(r->spec, split, &reading, ds, skipped, st);
    return r->spec_in_model ? place_in_data_spec(config, rc, st) : rc;
}

int run_data_load(const RunDataRequest *r, const RunConfig *config, RunData *data,
                  Status *st) {
    memset(data, 0, sizeof *data);
    data->has_test = dataset_has_test_split(r->spec);
    TRY(check_image_options(r->spec, &r->options, st));
    TRY(load_split(r, config, "train", &data->train, &data->skipped, st));
    uint64_t seed = (uint64_t)config->train.seed;
    int before = data->train.count, cut = 0;
    SplitLimit limit = {r->train_limit, "--train-limit", "training", r->limit_order, seed};
    TRY(split_limit_apply(&data->train, &limit, &r->notice, &cut, st));
    if (cut) {
        data->limited_from = before;
        data->limit_order = r->limit_order;
        data->limit_seed = seed;
    }
    data->has_val = r->val_given || r->val_fraction > 0;
    if (data->has_val) {
        // train_limit: the limit that cut the training split; one at or past its size is
        // the same split as none.
        data->held_out = (HeldOutSplit){.fraction = r->val_fraction, .seed = config->train.seed,
                                        .train_limit = cut ? r->train_limit : 0,
                                        .limit_order = cut ? r->limit_order : LIMIT_STRATIFIED,
                                        .samples = data->train.count};
        TRY(dataset_split_off(&data->train, r->val_fraction, seed, &data->val, st));
    }
    if (!data->has_test) return 0;
    int skipped_test = 0, test_cut = 0;
    TRY(load_split(r, config, "test", &data->test, &skipped_test, st));
    data->skipped += skipped_test;
    limit = (SplitLimit){r->test_limit, "--test-limit", "test", r->limit_order, seed};
    return split_limit_apply(&data->test, &limit, &r->notice, &test_cut, st);
}

// A transform that does not fit the data points at its statement.
static int check_transform(const RunConfig *config, const char *model_path,
                           const DataTransform *t, const Dataset *ds, Status *st) {
    int rc = data_transform_check(t, ds, st);
    // The statement whose check failed: data_transform_check looks at the normalization
    // first. An augmentation given as --augment has line 0: no place in the model file.
    int normalization_misfits = t->normalization &&
                                t->normalization->count != dataset_stat_groups(ds);
    int line = normalization_misfits ? config->data.normalize.line
               : t->crop_padding || t->flip ? config->data.augment.line : 0;
    if (rc && line) status_set_place_if_unset(st, model_path, line, 1);
    return rc;
}

int check_run_data(const Graph *g, const RunConfig *config, const RunData *data, Status *st) {
    TRY(graph_check_dataset(g, &data->train, "the training set", st));
    if (data->has_val) TRY(graph_check_dataset(g, &data->val, "the validation set", st));
    if (data->has_test) TRY(graph_check_dataset(g, &data->test, "the test set", st));
    const Normalization *n = data->normalization.count ? &data->normalization : NULL;
    DataTransform training = {.normalization = n,
                              .crop_padding = config->data.augment.crop_padding,
                              .flip = config->data.augment.flip};
    return check_transform(config, g->path, &training, &data->train, st);
}

// A given normalization's errors point at the statement, or name the option (line 0: the
// values came from --normalize).
static int from_given(const NormalizeConfig *n, int groups, const char *model_path,
                      Normalization *out, Status *st) {
    int rc = normalization_from_values(n->mean, n->std, n->given, groups, out, st);
    if (rc && n->line) {
        snprintf(st->file, sizeof st->file, "%s", model_path);
        st->line = n->line;
        st->column = 1;
    } else if (rc) {
        status_prefix(st, "--normalize: ");
    }
    return rc;
}

int resolve_run_normalization(const RunConfig *config, const char *model_path, RunData *data,
                              Status *st) {
    const NormalizeConfig *n = &config->data.normalize;
    const Dataset *train = &data->train;
    if (n->kind == NORMALIZE_NONE) return 0;
    if (n->kind == NORMALIZE_GIVEN) {
        TRY(from_given(n, dataset_stat_groups(train), model_path, &data->normalization, st));
        data->normalization_source = NORMALIZATION_FROM_GIVEN;
        return 0;
    }
    TRY(normalization_compute(train, &data->normalization, &data->normalization_constant, st));
    data->normalization_source = NORMALIZATION_FROM_COMPUTED;
    data->normalization_samples = train->count;
    return 0;
}

int weights_normalization(const RunConfig *config, const char *model_path,
                          const char *weights_path, const CheckpointLoaded *loaded, int groups,
                          Normalization *out, Status *st) {
    memset(out, 0, sizeof *out);
    const Normalization *recorded = &loaded->inputs.normalization;
    const NormalizeConfig *n = &config->data.normalize;
    if (recorded->count > 0) {
        if (recorded->count != groups) {
            status_fail_at(st, STATUS_BAD_INPUT, weights_path, 0, 0, "records a normalization "
                           "of %d values, but the data has %d channels (or features)",
                           recorded->count, groups);
            status_hint(st, "evaluate on data shaped like the training data");
            return STATUS_BAD_INPUT;
        }
        return normalization_copy(recorded, out, st);
    }
    if (n->kind == NORMALIZE_GIVEN) return from_given(n, groups, model_path, out, st);
    if (n->kind == NORMALIZE_NONE) return 0;
    status_fail_at(st, STATUS_BAD_INPUT, model_path, n->line, 1, "normalize auto, but %s records "
                   "no normalization to evaluate with", weights_path);
    status_hint(st, "save the weights again with this trainer (`trainer train --save FILE` "
                    "records the mean and std), or write them in the model: `normalize mean=M "
                    "std=S` (`trainer data info` prints them)");
    return STATUS_BAD_INPUT;
}

void run_data_free(RunData *data) {
    normalization_free(&data->normalization);
    dataset_free(&data->train);
    dataset_free(&data->val);
    dataset_free(&data->test);
}

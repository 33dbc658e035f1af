#define _DEFAULT_SOURCE  // the directory locks' errno values
#include "core/checkpoint_session.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "base/atomic_file.h"
#include "base/directories.h"
#include "base/escape.h"
#include "base/text_out.h"
#include "core/lr_schedule.h"
#include "core/optimizer.h"

// An empty file is no checkpoint a run wrote (they are written whole or not at all), and
// no folder either: said as what it is rather than as a folder that cannot be opened.
static int refuse_empty_resume(const char *given, Status *st) {
    status_fail_at(st, STATUS_BAD_INPUT, given, 0, 0, "the checkpoint file is empty (0 bytes)");
    status_hint(st, "pass --resume the folder given to --checkpoint, or a checkpoint file a run "
                "wrote (a step-*.safetensors or best.safetensors in it, or a --save file)");
    return STATUS_BAD_INPUT;
}

int checkpoints_resume_file(ResumeSource *resume, Status *st) {
    if (resume->found) return 0;
    // A folder holds step files; a file with bytes in it is one checkpoint, an empty one is
    // refused. Anything else (missing, not a folder) goes to checkpoint_latest, whose
    // message says what is wrong with it.
    struct stat sb;
    int is_file = stat(resume->given, &sb) == 0 && S_ISREG(sb.st_mode);
    if (is_file && sb.st_size == 0) return refuse_empty_resume(resume->given, st);
    if (is_file) snprintf(resume->file, sizeof resume->file, "%s", resume->given);
    else TRY(checkpoint_latest(resume->given, resume->file, sizeof resume->file, st));
    resume->found = 1;
    return 0;
}

// The resume's file (NULL: no resume), found by the first call of the run.
static int resumed_file(ResumeSource *resume, const char **file, Status *st) {
    *file = NULL;
    if (!resume || !resume->given) return 0;
    TRY(checkpoints_resume_file(resume, st));
    *file = resume->file;
    return 0;
}

// The optimizer and schedule words a checkpoint records of its run.
static void describe_settings(const OptimizerConfig *optimizer, const ScheduleConfig *schedule,
                              CheckpointPlace *at) {
    optimizer_describe(optimizer, at->optimizer_settings, sizeof at->optimizer_settings);
    schedule_describe(schedule, at->schedule, sizeof at->schedule);
}

int dataset_class_name_list(const char *spec, const Dataset *ds, const char **list) {
    int count = 0;
    const char *const *known = dataset_known_class_names(spec, &count);
    if (known) {
        for (int i = 0; i < count && i < 256; i++) list[i] = known[i];
        return count < 256 ? count : 256;
    }
    count = ds->class_count < 256 ? ds->class_count : 256;
    for (int i = 0; i < count; i++) list[i] = ds->class_names[i];
    return count;
}

// Whether a name's byte counts when class names are compared: letters, digits, and every
// byte of a UTF-8 character (names in other scripts differ only there).
static int significant(unsigned char c) { return isalnum(c) || c >= 0x80; }

// Whether two names are one class's: `data export` writes Fashion-MNIST's "T-shirt/top"
// as the folder 0_T-shirt_top, so a leading "N_" and ASCII punctuation are left out, and
// case too.
static int same_class_name(const char *a, const char *b) {
    const char *names[2] = {a, b};
    for (int i = 0; i < 2; i++) {
        const char *p = names[i];
        while (*p >= '0' && *p <= '9') p++;
        if (*p == '_' && p != names[i]) names[i] = p + 1;
    }
    for (a = names[0], b = names[1];; a++, b++) {
        while (*a && !significant((unsigned char)*a)) a++;
        while (*b && !significant((unsigned char)*b)) b++;
        if (!*a || !*b) return !*a && !*b;
        if (tolower((unsigned char)*a) != tolower((unsigned char)*b)) return 0;
    }
}

int check_recorded_classes(const LoadedInputs *recorded, const char *const *names, int count,
                           const char *path, const char *where, int refuse,
                           const RunNotice *notice, Status *st) {
    int shared = recorded->class_count < count ? recorded->class_count : count;
    int label = 0;
    // A checkpoint records a name that is not UTF-8 with \xNN for its other bytes.
    char written[CHECKPOINT_CLASS_NAME_WRITTEN_MAX];
    for (; label < shared; label++) {
        checkpoint_class_name_as_written(names[label], written, sizeof written);
        if (!same_class_name(recorded->class_names[label], written)) break;
    }
    if (label == shared) return 0;
    char theirs[260], ours[260], what[900];
    text_escape(recorded->class_names[label], strlen(recorded->class_names[label]), theirs,
                sizeof theirs);
    text_escape(names[label], strlen(names[label]), ours, sizeof ours);
    snprintf(what, sizeof what, "label %d was class '%s' when these weights were trained, but "
             "%s names it '%s' (%d classes there, %d here): from that label on, the labels "
             "may mean other classes", label, theirs, where, ours, recorded->class_count, count);
    if (!refuse) {
        run_notice_say(notice, "%s: %s", path, what);
        return 0;
    }
    status_fail_at(st, STATUS_BAD_INPUT, path, 0, 0, "%s", what);
    status_hint(st, "use the data the weights were trained on, with the same class folders "
                "(a missing or extra folder shifts the labels of every folder after it)");
    return STATUS_BAD_INPUT;
}

// Another run's --checkpoint folder would count the file among its step files, which its
// --keep-last prunes by step number; its --logdir is its own too. The lock taken is shared:
// runs that --save into one folder do not exclude each other, and keep any other from
// taking it as its --checkpoint folder or --logdir.
static int lock_save_folder(const char *save_path, Status *st) {
    char folder[1024];
    TRY(atomic_file_folder(save_path, folder, sizeof folder, st));
    if (directory_lock_shared(folder) == 0 || errno != EWOULDBLOCK) return 0;
    return directory_lock_refusal(folder, "--save folder", "--save into another folder", st);
}

int checkpoints_check_save(const char *save_path, const char *model_path, Status *st) {
    if (files_are_same(save_path, model_path)) {
        status_fail_at(st, STATUS_BAD_INPUT, save_path, 0, 0, "--save names the model file "
                       "itself (%s); the weights would overwrite the model's text", model_path);
        status_hint(st, "name another file, e.g. --save %.400s.safetensors", model_path);
        return STATUS_BAD_INPUT;
    }
    TRY(atomic_file_check_target(save_path, st));
    return lock_save_folder(save_path, st);
}

// Another run's step files in the folder would be pruned by step number and picked by
// --resume as if they were this run's, so only the run that wrote the newest one (resumed
// from it) may go on writing there.
static int refuse_other_checkpoints(const char *folder, const char *resume_given,
                                    const char *resume_file, Status *st) {
    char newest[1100];
    if (!checkpoint_folder_holds(folder, newest, sizeof newest)) return 0;
    if (resume_file && files_are_same(resume_file, newest)) return 0;
    const char *name = strrchr(newest, '/') ? strrchr(newest, '/') + 1 : newest;
    if (resume_file)
        status_fail_at(st, STATUS_BAD_INPUT, folder, 0, 0, "the checkpoint folder already holds "
                       "checkpoints (the newest: %s), and this run resumes from %s, not from "
                       "that newest one; its checkpoints would be mixed with them", name,
                       resume_given);
    else
        status_fail_at(st, STATUS_BAD_INPUT, folder, 0, 0, "the checkpoint folder already holds "
                       "checkpoints (the newest: %s); a new run's would be mixed with them", name);
    // best.safetensors alone: `--resume DIR` would find no step file, but the file resumes.
    if (strcmp(name, "best.safetensors") == 0)
        status_hint(st, "to continue that run from its best epoch, --resume %s (with "
                    "--checkpoint %s); else pick an empty folder for --checkpoint, or remove "
                    "the old checkpoints", newest, folder);
    else
        status_hint(st, "to continue that run, resume it with --resume %s; else pick an empty "
                    "folder for --checkpoint, or remove the old checkpoints", folder);
    return STATUS_BAD_INPUT;
}

// The longest name the folder gets (a step file) must fit the writer's path, or the first
// checkpoint would fail after an epoch of training.
static int check_folder_length(const char *folder, Status *st) {
    char longest[2200];
    checkpoint_step_path(folder, 9999999999L, longest, sizeof longest);
    AtomicFile probe;
    if (strlen(longest) < sizeof probe.path) return 0;
    status_fail_at(st, STATUS_BAD_INPUT, folder, 0, 0, "--checkpoint: the path is too long "
                   "(%zu bytes): its step files' names would be %zu, at most %zu", strlen(folder),
                   strlen(longest), sizeof probe.path - 1);
    status_hint(st, "choose a --checkpoint folder with a shorter path");
    return STATUS_BAD_INPUT;
}

// Two runs in one folder would prune each other's step files and resume from each other's,
// and one would sweep the other's files in the writing as a killed run's *.tmp. A folder
// that cannot be made is left to checkpoint_folder_prepare to report; a filesystem without
// locks runs unlocked.
static int lock_folder(const char *folder, Status *st) {
    if (make_directories(folder) != 0 || directory_lock(folder) == 0 || errno != EWOULDBLOCK)
        return 0;
    return directory_lock_refusal(folder, "--checkpoint folder", "give this run its own "
                                "--checkpoint folder", st);
}

int checkpoints_check_folder(const char *folder, ResumeSource *resume, Status *st) {
    const char *resume_file;
    TRY(resumed_file(resume, &resume_file, st));
    TRY(check_folder_length(folder, st));
    TRY(lock_folder(folder, st));
    return refuse_other_checkpoints(folder, resume_file ? resume->given : NULL, resume_file, st);
}

int checkpoints_read_resumed_inputs(ResumeSource *resume, LoadedInputs *out, Status *st) {
    memset(out, 0, sizeof *out);
    TRY(checkpoints_resume_file(resume, st));
    // The header alone: run_resume reads the whole file after the data load.
    Safetensors file;
    TRY(safetensors_read_header(resume->file, &file, st));
    int rc = checkpoint_inputs_read(&file, resume->file, out, st);
    safetensors_free(&file);
    return rc;
}

int checkpoints_open(CheckpointSession *s, Run *run, RunConfig *config,
                     ResumeSource *resume, const char *init, Status *st) {
    if (s->read_only) s->folder = s->save_path = NULL;  // resumes, but writes nothing
    s->optimizer = &config->optimizer;
    s->schedule = &config->schedule;
    const char *resume_file;
    TRY(resumed_file(resume, &resume_file, st));
    // The folder's lock first: --save into the run's own --checkpoint folder shares it.
    if (s->folder) TRY(checkpoints_check_folder(s->folder, resume, st));  // the file found above
    if (s->save_path) TRY(checkpoints_check_save(s->save_path, s->model_path, st));
    if (s->folder) {
        int swept = 0;
        TRY(checkpoint_folder_prepare(s->folder, &swept, st));
        if (swept)
            run_notice_say(&s->notice, "removed %d unfinished checkpoint file%s (*.tmp) from %s",
                           swept, swept == 1 ? "" : "s", s->folder);
        TRY(checkpoint_best_accuracy(s->folder, &s->best_accuracy, st));
    }
    if (resume_file) {
        TRY(run_resume(run, config, resume_file, &s->resumed_inputs, &s->notice, st));
        snprintf(s->resumed_file, sizeof s->resumed_file, "%s", resume_file);
        s->resumed_path = s->resumed_file;
    }
    if (init) TRY(run_init_from(run, init, &s->notice, st));
    s->seed = config->train.seed;
    s->batch = config->train.batch;
    return 0;
}

static int check_resumed_split(const CheckpointSession *s, const HeldOutSplit *split,
                               Status *st) {
    const LoadedInputs *recorded = &s->resumed_inputs;
    // A checkpoint written before splits were recorded says nothing either way.
    if (!recorded->held_out_recorded) return 0;
    int same = held_out_same(&recorded->held_out, split);
    if (same && held_out_same_data(&recorded->held_out, split)) return 0;
    if (same) {
        status_fail_at(st, STATUS_BAD_INPUT, s->resumed_path, 0, 0, "the checkpoint's run drew "
                       "its validation split from %ld training samples, this run from %ld: the "
                       "same options draw another split, which would hold samples the "
                       "checkpoint was trained on", recorded->held_out.samples, split->samples);
        status_hint(st, "resume on the training data the run had (the same --data and "
                    "--on-bad-sample), or start from its weights with `trainer train %s "
                    "--init-from %s`", s->model_path, s->resumed_path);
        return STATUS_BAD_INPUT;
    }
    char theirs[160], ours[160], options[160] = "without --val-split";
    held_out_describe(&recorded->held_out, theirs, sizeof theirs);
    held_out_describe(split, ours, sizeof ours);
    const HeldOutSplit *h = &recorded->held_out;
    if (h->fraction > 0) {
        int used = snprintf(options, sizeof options, "--val-split %g --seed %ld", h->fraction,
                            h->seed);
        if (h->train_limit && used > 0 && (size_t)used < sizeof options)
            snprintf(options + used, sizeof options - (size_t)used, " --train-limit %ld%s",
                     h->train_limit,
                     h->limit_order == LIMIT_FIRST ? " --limit-order first" : "");
    }
    status_fail_at(st, STATUS_BAD_INPUT, s->resumed_path, 0, 0, "the checkpoint's run held "
                   "out %s; this run holds out %s: %s", theirs, ours, split->fraction > 0
                   ? "its validation split would hold samples the checkpoint was trained on"
                   : "it would train on the samples the checkpoint's run validated on");
    status_hint(st, "resume with the run's data options (%s), or start from its weights with "
                "`trainer train %s --init-from %s`, which starts the epochs afresh", options,
                s->model_path, s->resumed_path);
    return STATUS_BAD_INPUT;
}

static int same_normalization(const Normalization *a, const Normalization *b) {
    if (a->count != b->count) return 0;
    for (int g = 0; g < a->count; g++)
        if (a->mean[g] != b->mean[g] || a->std[g] != b->std[g]) return 0;
    return 1;
}

// "mean 0.286 std 0.353" (cut with "..." past a few groups), or "none" (image bytes / 255,
// CSV features as they are).
static void describe_normalization(const Normalization *n, int digits, char *text,
                                   size_t size) {
    if (!n->count) {
        snprintf(text, size, "none");
        return;
    }
    char mean[128], std[128];
    int shown = n->count < 4 ? n->count : 4;
    normalization_format(n->mean, shown, digits, mean, sizeof mean);
    normalization_format(n->std, shown, digits, std, sizeof std);
    const char *more = shown < n->count ? ",..." : "";
    snprintf(text, size, "mean %s%s std %s%s", mean, more, std, more);
}

static int check_resumed_normalization(const CheckpointSession *s, NormalizeKind normalize,
                                       Normalization *normalization,
                                       NormalizationSource *source, Status *st) {
    const Normalization *recorded = &s->resumed_inputs.normalization;
    if (same_normalization(recorded, normalization)) return 0;
    char theirs[320], ours[320];
    describe_normalization(recorded, 4, theirs, sizeof theirs);
    describe_normalization(normalization, 4, ours, sizeof ours);
    if (strcmp(theirs, ours) == 0) {  // they differ past 4 digits: show all 9
        describe_normalization(recorded, 9, theirs, sizeof theirs);
        describe_normalization(normalization, 9, ours, sizeof ours);
    }
    // auto computes on this run's training data, which may differ a little from the first
    // part's (another --train-limit): the values the weights learned with stand.
    if (normalize == NORMALIZE_AUTO && recorded->count && recorded->count == normalization->count) {
        for (int g = 0; g < recorded->count; g++) {
            normalization->mean[g] = recorded->mean[g];
            normalization->std[g] = recorded->std[g];
        }
        *source = NORMALIZATION_FROM_RESUMED;
        run_notice_say(&s->notice, "normalize auto: resuming with the checkpoint's %s, which its "
                       "weights were trained with (this run's training data gives %s)", theirs,
                       ours);
        return 0;
    }
    status_fail_at(st, STATUS_BAD_INPUT, s->resumed_path, 0, 0, "the checkpoint's run "
                   "normalized its inputs with %s; this run with %s: the weights would see "
                   "other inputs than they were trained on", theirs, ours);
    status_hint(st, "resume with the run's normalize statement or --normalize option (%s), or "
                "start from its weights with `trainer train %s --init-from %s`", recorded->count
                ? "--normalize auto, if the run computed it" : "--normalize none",
                s->model_path, s->resumed_path);
    return STATUS_BAD_INPUT;
}

int checkpoints_check_resumed_inputs(CheckpointSession *s, NormalizeKind normalize,
                                     RunData *data, const char *spec, Status *st) {
    int rc = 0;
    if (s->resumed_path) {
        const char *names[256];
        int classes = dataset_class_name_list(spec, &data->train, names);
        rc = check_recorded_classes(&s->resumed_inputs, names, classes, s->resumed_path, spec,
                                    1, &s->notice, st);
        if (!rc) rc = check_resumed_split(s, &data->held_out, st);
        if (!rc)
            rc = check_resumed_normalization(s, normalize, &data->normalization,
                                             &data->normalization_source, st);
    }
    checkpoint_inputs_free(&s->resumed_inputs);
    return rc;
}

// A step's place as a checkpoint records it: an epoch's last step completes the epoch,
// whose evaluation comes after the step.
static CheckpointPlace place_of(const CheckpointSession *s, const StepPlace *p) {
    int complete = p->step >= p->steps;
    CheckpointPlace at = {.epochs_done = complete ? p->epoch : p->epoch - 1,
                          .step_in_epoch = complete ? 0 : p->step,
                          .optimizer_steps = p->optimizer_steps, .seed = s->seed,
                          .batch = s->batch, .test_accuracy = -1.0, .epoch_evaluated = 0};
    describe_settings(s->optimizer, s->schedule, &at);
    return at;
}

static int write_step_checkpoint(CheckpointSession *s, const CheckpointPlace *place, Graph *g,
                                 Device *d, Status *st) {
    char path[1100];
    checkpoint_step_path(s->folder, place->optimizer_steps, path, sizeof path);
    if (checkpoint_save(g, s->optimizer, d->backend, place, &s->inputs, path, st)) {
        // Where the run can go back to: the newest file written, which nothing pruned.
        if (s->last_written[0])
            status_hint_append(st, "; the newest checkpoint: %s", s->last_written);
        status_prefix(st, "after step %ld: ", place->optimizer_steps);
        return st->code;
    }
    snprintf(s->last_written, sizeof s->last_written, "%s", path);
    return checkpoint_prune(s->folder, s->keep_last, st);
}

int checkpoints_after_step(CheckpointSession *s, const StepPlace *place, Graph *g, Device *d,
                           Status *st) {
    s->last = *place;
    s->has_last = 1;
    if (!s->folder || !s->every_steps || place->optimizer_steps % s->every_steps != 0) return 0;
    CheckpointPlace at = place_of(s, place);
    return write_step_checkpoint(s, &at, g, d, st);
}

// Steps after the last multiple of --checkpoint-every would otherwise be lost to --resume,
// which would train them again (and an N longer than the run would leave no step file).
int checkpoints_finish(CheckpointSession *s, Graph *g, Device *d, Status *st) {
    // A resumed run with nothing left to train takes no step: --save still gets the
    // checkpoint's weights (a signal in the last epoch's evaluation leaves such a run).
    if (s->save_path && !s->has_last) {
        TRY(checkpoint_save(g, NULL, d->backend, NULL, &s->inputs, s->save_path, st));
        run_notice_say(&s->notice, "nothing left to train: wrote the checkpoint's weights to %s",
                       s->save_path);
        return 0;
    }
    if (!s->folder || !s->every_steps || !s->has_last) return 0;
    char path[1100];
    checkpoint_step_path(s->folder, s->last.optimizer_steps, path, sizeof path);
    if (strcmp(path, s->last_written) == 0) return 0;
    CheckpointPlace at = place_of(s, &s->last);
    at.epoch_evaluated = 1;  // called after the last epoch's evaluation
    if (at.step_in_epoch == 0) at.test_accuracy = s->epoch_accuracy;
    return write_step_checkpoint(s, &at, g, d, st);
}

static int write_epoch_checkpoints(CheckpointSession *s, const EpochReport *r, Graph *g,
                                   Device *d, Status *st) {
    CheckpointPlace at = {.epochs_done = r->epoch, .optimizer_steps = g->optimizer_steps,
                          .seed = s->seed, .batch = s->batch,
                          .test_accuracy = r->has_test ? r->test.accuracy : -1.0,
                          .epoch_evaluated = 1};
    describe_settings(s->optimizer, s->schedule, &at);
    s->epoch_accuracy = at.test_accuracy;  // for the run's last step file (checkpoints_finish)
    // With --checkpoint-every N, a step file at this epoch's last step was written before
    // the evaluation, and an epoch evaluated on resume came from one: written again, it
    // says the evaluation finished, and the next resume does not evaluate the epoch again.
    char epoch_end[1100];
    checkpoint_step_path(s->folder, g->optimizer_steps, epoch_end, sizeof epoch_end);
    if (!s->every_steps || r->evaluation_only || strcmp(epoch_end, s->last_written) == 0)
        TRY(write_step_checkpoint(s, &at, g, d, st));
    if (!r->has_test || r->test.accuracy <= s->best_accuracy) return 0;
    char best[1100];
    checkpoint_folder_file(s->folder, "best.safetensors", best, sizeof best);
    TRY(checkpoint_save(g, s->optimizer, d->backend, &at, &s->inputs, best, st));
    s->best_accuracy = r->test.accuracy;
    return 0;
}

// A --save that fails (the disk filled up) still lets the epoch's checkpoint be written:
// the run stops on the save's error, with nothing of the epoch lost.
int checkpoints_after_epoch(CheckpointSession *s, const EpochReport *r, Graph *g, Device *d,
                            Status *st) {
    int save_rc = s->save_path ? checkpoint_save(g, NULL, d->backend, NULL, &s->inputs,
                                                 s->save_path, st) : 0;
    if (s->save_path && !save_rc) s->saved_epoch = r->epoch;
    if (!s->folder) return save_rc;
    if (!save_rc) return write_epoch_checkpoints(s, r, g, d, st);
    Status checkpoint_st;
    status_clear(&checkpoint_st);
    if (write_epoch_checkpoints(s, r, g, d, &checkpoint_st) == 0)
        run_notice_say(&s->notice, "--save failed, but epoch %d's checkpoint was written to %s",
                       r->epoch, s->folder);
    return save_rc;
}

void checkpoints_record_inputs(CheckpointSession *s, const Normalization *normalization,
                               const Dataset *train, const char *spec) {
    s->inputs.normalization = normalization && normalization->count ? normalization : NULL;
    s->inputs.class_count = dataset_class_name_list(spec, train, s->class_name_list);
    s->inputs.class_names = s->inputs.class_count ? s->class_name_list : NULL;
    s->inputs.resize_height = train->resize ? train->height : 0;
    s->inputs.resize_width = train->resize ? train->width : 0;
}

int checkpoints_write_last(CheckpointSession *s, Graph *g, Device *d, Status *st) {
    CheckpointPlace at = place_of(s, &s->last);
    return write_step_checkpoint(s, &at, g, d, st);
}

int checkpoints_write_interrupted(CheckpointSession *s, Graph *g, Device *d, Status *st) {
    TRY(checkpoints_write_last(s, g, d, st));
    run_notice_say(&s->notice, "saved a checkpoint at epoch %d, step %d of %d to %s",
                   s->last.epoch, s->last.step, s->last.steps, s->folder);
    // Stopped in the evaluation after an epoch: the epoch's training is done, and --save,
    // written after every epoch, holds it too.
    if (!s->save_path || s->last.step != s->last.steps) return 0;
    TRY(checkpoint_save(g, NULL, d->backend, NULL, &s->inputs, s->save_path, st));
    run_notice_say(&s->notice, "saved epoch %d's weights to %s (its evaluation was cut short)",
                   s->last.epoch, s->save_path);
    return 0;
}

int checkpoints_save_interrupted(CheckpointSession *s, Graph *g, Device *d, Status *st) {
    TRY(checkpoint_save(g, NULL, d->backend, NULL, &s->inputs, s->save_path, st));
    run_notice_say(&s->notice, "saved the weights as they were when interrupted to %s",
                   s->save_path);
    return 0;
}

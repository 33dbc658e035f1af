#define _POSIX_C_SOURCE 200809L  // mkdir, dirent
#include "core/checkpoint.h"

#include "base/directories.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/atomic_file.h"
#include "base/escape.h"
#include "base/utf8.h"
#include "core/optimizer.h"

#ifndef TRAINER_VERSION
#define TRAINER_VERSION "unknown"
#endif

// Optimizer state goes under its own prefix so that a weights reader can skip it whole.
#define OPTIMIZER_PREFIX "optimizer."

// One tensor of the graph as it is named in a file.
typedef struct Slot {
    char name[LAYER_NAME_MAX + 64];
    Tensor *tensor;
    const Shape *shape;
} Slot;

typedef struct SlotList {
    Slot *slots;
    int count;
} SlotList;

static int slot_count(const Graph *g, const OptimizerConfig *o) {
    int count = 0;
    for (int i = 0; i < g->count; i++)
        for (int k = 0; k < g->layers[i]->param_count; k++)
            count += 1 + (o && !g->layers[i]->params[k].buffer ? optimizer_state_slots(o) : 0);
    return count;
}

static Slot *next_slot(SlotList *list, Tensor *tensor, const Shape *shape) {
    Slot *s = &list->slots[list->count++];
    s->tensor = tensor;
    s->shape = shape;
    return s;
}

// The parameters in graph order, then (with `o`) each trained one's optimizer state.
static int list_slots(const Graph *g, const OptimizerConfig *o, SlotList *list, Status *st) {
    list->count = 0;
    size_t bytes = ((size_t)slot_count(g, o) + 1) * sizeof *list->slots;
    list->slots = calloc(1, bytes);
    if (!list->slots) return status_out_of_host_memory(st, bytes, "listing the tensors to save");
    for (int i = 0; i < g->count; i++)
        for (int k = 0; k < g->layers[i]->param_count; k++) {
            Param *p = &g->layers[i]->params[k];
            Slot *s = next_slot(list, &p->value, &p->shape);
            snprintf(s->name, sizeof s->name, "%s", p->name);
        }
    for (int i = 0; o && i < g->count; i++)
        for (int k = 0; k < g->layers[i]->param_count; k++) {
            Param *p = &g->layers[i]->params[k];
            for (int slot = 0; !p->buffer && slot < optimizer_state_slots(o); slot++) {
                Slot *s = next_slot(list, &p->state[slot], &p->shape);
                snprintf(s->name, sizeof s->name, OPTIMIZER_PREFIX "%s.%s", p->name,
                         optimizer_state_name(o, slot));
            }
        }
    return 0;
}

// ---- metadata ----

// FNV-1a, 64 bits: tells two model files apart; not meant to resist a forger.
static uint64_t text_hash(const char *text) {
    uint64_t h = 0xcbf29ce484222325ull;
    for (const unsigned char *p = (const unsigned char *)text; *p; p++)
        h = (h ^ *p) * 0x100000001b3ull;
    return h;
}

// "fnv1a64:" and 16 hex digits: what model_hash records.
static void format_model_hash(const char *text, char *out, size_t size) {
    snprintf(out, size, "fnv1a64:%016llx", (unsigned long long)text_hash(text));
}

// A model file's text other than the one the file was trained from: a changed activation,
// dropout rate or loss keeps every tensor's name and shape, so nothing else would tell.
static int model_text_changed(const Graph *g, const Safetensors *file) {
    const char *recorded = safetensors_metadata(file, "model_hash");
    if (!recorded || !g->model_text) return 0;
    char hash[32];
    format_model_hash(g->model_text, hash, sizeof hash);
    return strcmp(recorded, hash) != 0;
}

// Every key checkpoint_save may write (24 today, model_text apart), with room: a key past
// it would be dropped, which tests/e2e/model_text.sh would catch as a missing key.
enum { METADATA_MAX = 28 };

typedef struct Metadata {
    SafetensorsEntry entries[METADATA_MAX];
    char values[METADATA_MAX][128];
    int count;
    char *owned[3];         // longer values: normalize_mean, normalize_std, class_names
} Metadata;

// A value too long for `values`: the entry points at the caller's heap string, freed
// with the metadata. NULL adds nothing.
static void add_owned(Metadata *m, const char *key, char *value, int slot) {
    m->owned[slot] = value;
    if (!value || m->count >= METADATA_MAX) return;
    m->entries[m->count].key = (char *)key;
    m->entries[m->count].value = value;
    m->count++;
}

static void add_entry(Metadata *m, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void add_entry(Metadata *m, const char *key, const char *fmt, ...) {
    if (m->count >= METADATA_MAX) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(m->values[m->count], sizeof m->values[m->count], fmt, ap);
    va_end(ap);
    m->entries[m->count].key = (char *)key;
    m->entries[m->count].value = m->values[m->count];
    m->count++;
}

static void describe_place(Metadata *m, const CheckpointPlace *place) {
    add_entry(m, "epoch", "%d", place->epochs_done);
    add_entry(m, "step_in_epoch", "%d", place->step_in_epoch);
    add_entry(m, "optimizer_steps", "%ld", place->optimizer_steps);
    add_entry(m, "seed", "%ld", place->seed);
    add_entry(m, "batch", "%d", place->batch);
    if (place->test_accuracy >= 0) add_entry(m, "test_accuracy", "%.17g", place->test_accuracy);
    add_entry(m, "epoch_evaluated", "%d", place->epoch_evaluated ? 1 : 0);
    if (place->optimizer_settings[0])
        add_entry(m, "optimizer_settings", "%s", place->optimizer_settings);
    if (place->schedule[0]) add_entry(m, "schedule", "%s", place->schedule);
}

// ---- saving ----

static int copy_slot_values(const Slot *s, const Backend *b, float **values, Status *st) {
    size_t n = shape_numel(s->shape);
    *values = malloc(n * sizeof **values + 1);
    if (!*values)
        return status_out_of_host_memory(st, n * sizeof **values + 1, "copying %s", s->name);
    return n ? b->copy_to_host(b, *values, s->tensor->data, n * sizeof **values, st) : 0;
}

static int write_file(const SafetensorsOutput *outputs, int count, const Metadata *m,
                      const char *model_text, const char *path, Status *st) {
    SafetensorsEntry entries[METADATA_MAX + 2];
    memcpy(entries, m->entries, (size_t)m->count * sizeof entries[0]);
    int total = m->count;
    if (model_text) entries[total++] = (SafetensorsEntry){"model_text", (char *)model_text};
    AtomicFile file;
    TRY(atomic_file_open(&file, path, st));
    if (safetensors_write(file.file, outputs, count, entries, total, path, st)) {
        atomic_file_abandon(&file);
        return st->code;
    }
    return atomic_file_commit(&file, st);
}

static int all_finite(const float *values, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (!isfinite(values[i])) return 0;
    return 1;
}

// The largest |value| among the finite ones (0 for none).
static double largest_finite(const float *values, size_t n) {
    double largest = 0.0;
    for (size_t i = 0; i < n; i++)
        if (isfinite(values[i]) && fabs(values[i]) > largest) largest = fabs(values[i]);
    return largest;
}

// Weights that went NaN or infinite (a diverging run, between two reads of its loss) are
// not written: a step checkpoint would be kept in place of a good one that --keep-last then
// prunes, and --save would replace the last good weights. The files already there stay.
static int refuse_nonfinite(const SlotList *list, const SafetensorsOutput *outputs,
                            const char *path, Status *st) {
    char names[400] = "";
    int count = 0, left_out = 0;
    for (int i = 0; i < list->count; i++) {
        if (all_finite(outputs[i].values, shape_numel(list->slots[i].shape))) continue;
        count++;
        name_list_append(names, sizeof names, list->slots[i].name, &left_out);
    }
    if (!count) return 0;
    name_list_end(names, sizeof names, left_out);
    status_fail_at(st, STATUS_RUNTIME_ERROR, path, 0, 0, "not written: training diverged, "
                   "%d tensor%s NaN or infinite values (%s)", count,
                   count == 1 ? " holds" : "s hold", names);
    status_hint(st, "lower the learning rate or add --clip-norm 1; the files written before "
                    "are kept");
    return STATUS_RUNTIME_ERROR;
}

int checkpoint_save(const Graph *g, const OptimizerConfig *optimizer, const Backend *b,
                    const CheckpointPlace *place, const CheckpointInputs *inputs,
                    const char *path, Status *st) {
    SlotList list;
    TRY(list_slots(g, optimizer, &list, st));
    SafetensorsOutput *outputs = calloc((size_t)list.count + 1, sizeof *outputs);
    int rc = outputs ? 0
                     : status_out_of_host_memory(st, ((size_t)list.count + 1) * sizeof *outputs,
                                                 "listing the tensors to save");
    for (int i = 0; !rc && i < list.count; i++) {
        outputs[i] = (SafetensorsOutput){.name = list.slots[i].name, .shape = *list.slots[i].shape};
        rc = copy_slot_values(&list.slots[i], b, (float **)&outputs[i].values, st);
    }
    if (!rc) rc = refuse_nonfinite(&list, outputs, path, st);
    Metadata m = {.count = 0};
    const char *model_text = g->model_text;
    add_entry(&m, "format", "trainer checkpoint 1");
    add_entry(&m, "trainer_version", "%s", TRAINER_VERSION);
    add_entry(&m, "precision", "fp32");
    // Cut between characters: half a character would be written as \xNN text.
    add_entry(&m, "model_file", "%.*s", (int)utf8_cut_length(g->path, 120), g->path);
    if (model_text) {
        char hash[32];
        format_model_hash(model_text, hash, sizeof hash);
        add_entry(&m, "model_hash", "%s", hash);
    }
    if (optimizer) add_entry(&m, "optimizer", "%s", optimizer_names[optimizer->kind]);
    if (place) describe_place(&m, place);
    char *mean = NULL, *std = NULL, *names = NULL;
    if (!rc) rc = checkpoint_inputs_format(inputs, &mean, &std, &names, st);
    add_owned(&m, "normalize_mean", mean, 0);
    add_owned(&m, "normalize_std", std, 1);
    add_owned(&m, "class_names", names, 2);
    CheckpointInputsEntry short_entries[CHECKPOINT_INPUTS_SHORT_KEYS];
    int short_count = checkpoint_inputs_short_entries(inputs, short_entries);
    for (int i = 0; i < short_count; i++)
        add_entry(&m, short_entries[i].key, "%s", short_entries[i].value);
    if (!rc) rc = write_file(outputs, list.count, &m, model_text, path, st);
    for (int i = 0; i < 3; i++) free(m.owned[i]);
    for (int i = 0; outputs && i < list.count; i++) free((void *)outputs[i].values);
    free(outputs);
    free(list.slots);
    return rc;
}

// ---- comparing a file with the graph ----

static int is_optimizer_name(const char *name) {
    return strncmp(name, OPTIMIZER_PREFIX, strlen(OPTIMIZER_PREFIX)) == 0;
}

static int listed(const SlotList *list, const char *name) {
    for (int i = 0; i < list->count; i++)
        if (strcmp(list->slots[i].name, name) == 0) return 1;
    return 0;
}

static void mismatch_hint(const char *model_path, int state_only, Status *st) {
    if (state_only)
        status_hint(st, "the parameters match, but the optimizer state does not: the file was "
                    "changed after trainer wrote it; resume from another checkpoint, or start "
                    "from its weights with `trainer train %s --init-from FILE`, which loads the "
                    "parameters only", model_path);
    else
        status_hint(st, "it was written for a different model file; to start from the layers "
                    "that match, use `trainer train MODEL --init-from FILE`");
}

// Every difference between the graph's slots and the file's tensors, in one message.
// `state_only`: the parameters match, so what differs is optimizer state.
static int check_same_tensors(const SlotList *list, const Safetensors *file, int skip_optimizer,
                              int state_only, const char *model_path, const char *path,
                              Status *st) {
    char missing[400] = "", unexpected[400] = "", reshaped[400] = "";
    int left_out[3] = {0, 0, 0};
    for (int i = 0; i < list->count; i++) {
        const SafetensorsTensor *t = safetensors_find(file, list->slots[i].name);
        if (!t) name_list_append(missing, sizeof missing, list->slots[i].name, &left_out[0]);
        else if (!shape_equal(&t->shape, list->slots[i].shape)) {
            char in_file[64], in_model[64], entry[300];
            snprintf(entry, sizeof entry, "%s (%s in the file, %s in the model)",
                     list->slots[i].name, shape_format(&t->shape, in_file, sizeof in_file),
                     shape_format(list->slots[i].shape, in_model, sizeof in_model));
            name_list_append(reshaped, sizeof reshaped, entry, &left_out[2]);
        }
    }
    for (int i = 0; i < file->count; i++)
        if (!(skip_optimizer && is_optimizer_name(file->tensors[i].name)) &&
            !listed(list, file->tensors[i].name))
            name_list_append(unexpected, sizeof unexpected, file->tensors[i].name, &left_out[1]);
    if (!missing[0] && !unexpected[0] && !reshaped[0]) return 0;
    char what[1300] = "";
    const char *labels[3] = {"missing ", "unexpected ", "other shape "};
    char *lists[3] = {missing, unexpected, reshaped};
    for (int i = 0; i < 3; i++) name_list_end(lists[i], sizeof missing, left_out[i]);
    for (int i = 0; i < 3; i++)
        if (lists[i][0])
            snprintf(what + strlen(what), sizeof what - strlen(what), "%s%s%s",
                     what[0] ? "; " : "", labels[i], lists[i]);
    status_fail_at(st, STATUS_BAD_INPUT, path, 0, 0, "the %s does not match the model: %s",
                   state_only ? "checkpoint's optimizer state" : "file", what);
    mismatch_hint(model_path, state_only, st);
    return STATUS_BAD_INPUT;
}

// What a load reports of a tensor's values: NaN or infinity, and the largest |value|.
static void note_values(const char *name, const float *values, size_t n, CheckpointLoaded *out,
                        int *nonfinite_left_out) {
    if (!all_finite(values, n)) {
        out->nonfinite_count++;
        name_list_append(out->nonfinite, sizeof out->nonfinite, name, nonfinite_left_out);
    }
    double largest = largest_finite(values, n);
    if (largest > out->largest_value) {
        out->largest_value = largest;
        text_escape(name, strlen(name), out->largest_value_tensor,
                    sizeof out->largest_value_tensor);
    }
}

static int load_slot(const Slot *s, const SafetensorsTensor *t, const Backend *b,
                     CheckpointLoaded *out, int *nonfinite_left_out, Status *st) {
    size_t n = shape_numel(s->shape);
    float *values = malloc(n * sizeof *values + 1);
    if (!values)
        return status_out_of_host_memory(st, n * sizeof *values + 1, "loading %s", s->name);
    safetensors_copy_f32(t, values);
    if (out) note_values(s->name, values, n, out, nonfinite_left_out);
    int rc = n ? b->copy_to_device(b, s->tensor->data, values, n * sizeof *values, st) : 0;
    free(values);
    return rc;
}

static int load_matching(const SlotList *list, const Safetensors *file, const Backend *b,
                         CheckpointLoaded *out, Status *st) {
    int left_out = 0;
    for (int i = 0; i < list->count; i++)
        TRY(load_slot(&list->slots[i], safetensors_find(file, list->slots[i].name), b, out,
                      &left_out, st));
    if (out) name_list_end(out->nonfinite, sizeof out->nonfinite, left_out);
    return 0;
}

// 1 when every parameter is in the file with its shape and nothing else is there but
// optimizer state: what differs is then the optimizer, not the model.
static int only_optimizer_differs(const SlotList *list, const Safetensors *file) {
    for (int i = 0; i < list->count; i++) {
        const SafetensorsTensor *t = safetensors_find(file, list->slots[i].name);
        if (!is_optimizer_name(list->slots[i].name) &&
            (!t || !shape_equal(&t->shape, list->slots[i].shape)))
            return 0;
    }
    for (int i = 0; i < file->count; i++)
        if (!is_optimizer_name(file->tensors[i].name) && !listed(list, file->tensors[i].name))
            return 0;
    return 1;
}

// Another optimizer's state shares no tensor name with this one's (adam's adam_m and adam_v
// against sgd's momentum, or none): 1 when either side holds state and none is in both. A
// state tensor renamed or dropped leaves the others shared: the file was changed, and its
// tensors are listed rather than blamed on the optimizer.
static int optimizer_state_disjoint(const SlotList *list, const Safetensors *file) {
    int any = 0;
    for (int i = 0; i < list->count; i++)
        if (is_optimizer_name(list->slots[i].name)) {
            if (safetensors_find(file, list->slots[i].name)) return 0;
            any = 1;
        }
    for (int i = 0; !any && i < file->count; i++) any = is_optimizer_name(file->tensors[i].name);
    return any;
}

// "adam_m and adam_v", "momentum" or "no state": the kinds of state tensor (the name's last
// part) among `names`, which may come from a file and so are escaped.
static void describe_state(const char *const *names, int count, char *text, size_t size) {
    char kinds[4][64];
    int kind_count = 0;
    for (int i = 0; i < count; i++) {
        if (!is_optimizer_name(names[i])) continue;
        const char *kind = strrchr(names[i], '.') + 1;  // the prefix holds a dot
        int seen = 0;
        for (int k = 0; k < kind_count; k++) seen |= strcmp(kinds[k], kind) == 0;
        if (!seen && kind_count < 4)
            text_escape(kind, strlen(kind), kinds[kind_count++], sizeof kinds[0]);
    }
    if (!kind_count) {
        snprintf(text, size, "no state");
        return;
    }
    text[0] = '\0';
    for (int k = 0; k < kind_count; k++)
        snprintf(text + strlen(text), size - strlen(text), "%s%s",
                 k == 0 ? "" : k + 1 == kind_count ? " and " : ", ", kinds[k]);
    snprintf(text + strlen(text), size - strlen(text), " for each parameter");
}

// The checkpoint's optimizer is not the model file's: say both, since "a different model
// file" sends the user looking at layers that are the same.
static int optimizer_changed(const Graph *g, const OptimizerConfig *optimizer,
                             const SlotList *list, const Safetensors *file, const char *path,
                             Status *st) {
    const char **names = calloc((size_t)(file->count + list->count) + 1, sizeof *names);
    if (!names)
        return status_out_of_host_memory(st,
                                         ((size_t)(file->count + list->count) + 1) * sizeof *names,
                                         "comparing tensor names");
    char file_state[160], model_state[160];
    for (int i = 0; i < file->count; i++) names[i] = file->tensors[i].name;
    describe_state(names, file->count, file_state, sizeof file_state);
    for (int i = 0; i < list->count; i++) names[i] = list->slots[i].name;
    describe_state(names, list->count, model_state, sizeof model_state);
    free(names);
    const char *written = safetensors_metadata(file, "optimizer");
    char file_optimizer[96] = "an optimizer it does not name", model_optimizer[96];
    if (written) text_escape(written, strlen(written), file_optimizer, sizeof file_optimizer);
    // sgd with and without momentum share the name but not the state.
    if (written && strcmp(written, "sgd") == 0)
        snprintf(file_optimizer + strlen(file_optimizer),
                 sizeof file_optimizer - strlen(file_optimizer), " %s momentum",
                 strcmp(file_state, "no state") == 0 ? "without" : "with");
    if (optimizer->kind == OPTIMIZER_SGD && optimizer->momentum != 0.0)
        snprintf(model_optimizer, sizeof model_optimizer, "sgd with momentum=%g",
                 optimizer->momentum);
    else
        snprintf(model_optimizer, sizeof model_optimizer, "%s%s",
                 optimizer_names[optimizer->kind],
                 optimizer->kind == OPTIMIZER_SGD ? " without momentum" : "");
    char where[600];
    if (optimizer->line) snprintf(where, sizeof where, "%s:%d", g->path, optimizer->line);
    else snprintf(where, sizeof where, "%s (no optimizer line: the default)", g->path);
    status_fail_at(st, STATUS_BAD_INPUT, path, 0, 0, "the checkpoint holds optimizer state for "
                   "%s (%s), but %s asks for %s (%s): the optimizer cannot change on resume",
                   file_optimizer, file_state, where, model_optimizer, model_state);
    status_hint(st, "resume with the optimizer the checkpoint was trained with (%s), or start "
                    "from its weights with `trainer train %s --init-from %s`, which loads the "
                    "parameters only (the optimizer and the epochs start afresh)",
                file_optimizer, g->path, path);
    return STATUS_BAD_INPUT;
}

// adam and adamw keep the same state, so only the name the checkpoint records tells them
// apart; a checkpoint that records none (written before it did) is taken as it is.
static int optimizer_renamed(const OptimizerConfig *optimizer, const Safetensors *file) {
    const char *written = safetensors_metadata(file, "optimizer");
    return written && strcmp(written, optimizer_names[optimizer->kind]) != 0;
}

static int load_exact(Graph *g, const OptimizerConfig *optimizer, const Backend *b,
                      const char *path, const Safetensors *file, CheckpointLoaded *out,
                      Status *st) {
    SlotList list;
    TRY(list_slots(g, optimizer, &list, st));
    int state_only = optimizer && only_optimizer_differs(&list, file);
    int rc = check_same_tensors(&list, file, optimizer == NULL, state_only, g->path, path, st);
    if (optimizer && (rc ? state_only : 1) &&
        (optimizer_renamed(optimizer, file) || optimizer_state_disjoint(&list, file)))
        rc = optimizer_changed(g, optimizer, &list, file, path, st);
    if (!rc) rc = load_matching(&list, file, b, out, st);
    if (!rc && out) out->model_changed = model_text_changed(g, file);
    free(list.slots);
    return rc;
}

int checkpoint_load_weights(Graph *g, const Backend *b, const char *path, CheckpointLoaded *out,
                            Status *st) {
    memset(out, 0, sizeof *out);
    Safetensors file;
    TRY(safetensors_read_file(path, &file, st));
    int rc = load_exact(g, NULL, b, path, &file, out, st);
    if (!rc) rc = checkpoint_inputs_read(&file, path, &out->inputs, st);
    safetensors_free(&file);
    return rc;
}

void checkpoint_loaded_free(CheckpointLoaded *loaded) { checkpoint_inputs_free(&loaded->inputs); }

// A run started from values that are NaN or infinite diverges at its first step and blames
// the learning rate: --resume and --init-from refuse them, naming the tensors. `file` is
// what the message calls the file ("the checkpoint").
static int refuse_nonfinite_loaded(const CheckpointLoaded *loaded, const char *file,
                                   const char *path, const char *hint, Status *st) {
    if (!loaded->nonfinite_count) return 0;
    status_fail_at(st, STATUS_BAD_INPUT, path, 0, 0, "%s holds NaN or infinite values in %d "
                   "tensor%s: %s", file, loaded->nonfinite_count,
                   loaded->nonfinite_count == 1 ? "" : "s", loaded->nonfinite);
    status_hint(st, "%s", hint);
    return STATUS_BAD_INPUT;
}

// A refusal of metadata `key`, whose value is `text` (NULL: absent), shown escaped.
static int bad_metadata(const char *path, const char *key, const char *text,
                        const char *expected, const char *hint, Status *st) {
    char escaped[64] = "(absent)";
    if (text) text_escape(text, strlen(text), escaped, sizeof escaped);
    status_fail_at(st, STATUS_BAD_INPUT, path, 0, 0, "checkpoint metadata '%s' is %s; expected "
                   "%s", key, escaped, expected);
    status_hint(st, "%s", hint);
    return STATUS_BAD_INPUT;
}

// A whole number in metadata `key`, within [min, max].
static int metadata_number(const Safetensors *file, const char *key, long min, long max,
                           long *value, const char *path, Status *st) {
    const char *text = safetensors_metadata(file, key);
    char *end = NULL;
    errno = 0;
    *value = text ? strtol(text, &end, 10) : 0;
    if (text && end != text && !*end && !errno && *value >= min && *value <= max) return 0;
    char expected[64];
    snprintf(expected, sizeof expected, "a whole number from %ld to %ld", min, max);
    return bad_metadata(path, key, text, expected, "resume from a checkpoint written by `trainer "
                        "train --checkpoint DIR`; a file from --save holds weights only (use "
                        "--init-from)", st);
}

// The test accuracy the file records, from 0 to 1; absent (no test set, or a step file
// written mid-epoch): -1. A value with other text in it would skew which epoch counts as the
// best, so it is refused, with `hint`.
static int metadata_accuracy(const Safetensors *file, const char *path, const char *hint,
                             double *value, Status *st) {
    const char *text = safetensors_metadata(file, "test_accuracy");
    *value = -1.0;
    if (!text) return 0;
    char *end = NULL;
    double number = strtod(text, &end);
    if (end == text || *end || !(number >= 0 && number <= 1))
        return bad_metadata(path, "test_accuracy", text, "a number from 0 to 1", hint, st);
    *value = number;
    return 0;
}

static int read_place(const Safetensors *file, const char *path, CheckpointPlace *place,
                      Status *st) {
    long epochs, step, steps, seed, batch;
    TRY(metadata_number(file, "epoch", 0, 1000000, &epochs, path, st));
    TRY(metadata_number(file, "step_in_epoch", 0, 1L << 30, &step, path, st));
    TRY(metadata_number(file, "optimizer_steps", 0, 0x7fffffffL, &steps, path, st));
    TRY(metadata_number(file, "seed", 0, 0x7fffffffL, &seed, path, st));
    TRY(metadata_number(file, "batch", 1, 1L << 20, &batch, path, st));
    double accuracy;
    TRY(metadata_accuracy(file, path, "the file was changed after trainer wrote it; resume from "
                          "another checkpoint in its folder", &accuracy, st));
    long evaluated = 1;
    if (safetensors_metadata(file, "epoch_evaluated"))
        TRY(metadata_number(file, "epoch_evaluated", 0, 1, &evaluated, path, st));
    *place = (CheckpointPlace){.epochs_done = (int)epochs, .step_in_epoch = (int)step,
                               .optimizer_steps = steps, .seed = seed, .batch = (int)batch,
                               .test_accuracy = accuracy,
                               .epoch_evaluated = (int)evaluated};
    // Only compared and shown (escaped): any text will do, cut to fit.
    const char *settings = safetensors_metadata(file, "optimizer_settings");
    const char *schedule = safetensors_metadata(file, "schedule");
    if (settings)
        snprintf(place->optimizer_settings, sizeof place->optimizer_settings, "%s", settings);
    if (schedule) snprintf(place->schedule, sizeof place->schedule, "%s", schedule);
    return 0;
}

int checkpoint_load_resume_parsed(Graph *g, const OptimizerConfig *optimizer, const Backend *b,
                                  const Safetensors *file, const char *path,
                                  CheckpointLoaded *out, Status *st) {
    memset(out, 0, sizeof *out);
    // The place first: a weights-only file (from --save) is told apart from another model.
    TRY(read_place(file, path, &out->place, st));
    TRY(load_exact(g, optimizer, b, path, file, out, st));
    out->has_place = 1;
    return refuse_nonfinite_loaded(out, "the checkpoint", path, "training had diverged when it "
                                   "was written; resume from an earlier checkpoint in the "
                                   "folder, or start again with a lower --lr", st);
}

int checkpoint_best_accuracy(const char *folder, double *accuracy, Status *st) {
    char path[1100];
    checkpoint_folder_file(folder, "best.safetensors", path, sizeof path);
    *accuracy = -1.0;
    Safetensors file;
    Status ignored;
    if (safetensors_read_header(path, &file, &ignored)) return 0;
    char hint[1300];
    snprintf(hint, sizeof hint, "the file was changed after trainer wrote it; move %s out of the "
             "folder (the run writes a new one at its best evaluated epoch), or give "
             "--checkpoint another folder", path);
    int rc = metadata_accuracy(&file, path, hint, accuracy, st);
    safetensors_free(&file);
    return rc;
}

int checkpoint_init_from(Graph *g, const Backend *b, const char *path, int *loaded,
                         char *skipped, size_t skipped_size, Status *st) {
    Safetensors file;
    SlotList list;
    *loaded = 0;
    skipped[0] = '\0';
    TRY(safetensors_read_file(path, &file, st));
    CheckpointLoaded found;
    memset(&found, 0, sizeof found);
    int rc = list_slots(g, NULL, &list, st), left_out = 0, nonfinite_left_out = 0;
    for (int i = 0; !rc && i < list.count; i++) {
        const SafetensorsTensor *t = safetensors_find(&file, list.slots[i].name);
        if (!t || !shape_equal(&t->shape, list.slots[i].shape)) {
            name_list_append(skipped, skipped_size, list.slots[i].name, &left_out);
            continue;
        }
        rc = load_slot(&list.slots[i], t, b, &found, &nonfinite_left_out, st);
        *loaded += !rc;
    }
    name_list_end(skipped, skipped_size, left_out);
    name_list_end(found.nonfinite, sizeof found.nonfinite, nonfinite_left_out);
    if (!rc)
        rc = refuse_nonfinite_loaded(&found, "the file", path, "the run that wrote it had "
                                     "diverged; start from an earlier checkpoint of that run, "
                                     "or without --init-from", st);
    free(list.slots);
    safetensors_free(&file);
    return rc;
}

// ---- the folder ----

#define STEP_PREFIX "step-"
#define STEP_SUFFIX ".safetensors"

void checkpoint_folder_file(const char *folder, const char *name, char *path, size_t size) {
    // `--resume ck/` would otherwise print `ck//step-...`: the folder's own trailing slashes
    // give way to the one joining it to the name (a folder of only slashes is the root).
    size_t length = strlen(folder);
    while (length > 1 && folder[length - 1] == '/') length--;
    int root = length == 1 && folder[0] == '/';
    snprintf(path, size, "%.*s%s%s", (int)length, folder, root ? "" : "/", name);
}

void checkpoint_step_path(const char *folder, long optimizer_steps, char *path, size_t size) {
    // Zero-padded, so that names sort in step order for people listing the folder too.
    char name[64];
    snprintf(name, sizeof name, STEP_PREFIX "%010ld" STEP_SUFFIX, optimizer_steps);
    checkpoint_folder_file(folder, name, path, size);
}

static int folder_failed(const char *folder, const char *what, Status *st) {
    status_fail_at(st, STATUS_BAD_INPUT, folder, 0, 0, "cannot use the checkpoint folder: %s: %s",
                   what, strerror(errno));
    status_hint(st, "pass --checkpoint a folder you can write to");
    return STATUS_BAD_INPUT;
}

int checkpoint_folder_prepare(const char *folder, int *swept, Status *st) {
    if (make_directories(folder)) return folder_failed(folder, "creating it", st);
    *swept = atomic_file_sweep(folder);
    char probe[1100];
    checkpoint_folder_file(folder, ".write-probe.tmp", probe, sizeof probe);
    FILE *f = fopen(probe, "wb");
    if (!f) return folder_failed(folder, "writing a probe file", st);
    fclose(f);
    remove(probe);
    return 0;
}

// The step count in a step file's name; -1 for any other name.
static long step_of_name(const char *name) {
    size_t n = strlen(name), prefix = strlen(STEP_PREFIX), suffix = strlen(STEP_SUFFIX);
    if (n <= prefix + suffix || strncmp(name, STEP_PREFIX, prefix) != 0 ||
        strcmp(name + n - suffix, STEP_SUFFIX) != 0)
        return -1;
    long steps = 0;
    for (size_t i = prefix; i < n - suffix; i++) {
        if (name[i] < '0' || name[i] > '9' || steps > 100000000000L) return -1;
        steps = steps * 10 + (name[i] - '0');
    }
    return steps;
}

static int newer_step_first(const void *a, const void *b) {
    long x = *(const long *)a, y = *(const long *)b;
    return (x < y) - (x > y);
}

// The step counts of the folder's step files, newest first.
static int list_steps(const char *folder, long **steps, int *count) {
    *steps = NULL;
    *count = 0;
    DIR *dir = opendir(folder);
    if (!dir) return -1;
    int capacity = 0;
    struct dirent *entry;
    while ((entry = readdir(dir)) != NULL) {
        long s = step_of_name(entry->d_name);
        if (s < 0) continue;
        if (*count == capacity) {
            capacity = capacity ? 2 * capacity : 16;
            long *grown = realloc(*steps, (size_t)capacity * sizeof *grown);
            if (!grown) break;
            *steps = grown;
        }
        (*steps)[(*count)++] = s;
    }
    closedir(dir);
    // qsort, not an insertion sort: readdir gives the names in hash order, and a run that
    // keeps every checkpoint lists the folder at each save (4,000 saves of a tiny model with
    // --keep-last 1000000 took 46.7 s so, 8.2 s now; 3.0 s keeping 3).
    if (*count > 1) qsort(*steps, (size_t)*count, sizeof **steps, newer_step_first);
    return 0;
}

// The folder's newest step file into path: 1, or 0 when it has none, -1 when it cannot be
// listed (errno says why).
static int newest_step_file(const char *folder, char *path, size_t size) {
    long *steps;
    int count;
    if (list_steps(folder, &steps, &count) != 0) return -1;
    if (count > 0) checkpoint_step_path(folder, steps[0], path, size);
    free(steps);
    return count > 0;
}

// Whether the folder holds best.safetensors, named into path either way.
static int holds_best(const char *folder, char *path, size_t size) {
    checkpoint_folder_file(folder, "best.safetensors", path, size);
    FILE *f = fopen(path, "rb");
    if (f) fclose(f);
    return f != NULL;
}

int checkpoint_latest(const char *folder, char *path, size_t size, Status *st) {
    int found = newest_step_file(folder, path, size);
    if (found < 0) {
        status_fail_at(st, STATUS_BAD_INPUT, folder, 0, 0, "cannot open the checkpoint folder: "
                       "%s", strerror(errno));
        status_hint(st, "pass --resume the folder given to --checkpoint, or one checkpoint file");
        return STATUS_BAD_INPUT;
    }
    if (found) return 0;
    // A run that stopped before its first step file can leave best.safetensors alone; it is
    // a whole checkpoint too, but of the best epoch, not where the run stopped, so it is
    // named for the user to choose rather than taken.
    char best[1100];
    if (holds_best(folder, best, sizeof best)) {
        status_fail_at(st, STATUS_BAD_INPUT, folder, 0, 0, "no step checkpoint "
                       "(step-*.safetensors) in the folder, only best.safetensors (the best "
                       "epoch's, which need not be the last)");
        status_hint(st, "to continue from that best epoch, --resume %.1000s", best);
        return STATUS_BAD_INPUT;
    }
    status_fail_at(st, STATUS_BAD_INPUT, folder, 0, 0, "no checkpoint (step-*.safetensors) in "
                   "the folder");
    status_hint(st, "train with --checkpoint %s first", folder);
    return STATUS_BAD_INPUT;
}

int checkpoint_folder_holds(const char *folder, char *path, size_t size) {
    int found = newest_step_file(folder, path, size);
    if (found) return found > 0;
    if (holds_best(folder, path, size)) return 1;
    path[0] = '\0';
    return 0;
}

int checkpoint_prune(const char *folder, int keep, Status *st) {
    long *steps;
    int count;
    if (list_steps(folder, &steps, &count) != 0) return 0;
    for (int i = keep; i < count; i++) {
        char path[1100];
        checkpoint_step_path(folder, steps[i], path, sizeof path);
        remove(path);
    }
    free(steps);
    return 0;
}

#include "core/graph.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/suggest.h"
#include "core/data_statements.h"
#include "core/lr_schedule.h"

const char *const optimizer_names[] = {"sgd", "adam", "adamw", NULL};
extern const char *const activation_names[];

// Statements that configure training rather than add a layer.
static const char *const setting_words[] = {"loss", "optimizer", "train", "schedule",
                                             "data", "normalize", "augment"};
enum { SETTING_WORD_COUNT = sizeof setting_words / sizeof setting_words[0], MAX_STATEMENT_WORDS = 64 };

// Every word that may start a statement (NULL-terminated), for suggestions and hints.
static int statement_words(const char **words) {
    int n = 0;
    for (int i = 0; layer_kind_word(i) && n < MAX_STATEMENT_WORDS - SETTING_WORD_COUNT - 1; i++)
        words[n++] = layer_kind_word(i);
    for (int i = 0; i < SETTING_WORD_COUNT; i++) words[n++] = setting_words[i];
    words[n] = NULL;
    return n;
}

typedef struct Builder {
    const ModelFile *file;
    Graph *g;
    RunConfig *config;
    Status *st;
    int capacity;
    int loss_line;
    int optimizer_line;
    int train_line;
    int schedule_line;
    // The next number each word's default names try ("dense" -> 4 after dense1..dense3).
    struct {
        char word[32];
        int next;
    } name_counters[32];
    int name_counter_count;
} Builder;

// A BAD_INPUT error at a place in the model file, with a hint.
static int fail_at(const Builder *b, int line, int column, const char *hint, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

static int fail_at(const Builder *b, int line, int column, const char *hint, const char *fmt, ...) {
    char message[sizeof b->st->message];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(message, sizeof message, fmt, ap);
    va_end(ap);
    status_fail_at(b->st, STATUS_BAD_INPUT, b->file->path, line, column, "%s", message);
    if (hint) status_hint(b->st, "%s", hint);
    return STATUS_BAD_INPUT;
}

static void suggestion_suffix(char *buf, size_t size, const char *near) {
    if (near) snprintf(buf, size, "; did you mean '%s'?", near);
    else buf[0] = '\0';
}

// ---- layers and names ----------------------------------------------------------------

static Layer *find_layer(const Graph *g, const char *name) {
    for (int i = 0; i < g->count; i++)
        if (strcmp(g->layers[i]->name, name) == 0) return g->layers[i];
    return NULL;
}

static int add_layer(Builder *b, Layer *l) {
    Graph *g = b->g;
    if (g->count == b->capacity) {
        int capacity = b->capacity ? 2 * b->capacity : 16;
        Layer **grown = realloc(g->layers, (size_t)capacity * sizeof *grown);
        if (!grown)
            return status_out_of_host_memory(b->st, (size_t)capacity * sizeof *grown,
                                             "for the model's layers");
        g->layers = grown;
        b->capacity = capacity;
    }
    g->layers[g->count++] = l;
    return 0;
}

static Layer *new_layer(const Builder *b, const LayerKind *kind, const ModelStatement *s) {
    Layer *l = calloc(1, sizeof *l);
    if (!l) return NULL;
    l->kind = kind;
    l->path = b->g->path;
    l->line = s->line;
    l->column = s->kind_column;
    return l;
}

// The counter of a word's default names, or NULL when the table is full (then the search
// starts at 1, as it always did).
static int *name_counter(Builder *b, const char *word) {
    for (int i = 0; i < b->name_counter_count; i++)
        if (strcmp(b->name_counters[i].word, word) == 0) return &b->name_counters[i].next;
    int max_counters = (int)(sizeof b->name_counters / sizeof b->name_counters[0]);
    if (b->name_counter_count == max_counters ||
        strlen(word) >= sizeof b->name_counters[0].word)
        return NULL;
    int i = b->name_counter_count++;
    snprintf(b->name_counters[i].word, sizeof b->name_counters[i].word, "%s", word);
    b->name_counters[i].next = 1;
    return &b->name_counters[i].next;
}

// "dense1", "dense2", ...: numbered per statement word, like Keras' dense_1; the first of
// word1, word2, ... that no layer has. Layers are only added while building, so every
// number below the word's counter is taken (given here, or passed because a name= held
// it) and the search starts there: from 1 each time, N unnamed layers of one kind cost
// N^3/2 name comparisons (2,000 dense layers: 8.6 s in `trainer check`).
static void default_name(Builder *b, const char *word, char *out, size_t size) {
    int *next = name_counter(b, word);
    int n = next ? *next : 1;
    for (;; n++) {
        snprintf(out, size, "%s%d", word, n);
        if (!find_layer(b->g, out)) break;
    }
    if (next) *next = n + 1;
}

static int valid_name(const char *name) {
    if (!name[0] || !(isalpha((unsigned char)name[0]) || name[0] == '_')) return 0;
    for (const char *p = name; *p; p++)
        if (!(isalnum((unsigned char)*p) || *p == '_' || *p == '-')) return 0;
    return strlen(name) < LAYER_NAME_MAX;
}

static int set_layer_name(Builder *b, Layer *l, const ModelStatement *s, const char *word) {
    const ModelAttr *name = model_attr_find(s, "name");
    if (!name) {
        default_name(b, word, l->name, sizeof l->name);
        return 0;
    }
    if (!valid_name(name->value))
        return fail_at(b, s->line, name->value_column,
                       "names start with a letter or '_' and use letters, digits, '_' and '-'",
                       "name=%s is not a valid layer name", name->value);
    const Layer *other = find_layer(b->g, name->value);
    if (other) {
        char hint[160];
        snprintf(hint, sizeof hint, "rename one of them; names are what from= refers to");
        return fail_at(b, s->line, name->value_column, hint,
                       "duplicate layer name '%s' (first used on line %d)", name->value,
                       other->line);
    }
    snprintf(l->name, sizeof l->name, "%.*s", LAYER_NAME_MAX - 1, name->value);
    return 0;
}

// Line of a later statement that names a layer `name`, or 0.
static int later_definition(const Builder *b, const ModelStatement *from_statement,
                            const char *name) {
    const ModelFile *f = b->file;
    for (int i = 0; i < f->count; i++) {
        const ModelStatement *s = &f->statements[i];
        if (s->line <= from_statement->line) continue;
        const ModelAttr *a = model_attr_find(s, "name");
        if (a && strcmp(a->value, name) == 0) return s->line;
    }
    return 0;
}

// A layer's inputs: from= names, or the previous layer's output.
static int wire_inputs(Builder *b, Layer *l, const ModelStatement *s) {
    Graph *g = b->g;
    const ModelAttr *from = model_attr_find(s, "from");
    if (l->kind->input_count == 0) {
        if (from)
            return fail_at(b, s->line, from->key_column, "remove from=",
                           "%s takes no from=: it is where data enters", l->kind->name);
        return 0;
    }
    int variadic = l->kind->input_count == LAYER_INPUTS_VARIADIC;
    if (!from && variadic)
        return fail_at(b, s->line, s->kind_column,
                       "name the inputs, e.g. `add from=block_in,bn2` for a residual block",
                       "%s needs from= with 2 to %d layer names", l->kind->name, LAYER_MAX_INPUTS);
    if (!from) {
        Layer *previous = g->layers[g->count - 1];
        l->inputs[0] = previous->statement_output ? previous->statement_output : previous;
        l->input_count = 1;
        return 0;
    }
    char names[MODEL_VALUE_MAX];
    snprintf(names, sizeof names, "%s", from->value);
    for (char *name = names; name;) {
        char *comma = strchr(name, ',');
        if (comma) *comma = '\0';
        int column = from->value_column + (int)(name - names);
        if (variadic && l->input_count == LAYER_MAX_INPUTS)
            return fail_at(b, s->line, column,
                           "combine in two steps: one statement for the first inputs, a second "
                           "for its result and the rest",
                           "%s takes at most %d inputs, but from= names more", l->kind->name,
                           LAYER_MAX_INPUTS);
        if (!variadic && l->input_count == l->kind->input_count) {
            int named = 1;
            for (const char *p = from->value; *p; p++) named += *p == ',';
            return fail_at(b, s->line, column, "give exactly one layer name",
                           "%s takes %d input%s, but from=%s names %d", l->kind->name,
                           l->kind->input_count, l->kind->input_count == 1 ? "" : "s",
                           from->value, named);
        }
        Layer *source = find_layer(g, name);
        if (!source && strcmp(name, l->name) == 0)
            return fail_at(b, s->line, column, "name an earlier layer; a layer cannot read itself",
                           "from=%s names this layer itself", name);
        if (!source) {
            int later = later_definition(b, s, name);
            if (later) {
                char hint[128];
                snprintf(hint, sizeof hint,
                         "layers run in file order; move this statement below line %d", later);
                return fail_at(b, s->line, column, hint,
                               "from=%s names a layer defined later, on line %d", name, later);
            }
            const char **known = calloc((size_t)g->count + 1, sizeof *known);
            if (!known)
                return status_out_of_host_memory(b->st, ((size_t)g->count + 1) * sizeof *known,
                                                 "suggesting a layer name");
            for (int i = 0; i < g->count; i++) known[i] = g->layers[i]->name;
            char suffix[96];
            suggestion_suffix(suffix, sizeof suffix, suggest(name, known));
            free(known);
            return fail_at(b, s->line, column,
                           "from= takes the name= of an earlier layer (or its default name, "
                           "e.g. dense1); `trainer check` lists them",
                           "from=%s: no layer named '%s'%s", from->value, name, suffix);
        }
        l->inputs[l->input_count++] = source->statement_output ? source->statement_output : source;
        name = comma ? comma + 1 : NULL;
    }
    if (variadic && l->input_count < 2)
        return fail_at(b, s->line, from->value_column,
                       "name every input, e.g. from=a,b; a residual block adds the block's "
                       "input to its last layer's output",
                       "%s needs 2 or more inputs, but from= names only '%s'", l->kind->name,
                       from->value);
    return 0;
}

// ---- statements ----------------------------------------------------------------------

static int check_statement_keys(Builder *b, const ModelStatement *s, const LayerKind *kind) {
    const char *allowed[MODEL_ATTR_MAX + 8];
    int n = 0;
    allowed[n++] = "name";
    if (kind->input_count != 0) allowed[n++] = "from";
    if (kind->takes_act) allowed[n++] = "act";
    for (int i = 0; kind->keys[i] && n < MODEL_ATTR_MAX + 6; i++) allowed[n++] = kind->keys[i];
    allowed[n] = NULL;
    return model_check_keys(b->file->path, s, allowed, b->st);
}

// A statement with a bare word that its kind does not take (`dense relu units=10`).
static int reject_choice(Builder *b, const ModelStatement *s) {
    char hint[200];
    const char *act = suggest(s->choice, activation_names);
    if (act && strcmp(act, s->choice) == 0)
        snprintf(hint, sizeof hint, "to add an activation, write act=%s", s->choice);
    else
        snprintf(hint, sizeof hint, "settings are written key=value, e.g. units=10");
    return fail_at(b, s->line, s->choice_column, hint, "%s takes no bare word, found '%s'",
                   s->kind, s->choice);
}

// The activation layer that `act=NAME` on another layer stands for.
static int add_act_layer(Builder *b, Layer *owner, const ModelStatement *s) {
    const ModelAttr *act = model_attr_find(s, "act");
    if (!act) return 0;
    if (strcmp(act->value, "none") == 0 || strcmp(act->value, "linear") == 0) return 0;
    ModelStatement act_statement = {.line = s->line, .kind_column = act->key_column,
                                    .choice_column = act->value_column};
    snprintf(act_statement.kind, sizeof act_statement.kind, "act");
    snprintf(act_statement.choice, sizeof act_statement.choice, "%.*s", MODEL_WORD_MAX - 1,
             act->value);
    Layer *l = new_layer(b, layer_kind_find("act"), &act_statement);
    if (!l)
        return status_out_of_host_memory(b->st, sizeof *l, "for layer %s's activation",
                                         owner->name);
    l->column = act->key_column;
    snprintf(l->name, sizeof l->name, "%.*s.%s", LAYER_NAME_MAX - 8, owner->name, "act");
    l->inputs[0] = owner;
    l->input_count = 1;
    if (add_layer(b, l)) {
        free(l);
        return b->st->code;
    }
    owner->statement_output = l;
    return l->kind->configure(l, &act_statement, b->st);
}

static int build_layer(Builder *b, const ModelStatement *s, const LayerKind *kind,
                       const char *name_word) {
    Graph *g = b->g;
    if (b->loss_line)
        return fail_at(b, s->line, s->kind_column,
                       "the loss ends the model: move this layer above the loss statement",
                       "layer '%s' comes after the loss (line %d)", s->kind, b->loss_line);
    if (kind == layer_kind_find("input") && g->count > 0)
        return fail_at(b, s->line, s->kind_column,
                       "a model has exactly one input, as its first layer",
                       "second input layer (the first is on line %d)", g->layers[0]->line);
    if (kind != layer_kind_find("input") && g->count == 0)
        return fail_at(b, s->line, s->kind_column,
                       "start the model with e.g. `input shape=1x28x28` or `input shape=784`",
                       "the first layer must be `input`, found '%s'", s->kind);
    TRY(check_statement_keys(b, s, kind));
    Layer *l = new_layer(b, kind, s);
    if (!l) return status_out_of_host_memory(b->st, sizeof *l, "for a %s layer", s->kind);
    int rc = set_layer_name(b, l, s, name_word);
    if (!rc) rc = wire_inputs(b, l, s);
    if (!rc) rc = add_layer(b, l);
    if (rc) {
        free(l);
        return rc;
    }
    TRY(kind->configure(l, s, b->st));
    return add_act_layer(b, l, s);
}

static int build_loss(Builder *b, const ModelStatement *s) {
    if (b->loss_line)
        return fail_at(b, s->line, s->kind_column, "a model has one loss; remove one",
                       "second loss statement (the first is on line %d)", b->loss_line);
    if (!s->choice[0])
        return fail_at(b, s->line, s->kind_column,
                       "write `loss softmax_cross_entropy` (classification) or `loss mse`",
                       "loss needs a kind");
    const LayerKind *kind = loss_kind_find(s->choice);
    if (!kind) {
        char suffix[96];
        suggestion_suffix(suffix, sizeof suffix, suggest(s->choice, loss_kind_names));
        return fail_at(b, s->line, s->choice_column, "losses: softmax_cross_entropy, mse",
                       "unknown loss '%s'%s", s->choice, suffix);
    }
    if (b->g->count == 0)
        return fail_at(b, s->line, s->kind_column, "put the loss after the model's layers",
                       "loss before any layer");
    TRY(build_layer(b, s, kind, "loss"));
    b->loss_line = s->line;
    b->g->loss = b->g->layers[b->g->count - 1];
    return 0;
}

static int build_optimizer(Builder *b, const ModelStatement *s) {
    const char *path = b->file->path;
    OptimizerConfig *o = &b->config->optimizer;
    if (b->optimizer_line)
        return fail_at(b, s->line, s->kind_column, "keep one optimizer statement",
                       "second optimizer statement (the first is on line %d)", b->optimizer_line);
    if (!s->choice[0])
        return fail_at(b, s->line, s->kind_column, "write e.g. `optimizer adam lr=0.001`",
                       "optimizer needs a kind: sgd, adam or adamw");
    int kind = -1;
    for (int i = 0; optimizer_names[i]; i++)
        if (strcmp(s->choice, optimizer_names[i]) == 0) kind = i;
    if (kind < 0) {
        char suffix[96];
        suggestion_suffix(suffix, sizeof suffix, suggest(s->choice, optimizer_names));
        return fail_at(b, s->line, s->choice_column, "optimizers: sgd, adam, adamw",
                       "unknown optimizer '%s'%s", s->choice, suffix);
    }
    static const char *const sgd_keys[] = {"lr", "momentum", "nesterov", "weight_decay",
                                           "clip_norm", NULL};
    static const char *const adam_keys[] = {"lr", "beta1", "beta2", "eps", "weight_decay",
                                            "clip_norm", NULL};
    TRY(model_check_keys(path, s, kind == OPTIMIZER_SGD ? sgd_keys : adam_keys, b->st));
    o->kind = (OptimizerKind)kind;
    o->line = s->line;
    TRY(model_attr_float_interval(path, s, "lr", kind == OPTIMIZER_SGD ? 0.01 : 0.001, 0.0, 100.0,
                                  MODEL_EXCLUDE_MIN, &o->lr, b->st));
    TRY(model_attr_float(path, s, "weight_decay", kind == OPTIMIZER_ADAMW ? 0.01 : 0.0, 0.0, 10.0,
                         &o->weight_decay, b->st));
    TRY(model_attr_float_interval(path, s, "momentum", 0.0, 0.0, 1.0, MODEL_EXCLUDE_MAX, &o->momentum,
                                  b->st));
    TRY(model_attr_bool(path, s, "nesterov", 0, &o->nesterov, b->st));
    TRY(model_attr_float_interval(path, s, "beta1", 0.9, 0.0, 1.0, MODEL_EXCLUDE_MAX, &o->beta1,
                                  b->st));
    TRY(model_attr_float_interval(path, s, "beta2", 0.999, 0.0, 1.0, MODEL_EXCLUDE_MAX, &o->beta2,
                                  b->st));
    TRY(model_attr_float(path, s, "eps", 1e-8, 1e-30, 1.0, &o->eps, b->st));
    TRY(model_attr_float_interval(path, s, "clip_norm", 0.0, 0.0, 1e30, MODEL_EXCLUDE_MIN,
                                  &o->clip_norm, b->st));
    if (o->nesterov && o->momentum == 0.0) {
        const ModelAttr *a = model_attr_find(s, "nesterov");
        return fail_at(b, s->line, a->key_column, "add e.g. momentum=0.9",
                       "nesterov=true needs momentum > 0");
    }
    b->optimizer_line = s->line;
    return 0;
}

// `train precision=bf16`: what GEMMs and convolutions compute in; --precision overrides it.
static int build_precision(Builder *b, const ModelStatement *s) {
    const ModelAttr *a = model_attr_find(s, "precision");
    if (!a) return 0;
    int index;
    TRY(model_attr_choice(b->file->path, s, "precision", precision_names, 0, &index, b->st));
    PrecisionConfig *p = &b->config->precision;
    p->precision = (Precision)(PRECISION_FP32 + index);
    snprintf(p->source, sizeof p->source, "precision=");
    p->line = s->line;
    p->column = a->value_column;
    return 0;
}

static int build_train(Builder *b, const ModelStatement *s) {
    const char *path = b->file->path;
    TrainConfig *t = &b->config->train;
    if (b->train_line)
        return fail_at(b, s->line, s->kind_column, "keep one train statement",
                       "second train statement (the first is on line %d)", b->train_line);
    if (s->choice[0]) return reject_choice(b, s);
    static const char *const train_keys[] = {"batch", "epochs", "seed", "early_stop",
                                             "precision", "fuse", NULL};
    TRY(model_check_keys(path, s, train_keys, b->st));
    TRY(build_precision(b, s));
    long batch, epochs, early_stop;
    TRY(model_attr_int(path, s, "batch", t->batch, 1, 1 << 20, &batch, b->st));
    TRY(model_attr_int(path, s, "epochs", t->epochs, 1, 1000000, &epochs, b->st));
    TRY(model_attr_int(path, s, "seed", t->seed, 0, 0x7fffffffL, &t->seed, b->st));
    TRY(model_attr_int(path, s, "early_stop", t->early_stop, 0, 1000000, &early_stop, b->st));
    t->batch = (int)batch;
    t->epochs = (int)epochs;
    t->early_stop = (int)early_stop;
    int fuse;
    TRY(model_attr_bool(path, s, "fuse", 1, &fuse, b->st));
    t->no_fusion = !fuse;
    t->line = s->line;
    b->train_line = s->line;
    return 0;
}

static int build_schedule(Builder *b, const ModelStatement *s) {
    if (b->schedule_line)
        return fail_at(b, s->line, s->kind_column, "keep one schedule statement",
                       "second schedule statement (the first is on line %d)", b->schedule_line);
    TRY(schedule_read_statement(b->file->path, s, &b->config->schedule, b->st));
    b->schedule_line = s->line;
    return 0;
}

// `data spec=SPEC val_split=F`: the dataset the model is meant for; the command line's
// --data and --val-split override it. tools/ reads it; the graph does not.
static int build_data(Builder *b, const ModelStatement *s) {
    static const char *const data_keys[] = {"spec", "val_split", NULL};
    DataConfig *d = &b->config->data;
    if (d->line)
        return fail_at(b, s->line, s->kind_column, "keep one data statement",
                       "second data statement (the first is on line %d)", d->line);
    if (s->choice[0]) return reject_choice(b, s);
    TRY(model_check_keys(b->file->path, s, data_keys, b->st));
    const ModelAttr *spec = model_attr_find(s, "spec");
    if (spec) snprintf(d->spec, sizeof d->spec, "%s", spec->value);
    if (spec) d->spec_column = spec->value_column;
    snprintf(d->model_path, sizeof d->model_path, "%s", b->file->path);
    d->line = s->line;
    return model_attr_float_interval(b->file->path, s, "val_split", 0.0, 0.0, 1.0,
                                     MODEL_EXCLUDE_MAX, &d->val_split, b->st);
}

// One statement of a kind: `line` is where the first one was (0: none yet).
static int check_single(Builder *b, const ModelStatement *s, int line) {
    if (!line) return 0;
    return fail_at(b, s->line, s->kind_column, "keep one of them",
                   "second %s statement (the first is on line %d)", s->kind, line);
}

static int build_normalize(Builder *b, const ModelStatement *s) {
    TRY(check_single(b, s, b->config->data.normalize.line));
    return normalize_read_statement(b->file->path, s, &b->config->data.normalize, b->st);
}

static int build_augment(Builder *b, const ModelStatement *s) {
    TRY(check_single(b, s, b->config->data.augment.line));
    return augment_read_statement(b->file->path, s, &b->config->data.augment, b->st);
}

static int build_statement(Builder *b, const ModelStatement *s) {
    if (strcmp(s->kind, "normalize") == 0) return build_normalize(b, s);
    if (strcmp(s->kind, "augment") == 0) return build_augment(b, s);
    if (strcmp(s->kind, "schedule") == 0) return build_schedule(b, s);
    if (strcmp(s->kind, "data") == 0) return build_data(b, s);
    if (strcmp(s->kind, "loss") == 0) return build_loss(b, s);
    if (strcmp(s->kind, "optimizer") == 0) return build_optimizer(b, s);
    if (strcmp(s->kind, "train") == 0) return build_train(b, s);
    const LayerKind *kind = layer_kind_find(s->kind);
    if (!kind) {
        const char *words[MAX_STATEMENT_WORDS];
        int count = statement_words(words);
        char suffix[96], hint[512] = "kinds:";
        suggestion_suffix(suffix, sizeof suffix, suggest(s->kind, words));
        for (int i = 0; i < count; i++)
            snprintf(hint + strlen(hint), sizeof hint - strlen(hint), " %s", words[i]);
        snprintf(hint + strlen(hint), sizeof hint - strlen(hint), " (docs/model-format.md)");
        return fail_at(b, s->line, s->kind_column, hint, "unknown kind '%s'%s", s->kind, suffix);
    }
    if (s->choice[0] && strcmp(s->kind, "act") != 0) return reject_choice(b, s);
    const char *name_word = strcmp(s->kind, "act") == 0 && s->choice[0] ? s->choice : s->kind;
    return build_layer(b, s, kind, name_word);
}

// ---- validation after all statements ---------------------------------------------------

static int infer_shapes(Builder *b) {
    Graph *g = b->g;
    for (int i = 0; i < g->count; i++) {
        Layer *l = g->layers[i];
        for (int k = 0; k < l->input_count; k++) {
            const Layer *in = l->inputs[k];
            if (in->out_dtype != DTYPE_F32) {
                fail_at(b, l->line, l->column,
                        "set dtype=f32 on the input: the data loader converts bytes to floats, "
                        "and the CPU backend computes in f32",
                        "dtype mismatch: %s computes in f32, but its input '%s' (line %d) is %s",
                        l->kind->name, in->name, in->line, dtype_name(in->out_dtype));
                snprintf(b->st->error_name, sizeof b->st->error_name, "dtype-mismatch");
                return STATUS_BAD_INPUT;
            }
        }
        TRY(l->kind->infer(l, b->st));
        for (int p = 0; p < l->param_count; p++) {
            char suffix[16];
            snprintf(suffix, sizeof suffix, "%.15s", l->params[p].name);
            snprintf(l->params[p].name, sizeof l->params[p].name, "%s.%s", l->name, suffix);
        }
    }
    return 0;
}

// A layer whose output no later layer reads would run forward for nothing, and backward
// would hand it a gradient nobody allocated: refuse it while the model file can say where.
static int check_outputs_used(Builder *b) {
    const Graph *g = b->g;
    for (int i = 0; i < g->count; i++) {
        const Layer *l = g->layers[i];
        if (l == g->loss) continue;
        int used = 0;
        for (int j = i + 1; j < g->count && !used; j++)
            for (int k = 0; k < g->layers[j]->input_count; k++)
                if (g->layers[j]->inputs[k] == l) used = 1;
        if (!used)
            return fail_at(b, l->line, l->column,
                           "remove the layer, or have a later layer read it with from=NAME",
                           "the output of layer '%s' is never used: no later layer reads it",
                           l->name);
    }
    return 0;
}

// Which gradients backward must produce, and where two consumers of one output must add
// theirs: walking layers in backward order, the first consumer to reach a producer
// writes its gradient, every later one adds to it. No zeroing pass is needed. An output
// gets a gradient only when a trainable parameter lies at or before it (through views and
// casts too): the input's, a flatten's of it or a cast's of it would cost a whole GEMM in
// the first dense layer's backward (dx) for a gradient nothing reads.
static int index_of(const Graph *g, const Layer *l) {
    int i = 0;
    while (g->layers[i] != l) i++;
    return i;
}

static int plan_gradients(Graph *g, Status *st) {
    // count > 0 here (graph_build checked); saying so keeps GCC 12's -O2 + sanitizer build
    // from warning that a negative count would make the size huge.
    if (g->count <= 0) return 0;
    // reaches[i]: layer i or one before it has a trainable parameter (layers are in order).
    int *reaches = calloc((size_t)g->count, sizeof *reaches);
    if (!reaches)
        return status_out_of_host_memory(st, (size_t)g->count * sizeof *reaches,
                                         "planning the gradients");
    for (int i = 0; i < g->count; i++) {
        Layer *l = g->layers[i];
        l->needs_grad = 0;  // planned again when graph_set_storage adds or removes casts
        for (int p = 0; p < l->param_count; p++) reaches[i] |= !l->params[p].buffer;
        for (int k = 0; k < l->input_count; k++) {
            int producer = index_of(g, l->inputs[k]);
            l->input_needs_grad[k] = reaches[producer];
            reaches[i] |= reaches[producer];
            if (l->input_needs_grad[k]) l->inputs[k]->needs_grad = 1;
        }
    }
    free(reaches);
    // count > 0 here (graph_build checked); saying so keeps GCC 12's -O2 + sanitizer build
    // from warning that a negative count would make the size huge.
    if (g->count <= 0) return 0;
    int *written = calloc((size_t)g->count, sizeof *written);
    if (!written)
        return status_out_of_host_memory(st, (size_t)g->count * sizeof *written,
                                         "planning the layers' outputs");
    for (int i = g->count - 1; i >= 0; i--) {
        Layer *l = g->layers[i];
        for (int k = 0; k < l->input_count; k++) {
            int producer = index_of(g, l->inputs[k]);
            l->input_grad_accumulate[k] = written[producer];
            written[producer] = 1;
        }
    }
    free(written);
    return 0;
}

int graph_build(const ModelFile *file, Graph *g, RunConfig *config, Status *st) {
    memset(g, 0, sizeof *g);
    snprintf(g->path, sizeof g->path, "%s", file->path);
    RunConfig unused;
    if (!config) config = &unused;
    *config = (RunConfig){
        .optimizer = {.kind = OPTIMIZER_ADAM, .lr = 0.001, .beta1 = 0.9, .beta2 = 0.999,
                      .eps = 1e-8},
        .train = {.batch = 32, .epochs = 1, .seed = 1}};
    Builder b = {.file = file, .g = g, .config = config, .st = st};
    if (file->text) {
        size_t length = strlen(file->text);
        if (!(g->model_text = malloc(length + 1))) {
            return status_out_of_host_memory(st, length + 1, "for the model's text while "
                                             "building %s", file->path);
        }
        memcpy(g->model_text, file->text, length + 1);
    }
    for (int i = 0; i < file->count; i++) {
        int rc = build_statement(&b, &file->statements[i]);
        if (rc) {
            graph_free(g);
            return rc;
        }
    }
    int rc = 0;
    if (g->count == 0) {
        int line = file->count ? file->statements[0].line : 1;
        rc = fail_at(&b, line, 1,
                     "a model starts with `input shape=...`, then layers, then `loss ...`; see "
                     "models/mlp.model",
                     "the model has no layers");
    } else if (!g->loss) {
        const Layer *last = g->layers[g->count - 1];
        rc = fail_at(&b, last->line, last->column,
                     "add `loss softmax_cross_entropy` (classification) or `loss mse` after the "
                     "last layer",
                     "the model has no loss after its last layer '%s'", last->name);
    }
    g->input = g->count ? g->layers[0] : NULL;
    if (!rc) rc = infer_shapes(&b);
    if (!rc) rc = check_outputs_used(&b);
    if (!rc) rc = plan_gradients(g, st);
    if (!rc) graph_fuse_activations(g, !config->train.no_fusion);
    if (rc) graph_free(g);
    return rc;
}

static void release_layer_memory(Layer *l) {
    tensor_free(&l->output);
    tensor_free(&l->grad);
    if (l->kind->release) l->kind->release(l);
}

void graph_free(Graph *g) {
    for (int i = 0; i < g->count; i++) {
        Layer *l = g->layers[i];
        release_layer_memory(l);
        for (int p = 0; p < l->param_count; p++) {
            tensor_free(&l->params[p].value);
            tensor_free(&l->params[p].grad);
            tensor_free(&l->params[p].state[0]);
            tensor_free(&l->params[p].state[1]);
        }
        free(l->config);
        free(l);
    }
    tensor_free(&g->labels);
    tensor_free(&g->loss_sums);
    free(g->layers);
    free(g->model_text);
    memset(g, 0, sizeof *g);
}

// ---- fusion ----------------------------------------------------------------------------

// Whether any layer but `except` reads l's output.
static int read_by_other(const Graph *g, const Layer *l, const Layer *except) {
    for (int i = 0; i < g->count; i++) {
        const Layer *other = g->layers[i];
        if (other == except) continue;
        for (int k = 0; k < other->input_count; k++)
            if (other->inputs[k] == l) return 1;
    }
    return 0;
}

int graph_fuse_activations(Graph *g, int enabled) {
    int fused = 0;
    for (int i = 0; i < g->count; i++) {
        Layer *l = g->layers[i];
        l->fused_activation = NULL;
        FusedActivation act;
        Layer *next = l->statement_output;
        if (!enabled || !l->kind->fuses_act || !next || !activation_layer_fusable(next, &act) ||
            read_by_other(g, l, next))
            continue;
        l->fused_activation = next;
        fused++;
    }
    return fused;
}

// ---- internal layers: what graph_set_storage and graph_set_layouts insert ----------------

extern const LayerKind layer_cast, layer_to_nhwc;

static int is_cast(const Layer *l) { return l->kind == &layer_cast; }
static int is_to_nhwc(const Layer *l) { return l->kind == &layer_to_nhwc; }

// Takes out every layer `drop` picks (an internal one, reading one input): its readers read
// what it read.
static void remove_layers(Graph *g, int (*drop)(const Layer *l)) {
    for (int i = 0; i < g->count; i++)
        for (int k = 0; k < g->layers[i]->input_count; k++)
            while (drop(g->layers[i]->inputs[k]))
                g->layers[i]->inputs[k] = g->layers[i]->inputs[k]->inputs[0];
    int kept = 0;
    for (int i = 0; i < g->count; i++) {
        Layer *l = g->layers[i];
        if (!drop(l)) {
            g->layers[kept++] = l;
            continue;
        }
        release_layer_memory(l);
        free(l);
    }
    g->count = kept;
}

// A new layer of an internal `kind` reading `from`, placed right after it (at index *at),
// named "<from>:<suffix>", with from's shape, dtype and model-file place. NULL when out of
// host memory (st says which allocation failed).
static Layer *insert_after(Graph *g, Layer *from, const LayerKind *kind, const char *suffix,
                           int *at, Status *st) {
    *at = index_of(g, from) + 1;
    size_t list_bytes = (size_t)(g->count + 1) * sizeof *g->layers;
    Layer **grown = realloc(g->layers, list_bytes);
    if (!grown) {
        status_out_of_host_memory(st, list_bytes, "for the graph's list of %d layers, adding "
                                  "a %s layer after %s", g->count + 1, kind->name, from->name);
        return NULL;
    }
    g->layers = grown;
    Layer *c = calloc(1, sizeof *c);
    if (!c) {
        status_out_of_host_memory(st, sizeof *c, "for a %s layer after %s", kind->name,
                                  from->name);
        return NULL;
    }
    c->kind = kind;
    snprintf(c->name, sizeof c->name, "%.*s:%s", LAYER_NAME_MAX - 8, from->name, suffix);
    c->path = from->path;
    c->line = from->line;
    c->column = from->column;
    c->inputs[0] = from;
    c->input_count = 1;
    c->out_shape = from->out_shape;
    c->out_dtype = from->out_dtype;
    memmove(g->layers + *at + 1, g->layers + *at, (size_t)(g->count - *at) * sizeof *g->layers);
    g->layers[*at] = c;
    g->count++;
    return c;
}

// ---- storage: f32 or 16-bit activations ----------------------------------------------------

// The layer whose fused op writes l's output (l is its act= layer), or NULL.
static const Layer *fused_owner(const Graph *g, const Layer *l) {
    for (int i = 0; i < g->count; i++)
        if (g->layers[i]->fused_activation == l) return g->layers[i];
    return NULL;
}

// The cast of `from`'s output to `dtype`, shared by every reader that wants it; made and
// placed right after `from` when there is none yet (*inserted_at is then the index it took,
// -1 otherwise: the caller's own index moves on by one). NULL when out of host memory.
static Layer *cast_of(Graph *g, Layer *from, DType dtype, int *inserted_at, Status *st) {
    *inserted_at = -1;
    for (int i = 0; i < g->count; i++) {
        Layer *l = g->layers[i];
        if (is_cast(l) && l->inputs[0] == from && l->out_dtype == dtype) return l;
    }
    Layer *c = insert_after(g, from, &layer_cast, dtype_name(dtype), inserted_at, st);
    if (c) c->out_dtype = dtype;
    return c;
}

int graph_set_storage(Graph *g, DType dtype, Status *st) {
    // graph_set_layouts' conversions read the casts this takes out, in the casts' dtype:
    // they go first, and with them the layouts they made possible.
    remove_layers(g, is_to_nhwc);
    for (int i = 0; i < g->count; i++) g->layers[i]->layout = LAYOUT_NCHW;
    remove_layers(g, is_cast);
    g->activation_dtype = dtype;
    for (int i = 0; i < g->count; i++) {
        Layer *l = g->layers[i];
        if (is_cast(l)) continue;  // placed by this loop, dtype set
        const Layer *owner = fused_owner(g, l);
        // Producers come first, so the dtypes this reads are already final.
        if (l->kind->input_count == 0) {
            // the input layer: as its statement says (f32; graph_build refuses others)
        } else if (l->kind->output_is_view) {
            l->out_dtype = l->inputs[0]->out_dtype;
        } else if (owner) {
            l->out_dtype = owner->out_dtype;  // written by its owner's fused op
        } else {
            l->out_dtype = l->kind->stores_16bit ? dtype : DTYPE_F32;
        }
        // A view passes any dtype through; a fused activation does not read its input.
        if (l->kind->output_is_view || owner) continue;
        for (int k = 0; k < l->input_count; k++) {
            if (l->inputs[k]->out_dtype == l->out_dtype) continue;
            int at;
            Layer *c = cast_of(g, l->inputs[k], l->out_dtype, &at, st);
            if (!c) return STATUS_RUNTIME_ERROR;
            if (at >= 0 && at <= i) i++;  // l moved one place on
            l->inputs[k] = c;
        }
    }
    return plan_gradients(g, st);
}

// ---- layouts: NCHW or NHWC images ----------------------------------------------------------

// Whether `reader` can take `producer`'s images as they are laid out now.
static int reads_layout(const Layer *reader, const Layer *producer) {
    if (producer->layout == LAYOUT_NCHW || !layer_layout_matters(producer)) {
        // NCHW bytes: fine for every reader but an NHWC one, unless the bytes are the same
        return reader->layout == LAYOUT_NCHW || !layer_layout_matters(producer) ||
               reader->kind->layout_use == LAYOUT_USE_READS_EITHER;
    }
    // NHWC bytes: an NHWC reader, or one that reads either
    return reader->kind->layout_use == LAYOUT_USE_READS_EITHER ||
           (reader->kind->layout_use == LAYOUT_USE_EITHER && reader->layout == LAYOUT_NHWC);
}

static int graph_has_conv2d(const Graph *g) {
    for (int i = 0; i < g->count; i++)
        if (g->layers[i]->kind->matmul == LAYER_MATMUL_CONVOLUTION) return 1;
    return 0;
}

// The images a conversion may take into NHWC: the model input's, or its cast's under
// bf16/fp16 (half the bytes to move). Only there: in the middle of a network a conversion
// costs two passes over its images each step, forward and its gradient back in backward,
// which the NHWC trunk after it would have to win back before it paid; at the input the
// data wants no gradient, so it costs the forward one alone.
static int is_model_input(const Graph *g, const Layer *l) {
    return l == g->input || (is_cast(l) && l->inputs[0] == g->input);
}

// Whether `reader` may take its input from a conversion: an image layer that may go NHWC.
// Not a cast: the conversion goes after it, where it moves the cast's dtype.
static int may_read_nhwc(const Layer *reader) {
    return reader->kind->layout_use == LAYOUT_USE_EITHER && !is_cast(reader) &&
           reader->out_shape.rank == 3;
}

// Puts one to_nhwc after each model input of several channels, shared by every reader that
// may go NHWC. Returns 0 or STATUS_RUNTIME_ERROR (out of host memory).
static int convert_model_inputs(Graph *g, Status *st) {
    for (int i = 0; i < g->count; i++) {
        Layer *from = g->layers[i];
        if (!is_model_input(g, from) || !layer_layout_matters(from)) continue;
        Layer *conversion = NULL;
        for (int r = 0; r < g->count; r++) {
            Layer *reader = g->layers[r];
            for (int k = 0; k < reader->input_count; k++) {
                if (reader->inputs[k] != from || !may_read_nhwc(reader)) continue;
                int at;
                if (!conversion)
                    conversion = insert_after(g, from, &layer_to_nhwc, "nhwc", &at, st);
                if (!conversion) return STATUS_RUNTIME_ERROR;
                reader->inputs[k] = conversion;
            }
        }
    }
    return 0;
}

static int is_unread_to_nhwc(const Layer *l) {
    return is_to_nhwc(l) && l->layout != LAYOUT_NHWC;
}

// After the fixed point: a reader it sent back to NCHW reads the images the conversion
// read, and a conversion no NHWC layer reads any more is taken out, so that a model whose
// trunk cannot go NHWC (a reshape reads it) keeps the graph it had.
static void drop_unread_conversions(Graph *g) {
    for (int i = 0; i < g->count; i++) {
        Layer *reader = g->layers[i];
        for (int k = 0; k < reader->input_count; k++)
            if (is_to_nhwc(reader->inputs[k]) && reader->layout != LAYOUT_NHWC)
                reader->inputs[k] = reader->inputs[k]->inputs[0];
    }
    for (int i = 0; i < g->count; i++)
        if (is_to_nhwc(g->layers[i]) && !read_by_other(g, g->layers[i], NULL))
            g->layers[i]->layout = LAYOUT_NCHW;  // marks it for is_unread_to_nhwc
    remove_layers(g, is_unread_to_nhwc);
}

int graph_set_layouts(Graph *g, int nhwc, Status *st) {
    // Every image-to-image layer starts NHWC; then any that would hand NHWC bytes to a
    // reader of NCHW, or read NCHW bytes it would take as NHWC, goes back to NCHW, until
    // nothing changes. What stays NHWC is the convolutional trunk between the input and
    // the flatten or global_avgpool that ends it. An input of one channel is the same
    // bytes either way; one of several goes through a to_nhwc first, which stays NHWC
    // throughout (it reads NCHW and writes NHWC) and is dropped again when no reader
    // stays NHWC.
    remove_layers(g, is_to_nhwc);
    int use = nhwc && graph_has_conv2d(g);
    if (use) TRY(convert_model_inputs(g, st));
    for (int i = 0; i < g->count; i++) {
        Layer *l = g->layers[i];
        LayoutUse how = l->kind->layout_use;
        l->layout = use && (how == LAYOUT_USE_TO_NHWC ||
                            (how == LAYOUT_USE_EITHER && l->out_shape.rank == 3))
                        ? LAYOUT_NHWC
                        : LAYOUT_NCHW;
    }
    for (int changed = 1; changed;) {
        changed = 0;
        for (int i = 0; i < g->count; i++) {
            Layer *l = g->layers[i];
            if (l->layout != LAYOUT_NHWC || is_to_nhwc(l)) continue;
            int fits = 1;
            for (int k = 0; k < l->input_count; k++) fits = fits && reads_layout(l, l->inputs[k]);
            for (int r = 0; r < g->count && fits; r++)
                for (int k = 0; k < g->layers[r]->input_count; k++)
                    if (g->layers[r]->inputs[k] == l) fits = fits && reads_layout(g->layers[r], l);
            // A fused activation writes its owner's output: the two share one layout.
            if (l->fused_activation && l->fused_activation->layout != LAYOUT_NHWC) fits = 0;
            if (fits) continue;
            l->layout = LAYOUT_NCHW;
            changed = 1;
        }
    }
    drop_unread_conversions(g);
    // Layers came or went: which gradients backward writes or adds is planned again.
    return plan_gradients(g, st);
}

int graph_nhwc_layers(const Graph *g) {
    int count = 0;
    for (int i = 0; i < g->count; i++) count += g->layers[i]->layout == LAYOUT_NHWC;
    return count;
}

// ---- facts about a built graph ----------------------------------------------------------

// Every loss outputs one score per class (loss_infer_scores).
int graph_classes(const Graph *g) { return g->loss->out_shape.dims[0]; }

// Trainable parameters only, as PyTorch's sum(p.numel() for p in model.parameters()):
// buffers such as batchnorm's running statistics are not counted.
long layer_parameter_count(const Layer *l) {
    long total = 0;
    for (int p = 0; p < l->param_count; p++)
        if (!l->params[p].buffer) total += (long)shape_numel(&l->params[p].shape);
    return total;
}

long graph_parameter_count(const Graph *g) {
    long total = 0;
    for (int i = 0; i < g->count; i++) total += layer_parameter_count(g->layers[i]);
    return total;
}

size_t layer_activation_bytes(const Layer *l, int training) {
    size_t value = dtype_size(l->out_dtype);
    size_t bytes = layer_owns_output(l) ? shape_numel(&l->out_shape) * value : 0;
    if (training && l->needs_grad) bytes += shape_numel(&l->out_shape) * value;
    return bytes;
}

// Labels past the model's classes are a data error unless they run on without a gap: a
// stray 12 beside a 10-class model is a wrong label (setting units=13 would invent three
// classes), while 5 to 9 all present beside a 5-class model says the model is too small.
static void label_range_hint(const Dataset *ds, int classes, Status *st) {
    int present[256] = {0}, outside = 0, runs_on = 1;
    for (int i = 0; i < ds->count; i++) {
        present[ds->labels[i]] = 1;
        outside += ds->labels[i] >= classes;
    }
    for (int label = classes; label <= ds->label_max; label++) runs_on &= present[label];
    if (runs_on)
        status_hint(st, "if the data has %d classes, set units=%d on the last dense layer; "
                    "otherwise fix the %d sample(s) labelled %d to %d", ds->label_max + 1,
                    ds->label_max + 1, outside, classes, ds->label_max);
    else
        status_hint(st, "fix the data first: %d of %d samples have labels outside 0 to %d, "
                    "with gaps below %d, so they look like wrong labels, not more classes; "
                    "only if the data really has %d classes, set units=%d on the last "
                    "dense layer", outside, ds->count, classes - 1, ds->label_max,
                    ds->label_max + 1, ds->label_max + 1);
}

// A label past the model's classes in a file that says where each label is (csv:): the
// place to fix is that cell, FILE:ROW:COLUMN; the model's last layer is the other fix.
static int fail_label_in_file(const Graph *g, const Dataset *ds, int sample, int classes,
                              Status *st) {
    const Layer *scores = g->loss->inputs[0];
    const SamplePlace *at = &ds->label_places[sample];
    status_fail_at(st, STATUS_BAD_INPUT, ds->source, at->line, at->column,
                   "label %d, but the model has %d classes (labels 0 to %d): its last layer "
                   "'%s' (%s:%d) gives %d class scores", ds->labels[sample], classes,
                   classes - 1, scores->name, g->path, scores->line, classes);
    label_range_hint(ds, classes, st);
    snprintf(st->error_name, sizeof st->error_name, "device-side-assert");
    return STATUS_BAD_INPUT;
}

int graph_check_dataset(const Graph *g, const Dataset *ds, const char *what, Status *st) {
    Shape sample = shape_make3(ds->channels, ds->height, ds->width);
    const Shape *expected = &g->input->out_shape;
    char have[64], want[64];
    shape_format(&sample, have, sizeof have);
    shape_format(expected, want, sizeof want);
    // A vector input of the same size takes images flattened: `input shape=784` for MNIST.
    int flat_match = expected->rank == 1 && shape_numel(expected) == shape_numel(&sample);
    if (!shape_equal(&sample, expected) && !flat_match) {
        status_fail_at(st, STATUS_BAD_INPUT, g->path, g->input->line, g->input->column,
                       "input shape=%s does not fit %s, whose samples are %s (%zu values)", want,
                       what, have, shape_numel(&sample));
        status_hint(st, "set `input shape=%s` (or shape=%zu with a dense first layer)", have,
                    shape_numel(&sample));
        return STATUS_BAD_INPUT;
    }
    int classes = graph_classes(g);
    if (ds->label_max >= classes) {
        const Layer *scores = g->loss->inputs[0];
        int first = 0;
        while (first < ds->count && ds->labels[first] < classes) first++;
        if (ds->label_places && first < ds->count)
            return fail_label_in_file(g, ds, first, classes, st);
        status_fail_at(st, STATUS_BAD_INPUT, g->path, scores->line, scores->column,
                       "%s has labels up to %d (the first out of range: sample %d, label %d), "
                       "but the model's last layer '%s' gives %d class scores", what,
                       ds->label_max, first, first < ds->count ? ds->labels[first] : -1,
                       scores->name, classes);
        label_range_hint(ds, classes, st);
        // What PyTorch would have stopped with, later and without the values.
        snprintf(st->error_name, sizeof st->error_name, "device-side-assert");
        return STATUS_BAD_INPUT;
    }
    return 0;
}

// ---- memory and execution -----------------------------------------------------------------

// Allocates t and, when that fails, says which tensor of which layer did not fit, with a
// hint that fits the tensor: parameters do not shrink with the batch, activations do.
int graph_alloc_tensor(Tensor *t, Allocator *a, const Layer *l, const char *what, int per_batch,
                       Status *st) {
    if (!tensor_alloc(t, a, st)) return 0;
    if (st->code != STATUS_OUT_OF_MEMORY) return st->code;
    // The tensor's shape, batch first for per-batch tensors: "[128x64x14x14] f32, batch 128".
    char shape[128];
    size_t used = 0;
    shape[0] = '\0';
    for (int d = 0; d < t->rank && used < sizeof shape; d++)
        used += (size_t)snprintf(shape + used, sizeof shape - used, "%s%d", d ? "x" : "[",
                                 t->dims[d]);
    char batch[32] = "";
    if (per_batch && t->rank > 0) snprintf(batch, sizeof batch, ", batch %d", t->dims[0]);
    // Room for all of it (800 + the name, shape and batch's most), then cut to the status's
    // size with a bound gcc can see: formatting straight into a message-sized buffer failed
    // the sanitizer build's -Werror=format-truncation.
    char message[sizeof st->message + 256];
    snprintf(message, sizeof message, "%.800s, for the %s of layer '%s' (%s] %s%s)", st->message,
             what, l->name, shape, dtype_name(t->dtype), batch);
    snprintf(st->message, sizeof st->message, "%.*s", (int)sizeof st->message - 1, message);
    status_set_place_if_unset(st, l->path, l->line, l->column);
    if (strstr(st->message, "TRAINER_FAIL_ALLOC"))
        status_hint(st, "this failure was injected for testing: unset TRAINER_FAIL_ALLOC");
    else if (per_batch)
        status_hint(st, "lower --batch (activations grow with it), or raise --memory-limit");
    else
        status_hint(st, "the model's parameters alone do not fit: raise --memory-limit, or use "
                        "a smaller model (`trainer check` shows the memory it needs)");
    return st->code;
}

int graph_init_params(Graph *g, const Backend *b, Allocator *a, uint64_t seed, Status *st) {
    Rng rng;
    rng_seed(&rng, seed);
    for (int i = 0; i < g->count; i++) {
        Layer *l = g->layers[i];
        for (int k = 0; k < l->param_count; k++) {
            Param *p = &l->params[k];
            tensor_set_shape(&p->value, DTYPE_F32, 0, &p->shape);
            TRY(graph_alloc_tensor(&p->value, a, l, "parameters", 0, st));
            size_t n = tensor_numel(&p->value);
            // Constants draw nothing from the RNG, so adding e.g. a batchnorm leaves the
            // other layers' initial values as they were.
            if (p->init_is_constant) TRY(b->fill(b, tensor_f32(&p->value), p->init_constant, n, st));
            if (!p->init_is_constant) {
                float *host = malloc(n * sizeof *host);
                if (!host)
                    return status_out_of_host_memory(st, n * sizeof *host, "initialising %s",
                                                     p->name);
                for (size_t j = 0; j < n; j++) host[j] = (2.0f * rng_uniform(&rng) - 1.0f) * p->init_bound;
                int rc = b->copy_to_device(b, p->value.data, host, n * sizeof *host, st);
                free(host);
                TRY(rc);
            }
            if (p->buffer) continue;  // running statistics: no gradient
            tensor_set_shape(&p->grad, DTYPE_F32, 0, &p->shape);
            TRY(graph_alloc_tensor(&p->grad, a, l, "parameter gradients", 0, st));
            TRY(b->fill(b, tensor_f32(&p->grad), 0.0f, n, st));
        }
    }
    return 0;
}

// Says which layer's allocation ran out of memory, and how much it asked for when that is
// known (0 for a kind's own state), for the report of a micro-batch split.
static int note_allocation_failure(AllocationFailure *failure, const Layer *l, size_t bytes,
                                   Status *st) {
    if (st->code != STATUS_OUT_OF_MEMORY || !failure) return st->code;
    snprintf(failure->layer, sizeof failure->layer, "%s", l->name);
    failure->bytes = bytes;
    return st->code;
}

static int allocate_layer(Layer *l, const LayerContext *ctx, int batch,
                          AllocationFailure *failure, Status *st) {
    tensor_free(&l->output);
    tensor_free(&l->grad);
    tensor_set_shape(&l->output, l->out_dtype, batch, &l->out_shape);
    tensor_set_shape(&l->grad, l->out_dtype, batch, &l->out_shape);
    if (layer_owns_output(l) && graph_alloc_tensor(&l->output, ctx->alloc, l, "output", 1, st))
        return note_allocation_failure(failure, l, l->output.bytes, st);
    if (l->needs_grad && graph_alloc_tensor(&l->grad, ctx->alloc, l, "output gradient", 1, st))
        return note_allocation_failure(failure, l, l->grad.bytes, st);
    if (l->kind->allocate && l->kind->allocate(l, ctx, batch, st))
        return note_allocation_failure(failure, l, 0, st);
    return 0;
}

void graph_limit_workspace(Graph *g, size_t bytes) {
    for (int i = 0; i < g->count; i++) {
        g->layers[i]->workspace_limited = bytes != SIZE_MAX;
        g->layers[i]->workspace_limit = bytes;
    }
}

int graph_workspace_limited(const Graph *g) {
    return g->count > 0 && g->layers[0]->workspace_limited;
}

int graph_allocate(Graph *g, const Backend *b, Allocator *a, int batch,
                   AllocationFailure *failure, Status *st) {
    LayerContext ctx = {.backend = b, .alloc = a, .batch = batch};
    g->allocated_batch = 0;
    for (int i = 0; i < g->count; i++)
        TRY(allocate_layer(g->layers[i], &ctx, batch, failure, st));
    Shape scalar = {.rank = 0};
    tensor_free(&g->labels);
    tensor_set_shape(&g->labels, DTYPE_I32, batch, &scalar);
    TRY(tensor_alloc(&g->labels, a, st));
    // The loss sums outlive a reallocation at a smaller batch in the middle of an epoch.
    if (!g->loss_sums.data) {
        tensor_set_shape(&g->loss_sums, DTYPE_F32, 4, &scalar);
        TRY(tensor_alloc(&g->loss_sums, a, st));
        TRY(b->fill(b, tensor_f32(&g->loss_sums), 0.0f, 4, st));
    }
    g->allocated_batch = batch;
    return 0;
}

void graph_release_activations(Graph *g) {
    for (int i = 0; i < g->count; i++) release_layer_memory(g->layers[i]);
    tensor_free(&g->labels);
    g->allocated_batch = 0;
}

// A failure inside a layer is reported with the layer, its model-file line and the phase,
// so a runtime error points at the model, not only at an op.
static int layer_failed(const Layer *l, const char *phase, Status *st) {
    status_prefix(st, "%s of layer '%s' (%s): ", phase, l->name, l->kind->name);
    status_set_place_if_unset(st, l->path, l->line, l->column);
    return st->code;
}

// Runs one layer's forward or backward inside a profiler range "forward dense1".
static int run_layer(Layer *l, const LayerContext *ctx, int backward, Status *st) {
    const Backend *b = ctx->backend;
    if (b->range_push) {
        char range[LAYER_NAME_MAX + 16];
        snprintf(range, sizeof range, "%s %s", backward ? "backward" : "forward", l->name);
        b->range_push(b, range);
    }
    int rc = backward ? l->kind->backward(l, ctx, st) : l->kind->forward(l, ctx, st);
    if (!rc && ctx->sync_check) rc = b->synchronize(b, st);
    if (b->range_pop) b->range_pop(b);
    return rc ? layer_failed(l, backward ? "backward" : "forward", st) : 0;
}

int graph_run_layer(Graph *g, int index, const LayerContext *ctx, int backward, Status *st) {
    return run_layer(g->layers[index], ctx, backward, st);
}

int graph_forward(Graph *g, const LayerContext *ctx, Status *st) {
    for (int i = 1; i < g->count; i++) TRY(run_layer(g->layers[i], ctx, 0, st));
    return 0;
}

int graph_backward(Graph *g, const LayerContext *ctx, Status *st) {
    for (int i = g->count - 1; i >= 1; i--) {
        TRY(run_layer(g->layers[i], ctx, 1, st));
        if (ctx->after_layer_backward)
            TRY(ctx->after_layer_backward(ctx->after_layer_user, g->layers[i], st));
    }
    return 0;
}

int graph_load_batch(Graph *g, const Backend *b, const float *images, const int32_t *labels,
                     int count, Status *st) {
    size_t values = (size_t)count * shape_numel(&g->input->out_shape);
    TRY(b->copy_to_device(b, g->input->output.data, images, values * sizeof(float), st));
    return b->copy_to_device(b, g->labels.data, labels, (size_t)count * sizeof(int32_t), st);
}

int graph_reset_loss_sums(Graph *g, const Backend *b, Status *st) {
    return b->fill(b, tensor_f32(&g->loss_sums), 0.0f, 4, st);
}

int graph_add_loss_sums(Graph *g, const Backend *b, int count, int into_step, Status *st) {
    const LossRows *state = g->loss->kind->loss_rows(g->loss);
    float *sums = tensor_f32(&g->loss_sums) + (into_step ? 2 : 0);
    // Both sums in one kernel: the loss and the hit of a sample lie side by side.
    return b->sum_rows(b, &(SumRowsArgs){.out = sums, .x = tensor_f32(&state->row_stats),
                       .x_dtype = DTYPE_F32, .rows = count, .cols = 2, .beta = 1.0f}, st);
}

int graph_commit_step_loss_sums(Graph *g, const Backend *b, Status *st) {
    float *sums = tensor_f32(&g->loss_sums);
    const void *step_sums = sums + 2;
    TRY(b->accumulate(b, &(AccumulateArgs){.dtype = DTYPE_F32, .y = sums, .x = &step_sums,
                      .count = 1, .n = 2, .accumulate = 1}, st));
    return b->fill(b, sums + 2, 0.0f, 2, st);
}

int graph_discard_step_loss_sums(Graph *g, const Backend *b, Status *st) {
    return b->fill(b, tensor_f32(&g->loss_sums) + 2, 0.0f, 2, st);
}

int graph_read_loss_sums(const Graph *g, const Backend *b, double *loss_sum, double *correct,
                         Status *st) {
    float host[2];
    TRY(b->copy_to_host(b, host, g->loss_sums.data, sizeof host, st));
    *loss_sum = host[0];
    *correct = host[1];
    return 0;
}

int graph_read_loss(const Graph *g, const Backend *b, int count, double *loss_sum,
                    double *correct, Status *st) {
    const LossRows *state = g->loss->kind->loss_rows(g->loss);
    float stack_stats[2 * 1024];
    size_t values = 2 * (size_t)count;
    float *stats = count <= 1024 ? stack_stats : malloc(values * sizeof(float));
    int rc = stats ? b->copy_to_host(b, stats, state->row_stats.data, values * sizeof(float), st)
                   : status_out_of_host_memory(st, values * sizeof(float),
                                               "for the loss of %d samples", count);
    if (!rc) {
        double sum = 0.0, hits = 0.0;
        for (int i = 0; i < count; i++) {
            sum += stats[2 * (size_t)i];
            hits += stats[2 * (size_t)i + 1];
        }
        *loss_sum = sum;
        *correct = hits;
    }
    if (stats != stack_stats) free(stats);
    return rc;
}

// The model-definition file (.model): syntax only.
//
// A statement is one line: a kind word, at most one bare choice word (`loss mse`,
// `optimizer adam`), then key=value pairs; `#` starts a comment. This module turns the
// text into statements with the line and column of every word, so that later errors
// (unknown key, shape mismatch) can point at the exact place. What the words *mean*
// is decided by the graph builder and the layer kinds, not here.
#ifndef TRAINER_MODEL_FILE_H
#define TRAINER_MODEL_FILE_H

#include "base/status.h"

#define MODEL_WORD_MAX 64     // longest kind, choice or key
#define MODEL_VALUE_MAX 256   // longest value
#define MODEL_ATTR_MAX 32     // most key=value pairs on one line
// Most statements in one file. A statement is ~10 KB in memory, so without a cap a
// 1 MiB file of one-word lines would ask for gigabytes; real models have dozens.
#define MODEL_STATEMENT_MAX 8192
#define MODEL_FILE_BYTES_MAX (1024 * 1024)  // larger files are refused, not read

typedef struct ModelAttr {
    char key[MODEL_WORD_MAX];
    char value[MODEL_VALUE_MAX];
    int key_column;    // 1-based column of the key's first character
    int value_column;  // 1-based column of the value's first character
} ModelAttr;

typedef struct ModelStatement {
    int line;                      // 1-based
    char kind[MODEL_WORD_MAX];
    int kind_column;
    char choice[MODEL_WORD_MAX];   // "" when the statement has none
    int choice_column;
    ModelAttr attrs[MODEL_ATTR_MAX];
    int attr_count;
} ModelStatement;

typedef struct ModelFile {
    char path[512];                // as given; used in every error
    ModelStatement *statements;    // heap array, file order
    int count;
    char *text;                    // the text parsed, owned: what checkpoints record
} ModelFile;

// Read and tokenize a file. Errors (unreadable file, `key=` without value, a second
// bare word, duplicate key, over-long word, non-printable byte, ...) are STATUS_BAD_INPUT
// with file:line:column and a hint.
int model_file_read(const char *path, ModelFile *out, Status *st);
// Same from text in memory; `path` is only used to name the place in errors.
int model_file_parse_text(const char *path, const char *text, ModelFile *out, Status *st);
void model_file_free(ModelFile *file);

// ---- helpers used by the layer kinds and the graph builder to read attributes ----

// NULL when the statement has no such key.
const ModelAttr *model_attr_find(const ModelStatement *s, const char *key);

// Every key of `s` must be in `allowed` (NULL-terminated); otherwise a BAD_INPUT error
// at the key, "unknown key 'filter' for conv2d", with "did you mean 'filters'?" when
// a known key is close.
int model_check_keys(const char *path, const ModelStatement *s, const char *const *allowed,
                     Status *st);

// Typed readers: when the key is absent, *out = fallback and return 0. A value that does
// not parse, or lies outside [min, max], is a BAD_INPUT error at the value's column that
// quotes the value and the accepted range.
int model_attr_int(const char *path, const ModelStatement *s, const char *key, long fallback,
                   long min, long max, long *out, Status *st);
int model_attr_float(const char *path, const ModelStatement *s, const char *key,
                     double fallback, double min, double max, double *out, Status *st);
// Same, where either bound may be excluded: dropout's rate lies in [0, 1), a learning
// rate in (0, inf). `exclude` is 0 or MODEL_EXCLUDE_MIN | MODEL_EXCLUDE_MAX; the error
// prints the interval with the matching brackets ("rate=1.5 is out of range [0, 1)").
// An infinite or +-DBL_MAX bound means "no bound on that side".
#define MODEL_EXCLUDE_MIN 1
#define MODEL_EXCLUDE_MAX 2
int model_attr_float_interval(const char *path, const ModelStatement *s, const char *key,
                              double fallback, double min, double max, int exclude,
                              double *out, Status *st);
int model_attr_bool(const char *path, const ModelStatement *s, const char *key, int fallback,
                    int *out, Status *st);
// The value must be one of `choices` (NULL-terminated); *out is its index. Absent:
// *out = fallback_index.
int model_attr_choice(const char *path, const ModelStatement *s, const char *key,
                      const char *const *choices, int fallback_index, int *out, Status *st);

#endif

// "Did you mean" for every name a person types: one case-insensitive edit distance
// (insert, delete, substitute, or swap two neighbours, the commonest typo), so the model
// parser, the CLI, the dataset resolver and the error catalog agree on what a near miss is.
#ifndef TRAINER_SUGGEST_H
#define TRAINER_SUGGEST_H

#include <stddef.h>

// The closest of `candidates` (NULL-terminated) to `word`, or NULL when none is within a
// third of the word's length (at least one edit) and so not a plausible typo.
const char *suggest(const char *word, const char *const *candidates);

// Whether `typed` is within a third of `candidate`'s length (at least one edit) of it.
int suggest_is_near_miss(const char *typed, const char *candidate);

// For a path that does not exist: the closest name among the files of its folder ("." when
// it names none), as a path in that folder ("models/mlp.model" for "models/mpl.model"),
// written to out; NULL when the folder cannot be read or nothing there is near.
const char *suggest_file(const char *path, char *out, size_t size);

#endif

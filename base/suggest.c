// "Did you mean": the one edit distance every near-miss suggestion uses (model keys and
// kinds, command names, dataset names, error names).
#define _DEFAULT_SOURCE  // strdup
#include "base/suggest.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int lower_ascii(int c) { return (c >= 'A' && c <= 'Z') ? c - 'A' + 'a' : c; }

#define SUGGEST_LENGTH_MAX 256 // longer words are never typos of a short name

static int same_letter(char a, char b) {
    return lower_ascii((unsigned char)a) == lower_ascii((unsigned char)b);
}

// Levenshtein distance, ignoring case so that 'Filters' finds 'filters', and counting a
// swap of two neighbours as one edit (optimal string alignment), because 'rleu' for
// 'relu' is the most common typo of all and plain Levenshtein calls it two.
static size_t edit_distance(const char *a, size_t a_length, const char *b, size_t b_length) {
    size_t rows[3][SUGGEST_LENGTH_MAX + 1];
    size_t *before = rows[0], *previous = rows[1], *current = rows[2];
    for (size_t j = 0; j <= b_length; j++) previous[j] = j;
    for (size_t i = 1; i <= a_length; i++) {
        current[0] = i;
        for (size_t j = 1; j <= b_length; j++) {
            size_t best = previous[j - 1] + !same_letter(a[i - 1], b[j - 1]);
            if (previous[j] + 1 < best) best = previous[j] + 1;       // delete
            if (current[j - 1] + 1 < best) best = current[j - 1] + 1; // insert
            if (i > 1 && j > 1 && same_letter(a[i - 1], b[j - 2]) &&
                same_letter(a[i - 2], b[j - 1]) && before[j - 2] + 1 < best)
                best = before[j - 2] + 1; // swap
            current[j] = best;
        }
        size_t *oldest = before;
        before = previous;
        previous = current;
        current = oldest;
    }
    return previous[b_length];
}

// A third of the word's length may be wrong (at least one edit): 'unit' -> 'units',
// 'filter' -> 'filters', but 'xyz' is nobody's typo of 'kernel'.
const char *suggest(const char *word, const char *const *candidates) {
    if (!word || !candidates) return NULL;
    size_t word_length = strlen(word);
    if (word_length == 0 || word_length > SUGGEST_LENGTH_MAX) return NULL;
    size_t allowed = word_length / 3 > 1 ? word_length / 3 : 1;
    const char *best = NULL;
    size_t best_distance = allowed + 1;
    for (int i = 0; candidates[i]; i++) {
        size_t length = strlen(candidates[i]);
        if (length > SUGGEST_LENGTH_MAX) continue;
        size_t length_gap = length > word_length ? length - word_length : word_length - length;
        if (length_gap >= best_distance) continue; // the distance is at least the gap
        size_t distance = edit_distance(word, word_length, candidates[i], length);
        if (distance < best_distance) {
            best = candidates[i];
            best_distance = distance;
        }
    }
    return best;
}

int suggest_is_near_miss(const char *typed, const char *candidate) {
    if (!typed || !candidate) return 0;
    size_t typed_length = strlen(typed), length = strlen(candidate);
    if (typed_length > SUGGEST_LENGTH_MAX || length > SUGGEST_LENGTH_MAX) return 0;
    size_t allowed = length / 3 > 1 ? length / 3 : 1;
    return edit_distance(typed, typed_length, candidate, length) <= allowed;
}

#define SUGGEST_FOLDER_NAMES_MAX 512  // a folder's first entries; a typo is rarely past them

const char *suggest_file(const char *path, char *out, size_t size) {
    if (!path || !path[0] || size == 0) return NULL;
    const char *slash = strrchr(path, '/');
    const char *base = slash ? slash + 1 : path;
    size_t folder_length = slash ? (size_t)(slash - path) + 1 : 0;  // with its '/'
    char folder[4096];
    if (folder_length >= sizeof folder) return NULL;
    if (folder_length) snprintf(folder, sizeof folder, "%.*s", (int)folder_length, path);
    else snprintf(folder, sizeof folder, ".");
    DIR *dir = opendir(folder);
    if (!dir) return NULL;
    char *names[SUGGEST_FOLDER_NAMES_MAX + 1];
    int count = 0;
    for (struct dirent *e; count < SUGGEST_FOLDER_NAMES_MAX && (e = readdir(dir));)
        if (e->d_name[0] != '.' && (names[count] = strdup(e->d_name))) count++;
    closedir(dir);
    names[count] = NULL;
    const char *near = suggest(base, (const char *const *)names);
    if (near) snprintf(out, size, "%.*s%s", (int)folder_length, path, near);
    for (int i = 0; i < count; i++) free(names[i]);
    return near ? out : NULL;
}

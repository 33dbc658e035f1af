// `trainer explain`'s texts, written for the terminal at TEXT_WIDTH columns. What an entry
// says comes from base/error_catalog.c; this machine's facts and verdict from
// diagnostics/machine_facts.c.
#include "diagnostics/explain.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "base/escape.h"
#include "base/json.h"
#include "diagnostics/machine_facts.h"

enum { TEXT_WIDTH = 90, MATCHES_MAX = 8, CLOSE_MAX = 3, SHORT_PART_LINES = 3 };

// ---- plain text -------------------------------------------------------------------------

// `text` wrapped at TEXT_WIDTH in at most max_lines lines (ending in "..." when it is cut),
// the first line after `first` and the others after as many spaces, so numbered causes
// hang under their number.
static void wrapped_at_most(const TextOut *out, const char *first, const char *text,
                            int max_lines) {
    size_t indent = strlen(first), column = indent;
    int lines = 1;
    text_put(out, first);
    while (*text) {
        while (*text == ' ') text++;
        size_t word = strcspn(text, " ");
        if (word == 0) break;
        if (column > indent && column + 1 + word > TEXT_WIDTH) {
            if (lines == max_lines) {
                text_put(out, " ...");
                break;
            }
            text_printf(out, "\n%*s", (int)indent, "");
            column = indent;
            lines++;
        } else if (column > indent) {
            text_put(out, " ");
            column++;
        }
        text_write(out, text, word);
        column += word;
        text += word;
    }
    text_put(out, "\n");
}

static void wrapped(const TextOut *out, const char *first, const char *text) {
    wrapped_at_most(out, first, text, 1 << 20);
}

static void section(const TextOut *out, const char *title, const char *text) {
    text_printf(out, "\n%s\n", title);
    wrapped(out, "  ", text);
}

// `matched`: the wording a pasted message was recognised by, or NULL.
static void header(const TextOut *out, const ErrorEntry *e, const char *matched) {
    char code[64];
    error_entry_code(e, code, sizeof code);
    text_printf(out, "%s  (%s, %s; code %s)\n", e->name, error_family_title(e->family),
                error_family_type(e->family), code);
    if (matched && strcmp(matched, e->name) != 0)
        text_printf(out, "  recognised by: \"%s\"\n", matched);
    else if (e->family == ERROR_FAMILY_FRAMEWORK)
        text_printf(out, "  recognised by: \"%s\"\n", e->short_string);
    else if (strcmp(e->short_string, e->name) != 0)
        text_printf(out, "  library string: \"%s\"\n", e->short_string);
    if (e->old_name || e->old_number)
        text_printf(out, "  cuDNN 8 and older: %s (%d)\n", e->old_name ? e->old_name : e->name,
                    e->old_number);
    const ErrorEntry *related = e->related ? error_catalog_lookup_name(e->related) : NULL;
    if (related) {
        error_entry_code(related, code, sizeof code);
        text_printf(out, "  %s %s (%s)\n",
                    e->family == ERROR_FAMILY_FRAMEWORK ? "the library error behind it:"
                                                        : "the same error as:",
                    related->name, code);
    }
}

// "`nvidia-smi`, then `trainer doctor`"
static void join_commands(const ErrorVerdict *v, char *text, size_t size) {
    text_join(v->next, v->next_count, ", then ", "`", text, size);
}

static void verdict_text(const TextOut *out, const ErrorVerdict *v) {
    char next[256];
    join_commands(v, next, sizeof next);
    section(out, "Verdict for this machine", v->cause);
    wrapped(out, "  Next: ", next);
}

static void facts_text(const TextOut *out, const ErrorEntry *e, int has_verdict) {
    ErrorFacts facts;
    error_catalog_machine_facts(e, &facts);
    text_put(out, "\nOn this machine\n");
    if (facts.count == 0) wrapped(out, "  ", "(nothing about this machine bears on this error)");
    // A fact may hold the environment's bytes (CUDA_VISIBLE_DEVICES): escaped for the
    // terminal here, made valid UTF-8 for --json.
    for (int i = 0; i < facts.count; i++) {
        char shown[4 * sizeof facts.lines[i]];
        wrapped(out, "  - ",
                text_escape(facts.lines[i], strlen(facts.lines[i]), shown, sizeof shown));
    }
    if (facts.count && !has_verdict)
        wrapped(out, "  ", "`trainer doctor` checks this machine's driver, GPUs and CUDA "
                           "libraries in full.");
}

// What only applies to trainer, apart from the framework-neutral advice above it.
static void with_trainer(const TextOut *out, const ErrorEntry *e) {
    char text[1024];
    snprintf(text, sizeof text, "%s%s%strainer exits %d (%s) when it hits this error.",
             e->with_trainer ? e->with_trainer : "", e->with_trainer ? " " : "",
             e->poisons_context ? "With --checkpoint DIR, `trainer train MODEL --resume DIR` "
                                  "continues from the last checkpoint after the restart; "
                                  "--sync-check reports the kernel that failed, as "
                                  "CUDA_LAUNCH_BLOCKING=1 does. "
                                : "",
             status_exit_code(&(Status){.code = e->status}), status_code_name(e->status));
    section(out, "With trainer", text);
}

// Other entries the pasted text matched, unless they are the same error told another way
// (the header names that one): what a reader should know was close.
static void close_matches(const TextOut *out, const ErrorEntry *e, const ErrorCandidate *close,
                          int count) {
    for (int i = 0, shown = 0; i < count && shown < CLOSE_MAX; i++) {
        const ErrorEntry *other = close[i].entry;
        if (error_entries_same_error(e, other)) continue;
        // A tie: the text did not decide between them, so the reader should look at both.
        int tie = close[i].specificity >= close[0].specificity;
        text_printf(out, "  %s %s (by \"%s\"%s)\n", shown++ ? "             " : "also matched:",
                    other->name, close[i].wording, tie ? "; as specific as the match shown" : "");
    }
}

static void causes_text(const TextOut *out, const ErrorEntry *e) {
    text_put(out, "\nUsual causes, most common first\n");
    for (int i = 0; i < ERROR_CAUSES_MAX && e->causes[i]; i++) {
        char number[16];
        snprintf(number, sizeof number, "  %d. ", i + 1);
        wrapped(out, number, e->causes[i]);
    }
}

void explain_entry(const TextOut *out, const ErrorEntry *e, const char *text) {
    ErrorCandidate close[MATCHES_MAX];
    int count = error_catalog_rank(text, close, MATCHES_MAX);
    if (count > MATCHES_MAX) count = MATCHES_MAX;
    header(out, e, count > 0 && close[0].entry == e ? close[0].wording : NULL);
    close_matches(out, e, close, count);
    ErrorVerdict verdict;
    int has_verdict = error_catalog_verdict(e, &verdict);
    if (has_verdict) verdict_text(out, &verdict);
    section(out, "What it means", e->meaning);
    causes_text(out, e);
    section(out, "How to confirm", e->confirm);
    section(out, "How to fix", e->fix);
    if (e->poisons_context)
        section(out, "After this error",
                "The CUDA context is unusable: every later CUDA call in the process "
                "fails with the same error, so the process must restart.");
    text_put(out, "\nHow the frameworks word it\n");
    wrapped(out, "  PyTorch: ", e->pytorch);
    wrapped(out, "  TensorFlow: ", e->tensorflow);
    with_trainer(out, e);
    facts_text(out, e, has_verdict);
}

// The text up to the end of its first sentence (". " before a capital, or the end).
static void first_sentence(const char *text, char *out, size_t size) {
    size_t n = 0;
    for (; text[n] && n + 1 < size; n++) {
        out[n] = text[n];
        if (text[n] == '.' && text[n + 1] == ' ' && isupper((unsigned char)text[n + 2])) {
            n++;
            break;
        }
    }
    out[n] = '\0';
}

void explain_short(const TextOut *out, const ErrorEntry *e) {
    char code[64], line[1024], part[512];
    error_entry_code(e, code, sizeof code);
    first_sentence(e->meaning, part, sizeof part);
    snprintf(line, sizeof line, "%s (%s): %s", e->name, code, part);
    wrapped_at_most(out, "", line, SHORT_PART_LINES);
    ErrorVerdict verdict;
    if (error_catalog_verdict(e, &verdict)) {
        wrapped_at_most(out, "  Cause here: ", verdict.cause, SHORT_PART_LINES);
        join_commands(&verdict, part, sizeof part);
        wrapped_at_most(out, "  Next: ", part, 2);
        return;
    }
    first_sentence(e->causes[0], part, sizeof part);
    wrapped_at_most(out, "  Most likely: ", part, SHORT_PART_LINES);
    first_sentence(e->confirm, part, sizeof part);
    wrapped_at_most(out, "  Next: ", part, 2);
}

void explain_list(const TextOut *out) {
    for (int f = 0; f < ERROR_FAMILY_COUNT; f++) {
        text_printf(out, "%s%s (%s)\n", f ? "\n" : "", error_family_title((ErrorFamily)f),
                    error_family_type((ErrorFamily)f));
        for (int i = 0; i < error_catalog_count(); i++) {
            const ErrorEntry *e = error_catalog_at(i);
            if (e->family != (ErrorFamily)f) continue;
            char code[64];
            error_entry_code(e, code, sizeof code);
            if (strcmp(e->short_string, e->name) == 0)
                text_printf(out, "  %-14s %s\n", code, e->name);
            else
                text_printf(out, "  %-14s %-40s %s\n", code, e->name, e->short_string);
        }
    }
}

// One Markdown table row per entry: its code, name and wordings. A wording holding a
// backtick ("Assertion `t >= 0") goes in a double-backtick span.
void explain_wordings(const TextOut *out) {
    text_put(out, "| Code | Entry | Recognised in a pasted message by |\n|---|---|---|\n");
    for (int i = 0; i < error_catalog_count(); i++) {
        const ErrorEntry *e = error_catalog_at(i);
        const char *wordings[ERROR_WORDINGS_MAX];
        int count = error_entry_wordings(e, wordings, ERROR_WORDINGS_MAX);
        char code[64];
        error_entry_code(e, code, sizeof code);
        text_printf(out, "| %s | %s | ", code, e->name);
        for (int w = 0; w < count; w++) {
            const char *fence = strchr(wordings[w], '`') ? "``" : "`";
            const char *pad = strchr(wordings[w], '`') ? " " : "";
            text_printf(out, "%s%s%s%s%s%s", w ? ", " : "", fence, pad, wordings[w], pad, fence);
        }
        text_printf(out, "%s |\n", count ? "" : "(its name or code only)");
    }
}

// ---- which entry a text means -----------------------------------------------------------

static void unknown_failure(const char *text, Status *st) {
    const char *near = error_catalog_suggest(text);
    // A pasted message may hold the terminal's colour codes: shown escaped.
    char shown[4 * 200 + 8];
    text_escape(text, strlen(text) < 200 ? strlen(text) : 200, shown, sizeof shown);
    if (near)
        status_fail(st, STATUS_BAD_INPUT, "no catalog entry for '%s'; did you mean '%s'?",
                    shown, near);
    else
        status_fail(st, STATUS_BAD_INPUT, "no catalog entry matches '%s%s'", shown,
                    strlen(text) > 200 ? "..." : "");
    status_hint(st, "give an error's name (cudaErrorX, CUDA_ERROR_X, CUBLAS_STATUS_X, "
                    "CUDNN_STATUS_X, ncclX), a code with its family (cuda:2, driver:101, "
                    "cudnn:3000) or the line of the message that names the error; `trainer "
                    "explain --list` lists every entry");
}

static void ambiguous_failure(const char *text, const ErrorEntry **found, int count,
                              Status *st) {
    char list[600] = "";
    size_t used = 0;
    for (int i = 0; i < count && i < MATCHES_MAX && used < sizeof list; i++) {
        char code[64];
        error_entry_code(found[i], code, sizeof code);
        used += (size_t)snprintf(list + used, sizeof list - used, "%s%s %s", i ? ", " : "",
                                 code, found[i]->name);
    }
    status_fail(st, STATUS_BAD_INPUT, "'%s' is a code in %d families: %s", text, count, list);
    char code[64];
    error_entry_code(found[0], code, sizeof code);
    status_hint(st, "name the family, e.g. `trainer explain %s`", code);
}

const ErrorEntry *explain_find(const char *text, Status *st) {
    const ErrorEntry *found[MATCHES_MAX];
    int count = error_catalog_search(text, found, MATCHES_MAX);
    if (count == 1) return found[0];
    if (count == 0) unknown_failure(text, st);
    else ambiguous_failure(text, found, count, st);
    return NULL;
}

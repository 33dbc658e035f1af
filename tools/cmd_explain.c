// `trainer explain ERROR`: what a CUDA, cuBLAS, cuDNN or NCCL error, or a PyTorch or
// TensorFlow message, means, what usually causes it, how to confirm and fix it, how the
// two frameworks word it, and the facts of this machine that bear on it, led by a verdict
// when those facts decide the cause. ERROR is a name (cudaErrorInvalidDevice,
// CUDA_ERROR_INVALID_DEVICE), a code (cuda:101, cudnn:9 in cuDNN 8 numbering, 101) or a
// pasted message; the text comes from base/error_catalog.c.
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "base/error_catalog.h"
#include "base/escape.h"
#include "diagnostics/machine_facts.h"
#include "tools/cli.h"

static const OptionSpec explain_options[] = {
    {"--short", NULL, "at most 8 lines: the meaning, the cause (this machine's verdict when "
                      "there is one) and the command to run next"},
    {"--list", NULL, "list every entry of the catalog, grouped by family"},
    {"--list-wordings", NULL, "every entry with the wordings a pasted message is matched "
                              "against, as a Markdown table"},
    {"--json", NULL, "print the entry (or, with --list, every entry) as JSON"},
    {NULL, NULL, NULL},
};

const Command explain_command = {
    .name = "explain",
    .usage = "ERROR | --list   (ERROR: a name, a code like cuda:2, or a pasted message)",
    .summary = "explain a CUDA, cuBLAS, cuDNN or NCCL error, or a framework's message",
    .options = explain_options,
    .run = run_explain,
};

enum { TEXT_WIDTH = 90, MATCHES_MAX = 8, CLOSE_MAX = 3, SHORT_PART_LINES = 3 };

// ---- plain text -------------------------------------------------------------------------

// Prints `text` wrapped at TEXT_WIDTH in at most max_lines lines (ending in "..." when it
// is cut), the first line after `first` and the others after as many spaces, so numbered
// causes hang under their number.
static void print_wrapped_at_most(const char *first, const char *text, int max_lines) {
    size_t indent = strlen(first), column = indent;
    int lines = 1;
    fputs(first, stdout);
    while (*text) {
        while (*text == ' ') text++;
        size_t word = strcspn(text, " ");
        if (word == 0) break;
        if (column > indent && column + 1 + word > TEXT_WIDTH) {
            if (lines == max_lines) {
                fputs(" ...", stdout);
                break;
            }
            printf("\n%*s", (int)indent, "");
            column = indent;
            lines++;
        } else if (column > indent) {
            putchar(' ');
            column++;
        }
        fwrite(text, 1, word, stdout);
        column += word;
        text += word;
    }
    putchar('\n');
}

static void print_wrapped(const char *first, const char *text) {
    print_wrapped_at_most(first, text, 1 << 20);
}

static void print_section(const char *title, const char *text) {
    printf("\n%s\n", title);
    print_wrapped("  ", text);
}

// `matched`: the wording a pasted message was recognised by, or NULL.
static void print_header(const ErrorEntry *e, const char *matched) {
    char code[64];
    error_entry_code(e, code, sizeof code);
    printf("%s  (%s, %s; code %s)\n", e->name, error_family_title(e->family),
           error_family_type(e->family), code);
    if (matched && strcmp(matched, e->name) != 0)
        printf("  recognised by: \"%s\"\n", matched);
    else if (e->family == ERROR_FAMILY_FRAMEWORK)
        printf("  recognised by: \"%s\"\n", e->short_string);
    else if (strcmp(e->short_string, e->name) != 0)
        printf("  library string: \"%s\"\n", e->short_string);
    if (e->old_name || e->old_number)
        printf("  cuDNN 8 and older: %s (%d)\n", e->old_name ? e->old_name : e->name,
               e->old_number);
    const ErrorEntry *related = e->related ? error_catalog_lookup_name(e->related) : NULL;
    if (related) {
        error_entry_code(related, code, sizeof code);
        printf("  %s %s (%s)\n",
               e->family == ERROR_FAMILY_FRAMEWORK ? "the library error behind it:"
                                                   : "the same error as:",
               related->name, code);
    }
}

// "nvidia-smi, then trainer doctor"
static void join_commands(const ErrorVerdict *v, char *out, size_t size) {
    size_t used = 0;
    out[0] = '\0';
    for (int i = 0; i < v->next_count && used < size; i++)
        used += (size_t)snprintf(out + used, size - used, "%s`%s`", i ? ", then " : "",
                                 v->next[i]);
}

static void print_verdict(const ErrorVerdict *v) {
    char next[256];
    join_commands(v, next, sizeof next);
    print_section("Verdict for this machine", v->cause);
    print_wrapped("  Next: ", next);
}

static void print_facts(const ErrorEntry *e, int has_verdict) {
    ErrorFacts facts;
    error_catalog_machine_facts(e, &facts);
    printf("\nOn this machine\n");
    if (facts.count == 0) print_wrapped("  ", "(nothing about this machine bears on this error)");
    // A fact may hold the environment's bytes (CUDA_VISIBLE_DEVICES): escaped for the
    // terminal here, made valid UTF-8 for --json.
    for (int i = 0; i < facts.count; i++) {
        char shown[4 * sizeof facts.lines[i]];
        print_wrapped("  - ", text_escape(facts.lines[i], strlen(facts.lines[i]), shown,
                                          sizeof shown));
    }
    if (facts.count && !has_verdict)
        print_wrapped("  ", "`trainer doctor` checks this machine's driver, GPUs and CUDA "
                            "libraries in full.");
}

// What only applies to trainer, apart from the framework-neutral advice above it.
static void print_with_trainer(const ErrorEntry *e) {
    char text[1024];
    snprintf(text, sizeof text, "%s%s%strainer exits %d (%s) when it hits this error.",
             e->with_trainer ? e->with_trainer : "", e->with_trainer ? " " : "",
             e->poisons_context ? "With --checkpoint DIR, `trainer train MODEL --resume DIR` "
                                  "continues from the last checkpoint after the restart; "
                                  "--sync-check reports the kernel that failed, as "
                                  "CUDA_LAUNCH_BLOCKING=1 does. "
                                : "",
             status_exit_code(&(Status){.code = e->status}), status_code_name(e->status));
    print_section("With trainer", text);
}

// Other entries the pasted text matched, unless they are the same error told another way
// (the header names that one): what a reader should know was close.
static void print_close(const ErrorEntry *e, const ErrorCandidate *close, int count) {
    for (int i = 0, shown = 0; i < count && shown < CLOSE_MAX; i++) {
        const ErrorEntry *other = close[i].entry;
        if (error_entries_same_error(e, other)) continue;
        // A tie: the text did not decide between them, so the reader should look at both.
        int tie = close[i].specificity >= close[0].specificity;
        printf("  %s %s (by \"%s\"%s)\n", shown++ ? "             " : "also matched:",
               other->name, close[i].wording, tie ? "; as specific as the match shown" : "");
    }
}

static void print_entry(const ErrorEntry *e, const ErrorCandidate *close, int close_count) {
    print_header(e, close_count > 0 && close[0].entry == e ? close[0].wording : NULL);
    print_close(e, close, close_count);
    ErrorVerdict verdict;
    int has_verdict = error_catalog_verdict(e, &verdict);
    if (has_verdict) print_verdict(&verdict);
    print_section("What it means", e->meaning);
    printf("\nUsual causes, most common first\n");
    for (int i = 0; i < ERROR_CAUSES_MAX && e->causes[i]; i++) {
        char number[16];
        snprintf(number, sizeof number, "  %d. ", i + 1);
        print_wrapped(number, e->causes[i]);
    }
    print_section("How to confirm", e->confirm);
    print_section("How to fix", e->fix);
    if (e->poisons_context)
        print_section("After this error",
                      "The CUDA context is unusable: every later CUDA call in the process "
                      "fails with the same error, so the process must restart.");
    printf("\nHow the frameworks word it\n");
    print_wrapped("  PyTorch: ", e->pytorch);
    print_wrapped("  TensorFlow: ", e->tensorflow);
    print_with_trainer(e);
    print_facts(e, has_verdict);
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

// At most 8 lines: the name and meaning, the cause (the verdict when this machine decides
// it), the command to run next.
static void print_short(const ErrorEntry *e) {
    char code[64], line[1024], part[512];
    error_entry_code(e, code, sizeof code);
    first_sentence(e->meaning, part, sizeof part);
    snprintf(line, sizeof line, "%s (%s): %s", e->name, code, part);
    print_wrapped_at_most("", line, SHORT_PART_LINES);
    ErrorVerdict verdict;
    if (error_catalog_verdict(e, &verdict)) {
        print_wrapped_at_most("  Cause here: ", verdict.cause, SHORT_PART_LINES);
        join_commands(&verdict, part, sizeof part);
        print_wrapped_at_most("  Next: ", part, 2);
        return;
    }
    first_sentence(e->causes[0], part, sizeof part);
    print_wrapped_at_most("  Most likely: ", part, SHORT_PART_LINES);
    first_sentence(e->confirm, part, sizeof part);
    print_wrapped_at_most("  Next: ", part, 2);
}

static void print_list(void) {
    for (int f = 0; f < ERROR_FAMILY_COUNT; f++) {
        printf("%s%s (%s)\n", f ? "\n" : "", error_family_title((ErrorFamily)f),
               error_family_type((ErrorFamily)f));
        for (int i = 0; i < error_catalog_count(); i++) {
            const ErrorEntry *e = error_catalog_at(i);
            if (e->family != (ErrorFamily)f) continue;
            char code[64];
            error_entry_code(e, code, sizeof code);
            if (strcmp(e->short_string, e->name) == 0) printf("  %-14s %s\n", code, e->name);
            else printf("  %-14s %-40s %s\n", code, e->name, e->short_string);
        }
    }
}

// One Markdown table row per entry: its code, name and wordings. A wording holding a
// backtick ("Assertion `t >= 0") goes in a double-backtick span.
static void print_wordings(void) {
    printf("| Code | Entry | Recognised in a pasted message by |\n|---|---|---|\n");
    for (int i = 0; i < error_catalog_count(); i++) {
        const ErrorEntry *e = error_catalog_at(i);
        const char *wordings[ERROR_WORDINGS_MAX];
        int count = error_entry_wordings(e, wordings, ERROR_WORDINGS_MAX);
        char code[64];
        error_entry_code(e, code, sizeof code);
        printf("| %s | %s | ", code, e->name);
        for (int w = 0; w < count; w++) {
            const char *fence = strchr(wordings[w], '`') ? "``" : "`";
            const char *pad = strchr(wordings[w], '`') ? " " : "";
            printf("%s%s%s%s%s%s", w ? ", " : "", fence, pad, wordings[w], pad, fence);
        }
        printf("%s |\n", count ? "" : "(its name or code only)");
    }
}

// ---- JSON -------------------------------------------------------------------------------

static cJSON *json_strings(const char *const *texts, int count) {
    cJSON *list = cJSON_CreateArray();
    for (int i = 0; i < count; i++) cJSON_AddItemToArray(list, json_text(texts[i]));
    return list;
}

// The machine's facts: these are where bytes from the environment (CUDA_VISIBLE_DEVICES)
// enter, which json_text makes valid UTF-8.
static cJSON *json_machine_facts(const ErrorEntry *e) {
    ErrorFacts facts;
    error_catalog_machine_facts(e, &facts);
    const char *lines[ERROR_FACTS_MAX];
    for (int i = 0; i < facts.count; i++) lines[i] = facts.lines[i];
    return json_strings(lines, facts.count);
}

static cJSON *json_entry(const ErrorEntry *e, int with_facts) {
    char code[64];
    error_entry_code(e, code, sizeof code);
    int causes = 0;
    while (causes < ERROR_CAUSES_MAX && e->causes[causes]) causes++;
    cJSON *entry = cJSON_CreateObject();
    json_add_text(entry, "family", error_family_prefix(e->family));
    json_add_text(entry, "type", error_family_type(e->family));
    json_add_text(entry, "name", e->name);
    cJSON_AddNumberToObject(entry, "number", e->number);
    json_add_text(entry, "code", code);
    json_add_text(entry, "string", e->short_string);
    json_add_text(entry, "meaning", e->meaning);
    cJSON_AddItemToObject(entry, "causes", json_strings(e->causes, causes));
    json_add_text(entry, "confirm", e->confirm);
    json_add_text(entry, "fix", e->fix);
    json_add_text(entry, "with_trainer", e->with_trainer);
    json_add_text(entry, "pytorch", e->pytorch);
    json_add_text(entry, "tensorflow", e->tensorflow);
    cJSON_AddBoolToObject(entry, "poisons_context", e->poisons_context);
    cJSON_AddNumberToObject(entry, "exit_code", status_exit_code(&(Status){.code = e->status}));
    json_add_text(entry, "related", e->related);
    if (with_facts) {
        cJSON_AddItemToObject(entry, "machine", json_machine_facts(e));
        ErrorVerdict verdict;
        if (error_catalog_verdict(e, &verdict)) {
            cJSON *v = cJSON_CreateObject();
            json_add_text(v, "cause", verdict.cause);
            cJSON_AddItemToObject(v, "next", json_strings(verdict.next, verdict.next_count));
            cJSON_AddItemToObject(entry, "verdict", v);
        }
    }
    return entry;
}

static void print_json_entry(const ErrorEntry *e) {
    cJSON *entry = json_entry(e, 1);
    json_print(stdout, entry, 1);
    cJSON_Delete(entry);
}

static void print_json_list(void) {
    cJSON *list = cJSON_CreateArray();
    for (int i = 0; i < error_catalog_count(); i++)
        cJSON_AddItemToArray(list, json_entry(error_catalog_at(i), 0));
    json_print(stdout, list, 1);
    cJSON_Delete(list);
}

// ---- failures ---------------------------------------------------------------------------

static int usage_failure(const char *message) {
    Status st;
    status_clear(&st);
    status_fail(&st, STATUS_BAD_INPUT, "%s", message);
    status_hint(&st, "e.g. `trainer explain cudaErrorMemoryAllocation`, `trainer explain "
                     "cuda:2`, `trainer explain \"CUDA error: out of memory\"`; `trainer "
                     "explain --list` lists every entry");
    return report_failure(&st);
}

static int unknown_failure(const char *text) {
    Status st;
    status_clear(&st);
    const char *near = error_catalog_suggest(text);
    // A pasted message may hold the terminal's colour codes: shown escaped.
    char shown[4 * 200 + 8];
    text_escape(text, strlen(text) < 200 ? strlen(text) : 200, shown, sizeof shown);
    if (near)
        status_fail(&st, STATUS_BAD_INPUT, "no catalog entry for '%s'; did you mean '%s'?",
                    shown, near);
    else
        status_fail(&st, STATUS_BAD_INPUT, "no catalog entry matches '%s%s'", shown,
                    strlen(text) > 200 ? "..." : "");
    status_hint(&st, "give an error's name (cudaErrorX, CUDA_ERROR_X, CUBLAS_STATUS_X, "
                     "CUDNN_STATUS_X, ncclX), a code with its family (cuda:2, driver:101, "
                     "cudnn:3000) or the line of the message that names the error; `trainer "
                     "explain --list` lists every entry");
    return report_failure(&st);
}

static int ambiguous_failure(const char *text, const ErrorEntry **found, int count) {
    Status st;
    status_clear(&st);
    char list[600] = "";
    size_t used = 0;
    for (int i = 0; i < count && i < MATCHES_MAX && used < sizeof list; i++) {
        char code[64];
        error_entry_code(found[i], code, sizeof code);
        used += (size_t)snprintf(list + used, sizeof list - used, "%s%s %s", i ? ", " : "",
                                 code, found[i]->name);
    }
    status_fail(&st, STATUS_BAD_INPUT, "'%s' is a code in %d families: %s", text, count, list);
    char code[64];
    error_entry_code(found[0], code, sizeof code);
    status_hint(&st, "name the family, e.g. `trainer explain %s`", code);
    return report_failure(&st);
}

// ---- the command ---------------------------------------------------------------------------

// The positional words joined by spaces, so an unquoted pasted message works too.
static void join_positionals(const ParsedArgs *args, char *text, size_t size) {
    size_t used = 0;
    text[0] = '\0';
    for (int i = 0; i < args->positional_count && used < size; i++)
        used += (size_t)snprintf(text + used, size - used, "%s%s", i ? " " : "",
                                 args->positionals[i]);
}

int run_explain(const Command *cmd, const ParsedArgs *args) {
    int json = args_get(cmd, args, "--json") != NULL;
    if (args_get(cmd, args, "--list")) {
        if (args->positional_count) return usage_failure("explain --list takes no ERROR");
        if (json) print_json_list();
        else print_list();
        return 0;
    }
    if (args_get(cmd, args, "--list-wordings")) {
        if (args->positional_count) return usage_failure("explain --list-wordings takes no ERROR");
        print_wordings();
        return 0;
    }
    if (args->positional_count == 0)
        return usage_failure("explain needs an ERROR: a name, a code like cuda:2, or a message");
    char text[4096];
    join_positionals(args, text, sizeof text);
    const ErrorEntry *found[MATCHES_MAX];
    int count = error_catalog_search(text, found, MATCHES_MAX);
    if (count == 0) return unknown_failure(text);
    if (count > 1) return ambiguous_failure(text, found, count);
    if (json) {
        print_json_entry(found[0]);
    } else if (args_get(cmd, args, "--short")) {
        print_short(found[0]);
    } else {
        ErrorCandidate close[MATCHES_MAX];
        int close_count = error_catalog_rank(text, close, MATCHES_MAX);
        print_entry(found[0], close, close_count < MATCHES_MAX ? close_count : MATCHES_MAX);
    }
    return 0;
}

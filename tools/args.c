#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "base/escape.h"
#include "data/dataset.h"
#include "tools/cli.h"
#include "base/suggest.h"
#include "base/whole_number.h"

static int find_option(const Command *cmd, const char *name, size_t length) {
    for (int i = 0; cmd->options[i].name; i++)
        if (strlen(cmd->options[i].name) == length && strncmp(cmd->options[i].name, name, length) == 0)
            return i;
    return -1;
}

int find_option_spec(const Command *cmd, const char *name) {
    return find_option(cmd, name, strlen(name)) >= 0;
}

// args_parse made room for every argument, so none can overflow it.
static void add_positional(const char *arg, ParsedArgs *out) {
    out->positionals[out->positional_count++] = arg;
}

// The words of a value_name that make an option's value a path: args_parse refuses such a
// value when empty and expands its leading `~` (docs/cli.md).
static int option_takes_path(const OptionSpec *spec) {
    const char *word = spec->value_name;
    if (!word || !*word) return 0;
    // Every word of "DIR|FILE" names a path; "N|epoch", "SPEC" or "NAMES" do not.
    while (*word) {
        size_t n = strcspn(word, "|");
        int path = (n == 3 && strncmp(word, "DIR", 3) == 0) ||
                   (n == 4 && (strncmp(word, "FILE", 4) == 0 || strncmp(word, "PATH", 4) == 0));
        if (!path) return 0;
        word += n;
        if (*word == '|') word++;
    }
    return 1;
}

// An empty path would reach the file system as "" and fail late, after training, naming no
// file (`--save "$OUT"` with OUT unset); a `~` the shell left alone (`--save=~/w`, a quoted
// "~/w") would make a folder named `~` here. Both are settled before anything runs.
static int check_path_values(const Command *cmd, ParsedArgs *out, Status *st) {
    for (int i = 0; cmd->options[i].name; i++) {
        const OptionSpec *spec = &cmd->options[i];
        const char *value = out->values[i];
        if (!value || !option_takes_path(spec)) continue;
        if (!value[0]) {
            status_fail(st, STATUS_BAD_INPUT, "%s was given an empty path", spec->name);
            status_hint(st, "write %s %s; an unset or empty shell variable (%s \"$VAR\") is "
                        "the usual cause", spec->name, spec->value_name, spec->name);
            return STATUS_BAD_INPUT;
        }
        if (value[0] != '~' || (value[1] != '/' && value[1] != '\0')) continue;
        const char *home = getenv("HOME");
        size_t size = strlen(value) + (home ? strlen(home) : 0) + 1;
        out->expanded[i] = malloc(size);
        if (!out->expanded[i]) return status_out_of_host_memory(st, size, "reading %s", spec->name);
        out->values[i] = dataset_expand_home(value, out->expanded[i], size);
    }
    return 0;
}

void args_free(ParsedArgs *args) {
    free(args->positionals);
    args->positionals = NULL;
    args->positional_count = 0;
    for (int i = 0; i < CLI_MAX_OPTIONS; i++) {
        free(args->expanded[i]);
        args->expanded[i] = NULL;
    }
}

// `-o=x.png`: a long option takes its value after '=' (`--output=x.png`), a short one only
// after a space, as getopt reads `-o=x.png` as the file "=x.png". Said plainly: "unknown
// option '-o'; did you mean '-o'?" contradicted itself.
static int short_option_with_equals(const OptionSpec *spec, const char *arg, Status *st) {
    const char *value = strchr(arg, '=') + 1;
    if (!spec->value_name) {
        status_fail(st, STATUS_BAD_INPUT, "option %s takes no value (got %s)", spec->name, arg);
        status_hint(st, "write just %s", spec->name);
        return STATUS_BAD_INPUT;
    }
    status_fail(st, STATUS_BAD_INPUT, "%s: a short option takes its value after a space, not "
                "'='", arg);
    status_hint(st, "write %s %s", spec->name, *value ? value : spec->value_name);
    return STATUS_BAD_INPUT;
}

// `--clip` for `--clip-norm`: a word that begins one option's name and no other's, with
// three letters or more past the dashes to say which, is that option cut short. The edit
// distance alone, five edits there, suggested nothing.
static const char *only_option_starting_with(const char *word, const char *const *names) {
    size_t length = strlen(word);
    if (strncmp(word, "--", 2) != 0 || length < 5) return NULL;
    const char *found = NULL;
    for (int i = 0; names[i]; i++) {
        if (strncmp(names[i], word, length) != 0) continue;
        if (found) return NULL;  // `--sync` begins two options: naming one would be a guess
        found = names[i];
    }
    return found;
}

// Other tools' long spellings: `--learning-rate` for `--lr` (the initials of its words)
// and `--batch-size` for `--batch` (its first words). The one option either way, or NULL.
static const char *option_from_words(const char *word, const char *const *names) {
    if (strncmp(word, "--", 2) != 0 || !strchr(word + 2, '-')) return NULL;
    char initials[64] = "--";
    size_t n = 2;
    for (const char *c = word + 2; *c && n + 1 < sizeof initials; c++)
        if (c == word + 2 || c[-1] == '-') initials[n++] = *c;
    initials[n] = '\0';
    const char *found = NULL;
    for (int i = 0; names[i]; i++) {
        size_t length = strlen(names[i]);
        int first_words = length > 2 && strncmp(word, names[i], length) == 0 &&
                          word[length] == '-';
        if (strcmp(names[i], initials) != 0 && !first_words) continue;
        if (found) return NULL;
        found = names[i];
    }
    return found;
}

static int unknown_option(const Command *cmd, const char *arg, Status *st) {
    const char *names[CLI_MAX_OPTIONS + 1];
    int n = 0;
    for (; cmd->options[n].name && n < CLI_MAX_OPTIONS; n++) names[n] = cmd->options[n].name;
    names[n] = NULL;
    char word[128];
    snprintf(word, sizeof word, "%s", arg);
    char *eq = strchr(word, '=');
    if (eq) *eq = '\0';
    // A long option's `=` is read before this, so only a short one gets here by its name.
    int known = eq ? find_option(cmd, word, strlen(word)) : -1;
    if (known >= 0) return short_option_with_equals(&cmd->options[known], arg, st);
    const char *near = suggest(word, names);
    if (!near) near = only_option_starting_with(word, names);
    if (!near) near = option_from_words(word, names);
    if (near) status_fail(st, STATUS_BAD_INPUT, "unknown option '%s' for %s; did you mean '%s'?",
                          word, cmd->name, near);
    else status_fail(st, STATUS_BAD_INPUT, "unknown option '%s' for %s", word, cmd->name);
    status_hint(st, "see `trainer %s --help`", cmd->name);
    return STATUS_BAD_INPUT;
}

int args_parse(const Command *cmd, int argc, char **argv, ParsedArgs *out, Status *st) {
    memset(out, 0, sizeof *out);
    // Values are kept by option index: a table longer than `values` would write past it.
    int listed = 0;
    while (cmd->options[listed].name) listed++;
    if (listed > CLI_MAX_OPTIONS)
        return status_fail(st, STATUS_RUNTIME_ERROR, "trainer %s lists %d options, more than "
                           "CLI_MAX_OPTIONS (%d) in tools/cli.h", cmd->name, listed,
                           CLI_MAX_OPTIONS);
    // Room for every argument as a positional: no count the shell can pass is refused.
    out->positionals = malloc((size_t)(argc > 0 ? argc : 1) * sizeof *out->positionals);
    if (!out->positionals)
        return status_out_of_host_memory(st, (size_t)argc * sizeof *out->positionals,
                                         "for %d arguments", argc);
    for (int i = 0; i < argc; i++) {
        const char *arg = argv[i];
        // `--` ends the options, as in POSIX tools: a model file named `-x.model` can follow.
        if (strcmp(arg, "--") == 0) {
            while (++i < argc) add_positional(argv[i], out);
            break;
        }
        if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
            out->help = 1;
            continue;
        }
        // A short option exists only where a command lists it (`plot -o FILE`).
        int short_option = arg[0] == '-' && arg[1] != '-' && arg[1] != '\0';
        if (short_option && find_option(cmd, arg, strlen(arg)) < 0)
            return unknown_option(cmd, arg, st);
        if (!short_option && strncmp(arg, "--", 2) != 0) {
            add_positional(arg, out);
            continue;
        }
        const char *eq = strchr(arg, '=');
        int index = find_option(cmd, arg, eq ? (size_t)(eq - arg) : strlen(arg));
        if (index < 0) return unknown_option(cmd, arg, st);
        const OptionSpec *spec = &cmd->options[index];
        if (!spec->value_name) {
            if (eq) {
                status_fail(st, STATUS_BAD_INPUT, "option %s takes no value", spec->name);
                status_hint(st, "write just %s", spec->name);
                return STATUS_BAD_INPUT;
            }
            out->values[index] = "1";
        } else if (eq) {
            out->values[index] = eq + 1;
        } else if (i + 1 < argc && strncmp(argv[i + 1], "--", 2) == 0) {
            // `--epochs --device cpu`: the value was forgotten, not "--device".
            status_fail(st, STATUS_BAD_INPUT, "option %s needs a value (%s), found option %s",
                        spec->name, spec->value_name, argv[i + 1]);
            status_hint(st, "write %s %s", spec->name, spec->value_name);
            return STATUS_BAD_INPUT;
        } else if (i + 1 < argc) {
            out->values[index] = argv[++i];
        } else {
            status_fail(st, STATUS_BAD_INPUT, "option %s needs a value (%s)", spec->name,
                        spec->value_name);
            status_hint(st, "write %s %s", spec->name, spec->value_name);
            return STATUS_BAD_INPUT;
        }
    }
    // --help shows the help whatever else the line holds.
    return out->help ? 0 : check_path_values(cmd, out, st);
}

const char *args_get(const Command *cmd, const ParsedArgs *args, const char *name) {
    int index = find_option(cmd, name, strlen(name));
    return index < 0 ? NULL : args->values[index];
}

int args_int(const Command *cmd, const ParsedArgs *args, const char *name, long min, long max,
             long *out, int *present, Status *st) {
    const char *text = args_get(cmd, args, name);
    if (present) *present = text != NULL;
    if (!text) return 0;
    long value;
    if (!whole_number_in(text, min, max, &value)) {
        // The words an option takes besides a number ("N|epoch": epoch) are valid too.
        int index = find_option(cmd, name, strlen(name));
        const char *value_name = index < 0 ? NULL : cmd->options[index].value_name;
        const char *words = value_name ? strchr(value_name, '|') : NULL;
        char shown[64] = "";
        if (words) snprintf(shown, sizeof shown, "%s", words + 1);
        for (char *bar = strchr(shown, '|'); bar; bar = strchr(bar, '|')) *bar = '/';
        status_fail(st, STATUS_BAD_INPUT, "%s %s: expected a whole number from %ld to %ld%s%s",
                    name, text, min, max, words ? ", or " : "", shown);
        char first[64];
        snprintf(first, sizeof first, "%.*s", (int)strcspn(shown, "/"), shown);
        if (words && suggest_is_near_miss(text, first))
            status_hint(st, "did you mean '%s %s'?", name, first);
        else
            status_hint(st, "see `trainer %s --help`", cmd->name);
        return STATUS_BAD_INPUT;
    }
    *out = value;
    return 0;
}

static void describe_range(double min, double max, RangeEnds ends, char *text, size_t size) {
    if (ends == RANGE_CLOSED) {
        snprintf(text, size, "from %g to %g", min, max);
        return;
    }
    snprintf(text, size, "%s %g and %s %g", ends & RANGE_OPEN_LOW ? "more than" : "at least",
             min, ends & RANGE_OPEN_HIGH ? "less than" : "at most", max);
}

int args_float_in(const Command *cmd, const ParsedArgs *args, const char *name, double min,
                  double max, RangeEnds ends, double *out, int *present, Status *st) {
    const char *text = args_get(cmd, args, name);
    if (present) *present = text != NULL;
    if (!text) return 0;
    char *end;
    errno = 0;
    double value = strtod(text, &end);
    int outside = value < min || value > max || (ends & RANGE_OPEN_LOW && value == min) ||
                  (ends & RANGE_OPEN_HIGH && value == max);
    // strtod also reads leading spaces and hexadecimal ("0x1p-3"): a decimal number only, as
    // the help shows, so a stray byte in a script's value is not a silent other number.
    int not_decimal = isspace((unsigned char)text[0]) || strpbrk(text, "xX") != NULL;
    if (errno || end == text || *end || !isfinite(value) || outside || not_decimal) {
        char range[96];
        describe_range(min, max, ends, range, sizeof range);
        status_fail(st, STATUS_BAD_INPUT, "%s %s: expected a number %s", name, text, range);
        status_hint(st, "see `trainer %s --help`", cmd->name);
        return STATUS_BAD_INPUT;
    }
    *out = value;
    return 0;
}

int args_float(const Command *cmd, const ParsedArgs *args, const char *name, double min,
               double max, double *out, int *present, Status *st) {
    return args_float_in(cmd, args, name, min, max, RANGE_CLOSED, out, present, st);
}

void command_print_help(const Command *cmd, FILE *out) {
    fprintf(out, "usage: trainer %s %s\n\n%s\n\noptions:\n", cmd->name, cmd->usage, cmd->summary);
    for (int i = 0; cmd->options[i].name; i++) {
        char left[64];
        snprintf(left, sizeof left, "%s%s%s", cmd->options[i].name,
                 cmd->options[i].value_name ? " " : "",
                 cmd->options[i].value_name ? cmd->options[i].value_name : "");
        fprintf(out, "  %-26s %s\n", left, cmd->options[i].help);
    }
    fprintf(out, "  %-26s %s\n", "-h, --help", "show this help");
}

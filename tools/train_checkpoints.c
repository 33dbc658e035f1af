#define _DEFAULT_SOURCE  // sysconf(_SC_NPROCESSORS_ONLN), geteuid
#include "tools/train_checkpoints.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/atomic_file.h"
#include "base/directories.h"

static int read_every(const Command *cmd, const ParsedArgs *args, CheckpointSession *s,
                      Status *st) {
    const char *every = args_get(cmd, args, "--checkpoint-every");
    if (every && !s->folder) {
        status_fail(st, STATUS_BAD_INPUT, "--checkpoint-every needs --checkpoint DIR");
        status_hint(st, "add --checkpoint DIR to say where the checkpoints go");
        return STATUS_BAD_INPUT;
    }
    if (!every || strcmp(every, "epoch") == 0) return 0;
    long steps;
    TRY(args_int(cmd, args, "--checkpoint-every", 1, 1L << 30, &steps, NULL, st));
    s->every_steps = (int)steps;
    return 0;
}

int checkpoints_read_options(const Command *cmd, const ParsedArgs *args, const char *model_path,
                             CheckpointSession *s, Status *st) {
    // As given: the graph keeps only the first 511 bytes of the path, for messages, and the
    // --save check and the resume command need the file itself.
    s->model_path = args->positional_count ? args->positionals[0] : model_path;
    s->notice = printed_notice;
    s->folder = args_get(cmd, args, "--checkpoint");
    s->save_path = args_get(cmd, args, "--save");
    s->best_accuracy = -1.0;
    s->epoch_accuracy = -1.0;
    TRY(read_every(cmd, args, s, st));
    long keep = 3;
    int keep_given;
    TRY(args_int(cmd, args, "--keep-last", 1, 1000000, &keep, &keep_given, st));
    s->keep_last = (int)keep;
    if (keep_given && !s->folder) {
        status_fail(st, STATUS_BAD_INPUT, "--keep-last needs --checkpoint DIR");
        status_hint(st, "add --checkpoint DIR to say where the checkpoints go");
        return STATUS_BAD_INPUT;
    }
    if (args_get(cmd, args, "--resume") && args_get(cmd, args, "--init-from")) {
        status_fail(st, STATUS_BAD_INPUT, "--resume and --init-from both choose the start");
        status_hint(st, "--resume continues a run with its optimizer; --init-from starts a new "
                        "one from matching parameters");
        return STATUS_BAD_INPUT;
    }
    return 0;
}

// `word` as one shell word: bare when it has only characters the shell leaves alone, else
// in single quotes (a quote inside as '\'').
// Appends ` word`, quoted for the shell where it needs it: 0, or -1 (the line unchanged)
// when it would not fit, since a command cut short would run something else.
int append_shell_word(char *line, size_t size, const char *word) {
    size_t used = strlen(line);
    int plain = word[0] != '\0';
    for (const char *c = word; *c; c++)
        if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_./:,=+@%-",
                    *c))
            plain = 0;
    size_t needed = 1 + (plain ? 0 : 2);
    for (const char *c = word; *c; c++) needed += *c == '\'' && !plain ? 4 : 1;
    if (used + needed >= size) return -1;
    line[used++] = ' ';
    if (!plain) line[used++] = '\'';
    for (const char *c = word; *c; c++) {
        if (*c == '\'' && !plain) {
            memcpy(line + used, "'\\''", 4);
            used += 4;
        } else {
            line[used++] = *c;
        }
    }
    if (!plain) line[used++] = '\'';
    line[used] = '\0';
    return 0;
}

// `--name VALUE`, or `--name=VALUE` where VALUE starts with `-`: the parser takes a
// following `--word` for a forgotten value, so the two-word form would be refused.
static int append_option(char *line, size_t size, const char *name, const char *value) {
    if (value[0] != '-')
        return append_shell_word(line, size, name) || append_shell_word(line, size, value)
                   ? -1 : 0;
    char joined[4200];
    if ((size_t)snprintf(joined, sizeof joined, "%s=%s", name, value) >= sizeof joined)
        return -1;
    return append_shell_word(line, size, joined);
}

// "mpirun -np N", with the flags Open MPI needs to run it as printed here: as root
// (--allow-run-as-root) and with more processes than cores (--oversubscribe).
void mpirun_words(char *line, size_t size, int processes) {
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    snprintf(line, size, "mpirun -np %d%s%s", processes,
             cores > 0 && processes > cores ? " --oversubscribe" : "",
             geteuid() == 0 ? " --allow-run-as-root" : "");
}

// The run's own options again, so that the resumed run trains toward the same --epochs on
// the same data; --resume and --init-from give way to --resume FROM. The trainer is named
// as it was run (`./build/trainer` is not on PATH), and a model path starting with `-`
// gets `./` so that it is not read as an option.
static void print_resume_command(const CheckpointSession *s, const char *from,
                                 const Command *cmd, const ParsedArgs *args) {
    char line[8192] = "";
    if (s->processes > 1) mpirun_words(line, sizeof line, s->processes);
    const char *program = args && args->program && args->program[0] ? args->program
                                                                     : "trainer";
    char model[4200];
    int cut = (size_t)snprintf(model, sizeof model, "%s%s", s->model_path[0] == '-' ? "./" : "",
                               s->model_path) >= sizeof model;
    cut = cut || append_shell_word(line, sizeof line, program) ||
          append_shell_word(line, sizeof line, "train") ||
          append_shell_word(line, sizeof line, model) ||
          append_option(line, sizeof line, "--resume", from);
    const OptionSpec *options = cmd ? cmd->options : NULL;
    for (int i = 0; options && options[i].name && !cut; i++) {
        const char *value = args->values[i];
        if (!value || strcmp(options[i].name, "--resume") == 0 ||
            strcmp(options[i].name, "--init-from") == 0)
            continue;
        cut = options[i].value_name ? append_option(line, sizeof line, options[i].name, value)
                                    : append_shell_word(line, sizeof line, options[i].name);
    }
    if (cut) {
        fprintf(stderr, "trainer: to resume: run the same command with --resume %s in place of "
                "any --resume or --init-from (its options are too long to repeat here)\n", from);
        return;
    }
    // The first word's leading space is the only one not wanted.
    fprintf(stderr, "trainer: to resume: %s\n", line[0] == ' ' ? line + 1 : line);
}

void checkpoints_print_resume(const CheckpointSession *s, const Command *cmd,
                              const ParsedArgs *args) {
    if (s->read_only) return;
    if (s->folder && s->last_written[0]) {
        print_resume_command(s, s->folder, cmd, args);  // its newest step file: last_written
    } else if (s->resumed_path) {
        print_resume_command(s, s->resumed_path, cmd, args);
    } else if (s->saved_epoch) {
        print_notice("%s holds epoch %d's weights; without --checkpoint DIR the run cannot "
                     "be resumed, only started again from them with --init-from %s",
                     s->save_path, s->saved_epoch, s->save_path);
    }
}

// A write that fails here (the disk full) is reported, and the resume command still
// printed: from the checkpoint written before it, or the one resumed from.
void checkpoints_interrupted(CheckpointSession *s, Graph *g, Device *d, const Command *cmd,
                             const ParsedArgs *args) {
    Status st;
    status_clear(&st);
    if (s->folder && s->has_last) {
        if (checkpoints_write_interrupted(s, g, d, &st)) report_failure(&st);
        checkpoints_print_resume(s, cmd, args);
        return;
    }
    // Stopped before this run finished a step (in the epoch a resume evaluates first): the
    // checkpoint it resumed from still says where the run stands, and resumes it again.
    if (!s->has_last && s->resumed_path && !s->read_only)
        print_resume_command(s, s->resumed_path, cmd, args);
    if (!s->save_path || !checkpoints_save_interrupted(s, g, d, &st)) return;
    report_failure(&st);
    if (!s->resumed_path) checkpoints_print_resume(s, cmd, args);  // the epoch the file still holds
}


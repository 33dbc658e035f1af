// The man page (roff) and the bash and zsh completions, printed from the commands' own
// help texts, so that what is installed lists exactly the options this binary takes.
// CMake runs `trainer --help-man` and `trainer --completion SHELL` at build time.
#define _DEFAULT_SOURCE  // scandir, alphasort
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/cli.h"

// Text for a roff line: backslashes and hyphens escaped (a plain '-' may print as a
// hyphen that cannot be searched or pasted), and a line never starts a request.
static void roff_text(FILE *out, const char *text) {
    if (text[0] == '.' || text[0] == '\'') fputs("\\&", out);
    for (const char *c = text; *c; c++) {
        if (*c == '\\') fputs("\\e", out);
        else if (*c == '-') fputs("\\-", out);
        else fputc(*c, out);
    }
}

static void man_command(FILE *out, const Command *cmd) {
    fputs(".SS \"trainer ", out);
    roff_text(out, cmd->name);
    fputs(" ", out);
    roff_text(out, cmd->usage);
    fputs("\"\n", out);
    roff_text(out, cmd->summary);
    fputc('\n', out);
    for (int i = 0; cmd->options[i].name; i++) {
        const OptionSpec *o = &cmd->options[i];
        fputs(".TP\n.B ", out);
        roff_text(out, o->name);
        if (o->value_name) {
            fputs(" \"", out);
            roff_text(out, o->value_name);
            fputc('"', out);
        }
        fputc('\n', out);
        roff_text(out, o->help);
        fputc('\n', out);
    }
}

void print_man_page(FILE *out, const Command *const *commands, int count) {
    fprintf(out, ".TH TRAINER 1 \"\" \"trainer %s\" \"User Commands\"\n", TRAINER_VERSION);
    fputs(".SH NAME\ntrainer \\- train MLP and CNN models described in a .model file\n"
          ".SH SYNOPSIS\n.B trainer\n.I COMMAND\n[options]\n"
          ".SH DESCRIPTION\nA minimal neural\\-network training runtime: it trains the models "
          "a small text file describes on the CPU or a CUDA GPU, evaluates and classifies "
          "with the weights it saved, and reports every mistake in a model file or dataset "
          "with the file, line and column and what to do.\n"
          ".PP\nA bundled model goes by its name: \\fBtrainer train mlp\\fR. "
          "\\fBtrainer \\-\\-version\\fR says where the models and the CUDA module were "
          "found.\n.SH COMMANDS\n", out);
    for (int i = 0; i < count; i++) man_command(out, commands[i]);
    fputs(".SH EXIT STATUS\n0 ok, 1 runtime failure, 2 bad usage or bad model or data, "
          "3 no usable device, 130 or 143 interrupted.\n"
          ".SH ENVIRONMENT\n.TP\n.B TRAINER_CUDA_MODULE\nthe CUDA backend (trainer_cuda.so) "
          "to open instead of the one beside the binary or in ../lib/trainer.\n"
          ".SH FILES\n.TP\n.I share/trainer/models/*.model\nthe bundled models, beside the "
          "binary's bin/ folder.\n.SH EXAMPLES\n.nf\n"
          "trainer train mlp \\-\\-save mlp.safetensors\n"
          "trainer eval mlp \\-\\-weights mlp.safetensors\n"
          "trainer predict mlp \\-\\-weights mlp.safetensors shirt.png\n"
          "trainer train mlp \\-\\-checkpoint runs/mlp \\-\\-logdir runs/mlp\n"
          "trainer plot runs/mlp \\-o curves.png\n.fi\n", out);
}

// The options of one command and --help, separated by spaces (option names hold no
// character a shell word would need quoted).
static void option_words(FILE *out, const Command *cmd) {
    for (int i = 0; cmd->options[i].name; i++) fprintf(out, "%s ", cmd->options[i].name);
    fputs("--help", out);
}

// The bundled models' names (mlp lenet ...), which MODEL takes as well as a path; sorted,
// so that the generated files do not depend on the file system's order.
static void model_names(FILE *out) {
    char folder[4096];
    struct dirent **entries = NULL;
    int n = bundled_models_folder(folder, sizeof folder)
                ? scandir(folder, &entries, NULL, alphasort) : -1;
    for (int i = 0, first = 1; i < n; i++) {
        const char *name = entries[i]->d_name;
        size_t length = strlen(name);
        if (name[0] != '.' && length > 6 && strcmp(name + length - 6, ".model") == 0) {
            fprintf(out, "%s%.*s", first ? "" : " ", (int)(length - 6), name);
            first = 0;
        }
        free(entries[i]);
    }
    free(entries);
}

static void bash_completion(FILE *out, const Command *const *commands, int count) {
    fputs("# bash completion for trainer (printed by `trainer --completion bash`)\n"
          "_trainer() {\n"
          "    local cur=${COMP_WORDS[COMP_CWORD]} opts\n"
          "    if [ \"$COMP_CWORD\" -eq 1 ]; then\n"
          "        COMPREPLY=($(compgen -W '", out);
    for (int i = 0; i < count; i++) fprintf(out, "%s ", commands[i]->name);
    fputs("--help --version' -- \"$cur\"))\n        return\n    fi\n"
          "    case ${COMP_WORDS[1]} in\n", out);
    for (int i = 0; i < count; i++) {
        fprintf(out, "    %s) opts='", commands[i]->name);
        option_words(out, commands[i]);
        fputs("' ;;\n", out);
    }
    fputs("    *) opts='' ;;\n    esac\n"
          "    if [[ $cur == -* ]]; then\n"
          "        COMPREPLY=($(compgen -W \"$opts\" -- \"$cur\"))\n"
          "    else\n"
          "        COMPREPLY=($(compgen -W '", out);
    model_names(out);
    fputs("' -- \"$cur\") $(compgen -f -- \"$cur\"))\n"
          "    fi\n"
          "}\n"
          "complete -o filenames -o bashdefault -F _trainer trainer\n", out);
}

// `text` inside a zsh single-quoted word.
static void zsh_quoted(FILE *out, const char *text) {
    for (const char *c = text; *c; c++) {
        if (*c == '\'') fputs("'\\''", out);
        else fputc(*c, out);
    }
}

static void zsh_completion(FILE *out, const Command *const *commands, int count) {
    fputs("#compdef trainer\n# zsh completion for trainer (printed by `trainer --completion "
          "zsh`)\nlocal -a commands opts\nif (( CURRENT == 2 )); then\n  commands=(\n", out);
    for (int i = 0; i < count; i++) {
        fprintf(out, "    '%s:", commands[i]->name);
        zsh_quoted(out, commands[i]->summary);
        fputs("'\n", out);
    }
    fputs("  )\n  _describe command commands\n  return\nfi\ncase $words[2] in\n", out);
    for (int i = 0; i < count; i++) {
        fprintf(out, "  %s) opts=(", commands[i]->name);
        option_words(out, commands[i]);
        fputs(") ;;\n", out);
    }
    fputs("esac\nif [[ $PREFIX == -* ]]; then\n  compadd -- $opts\nelse\n  compadd -- ", out);
    model_names(out);
    fputs("\n  _files\nfi\n", out);
}

int print_completion(FILE *out, const char *shell, const Command *const *commands, int count,
                     Status *st) {
    if (shell && strcmp(shell, "bash") == 0) {
        bash_completion(out, commands, count);
        return 0;
    }
    if (shell && strcmp(shell, "zsh") == 0) {
        zsh_completion(out, commands, count);
        return 0;
    }
    status_fail(st, STATUS_BAD_INPUT, "--completion takes bash or zsh, got '%s'",
                shell ? shell : "");
    status_hint(st, "trainer --completion bash > /etc/bash_completion.d/trainer");
    return STATUS_BAD_INPUT;
}

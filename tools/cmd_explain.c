// `trainer explain ERROR`: what a CUDA, cuBLAS, cuDNN or NCCL error, or a PyTorch or
// TensorFlow message, means, what usually causes it, how to confirm and fix it, how the
// two frameworks word it, and the facts of this machine that bear on it, led by a verdict
// when those facts decide the cause. ERROR is a name (cudaErrorInvalidDevice,
// CUDA_ERROR_INVALID_DEVICE), a code (cuda:101, cudnn:9 in cuDNN 8 numbering, 101) or a
// pasted message; the text comes from base/error_catalog.c, told by diagnostics/explain.c.
#include <stdio.h>

#include "diagnostics/explain.h"
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

static int usage_failure(const char *message) {
    Status st;
    status_clear(&st);
    status_fail(&st, STATUS_BAD_INPUT, "%s", message);
    status_hint(&st, "e.g. `trainer explain cudaErrorMemoryAllocation`, `trainer explain "
                     "cuda:2`, `trainer explain \"CUDA error: out of memory\"`; `trainer "
                     "explain --list` lists every entry");
    return report_failure(&st);
}

int run_explain(const Command *cmd, const ParsedArgs *args) {
    int json = args_get(cmd, args, "--json") != NULL;
    if (args_get(cmd, args, "--list")) {
        if (args->positional_count) return usage_failure("explain --list takes no ERROR");
        if (json) print_and_delete_json(explain_list_json(), 1);
        else explain_list(&stdout_text);
        return 0;
    }
    if (args_get(cmd, args, "--list-wordings")) {
        if (args->positional_count) return usage_failure("explain --list-wordings takes no ERROR");
        explain_wordings(&stdout_text);
        return 0;
    }
    if (args->positional_count == 0)
        return usage_failure("explain needs an ERROR: a name, a code like cuda:2, or a message");
    // The positional words joined by spaces, so an unquoted pasted message works too.
    char text[4096];
    text_join(args->positionals, args->positional_count, " ", "", text, sizeof text);
    Status st;
    status_clear(&st);
    const ErrorEntry *e = explain_find(text, &st);
    if (!e) return report_failure(&st);
    if (json) print_and_delete_json(explain_entry_json(e), 1);
    else if (args_get(cmd, args, "--short")) explain_short(&stdout_text, e);
    else explain_entry(&stdout_text, e, text);
    return 0;
}

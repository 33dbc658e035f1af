// `trainer explain`: placeholder until implemented (issue 5).
#include "tools/cli.h"

static const OptionSpec explain_options[] = {
    {NULL, NULL, NULL},
};

const Command explain_command = {
    .name = "explain",
    .usage = "ERROR",
    .summary = "explain a CUDA, cuBLAS, cuDNN or NCCL error, or a framework's message",
    .options = explain_options,
    .run = run_explain,
};

int run_explain(const Command *cmd, const ParsedArgs *args) {
    (void)cmd;
    (void)args;
    Status st;
    status_clear(&st);
    status_fail(&st, STATUS_RUNTIME_ERROR, "trainer explain is not implemented yet");
    return report_failure(&st);
}

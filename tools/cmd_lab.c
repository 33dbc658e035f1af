// `trainer lab`: placeholder until implemented (issue 5).
#include "tools/cli.h"

static const OptionSpec lab_options[] = {
    {NULL, NULL, NULL},
};

const Command lab_command = {
    .name = "lab",
    .usage = "[SCENARIO]",
    .summary = "trigger a CUDA failure on purpose and show trainer's diagnosis",
    .options = lab_options,
    .run = run_lab,
};

int run_lab(const Command *cmd, const ParsedArgs *args) {
    (void)cmd;
    (void)args;
    Status st;
    status_clear(&st);
    status_fail(&st, STATUS_RUNTIME_ERROR, "trainer lab is not implemented yet");
    return report_failure(&st);
}

// `trainer doctor`: placeholder until implemented (issue 5).
#include "tools/cli.h"

static const OptionSpec doctor_options[] = {
    {NULL, NULL, NULL},
};

const Command doctor_command = {
    .name = "doctor",
    .usage = "[--json]",
    .summary = "check the driver, libraries and GPUs, and say what to fix",
    .options = doctor_options,
    .run = run_doctor,
};

int run_doctor(const Command *cmd, const ParsedArgs *args) {
    (void)cmd;
    (void)args;
    Status st;
    status_clear(&st);
    status_fail(&st, STATUS_RUNTIME_ERROR, "trainer doctor is not implemented yet");
    return report_failure(&st);
}

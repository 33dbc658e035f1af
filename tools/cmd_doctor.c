// `trainer doctor`: is this machine ready to train on a GPU, and if not, what to do.
// diagnostics/doctor judges the machine (the problems with their fixes, the smoke tests,
// the verdict and the exit code) and tells it (doctor_text.c, doctor_json.c); here it is
// printed as text, or with --json as one JSON object with the same facts.
#include <stdio.h>
#include <stdlib.h>

#include "diagnostics/doctor.h"
#include "tools/cli.h"

static const OptionSpec doctor_options[] = {
    {"--json", NULL, "print one JSON object with the same facts, the verdict and the fixes"},
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
    Status st;
    status_clear(&st);
    if (args->positional_count) {
        status_fail(&st, STATUS_BAD_INPUT, "trainer doctor takes no arguments, got '%s'",
                    args->positionals[0]);
        status_hint(&st, "usage: trainer doctor [--json]");
        return report_failure(&st);
    }
    Diagnosis *d = calloc(1, sizeof *d);
    if (!d) {
        status_out_of_host_memory(&st, sizeof *d, "for doctor's findings");
        return report_failure(&st);
    }
    if (doctor_diagnose(d, &st)) {
        free(d);
        return report_failure(&st);
    }
    if (args_get(cmd, args, "--json")) print_and_delete_json(doctor_json(d), 0);
    else doctor_text(&stdout_text, d);
    flush_stdout();
    int exit_code = d->exit_code;
    free(d);
    return exit_code;
}

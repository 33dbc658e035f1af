// `trainer lab [SCENARIO]`: make a failure happen on purpose and show, one above the
// other, the error as the CUDA API (or a framework) words it and trainer's diagnosis of it.
// diagnostics/lab.c runs the scenarios and lab_show.c tells them; here they are listed,
// run (each `lab all` one in its own process) and put on stdout.
//
// Each scenario runs for real as far as the machine allows: on a machine without a GPU
// the CUDA-only ones (illegal-address, no-kernel-image, duplicate-gpu) say why they cannot
// run and exit 3, and bad-launch and oom run their trainer half only. Exit codes of one
// scenario: 0 the failure was shown and diagnosed, 3 it needs a GPU this machine lacks, 1
// the failure did not come as expected. `lab all` runs every scenario in its own process (a
// scenario that breaks the CUDA context must not take the others with it) and exits 0 when
// each one either ran or could not run here, 1 when any went wrong.
#define _POSIX_C_SOURCE 200809L  // fork, execv
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "diagnostics/lab.h"
#include "tools/cli.h"

static const OptionSpec lab_options[] = {
    {NULL, NULL, NULL},
};

const Command lab_command = {
    .name = "lab",
    .usage = "[SCENARIO | all]",
    .summary = "trigger a CUDA failure on purpose and show trainer's diagnosis",
    .options = lab_options,
    .run = run_lab,
};

static void flush_both(void *user) {
    flush_stdout();
    fflush(stderr);
}

static void print_list(void) {
    char why[512];
    int gpu = lab_gpu_available(why, sizeof why);
    printf("usage: trainer lab SCENARIO | all\n\nscenarios (each triggers the failure, then shows "
           "trainer's diagnosis):\n");
    for (int i = 0; i < lab_scenario_count(); i++)
        printf("  %-16s %s [%s]\n", lab_scenarios[i].name, lab_scenarios[i].summary,
               lab_scenario_where(&lab_scenarios[i], gpu));
    printf("  %-16s every scenario above, each in its own process\n", "all");
    if (!gpu) printf("\nno GPU here: %s\n", why);
}

// Runs `trainer lab NAME` as a new process, so each scenario starts with fresh CUDA state.
static int run_in_own_process(const char *name) {
    flush_stdout();
    fflush(stderr);
    pid_t child = fork();
    if (child < 0) return -1;
    if (child == 0) {
        char *argv[] = {"trainer", "lab", (char *)name, NULL};
        char self[4096];
        execv(trainer_executable(self, sizeof self), argv);
        _exit(127);
    }
    int status = 0;
    if (waitpid(child, &status, 0) < 0) return -1;
    if (WIFEXITED(status)) return WEXITSTATUS(status);
    return 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

static int run_all(void) {
    int codes[LAB_SCENARIO_ROOM], went_wrong = 0;
    for (int i = 0; i < lab_scenario_count(); i++) {
        if (i) printf("\n");
        codes[i] = run_in_own_process(lab_scenarios[i].name);
        went_wrong += codes[i] != LAB_SHOWN && codes[i] != LAB_NEEDS_GPU;
    }
    printf("\n== summary\n");
    for (int i = 0; i < lab_scenario_count(); i++)
        printf("  %-16s %s\n", lab_scenarios[i].name,
               codes[i] == LAB_SHOWN       ? "shown"
               : codes[i] == LAB_NEEDS_GPU ? "skipped: needs a GPU"
                                           : "WENT WRONG");
    return went_wrong ? LAB_WENT_WRONG : LAB_SHOWN;
}

int run_lab(const Command *cmd, const ParsedArgs *args) {
    Status st;
    status_clear(&st);
    if (args->positional_count > 1) {
        status_fail(&st, STATUS_BAD_INPUT, "trainer lab takes one scenario, got %d arguments",
                    args->positional_count);
        status_hint(&st, "usage: trainer lab [SCENARIO | all]; `trainer lab` lists them");
        return report_failure(&st);
    }
    if (args->positional_count == 0) {
        print_list();
        return 0;
    }
    const char *name = args->positionals[0];
    if (strcmp(name, "all") == 0) return run_all();
    const LabScenario *s = lab_scenario_find(name, &st);
    if (!s) return report_failure(&st);
    printf("== lab %s: %s\n", s->name, s->summary);
    const TextOut out = {write_stdout_text, flush_both, NULL};
    int code = s->show(&out);
    flush_stdout();
    return code;
}

// trainer: the command line. Subcommands parse their options and call core/; only here
// do statuses become text on stderr and exit codes.
#define _POSIX_C_SOURCE 200809L  // setenv, execv
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "diagnostics/machine_facts.h"
#include "kernels/backend.h"
#include "kernels/mpi/mpi_world.h"
#include "tools/cli.h"
#include "base/suggest.h"

static const Command *const commands[] = {&train_command, &eval_command, &check_command,
                                          &predict_command, &devices_command, &bench_command,
                                          &doctor_command, &explain_command, &lab_command,
                                          &plot_command, &data_command, &export_command};
enum { COMMAND_COUNT = sizeof commands / sizeof commands[0] };

static void print_usage(FILE *out) {
    fprintf(out, "usage: trainer COMMAND [options]\n\n"
                 "Train MLP and CNN models described in a .model file.\n\ncommands:\n");
    for (int i = 0; i < COMMAND_COUNT; i++)
        fprintf(out, "  %-8s %s\n", commands[i]->name, commands[i]->summary);
    fprintf(out, "\n`trainer COMMAND --help` shows a command's options; `trainer --version` the "
                 "version.\nExit codes: 0 ok, 1 runtime failure, 2 bad usage, model or data, 3 "
                 "no usable device.\n");
}

static void print_version(void) {
    CudaVersions v;
    machine_cuda_versions(&v);
    printf("trainer %s\n", TRAINER_VERSION);
    char self[4096], models[4096];
    printf("binary: %s\n", trainer_executable(self, sizeof self));
    const char *folder = bundled_models_folder(models, sizeof models);
    printf("models: %s\n", folder ? folder : "none found (give a .model file's path)");
    printf("BLAS: OpenBLAS, kernels %s%s\n", cpu_blas_core_name(),
           getenv("OPENBLAS_CORETYPE") ? " (OPENBLAS_CORETYPE)" : "");
    char mpi[256];
    if (mpi_built())
        printf("MPI: %s (mpirun -np N trainer train ...)\n",
               mpi_library_version(mpi, sizeof mpi));
    else
        printf("MPI: not built in\n");
    if (!v.built_with_cuda) {
        printf("CUDA: not built in\n");
        return;
    }
    const char *unavailable = machine_cuda_unavailable();
    const char *module = machine_cuda_module_path();
    if (module) printf("CUDA module: %s%s\n", module, unavailable ? " (did not load)" : "");
    if (unavailable) {
        printf("CUDA: built in, but %s\n", unavailable);
        return;
    }
    printf("CUDA runtime %d.%d, driver %s", v.runtime_version / 1000,
           (v.runtime_version % 1000) / 10, v.driver_version ? "" : "none loaded");
    if (v.driver_version) printf("%d.%d", v.driver_version / 1000, (v.driver_version % 1000) / 10);
    printf(", cuBLAS %ld.%ld.%ld, cuDNN %ld.%ld.%ld, NCCL %d.%d.%d\n", v.cublas_version / 10000,
           v.cublas_version / 100 % 100, v.cublas_version % 100, v.cudnn_version / 10000,
           v.cudnn_version / 100 % 100, v.cudnn_version % 100, v.nccl_version / 10000,
           v.nccl_version / 100 % 100, v.nccl_version % 100);
}

// OpenBLAS reads its settings once, when it loads, so the only way to change them is to
// set them and start again, which costs a millisecond. Two are worth it:
// - OPENBLAS_CORETYPE: on a CPU newer than its table, OpenBLAS 0.3.21 takes its slowest
//   (SSE3) kernels; the AVX-512/AVX2 ones run GEMM about 2x faster.
// - OPENBLAS_THREAD_TIMEOUT: between GEMMs its idle workers spin in sched_yield for ~2^28
//   cycles, fighting our own pool threads (im2col, pooling, activations) for the cores; a
//   LeNet step spent a quarter of its CPU time there. 2^4 cycles makes them sleep at once
//   (measured: LeNet +20%, cnn-bn +15% on two cores).
static void restart_with_blas_settings(char **argv) {
    int changed = 0;
    const char *core = getenv("OPENBLAS_CORETYPE") ? NULL : cpu_blas_better_core();
    if (core) {
        setenv("OPENBLAS_CORETYPE", core, 1);
        changed = 1;
    }
    if (!getenv("OPENBLAS_THREAD_TIMEOUT")) {
        setenv("OPENBLAS_THREAD_TIMEOUT", "4", 1);
        changed = 1;
    }
    if (!changed) return;
    char self[4096];
    execv(trainer_executable(self, sizeof self), argv);  // returns only on failure: run as we are
}

// Every rank of `mpirun -np N` parses the same command line, so a mistake in it is the
// same on each: rank 0 says it and exits with its code. The others leave quietly with 0:
// mpirun ends every process once one exits non-zero, and a rank exiting 2 first could end
// rank 0 before its message (seen in a run of .ci/run: 3 ranks, nothing said). The launch
// still fails, with rank 0's code.
static int report_usage_failure(const Status *st) {
    return mpi_launch_rank() > 0 ? 0 : report_failure(st);
}

static int run_command(int argc, char **argv) {
    if (argc < 2) {
        print_usage(stderr);
        return 2;
    }
    const char *name = argv[1];
    if (strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0 || strcmp(name, "help") == 0) {
        print_usage(stdout);
        return 0;
    }
    if (strcmp(name, "--version") == 0) {
        print_version();
        return 0;
    }
    if (strcmp(name, "--help-man") == 0) {
        print_man_page(stdout, commands, COMMAND_COUNT);
        return 0;
    }
    if (strcmp(name, "--completion") == 0) {
        Status st;
        status_clear(&st);
        return print_completion(stdout, argc > 2 ? argv[2] : NULL, commands, COMMAND_COUNT, &st)
                   ? report_failure(&st)
                   : 0;
    }
    for (int i = 0; i < COMMAND_COUNT; i++) {
        const Command *cmd = commands[i];
        if (strcmp(cmd->name, name) != 0) continue;
        ParsedArgs args;
        Status st;
        status_clear(&st);
        int rc = args_parse(cmd, argc - 2, argv + 2, &args, &st);
        // The printed resume command runs the trainer again by this name; the OpenBLAS
        // restart above execs with this same argv, so it is the name the user typed.
        args.program = argv[0];
        if (rc) {
            rc = report_usage_failure(&st);
        } else if (args.help) {
            command_print_help(cmd, stdout);
            rc = 0;
        } else {
            rc = cmd->run(cmd, &args);
        }
        args_free(&args);
        return rc;
    }
    const char *names[COMMAND_COUNT + 1];
    for (int i = 0; i < COMMAND_COUNT; i++) names[i] = commands[i]->name;
    names[COMMAND_COUNT] = NULL;
    Status st;
    status_clear(&st);
    const char *near = suggest(name, names);
    if (near)
        status_fail(&st, STATUS_BAD_INPUT, "unknown command '%s'; did you mean '%s'?", name,
                    near);
    else
        status_fail(&st, STATUS_BAD_INPUT, "unknown command '%s'", name);
    status_hint(&st, "commands: train, eval, check, predict, devices, bench, doctor, explain, "
                         "lab, plot, data, export; see `trainer --help`");
    return report_usage_failure(&st);
}

int main(int argc, char **argv) {
    restart_with_blas_settings(argv);
    return finish_stdout(run_command(argc, argv));
}

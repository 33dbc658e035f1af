#include "tools/train_world.h"

#include <stdio.h>
#include <string.h>

#include "core/collective.h"
#include "diagnostics/machine_facts.h"

int world_open(MpiWorld *world, Status *st) {
    TRY(mpi_world_open(world, st));
    if (world->size > 1 && world->rank != 0 && !freopen("/dev/null", "w", stdout))
        return status_fail(st, STATUS_RUNTIME_ERROR, "rank %d: cannot silence stdout",
                           world->rank);
    return 0;
}

int world_apply(const Command *cmd, const ParsedArgs *args, const MpiWorld *world,
                RunConfig *config, Status *st) {
    config->world.rank = world->rank;
    config->world.size = world->size;
    config->world.bucket_mb = 25.0;  // PyTorch DDP's bucket_cap_mb
    config->world.sync_batchnorm = args_get(cmd, args, "--sync-batchnorm") != NULL;
    const char *replicas = args_get(cmd, args, "--gpus") ? "--gpus" : "--replicas";
    if (config->world.sync_batchnorm && args_get(cmd, args, replicas)) {
        status_fail(st, STATUS_BAD_INPUT, "--sync-batchnorm sums batchnorm statistics over the "
                    "processes of an mpirun launch, not over the replicas %s %s runs inside one "
                    "process", replicas, args_get(cmd, args, replicas));
        status_hint(st, "start one process per replica: mpirun -np N trainer train ... "
                        "--sync-batchnorm; or drop --sync-batchnorm");
        return STATUS_BAD_INPUT;
    }
    CollectiveChoice choice = COLLECTIVE_AUTO;
    const char *collective = args_get(cmd, args, "--collective");
    if (collective) TRY(collective_choice_parse(collective, &choice, st));
    config->world.collective = (int)choice;
    return args_float(cmd, args, "--bucket-mb", 0.0, 1e6, &config->world.bucket_mb, NULL, st);
}

typedef struct RankLine {
    char host[64];
    char device[32];
} RankLine;

int world_print_ranks(const MpiWorld *world, const char *device_name, int uses_nccl,
                      Status *st) {
    if (world->size <= 1) return 0;
    RankLine mine = {{0}, {0}};
    snprintf(mine.host, sizeof mine.host, "%s", world->host);
    snprintf(mine.device, sizeof mine.device, "%s", device_name);
    RankLine all[256];
    if (world->size > 256) {
        // Too many to gather into one line; say how many.
        if (world->rank == 0) printf("ranks: %d processes\n", world->size);
        return 0;
    }
    TRY(mpi_gather_bytes(&mine, sizeof mine, world->rank == 0 ? all : NULL, st));
    if (world->rank != 0) return 0;
    char version[256];
    version[0] = 0;
    mpi_library_version(version, sizeof version);
    printf("ranks: %d processes (%s", world->size, version);
    // GPU ranks sum over NCCL: its version is the first thing to compare when ranks on
    // different nodes hang or disagree (rank 0's library; NCCL refuses mismatched ones).
    if (uses_nccl) {
        CudaVersions v;
        machine_cuda_versions(&v);
        if (v.nccl_version)
            printf(", NCCL %d.%d.%d", v.nccl_version / 10000, v.nccl_version / 100 % 100,
                   v.nccl_version % 100);
    }
    printf("):");
    for (int r = 0; r < world->size; r++)
        printf("%s %d on %s (%s)", r ? "," : "", r, all[r].host, all[r].device);
    printf("\n");
    return 0;
}

void world_close(MpiWorld *world, int failed) {
    if (world->size > 1 && failed) {
        flush_stdout();
        fflush(stderr);
        mpi_world_abort(failed);
    }
    mpi_world_close(world);
}

void world_label_error(const MpiWorld *world, Status *st) {
    if (world->size > 1 && world->rank != 0)
        status_prefix(st, "rank %d of %d (%s): ", world->rank, world->size, world->host);
}

#include <string.h>

#include "core/checkpoint.h"
#include "tools/cli.h"

int load_model(const Command *cmd, const ParsedArgs *args, ModelFile *file, Graph *g,
               RunConfig *config, Status *st) {
    if (args->positional_count != 1) {
        status_fail(st, STATUS_BAD_INPUT, "trainer %s takes one model file, got %d arguments",
                    cmd->name, args->positional_count);
        status_hint(st, "usage: trainer %s %s", cmd->name, cmd->usage);
        return STATUS_BAD_INPUT;
    }
    TRY(model_file_read(args->positionals[0], file, st));
    int rc = graph_build(file, g, config, st);
    if (rc) model_file_free(file);
    else config->sync_check = args_get(cmd, args, "--sync-check") != NULL;
    return rc;
}

int open_device_from_args(const Command *cmd, const ParsedArgs *args, Device *d, Status *st) {
    return open_device_spec(cmd, args, args_get(cmd, args, "--device"), d, st);
}

int open_device_spec(const Command *cmd, const ParsedArgs *args, const char *spec, Device *d,
                     Status *st) {
    DeviceOptions options = {.spec = spec,
                             .memory_limit = args_get(cmd, args, "--memory-limit"),
                             .mode = ALLOC_GROW};
    if (!options.spec) options.spec = "auto";
    const char *mode = args_get(cmd, args, "--memory-mode");
    if (mode && strcmp(mode, "reserve") == 0) {
        options.mode = ALLOC_RESERVE;
        if (!options.memory_limit) {
            status_fail(st, STATUS_BAD_INPUT, "--memory-mode reserve needs --memory-limit");
            status_hint(st, "say how much to reserve, e.g. --memory-limit 2G or 0.8");
            return STATUS_BAD_INPUT;
        }
    } else if (mode && strcmp(mode, "grow") != 0) {
        status_fail(st, STATUS_BAD_INPUT, "--memory-mode %s: expected grow or reserve", mode);
        status_hint(st, "grow (the default) allocates on demand; reserve takes the limit up front");
        return STATUS_BAD_INPUT;
    }
    long threads = 0;
    TRY(args_int(cmd, args, "--threads", 1, 1024, &threads, NULL, st));
    options.threads = (int)threads;
    options.no_tf32 = args_get(cmd, args, "--no-tf32") != NULL;
    char notice[512];
    TRY(device_open(&options, d, notice, sizeof notice, st));
    if (notice[0]) print_notice("%s", notice);
    return 0;
}

int load_dataset_from_args(const Command *cmd, const ParsedArgs *args, const char *split,
                           const char *limit_option, Dataset *ds, Status *st) {
    const char *spec = args_get(cmd, args, "--data");
    TRY(dataset_load(spec ? spec : "fashion-mnist", split, ds, st));
    long limit = 0;
    int rc = args_int(cmd, args, limit_option, 1, 100000000, &limit, NULL, st);
    if (rc) {
        dataset_free(ds);
        return rc;
    }
    dataset_truncate(ds, (int)limit);
    return 0;
}

int load_weights(Graph *g, const Backend *b, const char *path, Status *st) {
    CheckpointLoaded loaded;
    TRY(checkpoint_load_weights(g, b, path, &loaded, st));
    if (loaded.nonfinite_count)
        fprintf(stderr, "trainer: warning: %s: %d tensor%s hold NaN or infinite values: %s\n",
                path, loaded.nonfinite_count, loaded.nonfinite_count == 1 ? "" : "s",
                loaded.nonfinite);
    return 0;
}

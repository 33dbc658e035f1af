// `trainer export onnx|pytorch MODEL [--weights FILE] -o FILE`: the model, with its trained
// weights, where models are deployed: an ONNX file (ONNX Runtime, TensorRT, ...), or a
// PyTorch module whose state_dict is the weights file's tensors. The graph is built as the
// CPU runs it in f32 (NCHW, no casts); the weights are read there.
#include <stdio.h>
#include <string.h>

#include "core/export.h"
#include "tools/cli.h"

static const OptionSpec export_options[] = {
    {"--weights", "FILE", "safetensors weights: from `trainer train --save`, or a checkpoint "
                          "(required for onnx)"},
    {"-o", "FILE", "the file to write: model.onnx, or model.py (required)"},
    {"--output", "FILE", "same as -o"},
    {NULL, NULL, NULL},
};

const Command export_command = {
    .name = "export",
    .usage = "onnx|pytorch MODEL [--weights FILE] -o FILE",
    .summary = "write a model as ONNX (with its weights) or as a PyTorch nn.Module",
    .options = export_options,
    .run = run_export,
};

static int usage_error(const Command *cmd, Status *st, const char *what) {
    status_fail(st, STATUS_BAD_INPUT, "%s", what);
    status_hint(st, "usage: trainer export %s; e.g. trainer export onnx models/lenet.model "
                "--weights lenet.safetensors -o lenet.onnx", cmd->usage);
    return STATUS_BAD_INPUT;
}

// The weights into the graph, opened on the CPU as eval opens it, then the ONNX file.
static int export_onnx_from(const Command *cmd, const ParsedArgs *args, Graph *g,
                            const char *weights, const char *output, Status *st) {
    Run run;
    RunSetup setup = {.purpose = RUN_EVAL, .weights = weights};
    RunRequest request = {.device = "cpu"};
    int rc = open_run(cmd, args, &setup, &request, g, &run, st);
    if (!rc) print_weights_notes(weights, run.graphs[0].path, &run.loaded);
    if (!rc) rc = export_onnx(&run.graphs[0], run.devices[0].backend, output, st);
    run_close(&run);
    return rc;
}

static int export_with(const Command *cmd, const ParsedArgs *args, Status *st) {
    if (args->positional_count != 2)
        return usage_error(cmd, st, "trainer export takes a format (onnx or pytorch) and a "
                                    "model file");
    const char *format = args->positionals[0];
    int onnx = strcmp(format, "onnx") == 0;
    if (!onnx && strcmp(format, "pytorch") != 0) {
        status_fail(st, STATUS_BAD_INPUT, "unknown export format '%s'", format);
        status_hint(st, "formats: onnx, pytorch");
        return STATUS_BAD_INPUT;
    }
    const char *output = args_get(cmd, args, "-o");
    if (!output) output = args_get(cmd, args, "--output");
    const char *weights = args_get(cmd, args, "--weights");
    if (!output) return usage_error(cmd, st, "trainer export needs -o FILE, the file to write");
    if (onnx && !weights)
        return usage_error(cmd, st, "trainer export onnx needs --weights FILE: an ONNX model "
                                    "holds its weights");
    ModelFile file;
    Graph g;
    TRY(model_file_read(args->positionals[1], &file, st));
    int rc = graph_build(&file, &g, NULL, st), built = !rc;  // a failed build frees itself
    if (!rc && onnx) {
        built = 0;  // the run's, freed with it
        rc = export_onnx_from(cmd, args, &g, weights, output, st);
    } else if (!rc) {
        rc = export_pytorch(&g, args->positionals[1], output, st);
    }
    if (built) graph_free(&g);  // its parameters go back to the device before it closes
    model_file_free(&file);
    return rc;
}

int run_export(const Command *cmd, const ParsedArgs *args) {
    Status st;
    status_clear(&st);
    return export_with(cmd, args, &st) ? report_failure(&st) : 0;
}

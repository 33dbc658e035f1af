// The PyTorch writer of `trainer export pytorch`: a Python file whose Model has one
// submodule per weighted layer, registered under the layer's own name, so that its
// state_dict keys are the weights file's tensor names ("dense1.weight").
#include <stdlib.h>
#include <string.h>

#include "base/atomic_file.h"
#include "core/export.h"

// What the file holds besides the model: trainer's batchnorm (nn.BatchNorm2d's computation
// without its num_batches_tracked buffer, which no weights file has, so a strict load
// matches) and a reader of safetensors files, so that load() needs nothing but torch.
static const char prelude[] =
    "import json\n"
    "\n"
    "import torch\n"
    "import torch.nn.functional as F\n"
    "from torch import nn\n"
    "\n"
    "\n"
    "class BatchNorm(nn.Module):\n"
    "    \"\"\"trainer's batchnorm: PyTorch's over the channels (dimension 1).\"\"\"\n"
    "\n"
    "    def __init__(self, channels, eps, momentum):\n"
    "        super().__init__()\n"
    "        self.eps, self.momentum = eps, momentum\n"
    "        self.weight = nn.Parameter(torch.ones(channels))\n"
    "        self.bias = nn.Parameter(torch.zeros(channels))\n"
    "        self.register_buffer(\"running_mean\", torch.zeros(channels))\n"
    "        self.register_buffer(\"running_var\", torch.ones(channels))\n"
    "\n"
    "    def forward(self, x):\n"
    "        return F.batch_norm(x, self.running_mean, self.running_var, self.weight, self.bias,\n"
    "                            self.training, self.momentum, self.eps)\n"
    "\n"
    "\n"
    "_DTYPES = {\"F32\": torch.float32, \"F16\": torch.float16, \"BF16\": torch.bfloat16,\n"
    "           \"I64\": torch.int64, \"I32\": torch.int32}\n"
    "\n"
    "\n"
    "def read_safetensors(path):\n"
    "    \"\"\"Every tensor of a safetensors file, by name (safetensors.torch.load_file).\"\"\"\n"
    "    with open(path, \"rb\") as f:\n"
    "        data = f.read()\n"
    "    size = int.from_bytes(data[:8], \"little\")\n"
    "    header = json.loads(data[8:8 + size])\n"
    "    tensors = {}\n"
    "    for name, info in header.items():\n"
    "        if name == \"__metadata__\":\n"
    "            continue\n"
    "        begin, end = info[\"data_offsets\"]\n"
    "        raw = bytearray(data[8 + size + begin:8 + size + end])\n"
    "        dtype = _DTYPES[info[\"dtype\"]]\n"
    "        flat = torch.frombuffer(raw, dtype=dtype) if raw else torch.empty(0, dtype=dtype)\n"
    "        tensors[name] = flat.reshape(info[\"shape\"]).clone()\n"
    "    return tensors\n"
    "\n"
    "\n"
    "def load(path):\n"
    "    \"\"\"A Model with the weights of `path` (trainer train --save, or a checkpoint), in\n"
    "    eval mode. The optimizer's state (tensors named optimizer.*) is left out.\"\"\"\n"
    "    tensors = read_safetensors(path)\n"
    "    weights = {k: v for k, v in tensors.items() if not k.startswith(\"optimizer.\")}\n"
    "    model = Model()\n"
    "    model.load_state_dict(weights, strict=True)\n"
    "    return model.eval()\n"
    "\n"
    "\n";

// Python spells a layer as self.NAME when NAME is an identifier and no keyword; otherwise
// (a '-' in it, a leading digit) as getattr(self, "NAME").
static int is_python_name(const char *name) {
    static const char *const keywords[] = {
        "False", "None", "True", "and", "as", "assert", "async", "await", "break", "class",
        "continue", "def", "del", "elif", "else", "except", "finally", "for", "from", "global",
        "if", "import", "in", "is", "lambda", "nonlocal", "not", "or", "pass", "raise",
        "return", "try", "while", "with", "yield", NULL};
    if (!name[0] || (name[0] >= '0' && name[0] <= '9') || strchr(name, '-')) return 0;
    for (int i = 0; keywords[i]; i++)
        if (strcmp(name, keywords[i]) == 0) return 0;
    return 1;
}

static const char *module_ref(const char *name, char *out, size_t size) {
    if (is_python_name(name)) snprintf(out, size, "self.%s", name);
    else snprintf(out, size, "getattr(self, \"%s\")", name);
    return out;
}

// The shortest decimal that reads back as v in float32: eps=0.001, not 0.00100000005.
static const char *float_text(float v, char *out, size_t size) {
    for (int digits = 6; digits <= 9; digits++) {
        snprintf(out, size, "%.*g", digits, (double)v);
        if (strtof(out, NULL) == v) break;
    }
    return out;
}

// The submodule a weighted layer registers in __init__; 0 when it has no weights.
static int print_submodule(FILE *f, const ExportStep *step) {
    const Layer *l = step->layer;
    const ExportNode *n = &step->node;
    const char *bias = n->has_bias ? "True" : "False";
    if (n->op == EXPORT_GEMM)
        fprintf(f, "        self.add_module(\"%s\", nn.Linear(%d, %d, bias=%s))\n", l->name,
                l->params[0].shape.dims[1], l->params[0].shape.dims[0], bias);
    else if (n->op == EXPORT_CONV) {
        // Uneven padding (pad=same, even kernel) goes through F.pad in forward.
        int even = n->pad_before[0] == n->pad_after[0] && n->pad_before[1] == n->pad_after[1];
        fprintf(f, "        self.add_module(\"%s\", nn.Conv2d(%d, %d, (%d, %d), stride=(%d, %d), "
                "padding=(%d, %d), dilation=(%d, %d), groups=%d, bias=%s))\n", l->name,
                l->inputs[0]->out_shape.dims[0], l->params[0].shape.dims[0], n->kernel[0],
                n->kernel[1], n->stride[0], n->stride[1], even ? n->pad_before[0] : 0,
                even ? n->pad_before[1] : 0, n->dilation[0], n->dilation[1], n->groups, bias);
    } else if (n->op == EXPORT_BATCHNORM) {
        char eps[32], momentum[32];
        fprintf(f, "        self.add_module(\"%s\", BatchNorm(%d, eps=%s, momentum=%s))\n",
                l->name, l->params[0].shape.dims[0], float_text(n->epsilon, eps, sizeof eps),
                float_text(n->momentum, momentum, sizeof momentum));
    } else {
        return 0;
    }
    return 1;
}

// The Python variable holding a layer's output in forward: x for the input, else x<index>.
static const char *var(const Graph *g, const Layer *l, char *out, size_t size) {
    int index = 0;
    while (index < g->count && g->layers[index] != l) index++;
    if (l == g->input) snprintf(out, size, "x");
    else snprintf(out, size, "x%d", index);
    return out;
}

static const char *activation_call(const ExportNode *n, const char *x, char *out, size_t size) {
    switch (n->activation) {
    case ACTIVATION_RELU: snprintf(out, size, "F.relu(%s)", x); break;
    case ACTIVATION_LEAKY_RELU: {
        char slope[32];
        snprintf(out, size, "F.leaky_relu(%s, %s)", x, float_text(n->slope, slope, sizeof slope));
        break;
    }
    case ACTIVATION_SIGMOID: snprintf(out, size, "torch.sigmoid(%s)", x); break;
    case ACTIVATION_TANH: snprintf(out, size, "torch.tanh(%s)", x); break;
    default: snprintf(out, size, "F.gelu(%s)", x); break;  // the erf form, as trainer's
    }
    return out;
}

// The window arguments of F.max_pool2d and F.avg_pool2d (symmetric padding).
static const char *window_args(const ExportNode *n, char *out, size_t size) {
    snprintf(out, size, "(%d, %d), stride=(%d, %d), padding=(%d, %d)", n->kernel[0], n->kernel[1],
             n->stride[0], n->stride[1], n->pad_before[0], n->pad_before[1]);
    return out;
}

// One line of forward: the step's output from its inputs.
static void print_forward_line(FILE *f, const Graph *g, const ExportStep *step) {
    const Layer *l = step->layer;
    const ExportNode *n = &step->node;
    char y[32], x[32], ref[LAYER_NAME_MAX + 32], call[256], window[128];
    var(g, l, y, sizeof y);
    var(g, l->inputs[0], x, sizeof x);
    module_ref(l->name, ref, sizeof ref);
    fprintf(f, "        %s = ", y);
    switch (n->op) {
    case EXPORT_IDENTITY: fprintf(f, "%s", x); break;
    case EXPORT_GEMM:
    case EXPORT_BATCHNORM: fprintf(f, "%s(%s)", ref, x); break;
    case EXPORT_CONV:
        if (n->pad_before[0] == n->pad_after[0] && n->pad_before[1] == n->pad_after[1])
            fprintf(f, "%s(%s)", ref, x);
        else  // F.pad's order: left, right, top, bottom
            fprintf(f, "%s(F.pad(%s, (%d, %d, %d, %d)))", ref, x, n->pad_before[1],
                    n->pad_after[1], n->pad_before[0], n->pad_after[0]);
        break;
    case EXPORT_MAXPOOL:
        fprintf(f, "F.max_pool2d(%s, %s)", x, window_args(n, window, sizeof window));
        break;
    case EXPORT_AVGPOOL:  // trainer divides by the whole window, padding included
        fprintf(f, "F.avg_pool2d(%s, %s, count_include_pad=True)", x,
                window_args(n, window, sizeof window));
        break;
    case EXPORT_GLOBAL_AVGPOOL: fprintf(f, "%s.mean(dim=(2, 3))", x); break;
    case EXPORT_FLATTEN: fprintf(f, "torch.flatten(%s, 1)", x); break;
    case EXPORT_RESHAPE:
        fprintf(f, "%s.reshape(%s.shape[0]", x, x);
        for (int d = 0; d < n->shape.rank; d++) fprintf(f, ", %d", n->shape.dims[d]);
        fprintf(f, ")");
        break;
    case EXPORT_ADD:
        for (int i = 0; i < l->input_count; i++)
            fprintf(f, "%s%s", i ? " + " : "", var(g, l->inputs[i], x, sizeof x));
        break;
    case EXPORT_ACTIVATION: fprintf(f, "%s", activation_call(n, x, call, sizeof call)); break;
    }
    fprintf(f, "  # %s (%s:%d)\n", l->name, l->path, l->line);
}

static void print_model(FILE *f, const Graph *g, const char *model_path, const ExportStep *steps,
                        int count) {
    fprintf(f, "class Model(nn.Module):\n"
               "    \"\"\"%s as trainer runs it. forward gives the class scores the loss reads;\n"
               "    probabilities gives their softmax, what trainer predict prints.\"\"\"\n\n",
            model_path);
    const Shape *in = &g->input->out_shape;
    fprintf(f, "    input_shape = (");
    for (int d = 0; d < in->rank; d++) fprintf(f, "%d%s", in->dims[d], in->rank == 1 || d + 1 < in->rank ? ", " : "");
    fprintf(f, ")\n\n    def __init__(self):\n        super().__init__()\n");
    int modules = 0;
    for (int i = 0; i < count; i++) modules += print_submodule(f, &steps[i]);
    if (!modules) fprintf(f, "        pass\n");
    fprintf(f, "\n    def forward(self, x):\n");
    for (int i = 0; i < count; i++) print_forward_line(f, g, &steps[i]);
    char scores[32];
    fprintf(f, "        return %s\n\n", var(g, g->loss->inputs[0], scores, sizeof scores));
    fprintf(f, "    def probabilities(self, x):\n"
               "        return F.softmax(self.forward(x), dim=1)\n");
}

int export_pytorch(const Graph *g, const char *model_path, const char *path, Status *st) {
    ExportStep *steps;
    int count;
    TRY(export_describe(g, &steps, &count, st));
    AtomicFile f;
    int rc = atomic_file_open(&f, path, st);
    if (!rc) {
        fprintf(f.file, "# %s as a PyTorch module, written by `trainer export pytorch`.\n"
                        "#   model = load(\"weights.safetensors\")   # strict, in eval mode\n"
                        "#   probabilities = model.probabilities(images)  # [N, %d]\n",
                model_path, g->loss->inputs[0]->out_shape.dims[0]);
        fputs(prelude, f.file);
        print_model(f.file, g, model_path, steps, count);
        if (ferror(f.file)) {
            atomic_file_abandon(&f);
            rc = status_fail_at(st, STATUS_RUNTIME_ERROR, path, 0, 0, "cannot write the file");
            status_hint(st, "check the free space and permissions of its folder");
        } else {
            rc = atomic_file_commit(&f, st);  // abandons the file when it fails
        }
    }
    free(steps);
    return rc;
}

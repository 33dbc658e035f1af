#define _POSIX_C_SOURCE 200809L  // strtok_r
#include "core/run_options.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/comma_list.h"
#include "base/lever.h"
#include "base/suggest.h"
#include "base/text_out.h"
#include "base/whole_number.h"
#include "core/device.h"
#include "core/memory_plan.h"

void run_notice_say(const RunNotice *notice, const char *fmt, ...) {
    if (!notice) return;
    va_list ap;
    va_start(ap, fmt);
    text_say(notice->say, notice->user, fmt, ap);
    va_end(ap);
}

// "0,1,3" into ordinals, each a whole number. A GPU listed twice holds two replicas (their
// sums then go through host memory: NCCL takes one replica per GPU, core/collective.h).
static int parse_gpu_list(const char *text, int *ordinals, int *count, Status *st) {
    *count = 0;
    const char *p = text;
    while (*p) {
        char *end;
        long value = strtol(p, &end, 10);
        if (end == p || value < 0 || value > 1024 || (*end && *end != ',')) {
            status_fail(st, STATUS_BAD_INPUT, "--gpus %s: expected GPU ordinals separated by "
                        "commas, like 0,1", text);
            status_hint(st, "`trainer devices` lists the GPUs this process sees");
            return STATUS_BAD_INPUT;
        }
        if (*count == RUN_MAX_REPLICAS) {
            status_fail(st, STATUS_BAD_INPUT, "--gpus %s: at most %d GPUs", text,
                        RUN_MAX_REPLICAS);
            status_hint(st, "name at most %d in one process; for more, start one process per "
                        "machine or GPU group with mpirun (docs/distributed.md)",
                        RUN_MAX_REPLICAS);
            return STATUS_BAD_INPUT;
        }
        ordinals[(*count)++] = (int)value;
        p = *end ? end + 1 : end;
    }
    if (*count == 0) {
        status_fail(st, STATUS_BAD_INPUT, "--gpus needs at least one GPU ordinal");
        status_hint(st, "e.g. --gpus 0,1");
        return STATUS_BAD_INPUT;
    }
    return 0;
}

// --batch: a whole number up to the purpose's largest (check plans memory for at most
// MEMORY_PLAN_MAX_BATCH), or for train auto, chosen once the device and the data are known;
// else the model file's. A refusal is worded as tools/args.c words any bad number.
static int resolve_batch(const RunConfig *config, const RunRequest *r, RunOptions *o,
                         Status *st) {
    o->batch = config->train.batch;
    const char *text = r->batch;
    if (!text) return 0;
    int takes_auto = r->purpose == RUN_TRAIN;
    if (takes_auto && strcmp(text, "auto") == 0) {
        o->batch_auto = 1;
        return 0;
    }
    long max = r->purpose == RUN_CHECK ? MEMORY_PLAN_MAX_BATCH : RUN_MAX_BATCH;
    long value;
    if (whole_number_in(text, 1, max, &value)) {
        o->batch = (int)value;
        return 0;
    }
    status_fail(st, STATUS_BAD_INPUT, "--batch %s: expected a whole number from 1 to %ld%s",
                text, max, takes_auto ? ", or auto" : "");
    if (takes_auto && suggest_is_near_miss(text, "auto"))
        status_hint(st, "did you mean '--batch auto'?");
    else
        status_hint(st, "see `trainer %s --help`", r->command ? r->command : "COMMAND");
    return STATUS_BAD_INPUT;
}

// --gpus: cuda:N for each N; --replicas N: N replicas on the one device --device names;
// neither: one replica there.
static int resolve_replicas(const RunRequest *r, RunOptions *o, Status *st) {
    o->replicas_given = r->replicas > 0;
    o->gpus = r->gpus;
    if (r->gpus && o->replicas_given) {
        status_fail(st, STATUS_BAD_INPUT, "--gpus and --replicas both choose the replicas");
        status_hint(st, "--gpus 0,1 for GPUs; --replicas N only on the CPU");
        return STATUS_BAD_INPUT;
    }
    if (!r->gpus) {
        o->replicas = o->replicas_given ? r->replicas : 1;
        o->device_count = 1;
        // Longer than any device's name: cut short, it would be refused under another
        // name, or open another GPU (cuda:00000000001 as cuda:0000000000).
        const char *spec = r->device ? r->device : "auto";
        if (strlen(spec) >= sizeof o->devices[0]) return device_refuse_unknown(spec, st);
        snprintf(o->devices[0], sizeof o->devices[0], "%s", spec);
        return 0;
    }
    const char *device = r->device;
    if (device && strcmp(device, "cuda") != 0 && strcmp(device, "auto") != 0) {
        status_fail(st, STATUS_BAD_INPUT, "--gpus %s with --device %s: --gpus chooses CUDA "
                    "devices", r->gpus, device);
        status_hint(st, "drop --device, or drop --gpus to train on %s", device);
        return STATUS_BAD_INPUT;
    }
    int ordinals[RUN_MAX_REPLICAS];
    TRY(parse_gpu_list(r->gpus, ordinals, &o->replicas, st));
    o->device_count = o->replicas;
    o->from_gpus = 1;
    for (int i = 0; i < o->replicas; i++)
        snprintf(o->devices[i], sizeof o->devices[i], "cuda:%d", ordinals[i]);
    return 0;
}

// The global batch split evenly over the ranks: an error naming both numbers, or with
// --drop-remainder the batch lowered to a multiple of the rank count.
static int resolve_world_batch(const RunRequest *r, RunOptions *o, const RunNotice *notice,
                               Status *st) {
    int ranks = r->world_size, batch = o->batch;
    if (ranks <= 1 || batch % ranks == 0) return 0;
    if (o->batch_auto) {
        status_fail(st, STATUS_BAD_INPUT, "--batch auto is not available with mpirun yet");
        status_hint(st, "give the global batch, a multiple of the %d processes: --batch %d",
                    ranks, (batch / ranks > 0 ? batch / ranks : 1) * ranks);
        return STATUS_BAD_INPUT;
    }
    int lower = batch / ranks * ranks;
    if (!r->drop_remainder || lower == 0) {
        status_fail(st, STATUS_BAD_INPUT, "the batch of %d samples does not split evenly over "
                    "the %d processes of this mpirun launch", batch, ranks);
        status_hint(st, "give --batch %d (or %d), a multiple of %d, or add --drop-remainder to "
                        "train with batch %d", lower > 0 ? lower : ranks, lower + ranks, ranks,
                    lower > 0 ? lower : ranks);
        return STATUS_BAD_INPUT;
    }
    if (r->world_rank == 0)
        run_notice_say(notice, "--drop-remainder: batch %d over %d processes; training with "
                       "batch %d (%d per process)", batch, ranks, lower, lower / ranks);
    o->batch = lower;
    return 0;
}

// Levers belong to the CUDA backend: on the CPU, --without would measure nothing. NHWC is
// for cuDNN's tensor-core convolutions: the CPU would only run it between transposes.
static int refuse_off_cuda(const RunOptions *o, const char *device, Status *st) {
    int nhwc = o->nhwc && !o->disabled_levers;
    if (nhwc)
        status_fail(st, STATUS_BAD_INPUT, "--layout nhwc: NHWC images are for a GPU's "
                    "convolutions; the device is %s", device);
    else
        status_fail(st, STATUS_BAD_INPUT, "--without: levers are the CUDA backend's; the "
                    "device is %s", device);
    status_hint(st, "run on a GPU (--device cuda), or drop %s", nhwc ? "--layout: the CPU "
                "computes in NCHW" : "--without");
    return STATUS_BAD_INPUT;
}

int run_options_resolve(const RunConfig *config, const RunRequest *request,
                        const RunNotice *notice, RunOptions *out, Status *st) {
    memset(out, 0, sizeof *out);
    TRY(resolve_batch(config, request, out, st));
    out->default_ordinal = request->default_ordinal;
    out->disabled_levers = request->disabled_levers;
    out->nhwc = request->nhwc;
    if (request->precision) out->precision = *request->precision;
    TRY(resolve_world_batch(request, out, notice, st));
    return resolve_replicas(request, out, st);
}

int run_options_read_memory_mode(const char *text, const char *memory_limit, AllocMode *mode,
                                 Status *st) {
    *mode = ALLOC_GROW;
    if (text && strcmp(text, "reserve") == 0) {
        *mode = ALLOC_RESERVE;
        if (memory_limit) return 0;
        status_fail(st, STATUS_BAD_INPUT, "--memory-mode reserve needs --memory-limit");
        status_hint(st, "say how much to reserve, e.g. --memory-limit 2G or 0.8");
        return STATUS_BAD_INPUT;
    }
    if (!text || strcmp(text, "grow") == 0) return 0;
    status_fail(st, STATUS_BAD_INPUT, "--memory-mode %s: expected grow or reserve", text);
    status_hint(st, "grow (the default) allocates on demand; reserve takes the limit up front");
    return STATUS_BAD_INPUT;
}

static int refuse_lever(const char *text, const char *item, Status *st) {
    const char *near = suggest(item, lever_names);
    if (near)
        status_fail(st, STATUS_BAD_INPUT, "--without %s: unknown lever '%s'; did you mean "
                    "'%s'?", text, item, near);
    else
        status_fail(st, STATUS_BAD_INPUT, "--without %s: unknown lever '%s'", text, item);
    char names[256];
    status_hint(st, "levers: %s (comma-separated; docs/cli.md)",
                lever_set_format(LEVER_ALL, names, sizeof names));
    return STATUS_BAD_INPUT;
}

int run_options_read_levers(const char *text, unsigned *set, Status *st) {
    *set = 0;
    if (!text) return 0;
    char copy[512], names[256];
    if (comma_list_copy("--without: the value", text, copy, sizeof copy, st)) {
        status_hint(st, "name each lever once, comma-separated: %s",
                    lever_set_format(LEVER_ALL, names, sizeof names));
        return STATUS_BAD_INPUT;
    }
    char *save = NULL;
    for (char *item = strtok_r(copy, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
        Lever lever;
        if (lever_parse(item, &lever)) return refuse_lever(text, item, st);
        *set |= LEVER_BIT(lever);
    }
    if (*set) return 0;
    status_fail(st, STATUS_BAD_INPUT, "--without: no lever named");
    status_hint(st, "levers: %s", lever_set_format(LEVER_ALL, names, sizeof names));
    return STATUS_BAD_INPUT;
}

int run_options_read_layout(const char *text, int *nhwc, Status *st) {
    *nhwc = text && strcmp(text, "nhwc") == 0;
    if (!text || *nhwc || strcmp(text, "nchw") == 0) return 0;
    status_fail(st, STATUS_BAD_INPUT, "--layout %s: expected nchw or nhwc", text);
    status_hint(st, "nchw (the default) keeps every activation NCHW; nhwc lays the images "
                    "between convolutions out NHWC on a GPU");
    return STATUS_BAD_INPUT;
}

int run_options_read_precision(const char *text, int no_tf32, PrecisionConfig *precision,
                               Status *st) {
    Precision given = PRECISION_DEFAULT;
    if (text && precision_parse(text, &given)) {
        const char *near = suggest(text, precision_names);
        if (near) status_fail(st, STATUS_BAD_INPUT, "--precision %s: unknown precision; did you "
                              "mean '%s'?", text, near);
        else status_fail(st, STATUS_BAD_INPUT, "--precision %s: unknown precision", text);
        status_hint(st, "--precision takes fp32, tf32, bf16 or fp16 (docs/cli.md)");
        return STATUS_BAD_INPUT;
    }
    if (no_tf32 && text && given != PRECISION_FP32) {
        status_fail(st, STATUS_BAD_INPUT, "--no-tf32 means --precision fp32, which contradicts "
                    "--precision %s", text);
        status_hint(st, "keep one of them: --no-tf32 is the older spelling of --precision fp32");
        return STATUS_BAD_INPUT;
    }
    if (!text && !no_tf32) return 0;  // the model file's, or the default
    *precision = (PrecisionConfig){.precision = no_tf32 ? PRECISION_FP32 : given,
                                   .initial_loss_scale = precision->initial_loss_scale};
    snprintf(precision->source, sizeof precision->source, "%s",
             text ? "--precision" : "--no-tf32");
    return 0;
}

int run_options_check_spec(const RunOptions *o, Status *st) {
    if ((o->disabled_levers || o->nhwc) && strcmp(o->devices[0], "cpu") == 0)
        return refuse_off_cuda(o, "cpu", st);
    return 0;
}

int run_options_share(int batch, int replicas, int replica) {
    if (replicas < 1) return batch;
    return batch / replicas + (replica < batch % replicas);
}

int run_options_check_device(const RunOptions *o, const RunDeviceFacts *device, Status *st) {
    if ((o->disabled_levers || o->nhwc) && !device->is_cuda)
        return refuse_off_cuda(o, device->target.device, st);
    if (o->replicas_given && !device->is_cpu) {
        status_fail(st, STATUS_BAD_INPUT, "--replicas runs replicas on the CPU, but the device "
                    "is %s", device->target.device);
        status_hint(st, "on GPUs, list them with --gpus 0,1; or add --device cpu");
        return STATUS_BAD_INPUT;
    }
    return 0;
}

int run_options_precision(const RunOptions *o, const Graph *g, const RunDeviceFacts *device,
                          const RunNotice *notice, Precision *computed, Status *st) {
    char line[512];
    TRY(precision_check(g, &o->precision, &device->target, computed, line, sizeof line, st));
    if (line[0]) run_notice_say(notice, "%s", line);
    return 0;
}

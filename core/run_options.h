// What a run is asked for, decided once: the batch (global and each replica's share), the
// replicas and the devices they run on, and the precision. Pure: no I/O and no device
// calls, so a test decides with made-up devices. tools/ fills a RunRequest from its
// arguments; run_options_resolve decides what needs no device, run_options_check_device
// what the opened device (described as plain facts) allows; core/run.c then only reads them.
#ifndef TRAINER_RUN_OPTIONS_H
#define TRAINER_RUN_OPTIONS_H

#include "base/status.h"
#include "core/alloc.h"
#include "core/graph.h"
#include "core/precision_check.h"
#include "core/run_config.h"

enum { RUN_MAX_REPLICAS = 16, RUN_MAX_BATCH = 1 << 20 };

// What a run is opened for: it decides what --batch may be (run_options_resolve) and what
// core/run.c's run_open sets up.
typedef enum RunPurpose {
    RUN_DEVICE_ONLY,  // bench gemm|memory|conv: a device, no model
    RUN_CHECK,        // no parameters; on the CPU it chose itself a precision refusal is kept
    RUN_EVAL,         // parameters from a weights file
    RUN_PREDICT,
    RUN_BENCH,        // bench train: parameters initialised from the seed, as train's
    RUN_TRAIN,        // replicas; parameters by run_init_params after the data
} RunPurpose;

// A line for the user that a decision comes with ("--drop-remainder: batch 100 over 3
// processes; ..."): core says it through the caller's callback, tools/ prints it.
typedef struct RunNotice {
    void (*say)(void *user, const char *line);
    void *user;
} RunNotice;
// Says a formatted line through `notice` (nothing when it has no callback).
void run_notice_say(const RunNotice *notice, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

// What the command line asked for; zero is "not given" throughout.
typedef struct RunRequest {
    const char *device;        // --device: "cpu", "auto", "cuda", "cuda:N"; NULL: auto
    const char *gpus;          // --gpus "0,1": one replica per listed GPU
    int replicas;              // --replicas N: replicas sharing the CPU; 0: not given
    // --batch as typed (NULL: not given), over the model file's train batch=. What it may be
    // is the purpose's: 1 to RUN_MAX_BATCH, check's 1 to MEMORY_PLAN_MAX_BATCH; train's
    // also auto (chosen later, from the device and the data).
    const char *batch;
    RunPurpose purpose;
    const char *command;       // the command, named in a refused --batch's hint
    int drop_remainder;        // --drop-remainder: lower a batch the ranks cannot share
    int world_size, world_rank;  // the processes of an mpirun launch; size 0 or 1: alone
    int default_ordinal;       // the GPU "auto" and "cuda" mean (an mpirun rank's local GPU)
    // --precision or --no-tf32 as parsed, over the model file's `train precision=`; NULL:
    // the model file's (train, bench) or none (eval, predict: precision= is about training).
    const PrecisionConfig *precision;
    unsigned disabled_levers;  // --without: CUDA levers to turn off
    int nhwc;                  // --layout nhwc
} RunRequest;

typedef struct RunOptions {
    // The global batch: one step's samples over every replica; eval's and check's batch.
    // Without --batch the model file's train batch= (0 with no model: bench conv then
    // takes the device's).
    int batch;
    int batch_auto;            // still to be chosen (core/batch_auto.h)
    int replicas;              // replicas in this process
    int replicas_given;        // --replicas: they share the CPU, refused on another device
    int device_count;          // devices to open: one per --gpus entry, else one
    char devices[RUN_MAX_REPLICAS][16];  // their specs
    int from_gpus;             // the devices came from --gpus (its errors name it)
    const char *gpus;          // --gpus as typed, for those errors
    int default_ordinal;
    PrecisionConfig precision;  // asked for
    unsigned disabled_levers;
    int nhwc;
} RunOptions;

// The facts of one opened device that decisions need: a test fills it for a GPU it has not.
typedef struct RunDeviceFacts {
    PrecisionTarget target;    // name, GPU, compute capability
    int is_cpu;                // the CPU backend
    int is_cuda;               // the CUDA backend
} RunDeviceFacts;

// Decides what needs no device. Refusals (STATUS_BAD_INPUT): a --batch that is not a whole
// number in the purpose's range (train's: or auto), worded as tools/ words a bad number; a
// --gpus list that is not ordinals, --gpus with --replicas or with another --device, a
// batch the ranks of an mpirun launch cannot share evenly (with --drop-remainder it is
// lowered, said through `notice` on rank 0), --batch auto under mpirun.
int run_options_resolve(const RunConfig *config, const RunRequest *request,
                        const RunNotice *notice, RunOptions *out, Status *st);

// The device options' values as typed (NULL: not given), each refused (STATUS_BAD_INPUT)
// with the words it takes. --memory-mode grow|reserve into *mode (grow without it);
// reserve needs `memory_limit`.
int run_options_read_memory_mode(const char *text, const char *memory_limit, AllocMode *mode,
                                 Status *st);
// --without LIST: the CUDA levers to turn off (base/lever.h) into *set, 0 without it; an
// unknown name is refused with the nearest and the list.
int run_options_read_levers(const char *text, unsigned *set, Status *st);
// --layout nchw|nhwc into *nhwc (0 without it).
int run_options_read_layout(const char *text, int *nhwc, Status *st);

// --precision (NULL: not given) and --no-tf32 (its older spelling of fp32) over *precision,
// which is left as it is (the model file's, or the default) when neither is given. An
// unknown precision, or --no-tf32 with another, is refused.
int run_options_read_precision(const char *text, int no_tf32, PrecisionConfig *precision,
                               Status *st);

// --without or --layout nhwc with --device cpu, refused before it opens (STATUS_BAD_INPUT).
int run_options_check_spec(const RunOptions *o, Status *st);

// The batch each of `replicas` holds of a global `batch`: the first batch % replicas take
// one sample more.
int run_options_share(int batch, int replicas, int replica);

// What the opened device allows: --replicas only on the CPU, --without and --layout nhwc
// only on CUDA (STATUS_BAD_INPUT naming the device).
int run_options_check_device(const RunOptions *o, const RunDeviceFacts *device, Status *st);

// What `g` computes in on `device` (precision_check): bf16 and fp16 refused where the
// device lacks them (STATUS_NO_DEVICE at the first layer that would use them), tf32 where
// there is none said through `notice`.
int run_options_precision(const RunOptions *o, const Graph *g, const RunDeviceFacts *device,
                          const RunNotice *notice, Precision *computed, Status *st);

#endif

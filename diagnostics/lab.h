// `trainer lab`'s scenarios as library code: each provokes one failure for real, as far
// as this machine allows, and returns both halves: what the raw CUDA API said (or why it
// could not be asked here) and trainer's diagnosis of the same failure as a Status,
// beside what a framework shows for it. Nothing here prints: lab_show.c writes the text to
// the caller's TextOut, and tools/cmd_lab.c puts it on stdout.
#ifndef TRAINER_LAB_H
#define TRAINER_LAB_H

#include <stddef.h>

#include "base/status.h"
#include "base/text_out.h"
#include "kernels/device_facts.h"

// How one scenario went; `trainer lab NAME` exits with it: 0 the failure was shown and
// diagnosed, 1 it did not come as expected, 3 it needs a GPU this machine lacks.
typedef enum LabCode { LAB_SHOWN = 0, LAB_WENT_WRONG = 1, LAB_NEEDS_GPU = 3 } LabCode;

typedef struct LabResult {
    LabCode code;
    // Why the scenario could not be carried out at all (illegal-address: the pipe or the
    // child process it runs in failed); "" otherwise. When set, nothing below holds.
    char went_wrong[256];
    // The raw half. raw_ran: the API was asked and raw.raw holds its answer; else
    // cannot_run says why not. raw_as_expected: it failed the way the scenario provokes.
    int raw_ran;
    int raw_as_expected;
    LabOutcome raw;
    char cannot_run[1024];  // as long as a Status message
    // trainer's half. diagnosed: trainer refused (or, for the GPU-only scenarios, the raw
    // failure came) and diagnosis says how; 0: trainer accepted what it should have
    // refused. Whether it refused for the planned reason is in `code`.
    int diagnosed;
    Status diagnosis;
    const char *framework;  // what PyTorch shows for the same failure
    // invalid-device: the ordinal asked for. bad-label: the first sample whose label the
    // model (of `classes` classes) cannot have, -1 when none.
    int ordinal;
    int bad_index, bad_label, classes;
    // bad-launch: the API answered cudaErrorInvalidValue, CUDA 13's word for it.
    int raw_invalid_value;
    // What the raw half's outcome means, printed after it ("" when nothing needs saying):
    // a call that succeeded, or failed otherwise than the scenario provokes, or the words
    // another CUDA version uses. Written here, with the API's names, so that tools/ only
    // prints it; it ends in a newline.
    char raw_note[512];
} LabResult;

// 1 when a usable GPU is visible; else 0 and `why` says what is missing. Initialises
// CUDA in this process: call it only where no scenario follows in the same process.
int lab_gpu_available(char *why, size_t size);

// cudaSetDevice one past the last visible device, then `--device cuda:N` for the same N.
void lab_invalid_device(LabResult *r);

// oom in two steps, so the caller can show the model before training reports its notices:
// the raw cudaMalloc of more than the card has, then training the model on the CPU under
// the limit. lab_oom_train takes the result lab_oom_raw filled.
extern const char lab_oom_model[], lab_oom_limit[];
void lab_oom_raw(LabResult *r);
void lab_oom_train(LabResult *r, void (*on_notice)(void *user, const char *line), void *user);

// A launch of 2048 threads per block: on the GPU, and through the host's launch check.
void lab_bad_launch(LabResult *r);

// The labels the bad-label scenario checks against a 10-class model (one, 12, too large).
enum { LAB_BAD_LABEL_COUNT = 8 };
extern const unsigned char lab_bad_labels[LAB_BAD_LABEL_COUNT];
void lab_bad_label(LabResult *r);

// Building lab_dtype_model: an f16 input feeding a dense layer that computes in f32.
extern const char lab_dtype_model[];
void lab_dtype_mismatch(LabResult *r);

// The out-of-bounds kernel poisons its process's CUDA context for good, so it runs in a
// child process forked here: call it before this process touches CUDA, with stdout and
// stderr flushed.
void lab_illegal_address(LabResult *r);

void lab_no_kernel_image(LabResult *r);

// Two NCCL ranks on one GPU (cuda:0), as mpirun -np 2 gives on a one-GPU machine: NCCL's
// "Duplicate GPU detected" (ncclInvalidUsage) beside what trainer says of it, which ranks
// share which card and the local-rank mapping that fixes it.
void lab_duplicate_gpu(LabResult *r);

// version-report: the versions (doctor's facts) and what they mean for the two checks a
// framework makes at start-up.
typedef struct LabVersions {
    DoctorReport report;
    int cudnn_new_enough;  // same major, loaded minor not older: TensorFlow would start
    int driver_too_old;    // the runtime's major is past what the driver supports
    // Where the two cuDNN versions come from, with their values, one line ending in a
    // newline (written here, with cuDNN's header and call names, so that tools/ only prints).
    char cudnn_sources[320];
} LabVersions;
int lab_versions(LabVersions *v, Status *st);

// The scenarios as `trainer lab` lists and runs them (diagnostics/lab_show.c). show runs
// one and writes both its halves to `out`; the code is how it went.
typedef enum LabNeeds {
    LAB_RUNS_ANYWHERE,  // all of it runs on the CPU
    LAB_RAW_NEEDS_GPU,  // trainer's half runs anywhere, the raw CUDA half needs a GPU
    LAB_ONLY_ON_GPU,
} LabNeeds;

typedef struct LabScenario {
    const char *name;
    const char *summary;
    LabNeeds needs;
    LabCode (*show)(const TextOut *out);
} LabScenario;

extern const LabScenario lab_scenarios[];
// How many rows lab_scenarios has, counted from the table itself; at most LAB_SCENARIO_ROOM
// (a _Static_assert in lab_show.c), the room a caller keeps a result per scenario in.
int lab_scenario_count(void);
enum { LAB_SCENARIO_ROOM = 32 };

// "runs here", "runs here (the raw part needs a GPU)" or "needs a GPU"; gpu: one is usable.
const char *lab_scenario_where(const LabScenario *s, int gpu);
// The scenario called `name`; NULL with st set (and the nearest name) when none is.
const LabScenario *lab_scenario_find(const char *name, Status *st);

#endif

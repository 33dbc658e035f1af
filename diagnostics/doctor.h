// `trainer doctor`'s diagnosis: is this machine ready to train on a GPU, and if not, what
// to do. kernels/cuda/cuda_doctor collects the facts (driver, the libraries built against
// and loaded, where they were loaded from, the devices); here they become a verdict: a
// smoke test per device (a GEMM and a convolution through the CUDA backend, checked
// against the CPU backend), a list of problems with fixes, and the exit code: 0 all well,
// 3 no usable device, 1 something broken. Nothing here prints: the report goes to a
// TextOut or comes back as JSON, and tools/cmd_doctor.c prints it.
#ifndef TRAINER_DOCTOR_H
#define TRAINER_DOCTOR_H

#include "base/status.h"
#include "base/text_out.h"
#include "kernels/device_facts.h"

// How bad a problem is: BROKEN makes the exit code 1 (something to repair), NO_DEVICE
// explains an exit code 3 (nothing to train on), WARNING leaves the exit code alone.
typedef enum Severity { SEVERITY_BROKEN, SEVERITY_NO_DEVICE, SEVERITY_WARNING } Severity;


typedef struct Problem {
    Severity severity;
    char what[640];
    char fix[640];
} Problem;

// A GEMM and a convolution on one device, against the CPU backend on the same inputs.
typedef struct SmokeTest {
    int ran;             // 0: the device was not usable enough to try
    int passed;
    double gemm_error;   // max |gpu - cpu| / max(1, max |cpu|)
    double conv_error;
    char error[640];     // why it failed or did not run
} SmokeTest;

// What kind of code for the device's architecture this binary holds.
typedef enum ImageKind { IMAGE_UNKNOWN, IMAGE_SASS, IMAGE_PTX, IMAGE_NONE } ImageKind;

enum { DOCTOR_MAX_PROBLEMS = 48 };

typedef struct Diagnosis {
    DoctorReport report;
    SmokeTest smoke[CUDA_DOCTOR_MAX_DEVICES];
    ImageKind image[CUDA_DOCTOR_MAX_DEVICES];
    char image_text[CUDA_DOCTOR_MAX_DEVICES][160];
    int usable[CUDA_DOCTOR_MAX_DEVICES];
    int usable_count;
    Problem problems[DOCTOR_MAX_PROBLEMS];
    int problem_count;
    char notes[4][640];
    int note_count;
    int exit_code;
    char verdict[256];
} Diagnosis;

// The smoke test's shapes, for the text that reports it: C (M x N) = A (M x K) B (K x N).
enum { DOCTOR_SMOKE_M = 37, DOCTOR_SMOKE_N = 29, DOCTOR_SMOKE_K = 53 };

// Collects the facts into d->report and judges them: the problems, the usable devices
// (each smoke-tested), the verdict and the exit code. d must be zeroed. Nonzero only when
// the facts cannot be collected at all.
int doctor_diagnose(Diagnosis *d, Status *st);

// The smoke test on device `ordinal`; t says whether it ran, passed, and why not.
void doctor_smoke_test(int ordinal, SmokeTest *t);

// What code for compute capability major.minor the architecture list from CMake
// ("75-real 80-real 90a-real 120") holds; *arch: the architecture of that code.
ImageKind doctor_image_from_architectures(const char *list, int major, int minor, int *arch);

// "broken", "no-device", "warning"; "unknown", "sass", "ptx", "none" (the JSON's words).
const char *doctor_severity_name(Severity severity);
const char *doctor_image_kind_name(ImageKind kind);

// The driver and library table, one line of text each (no newline): what `trainer doctor`
// and `trainer lab version-report` both show, so that it is worded in one place.
enum { DOCTOR_VERSION_LINES_MAX = 5 + DOCTOR_LIBRARY_COUNT };
typedef struct DoctorVersionTable {
    char lines[DOCTOR_VERSION_LINES_MAX][768];
    int count;
} DoctorVersionTable;
void doctor_version_table(const DoctorReport *r, DoctorVersionTable *table);

// The diagnosis told: as text (the build, versions, environment, devices, verdict and
// fixes; diagnostics/doctor_text.c), or as one JSON object with the same facts
// (doctor_json.c), for tools/cmd_doctor.c to print.
struct cJSON;
void doctor_text(const TextOut *out, const Diagnosis *d);
struct cJSON *doctor_json(const Diagnosis *d);

static inline int doctor_version_known(const DoctorVersion *v) {
    return v->major || v->minor || v->patch;
}

#endif

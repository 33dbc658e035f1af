// The harness every tests/gpu/test_cuda_parity_FAMILY.c runs its cases in: the CUDA backend
// against the CPU reference, op by op, one op family of kernels/backend.h per test. How each
// op is checked (guard zones, NaN poison, magnitudes, the passes and their tolerances) is
// said at the top of parity_harness.c.
//
// A family's test gives parity_main its name, its family's op list (the X-list backend.h
// names per family) and one function that runs its sections in each pass it takes; every
// op of that list must have been exercised (HAVE/REQUIRE) or the test fails, and a NULL
// entry in the CUDA table is a failure, not a skip. Exit 77 (skipped) only when there is
// no usable CUDA device.
#ifndef TRAINER_TESTS_GPU_PARITY_HARNESS_H
#define TRAINER_TESTS_GPU_PARITY_HARNESS_H

#include "base/precision.h"
#include "base/rng.h"
#include "kernels/backend.h"

#include <stddef.h>
#include <stdint.h>

#define FP32_RTOL 1e-4
#define TF32_RTOL 1e-2
// More elements than one launch of 65535 blocks x 256 threads covers, so grid-stride
// loops must go round more than once.
#define BIG_N ((size_t)65535 * 256 + 4099)
#define GUARD_BYTES 256     // also keeps every buffer 256-byte aligned, as cudaMalloc's are
#define POISON_BYTE 0xFF    // as floats every word is a NaN; as int32 it is -1
#define CANARY_BYTE 0xA5

// Every op family of kernels/backend.h with its X-list: each has its own parity test,
// tests/gpu/test_cuda_parity_NAME.c (tests/CMakeLists.txt stops when one is missing, and
// parity_harness.c asserts that these lists together hold all of BACKEND_OPS).
#define PARITY_FAMILIES(X)                                                                     \
    X(supports, BACKEND_QUERY_OPS) X(memory, BACKEND_MEMORY_OPS) X(data, BACKEND_DATA_OPS)    \
    X(linear_algebra, BACKEND_LINEAR_ALGEBRA_OPS) X(elementwise, BACKEND_ELEMENTWISE_OPS)     \
    X(losses, BACKEND_LOSS_OPS) X(batchnorm, BACKEND_BATCHNORM_OPS)                           \
    X(conv_pool, BACKEND_CONV_POOL_OPS) X(norms, BACKEND_NORM_OPS)                            \
    X(optimizers, BACKEND_OPTIMIZER_OPS)

#define PARITY_OP_NAME(field) #field,

extern const Backend *gpu;   // the backend under test
extern const Backend *cpu;   // the reference
extern double rtol;
extern const char *pass_name;
extern int device_broken;    // a device call failed so that nothing more can be tested
extern Rng rng;
extern char shape[1024];     // the case being run, for messages
extern int test_failures;
extern DType storage_dtype;  // the 16-bit type of the bf16 and fp16 passes

// The passes, in the order they run. Each opens the CUDA backend anew.
typedef enum ParityPassKind {
    PARITY_FP32 = 1,        // allow_tf32 = 0, FP32_RTOL: every family
    PARITY_TF32 = 2,        // allow_tf32 = 1, TF32_RTOL
    PARITY_REDUCED = 4,     // --precision bf16, then fp16 (storage_dtype set to match)
    PARITY_LEVERS_OFF = 8,  // every lever off (base/lever.h), FP32_RTOL
} ParityPassKind;

typedef struct ParityPass {
    ParityPassKind kind;
    int compute;                  // the card's compute capability (90 for sm_90), 0 unknown
    double gemm_rtol, conv_rtol;  // PARITY_REDUCED: for GEMMs, for convolutions
} ParityPass;

typedef struct ParityFamily {
    const char *test;             // "test_cuda_parity_norms", for messages
    const char *const *ops;       // the family's X-list, as names
    int op_count;
    unsigned passes;              // ParityPassKind bits besides PARITY_FP32
    void (*run)(const ParityPass *pass);
} ParityFamily;

// Runs `family` in each of its passes; the test's exit code (77: no usable device).
// argv's words pick sections (`test_cuda_parity_conv_pool pooling`); the coverage check
// is then skipped.
int parity_main(const ParityFamily *family, int argc, char **argv);

// A family test's main: parity_main over `list` (the family's X-list in backend.h) with
// the passes it takes besides fp32 and its run function.
#define PARITY_MAIN(name, list, passes_, run_)                                                 \
    int main(int argc, char **argv) {                                                          \
        static const char *const ops[] = {list(PARITY_OP_NAME)};                               \
        const ParityFamily family = {.test = name, .ops = ops,                                 \
                                     .op_count = (int)(sizeof ops / sizeof ops[0]),            \
                                     .passes = (passes_), .run = (run_)};                      \
        return parity_main(&family, argc, argv);                                               \
    }

// Starts a section; 0 when it does not run (the device failed earlier, or a word given
// on the command line leaves it out).
int section(const char *name);

void record(const char *op, double err, int failed);
// Marks `op` as covered by this test; a NULL entry is reported (once) as a failure.
int require_op(const char *op, int present);
#define HAVE(op) require_op(#op, gpu->op != NULL)
#define REQUIRE(op) \
    do { if (!HAVE(op)) return; } while (0)

// Host buffers, freed at the end of each case.
void *host_alloc(size_t bytes);
float *floats(size_t n);
float *uniform(size_t n, float lo, float hi);
float *poisoned(size_t n);
float *zeros(size_t n);
float *copy_of(const float *x, size_t n);
float *absolute(const float *x, size_t n);
float *gradients(size_t n);

// Device buffers, between guard zones, freed at the end of each case.
void *dev_alloc(size_t bytes);
void upload(void *dst, const void *src, size_t bytes);
void download(void *dst, const void *src, size_t bytes);
void *dev_copy(const void *host, size_t bytes);
void *dev_poisoned(size_t bytes);
float *dev_floats(const float *host, size_t n);
float *dev_poison_floats(size_t n);
float *dev_floats_at(const float *host, size_t n, int offset);
float *fetch(const float *d, size_t n);
void *stored(float *x, size_t n, DType dtype);
float *widened(const void *x, size_t n, DType dtype);
float *fetch_widened(const void *d, size_t n, DType dtype);
void end_case(void);

// Calling ops: both need a `Status st` in scope; GPU_CALL calls nothing once the device
// is broken. After a GPU op: its status, a synchronize, the guard zones.
int gpu_done(const char *op, int rc, const Status *st);
int cpu_done(const char *op, int rc, const Status *st);
#define GPU_CALL(op, ...) \
    (device_broken ? 1 : gpu_done(#op, gpu->op(gpu, __VA_ARGS__, &st), &st))
#define CPU_CALL(op, ...) cpu_done(#op, cpu->op(cpu, __VA_ARGS__, &st), &st)

// Comparing: under rtol against a magnitude (NULL: |want|), or bit for bit.
void compare(const char *op, const char *what, const float *got, const float *want,
             const float *mag, size_t n);
void compare_exact(const char *op, const char *what, const void *got, const void *want,
                   size_t n, int as_int, int nan_equal);

// Activations, and the fused bias + activation ops' table (linear algebra and elementwise).
extern const char *const activation_names[ACTIVATION_COUNT];
extern const FusedActivation fused_activations[];
enum { FUSED_ACTIVATIONS = 6 };
const char *fused_name(const FusedActivation *act);
float *fused_magnitude(const float *sum_magnitude, const float *want, size_t n);
double storage_rtol(DType result);

#endif

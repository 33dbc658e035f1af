// The error catalog: every CUDA runtime, CUDA driver, cuBLAS, cuDNN and NCCL error a
// training program can realistically hit, and the messages PyTorch and TensorFlow print
// for the common ones, each with what it means, what usually causes it (most common
// first), how to confirm it, how to fix it, and how the two frameworks word it.
//
// Plain C with the codes stored as numbers (taken from the CUDA 13.0, cuDNN 9.19 and
// NCCL 2.28 headers), so a build without CUDA explains errors too: a person reading a
// PyTorch traceback on a laptop can still ask `trainer explain`. kernels/cuda maps every
// failed call to its entry (Status.error_name); tools/ prints the explanation.
#ifndef TRAINER_ERROR_CATALOG_H
#define TRAINER_ERROR_CATALOG_H

#include <stddef.h>

#include "base/status.h"

#ifdef __cplusplus
extern "C" {  // cuda_errors.cu looks entries up too
#endif

typedef enum ErrorFamily {
    ERROR_FAMILY_CUDA_RUNTIME,  // cudaError_t             cuda:2
    ERROR_FAMILY_CUDA_DRIVER,   // CUresult (CUDA_ERROR_*)  driver:2
    ERROR_FAMILY_CUBLAS,        // cublasStatus_t          cublas:3
    ERROR_FAMILY_CUDNN,         // cudnnStatus_t           cudnn:3000
    ERROR_FAMILY_NCCL,          // ncclResult_t            nccl:2
    ERROR_FAMILY_FRAMEWORK,     // a message PyTorch or TensorFlow prints; numbered by us
    ERROR_FAMILY_COUNT
} ErrorFamily;

// Which facts of this machine bear on an entry (diagnostics/machine_facts.h).
enum {
    ERROR_FACT_DRIVER = 1,     // driver and CUDA runtime versions, a build without CUDA
    ERROR_FACT_DEVICES = 2,    // CUDA_VISIBLE_DEVICES, the visible GPUs, compute capability
    ERROR_FACT_LIBRARIES = 4,  // cuBLAS, cuDNN and NCCL versions
};

#define ERROR_CAUSES_MAX 5
#define ERROR_PHRASES_MAX 8

typedef struct ErrorEntry {
    ErrorFamily family;
    const char *name;          // "cudaErrorMemoryAllocation"; framework: "cuda-out-of-memory"
    int number;                // the code's value; framework entries count from 1
    const char *short_string;  // what the library's GetErrorString returns (framework: the
                               // message's key phrase)
    const char *meaning;
    const char *causes[ERROR_CAUSES_MAX];  // most common first; NULL after the last
    const char *confirm;
    const char *fix;            // framework-neutral: what anyone hitting it can do
    const char *with_trainer;   // the steps that only apply to trainer; NULL when none
    const char *pytorch;       // how PyTorch words this failure
    const char *tensorflow;    // how TensorFlow words it
    int poisons_context;       // the CUDA context is unusable: the process must restart
    StatusCode status;         // what trainer returns when it hits this error
    unsigned facts;            // ERROR_FACT_* bits
    // The error is about finding or opening a GPU, so a machine without a driver (or
    // with every GPU hidden) explains it whatever its details say: the verdict.
    int finds_gpu;
    // Text that identifies the entry inside a pasted message, matched case-insensitively
    // (framework messages, NCCL strings); runtime short strings are matched too.
    const char *phrases[ERROR_PHRASES_MAX];
    const char *related;       // the entry behind a framework message, or the runtime twin
                               // of a driver error; NULL when none
    const char *old_name;      // cuDNN 8's name where cuDNN 9 renamed it; NULL when none
    int old_number;            // cuDNN 8 and older numbered 1-14; 0 when none
} ErrorEntry;

int error_catalog_count(void);
const ErrorEntry *error_catalog_at(int index);

// The entry for a code as the library returned it; NULL when the catalog lacks it.
const ErrorEntry *error_catalog_lookup_code(ErrorFamily family, int number);
// By exact name (or cuDNN 8 name), ignoring case; NULL when none.
const ErrorEntry *error_catalog_lookup_name(const char *name);

// Every entry `text` may mean, into found[0..max), returning how many matched (which may
// exceed max): a name ("cudaErrorInvalidDevice"), a code with an optional family
// ("cuda:101", "cudnn:9" in cuDNN 8 numbering, "101"), or a pasted message, where the
// most specific wording wins (error_catalog_rank). Only a bare number that several
// families use yields more than one.
int error_catalog_search(const char *text, const ErrorEntry **found, int max);
// A pasted message's candidates, most specific first: each entry once, with the wording
// of it that matched and that wording's specificity. Specificity grows with the wording's
// length; an error's own name (CUDNN_STATUS_NOT_SUPPORTED) counts more than a phrase of
// the same length, and a wording on the lines after NCCL's "Last error:" more than
// anything before it (it names the cause the lines above only report). Where a framework
// entry explains the winning library error for framework users (its `related`), and
// matched too, it comes first. Returns how many entries matched (which may exceed max).
typedef struct ErrorCandidate {
    const ErrorEntry *entry;
    const char *wording;  // the phrase, name or string that matched
    int specificity;
} ErrorCandidate;
int error_catalog_rank(const char *text, ErrorCandidate *out, int max);
// Every wording a pasted message is matched against for `entry`, into out[0..max):
// its phrases, its names and (runtime errors) its library string when it is distinctive.
#define ERROR_WORDINGS_MAX (ERROR_PHRASES_MAX + 3)
int error_entry_wordings(const ErrorEntry *entry, const char **out, int max);
// 1 when a and b are the same error told another way: a runtime error and its driver
// twin, a framework message and the library error behind it.
int error_entries_same_error(const ErrorEntry *a, const ErrorEntry *b);

// The one entry `text` means; NULL when none or ambiguous.
const ErrorEntry *error_catalog_find(const char *text);
// A catalog name close to `text` ("did you mean"); NULL when none is close.
const char *error_catalog_suggest(const char *text);

// "CUDA runtime", "cudaError_t" and the lookup prefix "cuda".
const char *error_family_title(ErrorFamily family);
const char *error_family_type(ErrorFamily family);
const char *error_family_prefix(ErrorFamily family);
// "cuda:2", "cudnn:3000", "framework:4": a code `trainer explain` accepts.
void error_entry_code(const ErrorEntry *entry, char *buf, size_t size);

#ifdef __cplusplus
}
#endif

#endif

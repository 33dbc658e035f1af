// Status: how every fallible function below tools/ reports failure.
//
// A function that can fail returns an int: 0 (STATUS_OK) on success, or the
// StatusCode it also stored in *st. Only tools/ turns a Status into text and an
// exit code, so library code never prints and never exits.
#ifndef TRAINER_STATUS_H
#define TRAINER_STATUS_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {  // the CUDA backend (.cu, compiled as C++) reports through these too
#endif

typedef enum StatusCode {
    STATUS_OK = 0,
    STATUS_RUNTIME_ERROR,   // something failed while running (exit 1)
    STATUS_OUT_OF_MEMORY,   // an allocation hit the device or the limit (exit 1, recoverable)
    STATUS_BAD_INPUT,       // bad usage, model file or data (exit 2)
    STATUS_NO_DEVICE,       // no usable device for what was asked (exit 3)
} StatusCode;

typedef struct Status {
    StatusCode code;
    char file[512];     // file the error is about ("" when none)
    int line;           // 1-based; 0 when the error has no line
    int column;         // 1-based; 0 when the error has no column
    char message[1024];
    char hint[512];
    // The error-catalog entry that explains the failure (core/error_catalog.h), e.g.
    // "cudaErrorMemoryAllocation"; "" when none. tools/ prints its explanation.
    char error_name[64];
} Status;

void status_clear(Status *st);

// Record a failure and return its code, so callers can write `return status_fail(...)`.
int status_fail(Status *st, StatusCode code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

// Same, with the place in a file (line/column may be 0 when unknown).
int status_fail_at(Status *st, StatusCode code, const char *file, int line, int column,
                   const char *fmt, ...) __attribute__((format(printf, 6, 7)));

// A host allocation (malloc, calloc, realloc, strdup) that failed, as a runtime failure
// (exit 1): "out of host memory: 3.2 GiB for the order of 60,000 samples", with the hint all
// of them share. bytes: what was asked for, 0 when not known (the size is left out).
// what_fmt: what the memory was for, read after the size ("for the split", "reading %s").
// Returns STATUS_RUNTIME_ERROR. The device's memory and --memory-limit fail otherwise, as
// STATUS_OUT_OF_MEMORY, which training recovers from by splitting its batch.
int status_out_of_host_memory(Status *st, size_t bytes, const char *what_fmt, ...)
    __attribute__((format(printf, 3, 4)));

// Attach (or replace) the hint of the failure already recorded in *st.
void status_hint(Status *st, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

// Add text to the end of the hint already recorded, cut to the hint's size: callers that
// know more than the code that failed ("; the newest checkpoint: ...").
void status_hint_append(Status *st, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

// Set the place of an already recorded failure if it has none yet; lets a caller
// that knows the file add it to an error raised by code that did not.
void status_set_place_if_unset(Status *st, const char *file, int line, int column);

// Put context in front of an already recorded message: "epoch 2, step 31 on cuda:0: " +
// the message. Code, place, hint and error name stay.
void status_prefix(Status *st, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

// The process exit code for a status: 0 ok, 1 runtime, 2 bad input, 3 no device.
int status_exit_code(const Status *st);

// "trainer: error: FILE:LINE:COL: message\n  hint: hint\n" into buf.
void status_format(const Status *st, char *buf, size_t size);

const char *status_code_name(StatusCode code);

// Propagate a failure: `TRY(f(x, st));` returns f's code from the caller when nonzero.
#define TRY(expr)                    \
    do {                             \
        int try_rc_ = (expr);        \
        if (try_rc_) return try_rc_; \
    } while (0)

#ifdef __cplusplus
}
#endif

#endif

// The checks on a safetensors header's bytes that cJSON does not make, so that a header
// trainer reads is one Python's `safetensors` reads too (its Rust reader: UTF-8 first, then
// serde_json into unsigned integers and strings). cJSON takes a NUL or a control byte
// between tokens as white space, stops at a NUL inside a string, ignores what follows the
// JSON, and reads 2.0 or 2e0 as the whole number 2; the reference refuses all of these.
// The scan runs before cJSON builds a tree, so it also bounds that tree's size.
#ifndef TRAINER_SAFETENSORS_HEADER_H
#define TRAINER_SAFETENSORS_HEADER_H

#include <stddef.h>

#include <cjson/cJSON.h>

// Tensors a header may list: each costs about ten cJSON nodes and a name while the header
// is checked, and a header of 1.2 million zero-size tensors (84 MB) took 1.1 GB and 15 s to
// refuse. trainer's own checkpoints hold a few dozen.
#define SAFETENSORS_MAX_TENSORS 65536
// JSON values (objects, arrays, strings, numbers) a header may hold: 16 per tensor, where a
// tensor of rank 4 takes 10, and metadata's strings. Bounds cJSON's tree to about 64 MB
// when one tensor's shape would otherwise be a list of millions of numbers.
#define SAFETENSORS_MAX_VALUES (16 * SAFETENSORS_MAX_TENSORS)

// What is wrong with a header, for the message: `what` says it, `at` is the byte's offset
// in the header (the file's byte 8 + at).
typedef struct HeaderFault {
    size_t at;
    char what[120];
    int over_limit;  // a valid header larger than trainer reads, not a malformed one
} HeaderFault;

// The bytes before parsing: valid UTF-8, no NUL or other control byte (JSON allows tab,
// line feed and carriage return between tokens only), no \u0000 escape (a name or value
// holding it could not be a C string), and at most SAFETENSORS_MAX_TENSORS entries and
// SAFETENSORS_MAX_VALUES values. Returns 0, or -1 with *fault filled.
int safetensors_header_scan(const char *text, size_t length, HeaderFault *fault);

// After cJSON parsed text up to `json_end`: only white space may follow (the reference
// allows it as padding, which writers use to align the data). Returns 0 or -1 with *fault.
int safetensors_header_trailing(const char *text, size_t length, const char *json_end,
                                HeaderFault *fault);

// Marks every number of `root` that the text writes other than as a whole number in plain
// digits (1.0, 1e0, -0, 01, -3) by setting its valuedouble to -1, so that a shape or an
// offset so written is refused as the reference refuses it. `text` is what root was parsed
// from; the numbers are matched in document order.
void safetensors_header_mark_inexact(cJSON *root, const char *text, size_t length);

#endif

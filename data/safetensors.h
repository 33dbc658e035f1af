// safetensors, the weights format the Python world reads (safetensors.numpy.load_file):
//   u64 little-endian N | N bytes of JSON header | raw little-endian tensor bytes
// The header maps each tensor's name to {"dtype", "shape", "data_offsets": [begin, end]}
// (offsets from the start of the data, tensors packed back to back) and may hold
// "__metadata__", an object of strings. We write and read F32 only.
//
// The reader takes bytes from anywhere (a file someone sent, a fuzzer) and trusts none of
// them: every length, offset and shape is checked against the bytes actually there before
// it is used, and names reach messages escaped (base/escape.h).
#ifndef TRAINER_SAFETENSORS_H
#define TRAINER_SAFETENSORS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "base/shape.h"
#include "base/status.h"

// A header larger than this is refused before it is parsed: ours are a few kB plus the
// model file's text, and Python's reader refuses past 100 MB as well.
#define SAFETENSORS_MAX_HEADER (100u * 1000u * 1000u)

typedef struct SafetensorsTensor {
    char *name;
    Shape shape;
    const unsigned char *bytes;  // little-endian f32, shape_numel(&shape) of them; unaligned;
                                 // NULL from safetensors_read_header
} SafetensorsTensor;

typedef struct SafetensorsEntry {
    char *key;
    char *value;
} SafetensorsEntry;

typedef struct Safetensors {
    unsigned char *owned;        // the bytes read by safetensors_read_file or _read_header
    SafetensorsTensor *tensors;  // in the order of their offsets
    int count;
    SafetensorsEntry *metadata;
    int metadata_count;
} Safetensors;

// Checks and indexes `size` bytes; the tensors point into `bytes`, which must outlive
// `out`. `path` names the source in errors. STATUS_BAD_INPUT for anything malformed.
int safetensors_parse(const unsigned char *bytes, size_t size, const char *path,
                      Safetensors *out, Status *st);
int safetensors_read_file(const char *path, Safetensors *out, Status *st);
// The 8-byte length and the header alone, for what needs only the names, shapes and
// metadata: checked and refused as safetensors_read_file checks them (the tensors must
// tile the data the file's size leaves after the header), but the tensors' bytes are not
// read, and are NULL.
int safetensors_read_header(const char *path, Safetensors *out, Status *st);
void safetensors_free(Safetensors *s);
const SafetensorsTensor *safetensors_find(const Safetensors *s, const char *name);
// NULL when absent.
const char *safetensors_metadata(const Safetensors *s, const char *key);
// Copies a tensor's values into host floats (numel of its shape).
void safetensors_copy_f32(const SafetensorsTensor *t, float *out);

// What a writer is given: a name, a shape and host f32 values.
typedef struct SafetensorsOutput {
    const char *name;
    Shape shape;
    const float *values;
} SafetensorsOutput;

// Writes the whole file to `out` (an open stream: see base/atomic_file.h).
int safetensors_write(FILE *out, const SafetensorsOutput *tensors, int count,
                      const SafetensorsEntry *metadata, int metadata_count, const char *path,
                      Status *st);

#endif

// The run agreement record: what defines a run, as named text fields in a fixed order, and
// the bytes one process of an `mpirun` launch sends the others about it
// (core/run_agreement.h exchanges them; docs/distributed.md). Pure C, no MPI, so that the
// decoder, which reads bytes another process sent, can be fuzzed
// (tests/libfuzzer/fuzz_run_agreement.c).
//
// The bytes, version 1 (integers little-endian):
//   "TRRA"  magic
//   u8      version (RUN_RECORD_VERSION)
//   u16     field count, at most RUN_RECORD_MAX_FIELDS
//   each field: u8 name length (1..RUN_FIELD_NAME_MAX-1), the name,
//               u16 value length (0..RUN_FIELD_VALUE_MAX-1), the value
// and nothing after the last field. Names and values are text without NUL bytes.
#ifndef TRAINER_RUN_RECORD_H
#define TRAINER_RUN_RECORD_H

#include <stddef.h>
#include <stdint.h>

#include "base/status.h"

#define RUN_RECORD_VERSION 1
#define RUN_FIELD_NAME_MAX 64
#define RUN_FIELD_VALUE_MAX 512
#define RUN_RECORD_MAX_FIELDS 4096
// The longest encoding: every field at its longest.
#define RUN_RECORD_MAX_BYTES \
    (7 + (size_t)RUN_RECORD_MAX_FIELDS * (3 + RUN_FIELD_NAME_MAX + RUN_FIELD_VALUE_MAX))

typedef struct RunField {
    char name[RUN_FIELD_NAME_MAX];    // "batch", "parameter 2"
    char value[RUN_FIELD_VALUE_MAX];  // "128", "dense1.weight 32x784"
} RunField;

typedef struct RunRecord {
    RunField *fields;  // owned
    int count, capacity;
} RunRecord;

void run_record_init(RunRecord *r);
void run_record_free(RunRecord *r);
// Appends a field; the value is printf's. A name or value too long for its field, or a
// record already full, is an error (a programming one: the fields are ours).
int run_record_add(RunRecord *r, Status *st, const char *name, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

// The bytes of `r` into *bytes (malloc'ed, the caller frees) and *size.
int run_record_encode(const RunRecord *r, uint8_t **bytes, size_t *size, Status *st);
// The record in `size` bytes, whoever wrote them: every length is checked against what is
// left and against its field's room, so no byte past `size` is read. STATUS_BAD_INPUT
// saying what is wrong. *out is initialised either way (free it).
int run_record_decode(const uint8_t *bytes, size_t size, RunRecord *out, Status *st);

// The index of the first field in which a and b differ (name or value), or the shorter
// one's count when one ends first; -1 when they are the same.
int run_record_first_difference(const RunRecord *a, const RunRecord *b);
// What field `index` of `r` holds, for a message: its value, or "(nothing)" past the end.
const char *run_record_value_at(const RunRecord *r, int index);
// Its name, or "" past the end.
const char *run_record_name_at(const RunRecord *r, int index);

// The failure every rank of a launch reports when rank `from` differs from rank 0 (whose
// record is `first`) first in field `field`, where `from` holds `theirs`: STATUS_BAD_INPUT,
// "mpirun -np SIZE: ranks disagree on FIELD: rank 0 has X, rank R has Y", with the values
// escaped (they came from other processes, and a data path may hold any bytes).
int run_record_disagreement(const RunRecord *first, int field, int from, int size,
                            const RunField *theirs, Status *st);

// 64-bit FNV-1a of `size` bytes: the model text's hash in a record.
uint64_t run_record_hash(const void *bytes, size_t size);

#endif

// libFuzzer target for the run agreement record (core/run_record.h): the bytes rank 0 of an
// `mpirun` launch sends every other rank about its run, read by a process that did not
// write them (another build of trainer, a corrupted transfer). Whatever the bytes: no crash,
// no read outside them, no leak; a refusal is STATUS_BAD_INPUT with a message (no raw
// escape byte); an accepted record encodes back to the very same bytes (one encoding per
// record), equals itself, and its first difference from a run's record, and the message
// naming it, stay in bounds, with the record's bytes escaped in it.
// Both halves of the input, split at its first byte, are also compared with each other.
#define _POSIX_C_SOURCE 200809L  // strnlen

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/run_record.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

// A record as a rank makes one (core/run_agreement.c), to compare decoded ones with.
static const RunRecord *reference_record(void) {
    static RunRecord r;
    static int made;
    if (made) return &r;
    Status st;
    status_clear(&st);
    run_record_init(&r);
    if (run_record_add(&r, &st, "run record", "version %d", RUN_RECORD_VERSION) ||
        run_record_add(&r, &st, "parameter tensors", "2") ||
        run_record_add(&r, &st, "parameter 1", "dense1.weight 32x784") ||
        run_record_add(&r, &st, "parameter 2", "dense1.bias 32") ||
        run_record_add(&r, &st, "lr", "0.05") || run_record_add(&r, &st, "batch", "16"))
        abort();
    made = 1;
    return &r;
}

static int decode_or_refuse(const uint8_t *data, size_t size, RunRecord *r) {
    Status st;
    status_clear(&st);
    int rc = run_record_decode(data, size, r, &st);
    if (rc && (rc != STATUS_BAD_INPUT || !st.message[0] || strchr(st.message, 0x1b))) abort();
    return rc;
}

static void check_fields(const RunRecord *r) {
    if (r->count < 0 || r->count > RUN_RECORD_MAX_FIELDS) abort();
    for (int i = 0; i < r->count; i++) {
        size_t name = strnlen(r->fields[i].name, RUN_FIELD_NAME_MAX);
        size_t value = strnlen(r->fields[i].value, RUN_FIELD_VALUE_MAX);
        if (name == 0 || name == RUN_FIELD_NAME_MAX || value == RUN_FIELD_VALUE_MAX) abort();
    }
}

static void check_round_trip(const RunRecord *r, const uint8_t *data, size_t size) {
    uint8_t *bytes = NULL;
    size_t length = 0;
    Status st;
    status_clear(&st);
    if (run_record_encode(r, &bytes, &length, &st)) abort();
    if (length != size || memcmp(bytes, data, size) != 0) abort();
    free(bytes);
}

// The difference and the message every rank would report for it.
static void check_difference(const RunRecord *first, const RunRecord *mine) {
    int field = run_record_first_difference(first, mine);
    int shorter = first->count < mine->count ? first->count : mine->count;
    if (field < -1 || field > shorter) abort();
    if (field == -1) return;
    RunField theirs;
    memset(&theirs, 0, sizeof theirs);
    memcpy(theirs.name, run_record_name_at(mine, field), strlen(run_record_name_at(mine, field)));
    memcpy(theirs.value, run_record_value_at(mine, field),
           strlen(run_record_value_at(mine, field)));
    Status st;
    status_clear(&st);
    if (run_record_disagreement(first, field, 1, 2, &theirs, &st) != STATUS_BAD_INPUT ||
        !strstr(st.message, "ranks disagree on") || strchr(st.message, 0x1b))
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    RunRecord r;
    if (!decode_or_refuse(data, size, &r)) {
        check_fields(&r);
        check_round_trip(&r, data, size);
        if (run_record_first_difference(&r, &r) != -1) abort();
        check_difference(reference_record(), &r);
        check_difference(&r, reference_record());
    }
    run_record_free(&r);
    if (size < 2) return 0;
    size_t split = 1 + (size_t)data[0] * (size - 1) / 255;
    RunRecord a, b;
    int a_failed = decode_or_refuse(data + 1, split - 1, &a);
    int b_failed = decode_or_refuse(data + split, size - split, &b);
    if (!a_failed && !b_failed) check_difference(&a, &b);
    run_record_free(&a);
    run_record_free(&b);
    return 0;
}

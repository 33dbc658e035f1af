// libFuzzer target for the earlier rows of --logdir's metrics.jsonl (core/run_log.c), read
// when a run starts: a fresh run (run_log_check, then run_log_open with no resumed step)
// refuses a log that holds rows, and a --resume'd one keeps the rows up to its step, drops
// the later ones and repeats the resumed step's scalars into a new event file. The log is
// outside bytes: copied, cut by a crash, edited by hand. The input's first byte is the run:
// bit 0 evaluate_first, the rest the resumed step (127: a fresh run); the other bytes are
// metrics.jsonl. Whatever the bytes: no crash, no undefined behaviour, no leak, a refusal
// is STATUS_BAD_INPUT in words, and an accepted log is cut back to a prefix of what it held
// (a newline added after a kept row that lacked one), never rewritten.
#include "fuzz_files.h"  // first: it sets _POSIX_C_SOURCE

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/run_log.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_refusal(int rc, const Status *st) {
    if (rc != STATUS_BAD_INPUT || !st->message[0] || strchr(st->message, 0x1b)) abort();
}

// What the open left of metrics.jsonl: the first `kept` bytes of the log it was given, and a
// newline when the last of them is no newline.
static void check_kept_prefix(const char *path, const uint8_t *log, size_t size) {
    FILE *f = fopen(path, "rb");
    if (!f) abort();
    uint8_t *kept = malloc(size + 2);
    if (!kept) abort();
    size_t n = fread(kept, 1, size + 2, f);
    fclose(f);
    if (n > size + 1) abort();
    size_t from_log = n > 0 && n == size + 1 ? size : n;
    if (memcmp(kept, log, from_log) != 0) abort();
    if (from_log < n && kept[n - 1] != '\n') abort();
    free(kept);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1) return 0;
    int evaluate_first = data[0] & 1;
    long resumed_step = data[0] >> 1 == 127 ? -1 : data[0] >> 1;
    const char *path = fuzz_write("metrics.jsonl", data + 1, size - 1);
    Status st;
    status_clear(&st);
    int rc = resumed_step < 0 ? run_log_check(fuzz_dir(), 0, &st) : 0;
    RunLog log;
    if (!rc) rc = run_log_open(&log, fuzz_dir(), "test", resumed_step, evaluate_first, &st);
    if (rc) {
        check_refusal(rc, &st);
        return 0;
    }
    char events[sizeof log.events.path];
    memcpy(events, log.events.path, sizeof events);
    run_log_close(&log);
    unlink(events);  // each input's run opens one: the folder would fill with them
    check_kept_prefix(path, data + 1, size - 1);
    return 0;
}

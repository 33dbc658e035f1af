// Readers that take a path, not bytes, get the fuzzer's input through a file in a folder of
// this process's own (mkdtemp under /tmp, so two fuzzers or ctest -j never share one),
// rewritten for each input and removed at exit. Header-only: each target is one .c file
// (tests/libfuzzer/CMakeLists.txt and tests/CMakeLists.txt build fuzz_*.c alone).
#ifndef TRAINER_FUZZ_FILES_H
#define TRAINER_FUZZ_FILES_H

#define _POSIX_C_SOURCE 200809L  // mkdtemp; so this header comes before any system one

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char fuzz_dir_path[64];
static char fuzz_written[8][128];  // what fuzz_write put in the folder, for the clean-up
static int fuzz_written_count;

static void fuzz_dir_remove(void) {
    for (int i = 0; i < fuzz_written_count; i++) unlink(fuzz_written[i]);
    if (fuzz_dir_path[0]) rmdir(fuzz_dir_path);
}

// The folder, created on first use; aborts if /tmp is unusable (no input could run).
static const char *fuzz_dir(void) {
    if (!fuzz_dir_path[0]) {
        snprintf(fuzz_dir_path, sizeof fuzz_dir_path, "/tmp/trainer-fuzz-XXXXXX");
        if (!mkdtemp(fuzz_dir_path)) abort();
        atexit(fuzz_dir_remove);
    }
    return fuzz_dir_path;
}

// Writes data[0..size) to fuzz_dir()/NAME, replacing what was there; returns the path.
__attribute__((unused))  // a target writing its own files (fuzz_image_folder) needs only fuzz_dir
static const char *fuzz_write(const char *name, const uint8_t *data, size_t size) {
    static char path[128];
    snprintf(path, sizeof path, "%s/%s", fuzz_dir(), name);
    int known = 0;
    for (int i = 0; i < fuzz_written_count; i++) known |= strcmp(fuzz_written[i], path) == 0;
    if (!known && fuzz_written_count < 8) strcpy(fuzz_written[fuzz_written_count++], path);
    FILE *f = fopen(path, "wb");
    if (!f || (size && fwrite(data, 1, size, f) != size) || fclose(f)) abort();
    return path;
}

// Where a harness stores a sum of every value it read, so that the reads (which ASan checks)
// are not optimized away. Not compared with anything: an abort on a chosen sum fired on a
// valid CSV table whose values added up to it (tests/libfuzzer/regressions/csv/).
static volatile double fuzz_sink __attribute__((unused));

#endif

// Runs a libFuzzer target's LLVMFuzzerTestOneInput once on every file in the folders given,
// without libFuzzer: ordinary builds (gcc, the ASan build) replay each target's seed corpus
// and regressions as a ctest test (label fuzz), so a fixed crasher stays fixed even where
// nobody runs scripts/fuzz.sh.
#define _POSIX_C_SOURCE 200809L  // dirent

#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int replay_file(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) return 0;
    uint8_t *data = NULL;
    size_t size = 0, capacity = 0, n;
    uint8_t chunk[65536];
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) {
        if (size + n > capacity) {
            capacity = 2 * (size + n);
            uint8_t *grown = realloc(data, capacity);
            if (!grown) break;
            data = grown;
        }
        for (size_t i = 0; i < n; i++) data[size + i] = chunk[i];
        size += n;
    }
    fclose(f);
    // A copy of exactly `size` bytes, so ASan sees a read past the input as one.
    uint8_t *exact = malloc(size ? size : 1);
    for (size_t i = 0; exact && i < size; i++) exact[i] = data[i];
    LLVMFuzzerTestOneInput(exact, size);
    free(exact);
    free(data);
    return 1;
}

int main(int argc, char **argv) {
    int replayed = 0;
    for (int a = 1; a < argc; a++) {
        DIR *dir = opendir(argv[a]);
        if (!dir) continue;
        struct dirent *entry;
        while ((entry = readdir(dir)) != NULL) {
            if (entry->d_name[0] == '.') continue;
            char path[4096];
            snprintf(path, sizeof path, "%s/%s", argv[a], entry->d_name);
            replayed += replay_file(path);
        }
        closedir(dir);
    }
    printf("replayed %d input%s without a crash\n", replayed, replayed == 1 ? "" : "s");
    return replayed > 0 ? 0 : 1;
}

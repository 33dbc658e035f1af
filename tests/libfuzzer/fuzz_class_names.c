// libFuzzer target for predict's --classes FILE (core/class_names.c): one class name per
// line, read for a model of a given number of classes. The input's first byte is that
// count (1 to 256), the rest the file. Whatever the bytes: no crash, no read outside them,
// no leak, a refusal is STATUS_BAD_INPUT in words, and an accepted file gives exactly that
// many names, each non-empty, without a line break, without trailing blanks.
#include "fuzz_files.h"  // first: it sets _POSIX_C_SOURCE

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/class_names.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1) return 0;
    int classes = 1 + data[0];
    const char *path = fuzz_write("classes.txt", data + 1, size - 1);
    Status st;
    status_clear(&st);
    ClassNames cn;
    memset(&cn, 0, sizeof cn);
    int rc = class_names_from_file(path, classes, &cn, &st);
    if (rc == 0) {
        if (!cn.names) abort();
        for (int i = 0; i < classes; i++) {
            const char *name = cn.names[i];
            size_t n = name ? strlen(name) : 0;
            if (n == 0 || strchr(name, '\n') || strchr(" \t\r", name[n - 1])) abort();
        }
    } else if (rc != STATUS_BAD_INPUT || !st.message[0] || strchr(st.message, 0x1b)) {
        abort();  // a refusal must be bad input, said in words, with no raw escape byte
    }
    class_names_free(&cn);
    return 0;
}

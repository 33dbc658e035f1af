// libFuzzer target for the CSV reader (data/dataset_csv.c). An input starting with '@' names
// the label column on its first line ("@y\n" is csv:FILE,label=y) and the rest is the file;
// any other input is the file, read as csv:FILE. Whatever the bytes: no crash, no read
// outside them, no leak, a refusal is STATUS_BAD_INPUT in words, and an accepted table's
// features and labels are all there (a file holding a NUL byte is never accepted).
#include "fuzz_files.h"  // first: it sets _POSIX_C_SOURCE

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "data/dataset.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char spec[256], label[64] = "";
    if (size > 0 && data[0] == '@') {
        size_t n = 1;
        while (n < size && data[n] != '\n' && n < sizeof label) n++;
        memcpy(label, data + 1, n - 1);
        label[n - 1] = '\0';
        size_t skip = n < size ? n + 1 : size;
        data += skip;
        size -= skip;
    }
    const char *path = fuzz_write("table.csv", data, size);
    // A label name with a NUL byte ends early, as it would on a command line.
    if (label[0]) snprintf(spec, sizeof spec, "%s,label=%s", path, label);
    else snprintf(spec, sizeof spec, "%s", path);
    Status st;
    status_clear(&st);
    Dataset ds;
    memset(&ds, 0, sizeof ds);
    int rc = dataset_load_csv(spec, &ds, &st);
    if (rc == 0) {
        if (ds.count <= 0 || ds.width <= 0 || !ds.features || !ds.labels) abort();
        // A NUL is refused where it is: read as the text's end, it dropped the rows after it.
        if (memchr(data, '\0', size)) abort();
        double sum = 0.0;
        for (size_t i = 0; i < (size_t)ds.count * dataset_sample_size(&ds); i++)
            sum += ds.features[i];
        for (int i = 0; i < ds.count; i++) sum += ds.labels[i];
        fuzz_sink = sum;  // fuzz_files.h
    } else if (rc != STATUS_BAD_INPUT || !st.message[0] || strchr(st.message, 0x1b)) {
        abort();  // a refusal must be bad input, said in words, with no raw escape byte
    }
    dataset_free(&ds);
    return 0;
}

// libFuzzer target for the CIFAR-10 binary reader (data/dataset_cifar10.c): the input is
// test_batch.bin of a cifar10:DIR folder (3073-byte records: a label byte, then 3x32x32
// bytes). Whatever the bytes: no crash, no read outside them, no leak, a refusal is
// STATUS_BAD_INPUT in words, and an accepted batch is whole records with labels 0 to 9.
#include "fuzz_files.h"  // first: it sets _POSIX_C_SOURCE

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "data/dataset.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fuzz_write("test_batch.bin", data, size);
    Status st;
    status_clear(&st);
    Dataset ds;
    memset(&ds, 0, sizeof ds);
    int rc = dataset_load_cifar10(fuzz_dir(), "test", &ds, &st);
    if (rc == 0) {
        if (ds.count <= 0 || (size_t)ds.count * 3073 != size || ds.label_max > 9) abort();
        unsigned sum = 0;
        for (size_t i = 0; i < (size_t)ds.count * dataset_sample_size(&ds); i++)
            sum += ds.images[i];
        for (int i = 0; i < ds.count; i++) sum += ds.labels[i];
        fuzz_sink = sum;  // fuzz_files.h
    } else if (rc != STATUS_BAD_INPUT || !st.message[0] || strchr(st.message, 0x1b)) {
        abort();  // a refusal must be bad input, said in words, with no raw escape byte
    }
    dataset_free(&ds);
    return 0;
}

// What `trainer bench`'s lists read into a request (diagnostics/bench_request.c): --sizes
// as squares or MxNxK, --precisions replacing the default of all, --bytes with binary
// suffixes; each refusal naming the option and the item, with the form the option takes;
// and the device's defaults filling only what was not given.
#include "check.h"
#include "diagnostics/bench.h"

static int read_lists(const char *sizes, const char *precisions, const char *bytes,
                      BenchRequest *r, Status *st) {
    memset(r, 0, sizeof *r);
    status_clear(st);
    return bench_request_read_lists(sizes, precisions, bytes, r, st);
}

static void lists_are_read(void) {
    BenchRequest r;
    Status st;
    CHECK_INT_EQ(read_lists("512,16x8x4", "fp32,bf16", "4K,1MiB,2G", &r, &st), 0);
    CHECK_INT_EQ(r.size_count, 2);
    CHECK_INT_EQ(r.sizes[0].m, 512);
    CHECK_INT_EQ(r.sizes[0].k, 512);
    CHECK_INT_EQ(r.sizes[1].m, 16);
    CHECK_INT_EQ(r.sizes[1].n, 8);
    CHECK_INT_EQ(r.sizes[1].k, 4);
    CHECK_INT_EQ(r.precisions, (1u << bench_precision_parse("fp32")) |
                                   (1u << bench_precision_parse("bf16")));
    CHECK_INT_EQ(r.byte_count, 3);
    CHECK(r.bytes[0] == 4096 && r.bytes[1] == 1 << 20 && r.bytes[2] == (size_t)2 << 30);
    // Nothing given: every precision, and the device's sizes and bytes.
    CHECK_INT_EQ(read_lists(NULL, NULL, NULL, &r, &st), 0);
    CHECK_INT_EQ(r.precisions, (1u << BENCH_PRECISION_COUNT) - 1);
    BenchDevice cpu = {0};
    bench_request_defaults(&r, &cpu);
    CHECK_INT_EQ(r.size_count, 3);
    CHECK_INT_EQ(r.sizes[0].m, 256);
    CHECK(r.bytes[0] == (size_t)64 << 20);
    CHECK_INT_EQ(r.batch, 8);
}

static void bad_items_are_refused(void) {
    BenchRequest r;
    Status st;
    CHECK_INT_EQ(read_lists("8x8", NULL, NULL, &r, &st), STATUS_BAD_INPUT);
    CHECK_CONTAINS(st.message, "--sizes 8x8: cannot read '8x8'");
    CHECK_CONTAINS(st.hint, "MxNxK, 1 to 65536 each");
    CHECK_INT_EQ(read_lists("70000", NULL, NULL, &r, &st), STATUS_BAD_INPUT);
    CHECK_CONTAINS(st.message, "'70000' is out of range");
    CHECK_INT_EQ(read_lists("1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17", NULL, NULL, &r, &st),
                 STATUS_BAD_INPUT);
    CHECK_CONTAINS(st.message, "more than 16 items");
    CHECK_INT_EQ(read_lists(NULL, ",,", NULL, &r, &st), STATUS_BAD_INPUT);
    CHECK_CONTAINS(st.message, "--precisions: no items given");
    CHECK_INT_EQ(read_lists(NULL, NULL, "3", &r, &st), STATUS_BAD_INPUT);
    CHECK_CONTAINS(st.message, "--bytes 3: '3' is out of range");
    CHECK_INT_EQ(read_lists(NULL, NULL, "1X", &r, &st), STATUS_BAD_INPUT);
    CHECK_CONTAINS(st.message, "--bytes 1X: cannot read '1X'");
    // 600 characters: the items past the 511th were once dropped without a word.
    char long_list[601];
    memset(long_list, ',', sizeof long_list - 1);
    memcpy(long_list, "64", 2);
    memcpy(long_list + sizeof long_list - 1 - 3, "128", 3);
    long_list[sizeof long_list - 1] = '\0';
    CHECK_INT_EQ(read_lists(long_list, NULL, NULL, &r, &st), STATUS_BAD_INPUT);
    CHECK_CONTAINS(st.message, "--sizes: the list is 600 characters long; at most 511 are read");
    CHECK_CONTAINS(st.hint, "give at most 16 items, comma-separated");
    CHECK_INT_EQ(read_lists("64", NULL, "1G", &r, &st), 0);
}

int main(void) {
    lists_are_read();
    bad_items_are_refused();
    return test_exit_code("test_bench_request");
}

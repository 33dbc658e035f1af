// base/status.c's status_out_of_host_memory: a failed host allocation reads the same at every
// site (the size in readable units when known, what it was for, one hint), is a runtime
// failure (exit 1, not the recoverable STATUS_OUT_OF_MEMORY) and carries no stale place.
#include <stdio.h>
#include <string.h>

#include "base/status.h"
#include "base/text_out.h"
#include "check.h"

static void size_and_purpose_are_in_the_message(void) {
    Status st;
    status_clear(&st);
    size_t bytes = (size_t)3435973837u;  // 3.2 GiB
    int rc = status_out_of_host_memory(&st, bytes, "for the order of %d samples", 60000);
    CHECK_INT_EQ(rc, STATUS_RUNTIME_ERROR);
    CHECK_INT_EQ(st.code, STATUS_RUNTIME_ERROR);
    CHECK(strcmp(st.message, "out of host memory: 3.2 GiB for the order of 60000 samples") == 0);
    CHECK_CONTAINS(st.hint, "free host memory");
    CHECK_CONTAINS(st.hint, "--batch");
    CHECK_CONTAINS(st.hint, "--decode stream");
    CHECK_INT_EQ(status_exit_code(&st), 1);
}

static void unknown_size_is_left_out(void) {
    Status st;
    status_clear(&st);
    status_out_of_host_memory(&st, 0, "reading model file %s", "m.model");
    CHECK(strcmp(st.message, "out of host memory reading model file m.model") == 0);
    status_out_of_host_memory(&st, 1, "for a flag");
    CHECK(strcmp(st.message, "out of host memory: 1 byte for a flag") == 0);
}

// A place left by an earlier failure is not this one's; the error name neither.
static void earlier_place_and_name_are_cleared(void) {
    Status st;
    status_clear(&st);
    status_fail_at(&st, STATUS_BAD_INPUT, "data/x.csv", 3, 7, "earlier");
    snprintf(st.error_name, sizeof st.error_name, "cudaErrorMemoryAllocation");
    status_out_of_host_memory(&st, 2048, "for %d rows", 12);
    CHECK(st.file[0] == '\0' && st.line == 0 && st.column == 0 && st.error_name[0] == '\0');
    char text[1024];
    status_format(&st, text, sizeof text);
    const char *want = "trainer: error: out of host memory: 2.0 KiB for 12 rows\n  hint: free "
                       "host memory";
    CHECK(strncmp(text, want, strlen(want)) == 0);
    // A caller that knows the file adds it, as for any other failure.
    status_set_place_if_unset(&st, "data/x.csv", 0, 0);
    status_format(&st, text, sizeof text);
    CHECK_CONTAINS(text, "trainer: error: data/x.csv: out of host memory: 2.0 KiB for 12 rows");
}

static void bytes_read_in_binary_units(void) {
    char buf[32];
    CHECK(strcmp(format_bytes(0, buf, sizeof buf), "0 bytes") == 0);
    CHECK(strcmp(format_bytes(1023, buf, sizeof buf), "1023 bytes") == 0);
    CHECK(strcmp(format_bytes(1536, buf, sizeof buf), "1.5 KiB") == 0);
    CHECK(strcmp(format_bytes((size_t)5 << 20, buf, sizeof buf), "5.0 MiB") == 0);
}

int main(void) {
    size_and_purpose_are_in_the_message();
    unknown_size_is_left_out();
    earlier_place_and_name_are_cleared();
    bytes_read_in_binary_units();
    return test_exit_code("test_status");
}

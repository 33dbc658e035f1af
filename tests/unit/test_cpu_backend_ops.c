// The CPU backend fills every op of BACKEND_OPS: each family registers its own slots at
// first use, so a slot a register function forgot would only show at run time (the device
// opener refuses it); this finds it when the tests are built. And backend_missing_ops
// itself names a NULL slot.
#include <string.h>

#include "check.h"
#include "kernels/backend.h"

int main(void) {
    char missing[2048];
    CHECK_INT_EQ(backend_missing_ops(cpu_backend(), missing, sizeof missing), 0);
    CHECK(strcmp(missing, "") == 0);

    Backend table = *cpu_backend();
    table.sum_squares = NULL;
    table.layout_convert = NULL;
    CHECK_INT_EQ(backend_missing_ops(&table, missing, sizeof missing), 2);
    CHECK_CONTAINS(missing, "sum_squares");
    CHECK_CONTAINS(missing, "layout_convert");
    return test_exit_code("test_cpu_backend_ops");
}

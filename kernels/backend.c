#include <stdio.h>
#include <string.h>

#include "kernels/backend.h"

// Every op by name, so a backend that lacks some can be reported before a model runs.
#define OP(field) {#field, offsetof(Backend, field)},
static const struct {
    const char *name;
    size_t offset;
} backend_ops[] = {BACKEND_OPS(OP)};

// A slot added to the table but to neither list would escape both the completeness check
// and the parity test's coverage; the table is its header and then function pointers only.
#define ONE(field) +1
_Static_assert(offsetof(Backend, raw_alloc) + (0 BACKEND_OPS(ONE) BACKEND_OTHER_OPS(ONE)) *
                       sizeof(void (*)(void)) ==
                   sizeof(Backend),
               "every op of Backend is in BACKEND_OPS or BACKEND_OTHER_OPS");

int backend_missing_ops(const Backend *b, char *names, size_t size) {
    int missing = 0;
    size_t used = 0;
    names[0] = '\0';
    for (size_t i = 0; i < sizeof backend_ops / sizeof backend_ops[0]; i++) {
        void *fn;
        memcpy(&fn, (const char *)b + backend_ops[i].offset, sizeof fn);
        if (fn) continue;
        if (used < size)
            used += (size_t)snprintf(names + used, size - used, "%s%s", missing ? ", " : "",
                                     backend_ops[i].name);
        missing++;
    }
    return missing;
}

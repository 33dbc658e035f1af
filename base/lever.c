#include "base/lever.h"

#include <stdio.h>
#include <string.h>

const char *const lever_names[] = {"bias-gradient", "batchnorm-split", "maxpool-scatter",
                                   "multi-tensor",  "gemm-epilogue",   "conv-fused",
                                   NULL};

int lever_parse(const char *name, Lever *out) {
    for (int i = 0; lever_names[i]; i++)
        if (strcmp(name, lever_names[i]) == 0) {
            *out = (Lever)i;
            return 0;
        }
    return -1;
}

const char *lever_set_format(unsigned set, char *out, size_t size) {
    if (size == 0) return out;
    out[0] = '\0';
    size_t used = 0;
    for (int i = 0; i < LEVER_COUNT; i++) {
        if (!(set & LEVER_BIT(i))) continue;
        int n = snprintf(out + used, size - used, "%s%s", used ? "," : "", lever_names[i]);
        if (n < 0 || (size_t)n >= size - used) break;
        used += (size_t)n;
    }
    return out;
}

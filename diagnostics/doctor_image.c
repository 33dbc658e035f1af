// What kind of code for a device's architecture this binary holds, judged from the
// architecture list CMake compiled in.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diagnostics/doctor.h"

static const char *const image_kind_names[] = {"unknown", "sass", "ptx", "none"};

const char *doctor_image_kind_name(ImageKind kind) { return image_kind_names[kind]; }


// Whether the architecture list from CMake ("75-real 80-real 90a-real 120") holds code
// for compute capability major.minor: SASS runs on its own major version at the same or
// a higher minor (an arch-specific "90a" only on exactly 9.0); PTX is JIT-compiled by the
// driver for any newer GPU.
ImageKind doctor_image_from_architectures(const char *list, int major, int minor, int *arch) {
    int device = major * 10 + minor, best_sass = 0, best_ptx = 0, parsed_any = 0;
    *arch = 0;
    char copy[256];
    snprintf(copy, sizeof copy, "%s", list);
    for (char *word = strtok(copy, " ;"); word; word = strtok(NULL, " ;")) {
        char *end;
        long value = strtol(word, &end, 10);
        if (end == word || value <= 0 || value > 10000) return IMAGE_UNKNOWN;  // "native", "all"
        parsed_any = 1;
        int specific = *end == 'a' || *end == 'f';
        if (specific) end++;
        int sass = strcmp(end, "-virtual") != 0, ptx = strcmp(end, "-real") != 0;
        int entry_major = (int)value / 10, entry_minor = (int)value % 10;
        int runs = specific ? value == device : entry_major == major && entry_minor <= minor;
        if (sass && runs && value > best_sass) best_sass = (int)value;
        if (ptx && !specific && value <= device && value > best_ptx) best_ptx = (int)value;
    }
    if (!parsed_any) return IMAGE_UNKNOWN;
    *arch = best_sass ? best_sass : best_ptx;
    return best_sass ? IMAGE_SASS : best_ptx ? IMAGE_PTX : IMAGE_NONE;
}

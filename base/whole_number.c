#include "base/whole_number.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>

int whole_number_in(const char *text, long min, long max, long *out) {
    char *end;
    errno = 0;
    long value = strtol(text, &end, 10);
    if (errno || end == text || *end || isspace((unsigned char)text[0]) || value < min ||
        value > max)
        return 0;
    *out = value;
    return 1;
}

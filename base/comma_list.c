#include "base/comma_list.h"

#include <string.h>

int comma_list_copy(const char *what, const char *text, char *copy, size_t size, Status *st) {
    size_t length = strlen(text);
    if (length >= size)
        return status_fail(st, STATUS_BAD_INPUT, "%s is %zu characters long; at most %zu are "
                           "read", what, length, size - 1);
    memcpy(copy, text, length + 1);
    return 0;
}

#include "base/text_out.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void text_flush(const TextOut *out) {
    if (out->flush) out->flush(out->user);
}

void text_write(const TextOut *out, const char *text, size_t length) {
    out->write(out->user, text, length);
}

void text_put(const TextOut *out, const char *text) { text_write(out, text, strlen(text)); }

// Formatted on the stack when it fits, else in a buffer of its own size.
void text_printf(const TextOut *out, const char *fmt, ...) {
    char small[1024];
    va_list ap;
    va_start(ap, fmt);
    int length = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (length < 0) return;
    if ((size_t)length < sizeof small) {
        text_write(out, small, (size_t)length);
        return;
    }
    char *large = malloc((size_t)length + 1);
    if (!large) {
        text_write(out, small, sizeof small - 1);
        return;
    }
    va_start(ap, fmt);
    vsnprintf(large, (size_t)length + 1, fmt, ap);
    va_end(ap);
    text_write(out, large, (size_t)length);
    free(large);
}

void text_say(void (*say)(void *user, const char *line), void *user, const char *fmt,
              va_list ap) {
    if (!say) return;
    char line[2400];
    vsnprintf(line, sizeof line, fmt, ap);
    say(user, line);
}

void text_join(const char *const *words, int count, const char *separator, const char *quote,
               char *out, size_t size) {
    size_t used = 0;
    out[0] = '\0';
    for (int i = 0; i < count && used < size; i++)
        used += (size_t)snprintf(out + used, size - used, "%s%s%s%s", i ? separator : "",
                                 quote, words[i], quote);
}

const char *format_count(long value, char *buf, size_t size) {
    char digits[32];
    // The magnitude unsigned: -LONG_MIN does not fit a long.
    unsigned long magnitude = value < 0 ? 0UL - (unsigned long)value : (unsigned long)value;
    int n = snprintf(digits, sizeof digits, "%lu", magnitude);
    size_t used = 0;
    if (value < 0 && used + 1 < size) buf[used++] = '-';
    for (int i = 0; i < n && used + 1 < size; i++) {
        buf[used++] = digits[i];
        int remaining = n - i - 1;
        if (remaining > 0 && remaining % 3 == 0 && used + 1 < size) buf[used++] = ',';
    }
    buf[used] = '\0';
    return buf;
}

const char *format_bytes(size_t bytes, char *buf, size_t size) {
    const char *units[] = {"bytes", "KiB", "MiB", "GiB", "TiB"};
    double value = (double)bytes;
    int unit = 0;
    while (value >= 1024.0 && unit < 4) {
        value /= 1024.0;
        unit++;
    }
    if (unit == 0) snprintf(buf, size, "%zu %s", bytes, bytes == 1 ? "byte" : "bytes");
    else snprintf(buf, size, "%.1f %s", value, units[unit]);
    return buf;
}

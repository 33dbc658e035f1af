// Text that library code composes and tools/ writes out. Nothing below tools/ prints, so a
// report meant for the terminal (explain's entry, doctor's facts, a lab scenario) is handed,
// piece by piece and in order, to a write function its caller supplies.
#ifndef TRAINER_TEXT_OUT_H
#define TRAINER_TEXT_OUT_H

#include <stdarg.h>
#include <stddef.h>

// flush: the text so far must reach its reader now (before a long step, or a fork that
// would copy what is still buffered); NULL when the writer keeps nothing back.
typedef struct TextOut {
    void (*write)(void *user, const char *text, size_t length);
    void (*flush)(void *user);
    void *user;
} TextOut;

void text_flush(const TextOut *out);
void text_write(const TextOut *out, const char *text, size_t length);
void text_put(const TextOut *out, const char *text);
void text_printf(const TextOut *out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

// A line of printf's format handed to say(user, line) (cut at 2,399 bytes); nothing when say
// is NULL. For the functions of `...` that pass a formatted line to a callback: a notice,
// a progress line.
void text_say(void (*say)(void *user, const char *line), void *user, const char *fmt,
              va_list ap) __attribute__((format(printf, 3, 0)));

// `words` joined by `separator` into out (cut at size), each between two `quote`s:
// ("nvidia-smi", "trainer doctor") with ", then " and "`" -> "`nvidia-smi`, then `trainer doctor`".
void text_join(const char *const *words, int count, const char *separator, const char *quote,
               char *out, size_t size);
// 235146 -> "235,146"
const char *format_count(long value, char *buf, size_t size);
// 1536 -> "1.5 KiB", 1023 -> "1023 bytes", 1 -> "1 byte": a size for messages.
const char *format_bytes(size_t bytes, char *buf, size_t size);

#endif

#include "data/safetensors_header.h"

#include <stdio.h>
#include <string.h>

#include "base/utf8.h"

static int fault_at(HeaderFault *fault, size_t at, const char *what) {
    fault->at = at;
    fault->over_limit = 0;
    snprintf(fault->what, sizeof fault->what, "%s", what);
    return -1;
}

static int json_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

static int number_char(char c) {
    return (c >= '0' && c <= '9') || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E';
}

// The offset of the quote that ends the string opening at text[at] (or length when it is
// not closed: cJSON says so), checking what lies between.
static int scan_string(const char *text, size_t length, size_t at, size_t *end,
                       HeaderFault *fault) {
    size_t i = at + 1;
    while (i < length && text[i] != '"') {
        unsigned char c = (unsigned char)text[i];
        if (c < 0x20) {
            char what[120];
            snprintf(what, sizeof what, "holds the control byte 0x%02x inside a string "
                     "(JSON writes it escaped)", c);
            return fault_at(fault, i, what);
        }
        if (c == '\\' && i + 5 < length && memcmp(text + i + 1, "u0000", 5) == 0)
            return fault_at(fault, i, "holds a NUL written \\u0000 in a name or value, "
                            "which trainer's names and metadata cannot hold");
        i += c == '\\' ? 2 : 1;  // an escaped quote does not end the string
    }
    *end = i < length ? i : length;
    return 0;
}

// Whether the string ending at text[end] is an object's key: a colon follows it.
static int is_key(const char *text, size_t length, size_t end) {
    size_t i = end + 1;
    while (i < length && json_space(text[i])) i++;
    return i < length && text[i] == ':';
}

static int too_many(HeaderFault *fault, size_t at, const char *what, long long limit) {
    char text[120];
    snprintf(text, sizeof text, "lists more than %lld %s; at most %lld are read", limit, what,
             limit);
    fault_at(fault, at, text);
    fault->over_limit = 1;
    return -1;
}

static const char METADATA[] = "__metadata__";

// Counts the root object's tensors and every value, and checks the strings.
static int scan_tokens(const char *text, size_t length, HeaderFault *fault) {
    long long values = 0, tensors = 0;
    int depth = 0;
    for (size_t i = 0; i < length; i++) {
        char c = text[i];
        if (c == '"') {
            size_t end;
            if (scan_string(text, length, i, &end, fault)) return -1;
            int key = is_key(text, length, end);
            tensors += key && depth == 1 && !(end - i - 1 == sizeof METADATA - 1 &&
                                              memcmp(text + i + 1, METADATA, end - i - 1) == 0);
            values += !key;
            i = end;
        } else if (c == '{' || c == '[') {
            depth++;
            values++;
        } else if (c == '}' || c == ']') {
            depth--;
        } else if ((unsigned char)c < 0x20 && !json_space(c)) {
            char what[120];
            snprintf(what, sizeof what, "holds the control byte 0x%02x, which is not JSON",
                     (unsigned char)c);
            return fault_at(fault, i, what);
        } else if (number_char(c) || (c >= 'a' && c <= 'z')) {
            values++;  // a number or true, false, null: one value, however long
            while (i + 1 < length && (number_char(text[i + 1]) ||
                                      (text[i + 1] >= 'a' && text[i + 1] <= 'z')))
                i++;
        }
        if (tensors > SAFETENSORS_MAX_TENSORS)
            return too_many(fault, i, "tensors", SAFETENSORS_MAX_TENSORS);
        if (values > SAFETENSORS_MAX_VALUES)
            return too_many(fault, i, "JSON values", SAFETENSORS_MAX_VALUES);
    }
    return 0;
}

int safetensors_header_scan(const char *text, size_t length, HeaderFault *fault) {
    const char *nul = memchr(text, '\0', length);
    if (nul) return fault_at(fault, (size_t)(nul - text), "holds a NUL byte (0x00)");
    size_t bad = utf8_first_invalid(text, length);
    if (bad < length) {
        char what[120];
        snprintf(what, sizeof what, "is not UTF-8 (byte 0x%02x starts no UTF-8 character)",
                 (unsigned char)text[bad]);
        return fault_at(fault, bad, what);
    }
    return scan_tokens(text, length, fault);
}

int safetensors_header_trailing(const char *text, size_t length, const char *json_end,
                                HeaderFault *fault) {
    for (const char *p = json_end; p < text + length; p++)
        if (!json_space(*p))
            return fault_at(fault, (size_t)(p - text), "goes on after its JSON object ends "
                            "(only spaces may pad it)");
    return 0;
}

// The next number token of the text from *at on (strings skipped): its start and length.
static int next_number(const char *text, size_t length, size_t *at, size_t *start,
                       size_t *size) {
    for (size_t i = *at; i < length; i++) {
        if (text[i] == '"') {
            for (i++; i < length && text[i] != '"'; i++)
                if (text[i] == '\\') i++;
            continue;
        }
        if (text[i] != '-' && !(text[i] >= '0' && text[i] <= '9')) continue;
        size_t end = i;
        while (end < length && number_char(text[end])) end++;
        *start = i;
        *size = end - i;
        *at = end;
        return 1;
    }
    return 0;
}

// "0", or digits not starting with 0: what the reference reads as an unsigned integer.
static int plain_whole_number(const char *text, size_t size) {
    if (size == 0 || (text[0] == '0' && size > 1)) return 0;
    for (size_t i = 0; i < size; i++)
        if (text[i] < '0' || text[i] > '9') return 0;
    return 1;
}

// Depth first, children in order: the document order of the numbers.
static void mark_in_order(cJSON *item, const char *text, size_t length, size_t *at) {
    for (; item; item = item->next) {
        size_t start, size;
        if (cJSON_IsNumber(item) && next_number(text, length, at, &start, &size) &&
            !plain_whole_number(text + start, size)) {
            item->valuedouble = -1.0;
            item->valueint = -1;
        }
        mark_in_order(item->child, text, length, at);
    }
}

void safetensors_header_mark_inexact(cJSON *root, const char *text, size_t length) {
    size_t at = 0;
    mark_in_order(root, text, length, &at);
}

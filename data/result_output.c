#define _POSIX_C_SOURCE 200809L  // strcasecmp
#include "data/result_output.h"

#include <errno.h>
#include <string.h>
#include <strings.h>

#include <cjson/cJSON.h>

#include "base/escape.h"
#include "base/json.h"

int output_has_extension(const char *path, const char *extension) {
    size_t length = strlen(path), ending = strlen(extension);
    return length > ending && strcasecmp(path + length - ending, extension) == 0;
}

// The path as an error shows it: escaped, since it is the user's bytes.
static const char *shown_path(const char *path, char *out, size_t size) {
    return text_escape(path, strlen(path), out, size);
}

int output_open(const char *path, FILE **out, Status *st) {
    *out = fopen(path, "w");
    if (*out) return 0;
    char shown[4096];
    status_fail_at(st, STATUS_BAD_INPUT, shown_path(path, shown, sizeof shown), 0, 0,
                   "cannot write --output: %s", strerror(errno));
    status_hint(st, "name a file in a folder that exists and can be written");
    return STATUS_BAD_INPUT;
}

int output_close(const char *path, FILE *f, Status *st) {
    int failed = fflush(f) != 0 || ferror(f);
    int why = errno;
    if (fclose(f) != 0 && !failed) failed = 1, why = errno;
    if (!failed) return 0;
    char shown[4096];
    status_fail_at(st, STATUS_RUNTIME_ERROR, shown_path(path, shown, sizeof shown), 0, 0,
                   "writing --output failed: %s", strerror(why ? why : EIO));
    status_hint(st, "check the free space where the file is written");
    return STATUS_RUNTIME_ERROR;
}

void output_csv_field(FILE *f, const char *text) {
    size_t length = strlen(text);
    int quote = strpbrk(text, ",\"\r\n") != NULL ||
                (length && (text[0] == ' ' || text[length - 1] == ' '));
    if (!quote) {
        fputs(text, f);
        return;
    }
    fputc('"', f);
    for (const char *p = text; *p; p++) {
        if (*p == '"') fputc('"', f);
        fputc(*p, f);
    }
    fputc('"', f);
}

cJSON *run_record_json(const RunRecord *r) {
    cJSON *item = cJSON_CreateObject();
    if (!item) return NULL;
    json_add_text(item, "event", "run");
    json_add_text(item, "command", r->command);
    json_add_text(item, "model", r->model);
    json_add_text(item, "weights", r->weights);
    json_add_text(item, "data", r->data);
    if (r->split) json_add_text(item, "split", r->split);
    cJSON_AddNumberToObject(item, "samples", r->samples);
    if (r->top) cJSON_AddNumberToObject(item, "top", r->top);
    json_add_text(item, "device", r->device);
    return item;
}

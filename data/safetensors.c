#define _POSIX_C_SOURCE 200809L  // strdup
#include "data/safetensors.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "base/directories.h"
#include "base/escape.h"
#include "base/utf8.h"
#include "data/dataset.h"
#include "data/safetensors_header.h"

// Where each tensor's bytes sit while the header is checked.
typedef struct Span {
    uint64_t begin, end;
    int index;              // into Safetensors.tensors
} Span;

static int malformed(const char *path, Status *st, const char *fmt, const char *name,
                     const char *detail) {
    char escaped[160];
    if (name) text_escape(name, strlen(name), escaped, sizeof escaped);
    status_fail_at(st, STATUS_BAD_INPUT, path, 0, 0, fmt, name ? escaped : "", detail);
    status_prefix(st, "not a valid safetensors file: ");
    status_hint(st, "the file is truncated or was not written by a safetensors writer; write "
                    "it again with `trainer train --save FILE`");
    return STATUS_BAD_INPUT;
}

// A half or double precision file (PyTorch's model.half() saved, a bf16 checkpoint) is a
// valid safetensors file of another dtype: said as that, with how to convert it, not as a
// truncated or foreign file.
static int is_other_float(const char *dtype) {
    return strcmp(dtype, "F16") == 0 || strcmp(dtype, "BF16") == 0 || strcmp(dtype, "F64") == 0;
}

static int refuse_other_float(const char *path, const char *name, const char *dtype,
                              Status *st) {
    char escaped[160];
    text_escape(name, strlen(name), escaped, sizeof escaped);
    status_fail_at(st, STATUS_BAD_INPUT, path, 0, 0, "tensor '%s' is %s; trainer reads F32 "
                   "weights only", escaped, dtype);
    status_hint(st, "convert the file to float32, e.g. in Python: from safetensors.torch "
                    "import load_file, save_file; save_file({k: v.float() for k, v in "
                    "load_file(IN).items()}, OUT)");
    return STATUS_BAD_INPUT;
}

static uint64_t read_u64_le(const unsigned char *p) {
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--) v = v << 8 | p[i];
    return v;
}

// A JSON number that is a whole number in [0, max].
static int whole_number(const cJSON *item, double max, uint64_t *out) {
    if (!cJSON_IsNumber(item)) return 0;
    double v = item->valuedouble;
    if (!(v >= 0.0 && v <= max) || floor(v) != v) return 0;
    *out = (uint64_t)v;
    return 1;
}

static int parse_shape(const cJSON *shape, Shape *out) {
    if (!cJSON_IsArray(shape)) return 0;
    int rank = cJSON_GetArraySize(shape);
    if (rank > SHAPE_MAX_RANK) return 0;
    out->rank = rank;
    int d = 0;
    for (const cJSON *dim = shape->child; dim; dim = dim->next, d++) {
        uint64_t value;
        if (!whole_number(dim, 2147483647.0, &value)) return 0;
        out->dims[d] = (int)value;
    }
    return 1;
}

// The byte count of a shape's f32 values, or 0 with *ok = 0 when it passes `limit`.
static uint64_t shape_bytes(const Shape *s, uint64_t limit, int *ok) {
    uint64_t bytes = 4;
    *ok = 1;
    for (int d = 0; d < s->rank; d++) {
        uint64_t dim = (uint64_t)s->dims[d];
        if (dim != 0 && bytes > limit / dim) {
            *ok = 0;
            return 0;
        }
        bytes *= dim;
    }
    return bytes;
}

static int parse_tensor(const cJSON *entry, uint64_t data_size, const char *path,
                        SafetensorsTensor *t, Span *span, Status *st) {
    const char *name = entry->string;
    if (!cJSON_IsObject(entry))
        return malformed(path, st, "tensor '%s' is not a JSON object%s", name, "");
    const cJSON *dtype = cJSON_GetObjectItemCaseSensitive(entry, "dtype");
    if (cJSON_IsString(dtype) && is_other_float(dtype->valuestring))
        return refuse_other_float(path, name, dtype->valuestring, st);
    if (!cJSON_IsString(dtype) || strcmp(dtype->valuestring, "F32") != 0)
        return malformed(path, st, "tensor '%s' has dtype %s; only F32 is read", name,
                         cJSON_IsString(dtype) ? "other than F32" : "missing");
    if (!parse_shape(cJSON_GetObjectItemCaseSensitive(entry, "shape"), &t->shape))
        return malformed(path, st, "tensor '%s' has a bad shape%s (a list of at most 4 "
                         "whole numbers, written in digits alone)", name, "");
    const cJSON *offsets = cJSON_GetObjectItemCaseSensitive(entry, "data_offsets");
    if (!cJSON_IsArray(offsets) || cJSON_GetArraySize(offsets) != 2 ||
        !whole_number(offsets->child, (double)data_size, &span->begin) ||
        !whole_number(offsets->child->next, (double)data_size, &span->end) ||
        span->begin > span->end)
        return malformed(path, st, "tensor '%s' has data_offsets that are not two whole "
                         "numbers (in digits alone) within the %s", name, "file's data");
    int fits;
    uint64_t bytes = shape_bytes(&t->shape, data_size, &fits);
    if (!fits || bytes != span->end - span->begin)
        return malformed(path, st, "tensor '%s': its shape does not match its data_offsets%s",
                         name, "");
    t->name = strdup(name);
    if (!t->name) return status_out_of_host_memory(st, strlen(name) + 1, "for a tensor's name");
    return 0;
}

static int parse_metadata(const cJSON *object, const char *path, Safetensors *out,
                          Status *st) {
    if (!cJSON_IsObject(object))
        return malformed(path, st, "__metadata__ is not a JSON object%s%s", NULL, "");
    int count = cJSON_GetArraySize(object);
    out->metadata = calloc((size_t)count + 1, sizeof *out->metadata);
    if (!out->metadata)
        return status_out_of_host_memory(st, ((size_t)count + 1) * sizeof *out->metadata,
                                         "for __metadata__");
    for (const cJSON *item = object->child; item; item = item->next) {
        if (!cJSON_IsString(item))
            return malformed(path, st, "__metadata__ value of '%s' is not a string%s",
                             item->string, "");
        SafetensorsEntry *e = &out->metadata[out->metadata_count++];
        e->key = strdup(item->string);
        e->value = strdup(item->valuestring);
        if (!e->key || !e->value) return status_out_of_host_memory(st, 0, "for __metadata__");
    }
    return 0;
}

static int by_begin(const void *a, const void *b) {
    const Span *x = a, *y = b;
    if (x->begin != y->begin) return x->begin < y->begin ? -1 : 1;
    return x->end < y->end ? -1 : x->end > y->end;
}

static int by_name(const void *a, const void *b) {
    return strcmp(((const SafetensorsTensor *)a)->name, ((const SafetensorsTensor *)b)->name);
}

// Tensors must tile the data exactly, as Python's reader demands: sorted by offset, each
// starts where the last ended, and the last ends at the end of the file. That also rules
// out overlaps, which would let one tensor's values alias another's.
static int check_tiling(Span *spans, int count, uint64_t data_size, const Safetensors *s,
                        const char *path, Status *st) {
    qsort(spans, (size_t)count, sizeof *spans, by_begin);
    uint64_t expected = 0;
    for (int i = 0; i < count; i++) {
        if (spans[i].begin != expected)
            return malformed(path, st, "tensor '%s' %s", s->tensors[spans[i].index].name,
                             spans[i].begin < expected ? "overlaps the tensor before it"
                                                       : "leaves a gap before it");
        expected = spans[i].end;
    }
    if (expected != data_size)
        return malformed(path, st, "the tensors cover %s%s of the data after the header",
                         NULL, expected < data_size ? "less than all" : "more than all");
    return 0;
}

static int check_unique_names(Safetensors *s, const char *path, Status *st) {
    if (s->count < 2) return 0;
    SafetensorsTensor *sorted = malloc((size_t)s->count * sizeof *sorted);
    if (!sorted)
        return status_out_of_host_memory(st, (size_t)s->count * sizeof *sorted,
                                         "checking tensor names");
    memcpy(sorted, s->tensors, (size_t)s->count * sizeof *sorted);
    qsort(sorted, (size_t)s->count, sizeof *sorted, by_name);
    int rc = 0;
    for (int i = 1; !rc && i < s->count; i++)
        if (strcmp(sorted[i - 1].name, sorted[i].name) == 0)
            rc = malformed(path, st, "tensor '%s' appears twice in the header%s", sorted[i].name,
                           "");
    free(sorted);
    return rc;
}

// Puts the tensors in offset order and points each at its bytes (NULL when `data` is: the
// header alone was read).
static int place_tensors(Safetensors *s, Span *spans, const unsigned char *data) {
    SafetensorsTensor *ordered = malloc((size_t)s->count * sizeof *ordered + 1);
    if (!ordered) return -1;
    for (int i = 0; i < s->count; i++) {
        ordered[i] = s->tensors[spans[i].index];
        ordered[i].bytes = data ? data + spans[i].begin : NULL;
    }
    free(s->tensors);
    s->tensors = ordered;
    return 0;
}

static int parse_header(const cJSON *root, const unsigned char *data, uint64_t data_size,
                        const char *path, Safetensors *out, Status *st) {
    if (!cJSON_IsObject(root))
        return malformed(path, st, "the header is not a JSON object%s%s", NULL, "");
    int entries = cJSON_GetArraySize(root);
    out->tensors = calloc((size_t)entries + 1, sizeof *out->tensors);
    Span *spans = calloc((size_t)entries + 1, sizeof *spans);
    int rc = out->tensors && spans
                 ? 0
                 : status_out_of_host_memory(
                       st, ((size_t)entries + 1) * (sizeof *out->tensors + sizeof *spans),
                       "for the header's %d entries", entries);
    const cJSON *metadata = NULL;
    for (const cJSON *entry = root->child; !rc && entry; entry = entry->next) {
        if (strcmp(entry->string, "__metadata__") == 0) {
            if (metadata) rc = malformed(path, st, "__metadata__ appears twice%s%s", NULL, "");
            metadata = entry;
            continue;
        }
        rc = parse_tensor(entry, data_size, path, &out->tensors[out->count],
                          &spans[out->count], st);
        if (!rc) spans[out->count].index = out->count, out->count++;
    }
    if (!rc && metadata) rc = parse_metadata(metadata, path, out, st);
    if (!rc) rc = check_unique_names(out, path, st);
    if (!rc) rc = check_tiling(spans, out->count, data_size, out, path, st);
    if (!rc && place_tensors(out, spans, data))
        rc = status_out_of_host_memory(st, (size_t)out->count * sizeof *out->tensors + 1,
                                       "placing the tensors");
    free(spans);
    return rc;
}

static int header_fault(const HeaderFault *fault, const char *path, Status *st) {
    char detail[160];
    snprintf(detail, sizeof detail, "%s, at byte %zu of the file", fault->what, fault->at + 8);
    if (!fault->over_limit) return malformed(path, st, "%sthe header %s", NULL, detail);
    status_fail_at(st, STATUS_BAD_INPUT, path, 0, 0, "the safetensors header %s", detail);
    status_hint(st, "trainer reads at most %d tensors and %d JSON values in a header "
                "(docs/checkpoints.md): more than any model it builds", SAFETENSORS_MAX_TENSORS,
                SAFETENSORS_MAX_VALUES);
    return STATUS_BAD_INPUT;
}

// Whether the first bytes read as text: a header length that large is then no length at all
// (a model file, a JSON file given where the weights go).
static int starts_with_text(const unsigned char *bytes, size_t size) {
    // (strchr finds a NUL byte too, as the string's end: tested apart.)
    for (size_t i = 0; i < 8 && i < size; i++)
        if (!(bytes[i] >= 0x20 && bytes[i] < 0x7f) && (!bytes[i] || !strchr("\t\n\r", bytes[i])))
            return 0;
    return 1;
}

// Whether a header length read from a file of `size` bytes is one the reader takes.
static int header_length_fits(uint64_t header_size, uint64_t size) {
    return header_size <= SAFETENSORS_MAX_HEADER && header_size <= size - 8;
}

// The checks and the index of a file of `size` bytes from its first `have`, which hold at
// least its first 16 bytes (or all of a shorter file) and, when its header length fits,
// the length and the whole header. The tensors point into `bytes` when `with_data` (then
// have == size), else are NULL: their bytes were not read. The data's length, which the
// tensors must tile, is the file's size less the header either way.
static int parse_start(const unsigned char *bytes, size_t have, uint64_t size, int with_data,
                       const char *path, Safetensors *out, Status *st) {
    memset(out, 0, sizeof *out);
    if (size < 8)
        return malformed(path, st, "%s%s bytes is too short for the 8-byte header length", NULL,
                         size ? "fewer than 8" : "0");
    uint64_t header_size = read_u64_le(bytes);
    if (!header_length_fits(header_size, size) && starts_with_text(bytes, have)) {
        char shown[96];
        text_escape((const char *)bytes, have < 16 ? have : 16, shown, sizeof shown);
        status_fail_at(st, STATUS_BAD_INPUT, path, 0, 0, "not a safetensors file: it starts "
                       "with text ('%s...'), where a safetensors file starts with its header's "
                       "length in 8 bytes", shown);
        status_hint(st, "pass the weights `trainer train --save FILE` wrote; a model file "
                        "(.model) comes first: trainer eval MODEL --weights FILE");
        return STATUS_BAD_INPUT;
    }
    if (!header_length_fits(header_size, size)) {
        char detail[128];
        if (header_size > size - 8)
            snprintf(detail, sizeof detail, "%llu bytes, more than the %llu bytes the file holds "
                     "after it", (unsigned long long)header_size, (unsigned long long)(size - 8));
        else
            snprintf(detail, sizeof detail, "%llu bytes, more than the limit of %u",
                     (unsigned long long)header_size, SAFETENSORS_MAX_HEADER);
        return malformed(path, st, "%sthe header length is %s", NULL, detail);
    }
    const char *text = (const char *)bytes + 8, *json_end = NULL;
    HeaderFault fault;
    if (safetensors_header_scan(text, (size_t)header_size, &fault))
        return header_fault(&fault, path, st);
    cJSON *root = cJSON_ParseWithLengthOpts(text, (size_t)header_size, &json_end, 0);
    if (!root) return malformed(path, st, "%sthe header is not valid JSON%s", NULL, "");
    if (safetensors_header_trailing(text, (size_t)header_size, json_end, &fault)) {
        cJSON_Delete(root);
        return header_fault(&fault, path, st);
    }
    safetensors_header_mark_inexact(root, text, (size_t)header_size);
    const unsigned char *data = with_data ? bytes + 8 + header_size : NULL;
    int rc = parse_header(root, data, size - 8 - header_size, path, out, st);
    cJSON_Delete(root);
    if (rc) safetensors_free(out);
    return rc;
}

int safetensors_parse(const unsigned char *bytes, size_t size, const char *path,
                      Safetensors *out, Status *st) {
    return parse_start(bytes, size, size, 1, path, out, st);
}

// Opens a weights file for reading, *length its size.
static int open_weights_file(const char *path, FILE **f, long long *length, Status *st) {
    // fopen opens a folder, and reading it fails: said as what it is, with the files a
    // --checkpoint folder (the folder a user most likely meant) holds.
    if (path_is_directory(path)) {
        status_fail_at(st, STATUS_BAD_INPUT, path, 0, 0, "is a folder, not a weights file");
        status_hint(st, "name a .safetensors file; a --checkpoint folder holds "
                        "best.safetensors and step-NNNNNNNNNN.safetensors");
        return STATUS_BAD_INPUT;
    }
    // A FIFO would block the open (and a device never end): only a regular file is read,
    // its size from fstat, not from seeking.
    if (dataset_open_regular(path, "a safetensors weights file", f, length, st)) {
        if (errno == ENOENT)
            status_hint(st, "check the path; `trainer train MODEL --save FILE` writes one");
        return STATUS_BAD_INPUT;
    }
    return 0;
}

// How many of a file's first bytes parse_start needs without its data, from the first 16
// (`first`, when the file has them): the length and the header it gives, or those 16 when
// the length is refused (what the refusal shows of the file).
static size_t header_extent(const unsigned char *first, uint64_t size) {
    uint64_t header_size = read_u64_le(first);
    return header_length_fits(header_size, size) && header_size > 8 ? (size_t)header_size + 8
                                                                    : 16;
}

// Appends the next `count` bytes of `f` to *bytes (its first *have), growing it: 0, or -1
// out of memory, or 1 when the file ends or fails first.
static int read_more(FILE *f, size_t count, unsigned char **bytes, size_t *have) {
    unsigned char *grown = realloc(*bytes, *have + count + 1);
    if (!grown) return -1;
    *bytes = grown;
    size_t got = fread(grown + *have, 1, count, f);
    *have += got;
    return got == count ? 0 : 1;
}

// The file's bytes, all of them or (`header_only`) the 16 first and then the length and
// the header that header_extent says: *have of its *size, into *bytes for the caller to free.
static int read_file_start(const char *path, int header_only, unsigned char **bytes,
                           size_t *have, uint64_t *size, Status *st) {
    FILE *f;
    long long length;
    TRY(open_weights_file(path, &f, &length, st));
    *bytes = NULL;
    *have = 0;
    size_t asked = header_only && length > 16 ? 16 : (size_t)length;
    int rc = header_only || (unsigned long long)length < SIZE_MAX
                 ? read_more(f, asked, bytes, have)
                 : -1;  // larger than memory can address, in a 32-bit build
    if (!rc && header_only && *have == 16) {
        asked = header_extent(*bytes, (uint64_t)length);
        rc = read_more(f, asked - 16, bytes, have);
    }
    fclose(f);
    if (rc) {
        free(*bytes);
        *bytes = NULL;
    }
    if (rc < 0) {
        status_out_of_host_memory(st, asked + 1, header_only ? "for the file's header"
                                                             : "for the file (it is read whole)");
        status_set_place_if_unset(st, path, 0, 0);
        return STATUS_RUNTIME_ERROR;
    }
    if (rc) {
        status_fail_at(st, STATUS_BAD_INPUT, path, 0, 0, "cannot read the file's %lld bytes",
                       length);
        status_hint(st, "check that it is a regular file and readable");
        return STATUS_BAD_INPUT;
    }
    *size = (uint64_t)length;
    return 0;
}

// trainer wrote "TRNWEIGH" files before it wrote safetensors; they are refused by name
// rather than as garbage, so the user knows what to do.
static int refuse_old_format(const unsigned char *bytes, size_t size, const char *path,
                             Status *st) {
    if (size < 8 || memcmp(bytes, "TRNWEIGH", 8) != 0) return 0;
    status_fail_at(st, STATUS_BAD_INPUT, path, 0, 0, "this is a weights file in trainer's old "
                   "TRNWEIGH format, which this version no longer reads");
    status_hint(st, "train again with `trainer train MODEL --save FILE.safetensors` (see "
                    "docs/checkpoints.md)");
    return STATUS_BAD_INPUT;
}

// One reader for the whole file and for its header: what one refuses, the other refuses in
// the same words, but for the tensors' bytes, which only the whole read reads.
static int read_file(const char *path, int header_only, Safetensors *out, Status *st) {
    memset(out, 0, sizeof *out);
    unsigned char *bytes;
    size_t have;
    uint64_t size;
    TRY(read_file_start(path, header_only, &bytes, &have, &size, st));
    int rc = refuse_old_format(bytes, have, path, st);
    if (!rc) rc = parse_start(bytes, have, size, !header_only, path, out, st);
    if (rc) {
        free(bytes);
        return rc;
    }
    out->owned = bytes;
    return 0;
}

int safetensors_read_file(const char *path, Safetensors *out, Status *st) {
    return read_file(path, 0, out, st);
}

int safetensors_read_header(const char *path, Safetensors *out, Status *st) {
    return read_file(path, 1, out, st);
}

void safetensors_free(Safetensors *s) {
    for (int i = 0; s->tensors && i < s->count; i++) free(s->tensors[i].name);
    for (int i = 0; s->metadata && i < s->metadata_count; i++) {
        free(s->metadata[i].key);
        free(s->metadata[i].value);
    }
    free(s->tensors);
    free(s->metadata);
    free(s->owned);
    memset(s, 0, sizeof *s);
}

const SafetensorsTensor *safetensors_find(const Safetensors *s, const char *name) {
    for (int i = 0; i < s->count; i++)
        if (strcmp(s->tensors[i].name, name) == 0) return &s->tensors[i];
    return NULL;
}

const char *safetensors_metadata(const Safetensors *s, const char *key) {
    for (int i = 0; i < s->metadata_count; i++)
        if (strcmp(s->metadata[i].key, key) == 0) return s->metadata[i].value;
    return NULL;
}

void safetensors_copy_f32(const SafetensorsTensor *t, float *out) {
    size_t n = shape_numel(&t->shape);
    for (size_t i = 0; i < n; i++) {
        const unsigned char *p = t->bytes + 4 * i;
        uint32_t bits = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
                        (uint32_t)p[3] << 24;
        memcpy(&out[i], &bits, sizeof bits);
    }
}

// ---- writing ----

static cJSON *tensor_header(const SafetensorsOutput *t, uint64_t begin, uint64_t end) {
    cJSON *entry = cJSON_CreateObject();
    cJSON *shape = cJSON_CreateIntArray(t->shape.dims, t->shape.rank);
    cJSON *offsets = cJSON_CreateArray();
    if (!entry || !shape || !offsets) {
        cJSON_Delete(entry);
        cJSON_Delete(shape);
        cJSON_Delete(offsets);
        return NULL;
    }
    cJSON_AddStringToObject(entry, "dtype", "F32");
    cJSON_AddItemToObject(entry, "shape", shape);
    cJSON_AddItemToArray(offsets, cJSON_CreateNumber((double)begin));
    cJSON_AddItemToArray(offsets, cJSON_CreateNumber((double)end));
    cJSON_AddItemToObject(entry, "data_offsets", offsets);
    return entry;
}

// Text for the header as UTF-8, which the reference reader demands of the whole header: a
// name or value that is not (a path or a class folder in Latin-1) keeps each byte that
// starts no UTF-8 character as the text \xNN. The text itself when it is UTF-8, else a heap
// copy for the caller to free; NULL when out of memory.
static char *as_utf8(const char *text) {
    size_t length = strlen(text);
    if (utf8_first_invalid(text, length) == length) return (char *)text;
    size_t size = utf8_escaped_size(text);
    char *copy = malloc(size);
    if (copy) utf8_escape_invalid(text, copy, size);
    return copy;
}

static void free_copy(char *copy, const char *text) {
    if (copy != text) free(copy);
}

// Adds `item` under `key` (made UTF-8); 0 when out of memory.
static int add_item(cJSON *object, const char *key, cJSON *item) {
    char *valid = item ? as_utf8(key) : NULL;
    int ok = valid && cJSON_AddItemToObject(object, valid, item);
    free_copy(valid, key);
    if (!ok) cJSON_Delete(item);
    return ok;
}

static int add_string(cJSON *object, const char *key, const char *value) {
    char *valid = as_utf8(value);
    int ok = valid && add_item(object, key, cJSON_CreateString(valid));
    free_copy(valid, value);
    return ok;
}

// The header text, space-padded so that the data starts 8-byte aligned.
static char *header_text(const SafetensorsOutput *tensors, int count,
                         const SafetensorsEntry *metadata, int metadata_count, size_t *length) {
    cJSON *root = cJSON_CreateObject();
    if (!root) return NULL;
    int ok = 1;
    if (metadata_count > 0) {
        cJSON *meta = cJSON_AddObjectToObject(root, "__metadata__");
        ok = meta != NULL;
        for (int i = 0; ok && i < metadata_count; i++)
            ok = add_string(meta, metadata[i].key, metadata[i].value);
    }
    uint64_t offset = 0;
    for (int i = 0; ok && i < count; i++) {
        uint64_t bytes = 4 * (uint64_t)shape_numel(&tensors[i].shape);
        ok = add_item(root, tensors[i].name, tensor_header(&tensors[i], offset, offset + bytes));
        offset += bytes;
    }
    char *text = ok ? cJSON_PrintUnformatted(root) : NULL;
    cJSON_Delete(root);
    if (!text) return NULL;
    size_t n = strlen(text), padded = (n + 7) / 8 * 8;
    char *out = malloc(padded + 1);
    if (out) {
        memcpy(out, text, n);
        memset(out + n, ' ', padded - n);
        out[padded] = '\0';
    }
    cJSON_free(text);
    *length = padded;
    return out;
}

static int write_f32_le(FILE *out, const float *values, size_t n) {
    unsigned char chunk[4096];
    size_t used = 0;
    for (size_t i = 0; i < n; i++) {
        uint32_t bits;
        memcpy(&bits, &values[i], sizeof bits);
        for (int b = 0; b < 4; b++) chunk[used++] = (unsigned char)(bits >> (8 * b));
        if (used == sizeof chunk || i + 1 == n) {
            if (fwrite(chunk, 1, used, out) != used) return -1;
            used = 0;
        }
    }
    return 0;
}

int safetensors_write(FILE *out, const SafetensorsOutput *tensors, int count,
                      const SafetensorsEntry *metadata, int metadata_count, const char *path,
                      Status *st) {
    // What is written must read back: a file over the reader's limit would not.
    if (count > SAFETENSORS_MAX_TENSORS) {
        status_fail_at(st, STATUS_BAD_INPUT, path, 0, 0, "not written: %d tensors, more than "
                       "the %d a safetensors file trainer reads may hold", count,
                       SAFETENSORS_MAX_TENSORS);
        status_hint(st, "a model this large is not one trainer builds; see docs/checkpoints.md");
        return STATUS_BAD_INPUT;
    }
    size_t length = 0;
    char *header = header_text(tensors, count, metadata, metadata_count, &length);
    if (!header) return status_out_of_host_memory(st, 0, "for the header");
    unsigned char size_bytes[8];
    for (int b = 0; b < 8; b++) size_bytes[b] = (unsigned char)((uint64_t)length >> (8 * b));
    int failed = fwrite(size_bytes, 1, 8, out) != 8 || fwrite(header, 1, length, out) != length;
    free(header);
    for (int i = 0; !failed && i < count; i++)
        failed = write_f32_le(out, tensors[i].values, shape_numel(&tensors[i].shape));
    if (!failed) return 0;
    status_fail_at(st, STATUS_RUNTIME_ERROR, path, 0, 0, "writing failed: %s", strerror(errno));
    status_hint(st, "check free disk space");
    return STATUS_RUNTIME_ERROR;
}

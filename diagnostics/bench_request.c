// What a `trainer bench` request asks for: the lists --sizes, --precisions and --bytes take
// (comma-separated items, each read and range-checked, the option and item named in a
// refusal), and the device's defaults for what they leave out.
#define _POSIX_C_SOURCE 200809L  // strtok_r
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/comma_list.h"
#include "diagnostics/bench.h"

enum { ITEM_UNREADABLE = 1, ITEM_OUT_OF_RANGE = 2 };  // what parse returns on failure

// The items of a comma-separated list, each handed to parse; at most BENCH_MAX_SIZES. A
// refusal names the option and its list; bench_request_read_lists gives the hint where
// each_item gave none.
static int each_item(const char *option, const char *list, int (*parse)(const char *, void *, int),
                     void *out, int *count, Status *st) {
    char copy[512], what[64];
    *count = 0;
    snprintf(what, sizeof what, "%s: the list", option);
    if (comma_list_copy(what, list, copy, sizeof copy, st)) {
        status_hint(st, "give at most %d items, comma-separated", BENCH_MAX_SIZES);
        return STATUS_BAD_INPUT;
    }
    char *save = NULL;
    for (char *item = strtok_r(copy, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
        if (*count == BENCH_MAX_SIZES) {
            status_fail(st, STATUS_BAD_INPUT, "%s %s: more than %d items", option, list,
                        BENCH_MAX_SIZES);
            return STATUS_BAD_INPUT;
        }
        int failed = parse(item, out, (*count)++);
        if (failed) {
            status_fail(st, STATUS_BAD_INPUT, failed == ITEM_OUT_OF_RANGE
                        ? "%s %s: '%s' is out of range" : "%s %s: cannot read '%s'", option,
                        list, item);
            return STATUS_BAD_INPUT;
        }
    }
    if (*count == 0) {
        status_fail(st, STATUS_BAD_INPUT, "%s: no items given", option);
        return STATUS_BAD_INPUT;
    }
    return 0;
}

static int parse_dimension(const char **text, int *out) {
    char *end;
    errno = 0;
    long value = strtol(*text, &end, 10);
    if (end == *text) return ITEM_UNREADABLE;
    if (errno || value < 1 || value > 65536) return ITEM_OUT_OF_RANGE;
    *out = (int)value;
    *text = end;
    return 0;
}

// "4096" (square) or "MxNxK".
static int parse_gemm_size(const char *item, void *out, int index) {
    BenchGemmSize *s = &((BenchGemmSize *)out)[index];
    const char *p = item;
    int failed = parse_dimension(&p, &s->m);
    if (failed) return failed;
    if (!*p) {
        s->n = s->k = s->m;
        return 0;
    }
    if (*p++ != 'x') return ITEM_UNREADABLE;
    if ((failed = parse_dimension(&p, &s->n))) return failed;
    if (*p++ != 'x') return ITEM_UNREADABLE;
    if ((failed = parse_dimension(&p, &s->k))) return failed;
    return *p != '\0' ? ITEM_UNREADABLE : 0;
}

// The first item replaces the default (all of them); the others add to it.
static int parse_precision(const char *item, void *out, int index) {
    int p = bench_precision_parse(item);
    if (p < 0) return ITEM_UNREADABLE;
    if (index == 0) *(unsigned *)out = 0;
    *(unsigned *)out |= 1u << p;
    return 0;
}

// "64M", "1G", "512K", "1048576": binary multiples, 4 bytes to 64 GiB.
static int parse_bytes(const char *item, void *out, int index) {
    char *end;
    errno = 0;
    double value = strtod(item, &end);
    if (end == item) return ITEM_UNREADABLE;
    if (errno || !(value > 0.0)) return ITEM_OUT_OF_RANGE;
    double unit = 1.0;
    switch (*end) {
    case 'K': case 'k': unit = 1024.0; end++; break;
    case 'M': case 'm': unit = 1024.0 * 1024.0; end++; break;
    case 'G': case 'g': unit = 1024.0 * 1024.0 * 1024.0; end++; break;
    default: break;
    }
    if (strcmp(end, "iB") == 0 || strcmp(end, "B") == 0) end += strlen(end);
    double bytes = value * unit;
    if (*end) return ITEM_UNREADABLE;
    if (bytes < 4.0 || bytes > 64.0 * 1024 * 1024 * 1024) return ITEM_OUT_OF_RANGE;
    ((size_t *)out)[index] = (size_t)bytes;
    return 0;
}

int bench_request_read_lists(const char *sizes, const char *precisions, const char *bytes,
                             BenchRequest *r, Status *st) {
    int precision_count;
    const struct {
        const char *option, *text;
        int (*parse)(const char *, void *, int);
        void *out;
        int *count;
        const char *hint;
    } lists[] = {
        {"--sizes", sizes, parse_gemm_size, r->sizes, &r->size_count,
         "sizes are N (N x N x N) or MxNxK, 1 to 65536 each: --sizes 1024,4096x4096x1024"},
        {"--precisions", precisions, parse_precision, &r->precisions, &precision_count,
         "precisions: fp32, tf32, bf16, fp16, comma-separated"},
        {"--bytes", bytes, parse_bytes, r->bytes, &r->byte_count,
         "bytes per copy, 4 bytes to 64 GiB, with K, M or G for KiB, MiB, GiB: --bytes 64M,1G"},
    };
    r->precisions = (1u << BENCH_PRECISION_COUNT) - 1;
    for (size_t i = 0; i < sizeof lists / sizeof *lists; i++) {
        if (lists[i].text && each_item(lists[i].option, lists[i].text, lists[i].parse,
                                       lists[i].out, lists[i].count, st)) {
            if (!st->hint[0]) status_hint(st, "%s", lists[i].hint);
            return STATUS_BAD_INPUT;
        }
    }
    return 0;
}

void bench_request_defaults(BenchRequest *r, const BenchDevice *dev) {
    static const int gpu_sizes[] = {1024, 4096, 8192}, cpu_sizes[] = {256, 512, 1024};
    if (r->size_count == 0) {
        for (int i = 0; i < 3; i++) {
            int n = dev->is_gpu ? gpu_sizes[i] : cpu_sizes[i];
            r->sizes[i] = (BenchGemmSize){n, n, n};
        }
        r->size_count = 3;
    }
    if (r->byte_count == 0) {
        r->bytes[0] = (size_t)(dev->is_gpu ? 256 : 64) << 20;
        r->byte_count = 1;
    }
    if (r->batch == 0) r->batch = dev->is_gpu ? 128 : 8;  // conv's; train's is the model's
}

#define _POSIX_C_SOURCE 200809L
#include "core/weights.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char weights_magic[8] = {'T', 'R', 'N', 'W', 'E', 'I', 'G', 'H'};
enum { WEIGHTS_VERSION = 1 };

static int write_u32(FILE *f, uint32_t v) { return fwrite(&v, sizeof v, 1, f) == 1 ? 0 : -1; }

static int write_param(FILE *f, const Param *p, const Backend *b, Status *st) {
    size_t n = shape_numel(&p->shape);
    float *host = malloc(n * sizeof *host);
    if (!host) return status_fail(st, STATUS_RUNTIME_ERROR, "out of host memory");
    int rc = b->copy_to_host(b, host, p->value.data, n * sizeof *host, st);
    uint32_t name_length = (uint32_t)strlen(p->name);
    int io = rc ? 0 : write_u32(f, name_length) || fwrite(p->name, 1, name_length, f) != name_length ||
                          write_u32(f, (uint32_t)p->shape.rank);
    for (int d = 0; !rc && !io && d < p->shape.rank; d++) io = write_u32(f, (uint32_t)p->shape.dims[d]);
    if (!rc && !io) io = fwrite(host, sizeof *host, n, f) != n;
    free(host);
    if (!rc && io) rc = STATUS_RUNTIME_ERROR;
    return rc;
}

int weights_save(const Graph *g, const Backend *b, const char *path, Status *st) {
    char tmp[1024];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = fopen(tmp, "wb");
    if (!f) {
        status_fail_at(st, STATUS_RUNTIME_ERROR, path, 0, 0, "cannot write weights: %s",
                       strerror(errno));
        status_hint(st, "check that the folder exists and is writable");
        return STATUS_RUNTIME_ERROR;
    }
    uint32_t count = 0;
    for (int i = 0; i < g->count; i++) count += (uint32_t)g->layers[i]->param_count;
    int rc = fwrite(weights_magic, 1, 8, f) != 8 || write_u32(f, WEIGHTS_VERSION) ||
             write_u32(f, count) ? STATUS_RUNTIME_ERROR : 0;
    for (int i = 0; !rc && i < g->count; i++)
        for (int k = 0; !rc && k < g->layers[i]->param_count; k++)
            rc = write_param(f, &g->layers[i]->params[k], b, st);
    int closed = fclose(f);
    if (rc || closed) {
        int saved_errno = errno;
        remove(tmp);
        if (rc == STATUS_RUNTIME_ERROR || closed)
            status_fail_at(st, STATUS_RUNTIME_ERROR, path, 0, 0, "writing weights failed: %s",
                           strerror(saved_errno));
        status_hint(st, "check free disk space");
        return STATUS_RUNTIME_ERROR;
    }
    if (rename(tmp, path)) {
        status_fail_at(st, STATUS_RUNTIME_ERROR, path, 0, 0, "cannot replace weights file: %s",
                       strerror(errno));
        status_hint(st, "the new weights are in %s; check permissions on the folder", tmp);
        return STATUS_RUNTIME_ERROR;
    }
    return 0;
}

static int read_u32(FILE *f, uint32_t *v) { return fread(v, sizeof *v, 1, f) == 1 ? 0 : -1; }

static int bad_weights(const char *path, Status *st, const char *what) {
    status_fail_at(st, STATUS_BAD_INPUT, path, 0, 0, "not a usable weights file: %s", what);
    status_hint(st, "pass a file written by `trainer train --save` for this same model");
    return STATUS_BAD_INPUT;
}

static int read_param(FILE *f, Param *p, const Backend *b, const char *path, Status *st) {
    uint32_t name_length, rank;
    char name[sizeof p->name];
    if (read_u32(f, &name_length) || name_length >= sizeof name ||
        fread(name, 1, name_length, f) != name_length)
        return bad_weights(path, st, "truncated parameter name");
    name[name_length] = '\0';
    if (strcmp(name, p->name) != 0) {
        status_fail_at(st, STATUS_BAD_INPUT, path, 0, 0,
                       "weights file has parameter '%s' where the model has '%s'", name, p->name);
        status_hint(st, "the weights were saved from a different model file");
        return STATUS_BAD_INPUT;
    }
    if (read_u32(f, &rank) || rank > SHAPE_MAX_RANK)
        return bad_weights(path, st, "bad parameter rank");
    Shape stored = {.rank = (int)rank};
    for (uint32_t d = 0; d < rank; d++) {
        uint32_t dim;
        if (read_u32(f, &dim) || dim > (1u << 24)) return bad_weights(path, st, "truncated shape");
        stored.dims[d] = (int)dim;
    }
    if (!shape_equal(&stored, &p->shape)) {
        char in_file[64], in_model[64];
        status_fail_at(st, STATUS_BAD_INPUT, path, 0, 0,
                       "parameter '%s' is %s in the weights file but %s in the model", p->name,
                       shape_format(&stored, in_file, sizeof in_file),
                       shape_format(&p->shape, in_model, sizeof in_model));
        status_hint(st, "the weights were saved from a different model file");
        return STATUS_BAD_INPUT;
    }
    size_t n = shape_numel(&p->shape);
    float *host = malloc(n * sizeof *host);
    if (!host) return status_fail(st, STATUS_RUNTIME_ERROR, "out of host memory");
    int rc = fread(host, sizeof *host, n, f) == n ? 0 : bad_weights(path, st, "truncated values");
    if (!rc) rc = b->copy_to_device(b, p->value.data, host, n * sizeof *host, st);
    free(host);
    return rc;
}

int weights_load(Graph *g, const Backend *b, const char *path, Status *st) {
    FILE *f = fopen(path, "rb");
    if (!f) {
        status_fail_at(st, STATUS_BAD_INPUT, path, 0, 0, "cannot open weights: %s", strerror(errno));
        status_hint(st, "train first with `trainer train MODEL --save %s`", path);
        return STATUS_BAD_INPUT;
    }
    char magic[8];
    uint32_t version, count, expected = 0;
    for (int i = 0; i < g->count; i++) expected += (uint32_t)g->layers[i]->param_count;
    int rc = 0;
    if (fread(magic, 1, 8, f) != 8 || memcmp(magic, weights_magic, 8) != 0)
        rc = bad_weights(path, st, "wrong magic bytes");
    else if (read_u32(f, &version) || version != WEIGHTS_VERSION)
        rc = bad_weights(path, st, "unsupported version");
    else if (read_u32(f, &count) || count != expected) {
        status_fail_at(st, STATUS_BAD_INPUT, path, 0, 0,
                       "weights file holds %u parameter tensors, the model has %u", count,
                       expected);
        status_hint(st, "the weights were saved from a different model file");
        rc = STATUS_BAD_INPUT;
    }
    for (int i = 0; !rc && i < g->count; i++)
        for (int k = 0; !rc && k < g->layers[i]->param_count; k++)
            rc = read_param(f, &g->layers[i]->params[k], b, path, st);
    if (!rc && fgetc(f) != EOF) rc = bad_weights(path, st, "trailing bytes after the last parameter");
    fclose(f);
    return rc;
}

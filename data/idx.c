// IDX readers: the MNIST / Fashion-MNIST file format.
//
// An IDX file is a big-endian header, magic 0x0000TTNN (TT the element type, 0x08 for
// unsigned bytes; NN the number of dimensions), then one u32 per dimension, then the
// elements. We read through zlib's gzread because it reads .gz and plain files alike,
// so the caller never has to know which one it has.
//
// Every check below exists because the file is user input: a cut-short download, a
// label file passed where images belong, or plain garbage must become a message that
// says what was expected and what was found, never a crash or a huge allocation.
#define _POSIX_C_SOURCE 200809L

#include "data/dataset.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#define IDX_MAGIC_IMAGES 0x00000803u  // unsigned byte, 3 dimensions (count, rows, cols)
#define IDX_MAGIC_LABELS 0x00000801u  // unsigned byte, 1 dimension (count)
#define IDX_MAX_COUNT 10000000u
#define IDX_MAX_SIDE 4096u
// What a header may claim before a byte of payload is read. A gzip bomb (a 1 MB .gz of
// zeros whose header claims 64x4096x4096 images) must be refused from the header, not
// after inflating a gigabyte: no payload above 4 GiB at all, and above 64 MiB no more than
// 100 times the compressed size. Real IDX files compress 2x (Fashion-MNIST) to 5x (MNIST);
// tiny synthetic ones of constant pixels reach 1000x, so small claims are let through.
#define IDX_MAX_PAYLOAD ((uint64_t)4 << 30)
#define IDX_RATIO_FREE_PAYLOAD ((uint64_t)64 << 20)
#define IDX_MAX_INFLATION 100u

static const char *HINT_REDOWNLOAD =
    "the download or copy was cut short; re-install or re-download the dataset";
static const char *HINT_CORRUPT = "the file is damaged; re-install or re-download the dataset";

// What the reader is looking for, so one set of functions serves both file kinds.
typedef struct IdxKind {
    uint32_t magic;
    int ndims;
    const char *what;       // "image", "label": used in messages
} IdxKind;

static const IdxKind IDX_IMAGES = {IDX_MAGIC_IMAGES, 3, "image"};
static const IdxKind IDX_LABELS = {IDX_MAGIC_LABELS, 1, "label"};

static uint32_t read_be32(const uint8_t *p) {
    return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3];
}

// gzopen reports a missing file only through errno and opens a directory or a FIFO as
// well (a FIFO then blocks the first read forever), so the path must be a regular file
// before it is opened, and is opened without blocking in case it changes in between.
static int refuse_irregular(const char *path, const struct stat *sb, Status *st) {
    const char *kind = S_ISDIR(sb->st_mode)    ? "a directory"
                       : S_ISFIFO(sb->st_mode) ? "a FIFO (named pipe)"
                       : S_ISCHR(sb->st_mode)  ? "a character device"
                       : S_ISBLK(sb->st_mode)  ? "a block device"
                       : S_ISSOCK(sb->st_mode) ? "a socket"
                                               : "not a regular file";
    status_fail_at(st, STATUS_BAD_INPUT, path, 0, 0,
                   "cannot read: is %s, expected an IDX file", kind);
    status_hint(st, S_ISDIR(sb->st_mode) ? "pass the IDX file itself, not its folder"
                                         : "copy the data into a regular file and pass that");
    return STATUS_BAD_INPUT;
}

static int fail_open(const char *path, int err, Status *st) {
    status_fail_at(st, STATUS_BAD_INPUT, path, 0, 0, "cannot open: %s", strerror(err));
    status_hint(st, err == ENOENT ? "check the path; the dataset may not be installed"
                                  : "check the file's permissions");
    return STATUS_BAD_INPUT;
}

// Opens PATH for gzread; *file_bytes is its size on disk, to bound what it may inflate to.
static int open_idx(const char *path, gzFile *out, uint64_t *file_bytes, Status *st) {
    struct stat sb;
    *out = NULL;
    if (stat(path, &sb) != 0) return fail_open(path, errno, st);
    if (!S_ISREG(sb.st_mode)) return refuse_irregular(path, &sb, st);
    int fd = open(path, O_RDONLY | O_NONBLOCK);
    if (fd < 0) return fail_open(path, errno, st);
    if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
        close(fd);
        return refuse_irregular(path, &sb, st);
    }
    *file_bytes = (uint64_t)sb.st_size;
    errno = 0;
    gzFile gz = gzdopen(fd, "rb");
    if (!gz) {
        close(fd);
        status_fail_at(st, STATUS_BAD_INPUT, path, 0, 0,
                       "cannot open: zlib could not allocate its state");
        status_hint(st, "free some memory and run again");
        return STATUS_BAD_INPUT;
    }
    // A bigger buffer than zlib's 8 KB default: the training images are 26 MB compressed.
    gzbuffer(gz, 128 * 1024);
    *out = gz;
    return 0;
}

// zlib's message for the last error, without the "PATH: " it puts in front (the
// Status already names the file).
static const char *zlib_message(gzFile gz, const char *path, int *zerr) {
    const char *msg = gzerror(gz, zerr);
    if (!msg || !msg[0]) return "unknown error";
    // The file is opened by descriptor, so zlib names it "<fd:N>"; older paths named it.
    const char *name_end = strstr(msg, ": ");
    size_t n = strlen(path);
    if (strncmp(msg, path, n) == 0 && msg[n] == ':' && msg[n + 1] == ' ') msg += n + 2;
    else if (strncmp(msg, "<fd:", 4) == 0 && name_end) msg = name_end + 2;
    return msg;
}

// Read up to n bytes, looping because gzread takes an unsigned int length. *got is how
// many arrived; fewer than n without an error means the file ended.
static int read_bytes(gzFile gz, const char *path, uint8_t *buf, size_t n, size_t *got,
                      Status *st) {
    *got = 0;
    while (*got < n) {
        size_t want = n - *got;
        if (want > (1u << 30)) want = 1u << 30;
        int r = gzread(gz, buf + *got, (unsigned)want);
        if (r < 0) {
            int zerr = Z_OK;
            const char *zmsg = zlib_message(gz, path, &zerr);
            status_fail_at(st, STATUS_BAD_INPUT, path, 0, 0,
                           "corrupted gzip stream: zlib says '%s' after %lld bytes of data",
                           zmsg, (long long)gztell(gz));
            status_hint(st, "%s", HINT_CORRUPT);
            return STATUS_BAD_INPUT;
        }
        if (r == 0) {
            // zlib reports a gzip stream that stops mid-way not as a read error but as
            // an early end of file with Z_BUF_ERROR left behind; say so, since "the
            // download was cut" is then certain.
            int zerr = Z_OK;
            const char *zmsg = zlib_message(gz, path, &zerr);
            if (zerr == Z_BUF_ERROR) {
                status_fail_at(st, STATUS_BAD_INPUT, path, 0, 0,
                               "truncated gzip stream: zlib says '%s' after %lld bytes of "
                               "data",
                               zmsg, (long long)gztell(gz));
                status_hint(st, "%s", HINT_REDOWNLOAD);
                return STATUS_BAD_INPUT;
            }
            break;
        }
        *got += (size_t)r;
    }
    return 0;
}

// Why a magic number is wrong, in terms of what the person probably did.
static void describe_magic(uint32_t magic, const IdxKind *kind, char *hint, size_t size) {
    if (kind->magic == IDX_MAGIC_IMAGES && magic == IDX_MAGIC_LABELS)
        snprintf(hint, size, "this looks like a label file; check the file name");
    else if (kind->magic == IDX_MAGIC_LABELS && magic == IDX_MAGIC_IMAGES)
        snprintf(hint, size, "this looks like an image file; check the file name");
    else if (magic == ((kind->magic >> 24) | ((kind->magic >> 8) & 0xFF00u) |
                       ((kind->magic << 8) & 0xFF0000u) | (kind->magic << 24)))
        snprintf(hint, size, "the header is little-endian; IDX files are big-endian");
    else if ((magic >> 16) != 0)
        snprintf(hint, size, "IDX files start with two zero bytes; this is not an IDX file");
    else if (((magic >> 8) & 0xFFu) != 0x08u)
        snprintf(hint, size,
                 "element type 0x%02x is not unsigned byte (0x08), the only type supported",
                 (unsigned)((magic >> 8) & 0xFFu));
    else
        snprintf(hint, size, "an IDX %s file has %d dimension%s, this one has %u",
                 kind->what, kind->ndims, kind->ndims == 1 ? "" : "s", (unsigned)(magic & 0xFFu));
}

// Reads and checks the header; dims[] receives kind->ndims values, each nonzero and
// within the limits, so the caller's size arithmetic cannot overflow.
static int read_header(gzFile gz, const char *path, const IdxKind *kind, uint32_t *dims,
                       Status *st) {
    uint8_t header[16];
    size_t header_bytes = 4 + 4 * (size_t)kind->ndims;
    size_t got = 0;
    TRY(read_bytes(gz, path, header, header_bytes, &got, st));
    if (got < 4) {
        status_fail_at(st, STATUS_BAD_INPUT, path, 0, 0,
                       "truncated header: an IDX %s file starts with a %zu-byte header but "
                       "the file holds only %zu byte%s",
                       kind->what, header_bytes, got, got == 1 ? "" : "s");
        status_hint(st, "%s", got == 0 ? "the file is empty; re-install or re-download the dataset"
                                       : HINT_REDOWNLOAD);
        return STATUS_BAD_INPUT;
    }
    uint32_t magic = read_be32(header);
    if (magic != kind->magic) {
        char hint[256];
        describe_magic(magic, kind, hint, sizeof hint);
        status_fail_at(st, STATUS_BAD_INPUT, path, 0, 0,
                       "not an IDX %s file: magic 0x%08x, expected 0x%08x", kind->what,
                       (unsigned)magic, (unsigned)kind->magic);
        status_hint(st, "%s", hint);
        return STATUS_BAD_INPUT;
    }
    if (got < header_bytes) {
        status_fail_at(st, STATUS_BAD_INPUT, path, 0, 0,
                       "truncated header: an IDX %s file starts with a %zu-byte header but "
                       "the file holds only %zu bytes",
                       kind->what, header_bytes, got);
        status_hint(st, "%s", HINT_REDOWNLOAD);
        return STATUS_BAD_INPUT;
    }
    for (int d = 0; d < kind->ndims; d++) dims[d] = read_be32(header + 4 + 4 * d);

    if (dims[0] == 0 || dims[0] > IDX_MAX_COUNT) {
        status_fail_at(st, STATUS_BAD_INPUT, path, 0, 0,
                       "bad header: %s count %u is %s (expected 1 to %u)", kind->what,
                       (unsigned)dims[0], dims[0] == 0 ? "zero" : "implausibly large",
                       (unsigned)IDX_MAX_COUNT);
        status_hint(st, "%s", HINT_CORRUPT);
        return STATUS_BAD_INPUT;
    }
    if (kind->ndims == 3 && (dims[1] == 0 || dims[2] == 0 || dims[1] > IDX_MAX_SIDE ||
                             dims[2] > IDX_MAX_SIDE)) {
        status_fail_at(st, STATUS_BAD_INPUT, path, 0, 0,
                       "bad header: images of %u rows by %u columns (each must be 1 to %u)",
                       (unsigned)dims[1], (unsigned)dims[2], (unsigned)IDX_MAX_SIDE);
        status_hint(st, "%s", HINT_CORRUPT);
        return STATUS_BAD_INPUT;
    }
    return 0;
}

static int fail_out_of_memory(Status *st, const char *path, size_t bytes) {
    status_out_of_host_memory(st, bytes, "for the data");
    status_set_place_if_unset(st, path, 0, 0);
    return STATUS_RUNTIME_ERROR;
}

// Reads exactly `expected` payload bytes into a fresh buffer. The buffer grows as data
// arrives instead of being sized from the header up front: a damaged header may claim
// terabytes, and the truth is only known once the file runs out.
static int read_payload(gzFile gz, const char *path, size_t expected, uint8_t **out,
                        size_t *got_total, Status *st) {
    size_t capacity = expected < (1u << 20) ? expected : (1u << 20);
    uint8_t *buf = malloc(capacity);
    *out = NULL;
    *got_total = 0;
    if (!buf) return fail_out_of_memory(st, path, capacity);
    size_t have = 0;
    for (;;) {
        size_t got = 0;
        int rc = read_bytes(gz, path, buf + have, capacity - have, &got, st);
        have += got;
        if (rc) {
            free(buf);
            return rc;
        }
        if (have < capacity || capacity == expected) break;  // file ended, or all read
        size_t next = capacity > expected / 2 ? expected : capacity * 2;
        uint8_t *grown = realloc(buf, next);
        if (!grown) {
            free(buf);
            return fail_out_of_memory(st, path, next);
        }
        buf = grown;
        capacity = next;
    }
    *out = buf;
    *got_total = have;
    return 0;
}

// Counts what is left in the file after the payload, up to IDX_TRAILING_COUNTED: a
// nonzero count means the header and the data disagree, which is as much a sign of a wrong
// file as a short one, and a .gz whose payload is followed by a gigabyte of zeros must not
// be inflated to the end just to count them.
#define IDX_TRAILING_COUNTED ((size_t)1 << 20)
static int count_trailing(gzFile gz, const char *path, size_t *extra, Status *st) {
    uint8_t scratch[4096];
    *extra = 0;
    while (*extra <= IDX_TRAILING_COUNTED) {
        size_t got = 0;
        TRY(read_bytes(gz, path, scratch, sizeof scratch, &got, st));
        *extra += got;
        if (got < sizeof scratch) return 0;
    }
    return 0;
}

// "60000 images of 28x28" or "60000 labels": the header's claim, for messages.
static void describe_claim(const IdxKind *kind, const uint32_t *dims, char *buf, size_t size) {
    if (kind->ndims == 3)
        snprintf(buf, size, "%u images of %ux%u", (unsigned)dims[0], (unsigned)dims[1],
                 (unsigned)dims[2]);
    else
        snprintf(buf, size, "%u labels", (unsigned)dims[0]);
}

// The header's claim against what a file of this size can hold (see IDX_MAX_PAYLOAD).
static int check_claim(gzFile gz, const char *path, const IdxKind *kind, const uint32_t *dims,
                       uint64_t file_bytes, Status *st) {
    uint64_t claim = 1;
    for (int d = 0; d < kind->ndims; d++) claim *= dims[d];  // < 2^48 by the header limits
    int compressed = !gzdirect(gz);
    uint64_t limit = IDX_MAX_PAYLOAD;
    if (compressed && claim > IDX_RATIO_FREE_PAYLOAD && file_bytes * IDX_MAX_INFLATION < limit)
        limit = file_bytes * IDX_MAX_INFLATION;
    uint64_t header = 4 + 4 * (uint64_t)kind->ndims;
    char claim_text[96];
    describe_claim(kind, dims, claim_text, sizeof claim_text);
    if (!compressed && claim > file_bytes - header) {
        // A plain file's size is the truth: no need to read it to know it is short.
        status_fail_at(st, STATUS_BAD_INPUT, path, 0, 0,
                       "truncated: header says %s (%llu bytes) but the file holds %llu bytes "
                       "after its %d-byte header", claim_text, (unsigned long long)claim,
                       (unsigned long long)(file_bytes - header), (int)header);
        status_hint(st, "%s", HINT_REDOWNLOAD);
        return STATUS_BAD_INPUT;
    }
    if (claim <= limit) return 0;
    if (compressed && limit < IDX_MAX_PAYLOAD)
        status_fail_at(st, STATUS_BAD_INPUT, path, 0, 0,
                       "implausible header: it claims %s (%llu bytes), more than %u times the "
                       "%llu compressed bytes of the file; refused before inflating it",
                       claim_text, (unsigned long long)claim, IDX_MAX_INFLATION,
                       (unsigned long long)file_bytes);
    else
        status_fail_at(st, STATUS_BAD_INPUT, path, 0, 0,
                       "implausible header: it claims %s (%llu bytes), more than the %llu "
                       "bytes an IDX file may hold",
                       claim_text, (unsigned long long)claim,
                       (unsigned long long)IDX_MAX_PAYLOAD);
    status_hint(st, "%s", HINT_CORRUPT);
    return STATUS_BAD_INPUT;
}

static int read_idx(const char *path, const IdxKind *kind, uint8_t **data, uint32_t *dims,
                    Status *st) {
    *data = NULL;
    gzFile gz = NULL;
    uint64_t file_bytes = 0;
    TRY(open_idx(path, &gz, &file_bytes, st));

    int rc = read_header(gz, path, kind, dims, st);
    if (!rc) rc = check_claim(gz, path, kind, dims, file_bytes, st);
    if (rc) {
        gzclose(gz);
        return rc;
    }
    // The header limits keep this below 2^48, but size_t may be 32 bits wide.
    size_t expected = dims[0];
    for (int d = 1; d < kind->ndims; d++) {
        if (expected > SIZE_MAX / dims[d]) {
            gzclose(gz);
            status_fail_at(st, STATUS_BAD_INPUT, path, 0, 0,
                           "bad header: the %s payload is too large to address", kind->what);
            status_hint(st, "%s", HINT_CORRUPT);
            return STATUS_BAD_INPUT;
        }
        expected *= dims[d];
    }

    uint8_t *buf = NULL;
    size_t got = 0;
    rc = read_payload(gz, path, expected, &buf, &got, st);
    if (rc) {
        gzclose(gz);
        return rc;
    }
    char claim[96];
    describe_claim(kind, dims, claim, sizeof claim);
    if (got < expected) {
        free(buf);
        gzclose(gz);
        status_fail_at(st, STATUS_BAD_INPUT, path, 0, 0,
                       "truncated: header says %s (%zu bytes) but the file holds %zu bytes "
                       "after its %d-byte header",
                       claim, expected, got, 4 + 4 * kind->ndims);
        status_hint(st, "%s", HINT_REDOWNLOAD);
        return STATUS_BAD_INPUT;
    }
    size_t extra = 0;
    rc = count_trailing(gz, path, &extra, st);
    gzclose(gz);
    if (rc) {
        free(buf);
        return rc;
    }
    if (extra) {
        free(buf);
        status_fail_at(st, STATUS_BAD_INPUT, path, 0, 0,
                       "trailing data: header says %s (%zu bytes) but the file holds %s%zu "
                       "more byte%s after them",
                       claim, expected, extra > IDX_TRAILING_COUNTED ? "over " : "",
                       extra > IDX_TRAILING_COUNTED ? IDX_TRAILING_COUNTED : extra,
                       extra == 1 ? "" : "s");
        status_hint(st, "the header and the data disagree, so this is not the file it claims "
                        "to be; re-install or re-download the dataset");
        return STATUS_BAD_INPUT;
    }
    *data = buf;
    return 0;
}

int idx_read_images(const char *path, uint8_t **pixels, int *count, int *rows, int *cols,
                    Status *st) {
    uint32_t dims[3] = {0, 0, 0};
    *pixels = NULL;
    *count = *rows = *cols = 0;
    TRY(read_idx(path, &IDX_IMAGES, pixels, dims, st));
    // The header limits keep each of these far below INT_MAX.
    *count = (int)dims[0];
    *rows = (int)dims[1];
    *cols = (int)dims[2];
    return 0;
}

int idx_read_labels(const char *path, uint8_t **labels, int *count, Status *st) {
    uint32_t dims[1] = {0};
    *labels = NULL;
    *count = 0;
    TRY(read_idx(path, &IDX_LABELS, labels, dims, st));
    *count = (int)dims[0];
    return 0;
}

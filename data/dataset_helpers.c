// What the dataset readers (data/dataset_*.c) share: naming a dataset's source, checking a
// folder or a file before reading it, the largest label. Apart from data/dataset.c, which
// picks a reader by the spec, so that the readers never call back into it.
#define _POSIX_C_SOURCE 200809L

#include "data/dataset.h"
#include "base/escape.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

void dataset_set_source(Dataset *ds, const char *where) {
    size_t n = strlen(where);
    if (n >= sizeof ds->source) n = sizeof ds->source - 1;  // only ever shown in messages
    memcpy(ds->source, where, n);
    ds->source[n] = '\0';
}

int dataset_largest_label(const uint8_t *labels, int count) {
    int max = 0;
    for (int i = 0; i < count; i++)
        if (labels[i] > max) max = labels[i];
    return max;
}

int dataset_option_after_path(const char *path, int directory, char *before, size_t size,
                              char *option, size_t option_size) {
    struct stat sb;
    const char *comma = strrchr(path, ',');
    const char *equals = comma ? strchr(comma, '=') : NULL;
    if (!equals || strchr(comma, '/') || stat(path, &sb) == 0) return 0;
    if ((size_t)snprintf(before, size, "%.*s", (int)(comma - path), path) >= size) return 0;
    if (stat(before, &sb) != 0 || (directory ? !S_ISDIR(sb.st_mode) : !S_ISREG(sb.st_mode)))
        return 0;
    text_escape(comma + 1, strlen(comma + 1), option, option_size);
    return 1;
}

// "png:DIR,channels=3": said as the option it is, not as a missing folder.
static int refuse_folder_option(const char *dir, const char *spec_kind, Status *st) {
    char folder[4096], option[300];
    if (!dataset_option_after_path(dir, 1, folder, sizeof folder, option, sizeof option))
        return 0;
    status_fail_at(st, STATUS_BAD_INPUT, folder, 0, 0, "unknown option '%s' after the folder "
                   "name: %s:DIR takes none", option, spec_kind);
    if (strcmp(spec_kind, "png") == 0 || strcmp(spec_kind, "images") == 0)
        status_hint(st, "options go on the command line: --channels 3 reads the images in "
                        "colour, --on-bad-sample skip leaves unreadable ones out");
    else
        status_hint(st, "write %s:DIR alone (docs/data.md)", spec_kind);
    return STATUS_BAD_INPUT;
}

int dataset_check_folder(const char *dir, const char *spec_kind, const char *hint, Status *st) {
    struct stat sb;
    if (!dir[0]) {
        status_fail(st, STATUS_BAD_INPUT, "dataset '%s:' names no folder", spec_kind);
        status_hint(st, "write %s:DIR", spec_kind);
        return STATUS_BAD_INPUT;
    }
    if (stat(dir, &sb) != 0 && refuse_folder_option(dir, spec_kind, st)) {
        return STATUS_BAD_INPUT;
    } else if (stat(dir, &sb) != 0) {
        status_fail_at(st, STATUS_BAD_INPUT, dir, 0, 0, "cannot open the dataset folder: %s",
                       strerror(errno));
    } else if (!S_ISDIR(sb.st_mode)) {
        status_fail_at(st, STATUS_BAD_INPUT, dir, 0, 0, "%s: expects a folder, but this is not "
                       "one", spec_kind);
    } else {
        return 0;
    }
    status_hint(st, "%s", hint);
    return STATUS_BAD_INPUT;
}

static int fail_not_regular(const char *path, const struct stat *sb, const char *what,
                            Status *st) {
    status_fail_at(st, STATUS_BAD_INPUT, path, 0, 0, "cannot read: %s, expected %s",
                   S_ISDIR(sb->st_mode)    ? "is a directory"
                   : S_ISFIFO(sb->st_mode) ? "is a FIFO (named pipe)"
                                           : "not a regular file",
                   what);
    status_hint(st, "pass a regular file (a FIFO or a device could block or never end)");
    return STATUS_BAD_INPUT;
}

int dataset_open_regular(const char *path, const char *what, FILE **out, long long *bytes,
                         Status *st) {
    struct stat sb;
    *out = NULL;
    int fd = -1;
    if (stat(path, &sb) == 0 && !S_ISREG(sb.st_mode)) return fail_not_regular(path, &sb, what, st);
    // Not blocking, in case the path became a FIFO since the stat; checked again below.
    if (stat(path, &sb) == 0) fd = open(path, O_RDONLY | O_NONBLOCK);
    if (fd < 0) {
        int err = errno;
        status_fail_at(st, STATUS_BAD_INPUT, path, 0, 0, "cannot open: %s", strerror(err));
        status_hint(st, err == ENOENT ? "check the path" : "check the file's permissions");
        return STATUS_BAD_INPUT;
    }
    if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
        close(fd);
        return fail_not_regular(path, &sb, what, st);
    }
    *out = fdopen(fd, "rb");
    if (!*out) {
        close(fd);
        return status_fail_at(st, STATUS_RUNTIME_ERROR, path, 0, 0, "cannot open: %s",
                              strerror(errno));
    }
    *bytes = (long long)sb.st_size;
    return 0;
}

size_t dataset_image_folder(const char *spec) {
    if (spec && strncmp(spec, "images:", 7) == 0) return 7;
    if (spec && strncmp(spec, "png:", 4) == 0) return 4;
    return 0;
}

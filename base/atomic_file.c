#define _XOPEN_SOURCE 700  // fileno, fsync, dirent, lstat, realpath
#include "base/atomic_file.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/escape.h"

int files_are_same(const char *a, const char *b) {
    struct stat first, second;
    return stat(a, &first) == 0 && stat(b, &second) == 0 && first.st_dev == second.st_dev &&
           first.st_ino == second.st_ino;
}

const char *file_kind_name(mode_t mode) {
    if (S_ISDIR(mode)) return "a directory";
    if (S_ISFIFO(mode)) return "a FIFO (named pipe)";
    if (S_ISCHR(mode)) return "a character device";
    if (S_ISBLK(mode)) return "a block device";
    if (S_ISSOCK(mode)) return "a socket";
    return "not a regular file";
}

// rename() would put a regular file in place of a device or a FIFO (as root, /dev/full
// became one), so only a regular file, or nothing, is ever replaced.
static int refuse_unless_regular(const char *path, Status *st) {
    struct stat info;
    if (stat(path, &info) != 0 || S_ISREG(info.st_mode)) return 0;
    status_fail_at(st, STATUS_BAD_INPUT, path, 0, 0, "the path is %s, not a regular file, "
                   "and trainer does not replace it", file_kind_name(info.st_mode));
    if (S_ISDIR(info.st_mode))
        status_hint(st, "name a file, e.g. %.900s/weights.safetensors", path);
    else
        status_hint(st, "name a regular file, or a new one, in a folder you can write to");
    return STATUS_BAD_INPUT;
}

// Where a write to `path` lands: `path` itself, or the file a symbolic link there points
// to. Renaming over the link would replace it with a regular file and leave its target
// stale, where `cp` and torch.save write through the link; so the target is what gets
// replaced, by a temporary file beside it. A link to nothing is refused: where the user
// meant the file to go is a guess.
static int resolve_link(const char *path, char *target, size_t size, Status *st) {
    struct stat info;
    if (lstat(path, &info) != 0 || !S_ISLNK(info.st_mode)) {
        if (strlen(path) < size) {
            snprintf(target, size, "%s", path);
            return 0;
        }
        // Cut short, the name would be another file's.
        status_fail(st, STATUS_BAD_INPUT, "path too long (%zu bytes, at most %zu): %.80s...",
                    strlen(path), size - 1, path);
        status_hint(st, "name a file with a shorter path");
        return STATUS_BAD_INPUT;
    }
    char resolved[PATH_MAX];
    int resolved_ok = realpath(path, resolved) != NULL;
    int error = resolved_ok ? ENAMETOOLONG : errno;
    if (resolved_ok && strlen(resolved) < size) {
        snprintf(target, size, "%s", resolved);
        return 0;
    }
    char points_to[PATH_MAX] = "", shown[400];
    ssize_t n = readlink(path, points_to, sizeof points_to - 1);
    if (n > 0) points_to[n] = '\0';
    text_escape(points_to, strlen(points_to), shown, sizeof shown);
    status_fail_at(st, STATUS_BAD_INPUT, path, 0, 0, "the path is a symbolic link to %s, %s%s",
                   shown, error == ENOENT ? "which does not exist" : "which cannot be followed: ",
                   error == ENOENT ? "" : strerror(error));
    if (error == ENOENT)
        status_hint(st, "create the file it points to first (e.g. touch it), replace the link, "
                        "or name another file");
    else
        status_hint(st, "fix or remove the link, or name another file");
    return STATUS_BAD_INPUT;
}

// The folder holding `path` ("." for a bare name).
static void folder_of(const char *path, char *folder, size_t size) {
    snprintf(folder, size, "%s", path);
    char *slash = strrchr(folder, '/');
    if (!slash) snprintf(folder, size, ".");
    else if (slash == folder) folder[1] = '\0';
    else *slash = '\0';
}

int atomic_file_folder(const char *given, char *folder, size_t size, Status *st) {
    char path[1024];
    TRY(resolve_link(given, path, sizeof path, st));
    folder_of(path, folder, size);
    return 0;
}

int atomic_file_check_target(const char *given, Status *st) {
    char path[1024];
    TRY(resolve_link(given, path, sizeof path, st));
    TRY(refuse_unless_regular(path, st));
    char folder[1024];
    folder_of(path, folder, sizeof folder);
    struct stat info;
    int found = stat(folder, &info) == 0;
    if (!found || !S_ISDIR(info.st_mode)) {
        const char *why = found ? "is not a folder"
                          : errno == ENOENT ? "does not exist" : strerror(errno);
        status_fail_at(st, STATUS_BAD_INPUT, path, 0, 0, "the folder %s %s%s", folder,
                       found || errno == ENOENT ? "" : "cannot be reached: ", why);
        status_hint(st, "create the folder first (mkdir -p %.900s), or name a file in an "
                    "existing one", folder);
        return STATUS_BAD_INPUT;
    }
    // Creating the very temporary file atomic_file_open will write is the one test that
    // also holds for root, read-only mounts and ACLs. Created new, so that the check itself
    // removes nothing it did not make. One already there (a crash's leftover) is what the
    // writer will empty and replace: it must be a regular file it can write.
    char probe[1040];
    snprintf(probe, sizeof probe, "%s.tmp", path);
    int fd = open(probe, O_WRONLY | O_CREAT | O_EXCL, 0644);
    if (fd >= 0) {
        close(fd);
        remove(probe);
        return 0;
    }
    int error = errno;
    if (error == EEXIST) {
        struct stat left;
        if (lstat(probe, &left) == 0 && S_ISREG(left.st_mode) && access(probe, W_OK) == 0)
            return 0;
        int known = lstat(probe, &left) == 0;
        status_fail_at(st, STATUS_BAD_INPUT, path, 0, 0, "the writer's temporary file %s is "
                       "in the way: it is %s", probe,
                       !known ? "gone or unreadable" : S_ISREG(left.st_mode)
                                   ? "a file this process cannot write"
                                   : file_kind_name(left.st_mode));
        status_hint(st, "remove %.900s, or name another --save file", probe);
        return STATUS_BAD_INPUT;
    }
    status_fail_at(st, STATUS_BAD_INPUT, path, 0, 0, "the folder %s is not writable: %s",
                   folder, strerror(error));
    status_hint(st, "name a file in a folder you can write to");
    return STATUS_BAD_INPUT;
}

int atomic_file_open(AtomicFile *f, const char *path, Status *st) {
    memset(f, 0, sizeof f[0]);
    if (strlen(path) >= sizeof f->path) {
        status_fail(st, STATUS_BAD_INPUT, "path too long (%zu bytes): %.80s...", strlen(path),
                    path);
        return STATUS_BAD_INPUT;
    }
    TRY(resolve_link(path, f->path, sizeof f->path, st));
    TRY(refuse_unless_regular(f->path, st));
    snprintf(f->temporary, sizeof f->temporary, "%s.tmp", f->path);
    f->file = fopen(f->temporary, "wb");
    if (f->file) return 0;
    status_fail_at(st, STATUS_RUNTIME_ERROR, path, 0, 0, "cannot write %s: %s", f->temporary,
                   strerror(errno));
    status_hint(st, "check that the folder exists and is writable");
    return STATUS_RUNTIME_ERROR;
}

void atomic_file_abandon(AtomicFile *f) {
    if (f->file) fclose(f->file);
    f->file = NULL;
    remove(f->temporary);
}

// Opened to fsync its entries.
static int fsync_folder_of(const char *path) {
    char folder[1024];
    folder_of(path, folder, sizeof folder);
    int fd = open(folder, O_RDONLY | O_DIRECTORY);
    if (fd < 0) return -1;
    int rc = fsync(fd);
    close(fd);
    return rc;
}

static int write_failed(AtomicFile *f, const char *what, Status *st) {
    int saved_errno = errno;
    atomic_file_abandon(f);
    status_fail_at(st, STATUS_RUNTIME_ERROR, f->path, 0, 0, "%s failed: %s", what,
                   strerror(saved_errno));
    status_hint(st, "check free disk space and permissions on the folder");
    return STATUS_RUNTIME_ERROR;
}

int atomic_file_commit(AtomicFile *f, Status *st) {
    if (fflush(f->file) != 0) return write_failed(f, "writing", st);
    // Without the fsync a power cut after the rename can leave the new name on an empty file.
    if (fsync(fileno(f->file)) != 0) return write_failed(f, "fsync", st);
    int closed = fclose(f->file);
    f->file = NULL;
    if (closed != 0) return write_failed(f, "closing", st);
    // Checked again here: the target may have changed while the file was written.
    if (refuse_unless_regular(f->path, st)) {
        atomic_file_abandon(f);
        return st->code;
    }
    if (rename(f->temporary, f->path) != 0) return write_failed(f, "renaming into place", st);
    // The rename is only durable once the folder's entry is on disk too.
    if (fsync_folder_of(f->path) != 0) {
        status_fail_at(st, STATUS_RUNTIME_ERROR, f->path, 0, 0, "fsync of its folder failed: %s",
                       strerror(errno));
        status_hint(st, "the file was written; check the file system");
        return STATUS_RUNTIME_ERROR;
    }
    return 0;
}

static int ends_with(const char *text, const char *suffix) {
    size_t n = strlen(text), m = strlen(suffix);
    return n >= m && strcmp(text + n - m, suffix) == 0;
}

int atomic_file_sweep(const char *folder) {
    DIR *dir = opendir(folder);
    if (!dir) return 0;
    int removed = 0;
    struct dirent *entry;
    while ((entry = readdir(dir)) != NULL) {
        if (!ends_with(entry->d_name, ".tmp")) continue;
        char path[2048];
        snprintf(path, sizeof path, "%s/%s", folder, entry->d_name);
        removed += remove(path) == 0;
    }
    closedir(dir);
    return removed;
}

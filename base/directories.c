#define _DEFAULT_SOURCE  // mkdir, stat, and flock (BSD, not POSIX)
#include "base/directories.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

static int make_one(const char *path) {
    if (mkdir(path, 0777) == 0) return 0;
    // EEXIST says only that a name is taken: it may be a file.
    struct stat info;
    if (errno == EEXIST && stat(path, &info) == 0) {
        if (S_ISDIR(info.st_mode)) return 0;
        errno = ENOTDIR;
    }
    return -1;
}

int make_directories(const char *path) {
    char partial[4096];
    if (snprintf(partial, sizeof partial, "%s", path) >= (int)sizeof partial) {
        errno = ENAMETOOLONG;
        return -1;
    }
    // Each parent in turn, then the folder itself; a leading '/' is not a parent.
    for (char *slash = strchr(partial + 1, '/'); slash; slash = strchr(slash + 1, '/')) {
        if (slash[-1] == '/') continue;  // "a//b"
        *slash = '\0';
        int rc = make_one(partial);
        *slash = '/';
        if (rc) return -1;
    }
    return make_one(partial);
}

int path_is_directory(const char *path) {
    struct stat info;
    return stat(path, &info) == 0 && S_ISDIR(info.st_mode);
}

// The folders this process holds: asked again for one, directory_lock has it already (a
// second flock of the same process, on another descriptor, would be refused).
enum { HELD_MAX = 8 };
static struct {
    dev_t device;
    ino_t inode;
} held[HELD_MAX];
static int held_count;

int directory_lock(const char *path) {
    struct stat info;
    if (stat(path, &info) != 0) return -1;
    for (int i = 0; i < held_count; i++)
        if (held[i].device == info.st_dev && held[i].inode == info.st_ino) return 0;
    if (held_count == HELD_MAX) {
        errno = ENOLCK;
        return -1;
    }
    int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return -1;
    // flock rather than fcntl's locks: it takes a folder opened read-only, and closing some
    // other descriptor of the folder does not drop it. The descriptor stays open, and the
    // lock held, until the process ends.
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
        int reason = errno;
        close(fd);
        errno = reason;
        return -1;
    }
    held[held_count].device = info.st_dev;
    held[held_count].inode = info.st_ino;
    held_count++;
    return 0;
}

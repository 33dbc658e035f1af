#define _DEFAULT_SOURCE  // mkdir, stat, and flock (BSD, not POSIX)
#include "base/directories.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>  // makedev
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

// The folders this process holds, and how: asked again for one, lock_folder has it already
// (a second flock of the same process, on another descriptor, would be refused).
enum { HELD_MAX = 8 };
static struct {
    dev_t device;
    ino_t inode;
    int fd;
    int exclusive;
} held[HELD_MAX];
static int held_count;

// flock rather than fcntl's locks: it takes a folder opened read-only, and closing some
// other descriptor of the folder does not drop it. The descriptor stays open, and the lock
// held, until the process ends.
static int lock_folder(const char *path, int exclusive) {
    struct stat info;
    if (stat(path, &info) != 0) return -1;
    int operation = (exclusive ? LOCK_EX : LOCK_SH) | LOCK_NB;
    for (int i = 0; i < held_count; i++) {
        if (held[i].device != info.st_dev || held[i].inode != info.st_ino) continue;
        if (held[i].exclusive || !exclusive) return 0;
        // Shared, wanted exclusive: converted on the same descriptor. Linux drops the shared
        // lock before it tries, so a refusal takes the shared one back.
        if (flock(held[i].fd, operation) == 0) {
            held[i].exclusive = 1;
            return 0;
        }
        int reason = errno;
        flock(held[i].fd, LOCK_SH | LOCK_NB);
        errno = reason;
        return -1;
    }
    if (held_count == HELD_MAX) {
        errno = ENOLCK;
        return -1;
    }
    int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return -1;
    if (flock(fd, operation) != 0) {
        int reason = errno;
        close(fd);
        errno = reason;
        return -1;
    }
    held[held_count].device = info.st_dev;
    held[held_count].inode = info.st_ino;
    held[held_count].fd = fd;
    held[held_count].exclusive = exclusive;
    held_count++;
    return 0;
}

int directory_lock(const char *path) { return lock_folder(path, 1); }

int directory_lock_shared(const char *path) { return lock_folder(path, 0); }

// /proc/locks lines read "1: FLOCK  ADVISORY  WRITE 4242 08:01:1234 0 EOF": the pid, then
// the device as hexadecimal major:minor and the inode. Lines of processes waiting for a lock
// ("1: -> FLOCK ...") do not hold it.
long directory_lock_holder(const char *path) {
    struct stat info;
    FILE *locks = fopen("/proc/locks", "r");
    if (!locks) return 0;
    long holder = 0;
    char line[256];
    while (!holder && stat(path, &info) == 0 && fgets(line, sizeof line, locks)) {
        char kind[16];
        long pid;
        unsigned major, minor;
        unsigned long inode;
        if (strstr(line, "->") ||
            sscanf(line, "%*d: %15s %*s %*s %ld %x:%x:%lu", kind, &pid, &major, &minor,
                   &inode) != 5)
            continue;
        if (strcmp(kind, "FLOCK") == 0 && inode == (unsigned long)info.st_ino &&
            makedev(major, minor) == info.st_dev && pid != (long)getpid())
            holder = pid;
    }
    fclose(locks);
    return holder;
}

int directory_lock_refusal(const char *folder, const char *use, const char *instead,
                           Status *st) {
    status_fail_at(st, STATUS_BAD_INPUT, folder, 0, 0, "another trainer process holds this "
                   "folder's lock (it trains into it, as its --checkpoint folder or --logdir, or "
                   "saves into it with --save), so it cannot be this run's %s", use);
    long holder = directory_lock_holder(folder);
    char who[48] = "that run";
    if (holder > 0) snprintf(who, sizeof who, "that run (process %ld)", holder);
    status_hint(st, "wait for %s to end, or %s", who, instead);
    return STATUS_BAD_INPUT;
}

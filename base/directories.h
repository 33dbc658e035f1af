// Folders a run writes into (--checkpoint, --logdir): created with their missing parents,
// as `mkdir -p` would, so that `--checkpoint runs/mlp` works on a fresh machine.
#ifndef TRAINER_DIRECTORIES_H
#define TRAINER_DIRECTORIES_H

#include "base/status.h"

// 0 when `path` is a folder now (made here or already there); else -1 with errno set by
// the step that failed (ENOTDIR when a part of the path is a file).
int make_directories(const char *path);

// Whether `path` is a folder now (following links); 0 for anything else or nothing there.
int path_is_directory(const char *path);

// An exclusive lock on the folder `path`, held until the process ends (the kernel drops it
// then, however the process ends: no lock outlives its run). 0 when held, also when this
// process took it before; -1 with errno when not: EWOULDBLOCK when another process holds it.
int directory_lock(const char *path);
// A shared lock on the folder: taken by any number of processes at once (runs that --save
// into one folder), refused (EWOULDBLOCK) while one holds the exclusive lock, and keeping
// the exclusive lock from the others. Held as directory_lock's; a folder this process
// holds either way is granted again, and a shared one is made exclusive by directory_lock.
int directory_lock_shared(const char *path);
// The process id of another process that holds a lock on the folder `path` (Linux's
// /proc/locks), for messages; 0 when none is known.
long directory_lock_holder(const char *path);
// STATUS_BAD_INPUT at `folder`: another trainer process holds its lock, so it cannot be this
// run's `use` ("--logdir"); the hint names the holder and `instead`, what to do.
int directory_lock_refusal(const char *folder, const char *use, const char *instead,
                           Status *st);

#endif

// A file replaced all at once: written under a temporary name in the same folder, flushed
// to the disk, renamed over the target, and the folder's entry flushed too. A crash at any
// moment leaves either the old file or the new one, never a torn mix; what a killed
// writer leaves behind is a `*.tmp` file, which the next run removes (atomic_file_sweep).
#ifndef TRAINER_ATOMIC_FILE_H
#define TRAINER_ATOMIC_FILE_H

#include <stdio.h>
#include <sys/types.h>

#include "base/status.h"

typedef struct AtomicFile {
    FILE *file;            // write here between open and commit
    char path[1024];       // the target: the file a symbolic link points to, not the link
    char temporary[1040];  // PATH.tmp, beside it
} AtomicFile;

// Refuses (STATUS_BAD_INPUT) a target that exists and is not a regular file: a directory,
// device, FIFO or socket is never renamed over. A symbolic link is written through, as `cp`
// does: its target is replaced and the link stays; a link to nothing is refused.
int atomic_file_open(AtomicFile *f, const char *path, Status *st);
// Whether `path` could be written, asked before the work that produces it (--save before
// the first step): not a directory, device, FIFO or socket, in an existing, writable
// folder (the link's target's, for a symbolic link). STATUS_BAD_INPUT with the path and
// the reason when not.
int atomic_file_check_target(const char *path, Status *st);
// The folder a write to `path` lands in: path's own, or its link target's. STATUS_BAD_INPUT
// for a link to nothing or a path too long.
int atomic_file_folder(const char *path, char *folder, size_t size, Status *st);
// What a path that is not a regular file is, for messages: "a directory", "a FIFO (named
// pipe)", "a character device", ...
const char *file_kind_name(mode_t mode);
// Whether the two paths name one existing file (the same device and inode), however each
// is spelt: a link, `./`, another name.
int files_are_same(const char *a, const char *b);
// Flushes, fsyncs, renames over the target and fsyncs its folder.
int atomic_file_commit(AtomicFile *f, Status *st);
// Closes and removes the temporary file (after a failed write).
void atomic_file_abandon(AtomicFile *f);
// Removes every `*.tmp` in `folder` (left by a writer that was killed); returns how many.
int atomic_file_sweep(const char *folder);

#endif

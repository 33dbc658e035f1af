// base/atomic_file: a target that exists and is not a regular file (a directory, a FIFO) is
// refused by open, by commit (when it appeared while the file was written) and by
// atomic_file_check_target, and is left as it was; a regular file is replaced; a symbolic
// link is written through (its target replaced, the link kept), a dangling one refused; the
// check's probe never touches a file already there; a path too long is refused.
#define _POSIX_C_SOURCE 200809L  // mkdtemp
#include "check.h"
#include "base/atomic_file.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char folder[64];

static void path_in_folder(const char *name, char *path, size_t size) {
    snprintf(path, size, "%s/%s", folder, name);
}

static int is_fifo(const char *path) {
    struct stat info;
    return stat(path, &info) == 0 && S_ISFIFO(info.st_mode);
}

static void a_fifo_is_never_replaced(void) {
    char path[128];
    path_in_folder("pipe", path, sizeof path);
    CHECK_INT_EQ(mkfifo(path, 0600), 0);
    AtomicFile f;
    Status st;
    status_clear(&st);
    CHECK_INT_EQ(atomic_file_open(&f, path, &st), STATUS_BAD_INPUT);
    CHECK_CONTAINS(st.message, "is a FIFO (named pipe), not a regular file");
    CHECK(is_fifo(path));
    status_clear(&st);
    CHECK_INT_EQ(atomic_file_check_target(path, &st), STATUS_BAD_INPUT);
    CHECK_CONTAINS(st.file, "pipe");
    unlink(path);
}

static void a_directory_is_refused(void) {
    Status st;
    status_clear(&st);
    AtomicFile f;
    CHECK_INT_EQ(atomic_file_open(&f, folder, &st), STATUS_BAD_INPUT);
    CHECK_CONTAINS(st.message, "is a directory, not a regular file");
    CHECK_CONTAINS(st.hint, "weights.safetensors");
}

// What was a new name at open became a FIFO before the rename: commit refuses too and
// leaves no temporary file behind.
static void commit_checks_the_target_again(void) {
    char path[128], temporary[160];
    path_in_folder("late", path, sizeof path);
    AtomicFile f;
    Status st;
    status_clear(&st);
    CHECK_INT_EQ(atomic_file_open(&f, path, &st), 0);
    fputs("data", f.file);
    CHECK_INT_EQ(mkfifo(path, 0600), 0);
    CHECK_INT_EQ(atomic_file_commit(&f, &st), STATUS_BAD_INPUT);
    CHECK(is_fifo(path));
    snprintf(temporary, sizeof temporary, "%s.tmp", path);
    CHECK(access(temporary, F_OK) != 0);
    unlink(path);
}

static void a_regular_file_is_replaced(void) {
    char path[128];
    path_in_folder("plain", path, sizeof path);
    FILE *old = fopen(path, "w");
    CHECK(old != NULL);
    if (old) fclose(old);
    AtomicFile f;
    Status st;
    status_clear(&st);
    CHECK_INT_EQ(atomic_file_check_target(path, &st), 0);
    CHECK_INT_EQ(atomic_file_open(&f, path, &st), 0);
    fputs("new", f.file);
    CHECK_INT_EQ(atomic_file_commit(&f, &st), 0);
    struct stat info;
    CHECK(stat(path, &info) == 0 && S_ISREG(info.st_mode) && info.st_size == 3);
    unlink(path);
}

static int is_link(const char *path) {
    struct stat info;
    return lstat(path, &info) == 0 && S_ISLNK(info.st_mode);
}

static long size_of(const char *path) {
    struct stat info;
    return stat(path, &info) == 0 ? (long)info.st_size : -1;
}

// As `cp` and torch.save do: the link keeps pointing at its target, which holds the new
// data, and the temporary file was made beside the target (the link's folder is clean).
static void a_link_is_written_through(void) {
    char store[128], target[160], link[128], link_tmp[160], target_tmp[192];
    path_in_folder("store", store, sizeof store);
    CHECK_INT_EQ(mkdir(store, 0700), 0);
    snprintf(target, sizeof target, "%s/weights", store);
    FILE *old = fopen(target, "w");
    CHECK(old != NULL);
    if (old) fclose(old);
    path_in_folder("link", link, sizeof link);
    CHECK_INT_EQ(symlink("store/weights", link), 0);  // relative, as `ln -s` makes them
    AtomicFile f;
    Status st;
    status_clear(&st);
    CHECK_INT_EQ(atomic_file_check_target(link, &st), 0);
    CHECK_INT_EQ(atomic_file_open(&f, link, &st), 0);
    snprintf(link_tmp, sizeof link_tmp, "%s.tmp", link);
    snprintf(target_tmp, sizeof target_tmp, "%s.tmp", target);
    CHECK(access(target_tmp, F_OK) == 0);
    CHECK(access(link_tmp, F_OK) != 0);
    fputs("new", f.file);
    CHECK_INT_EQ(atomic_file_commit(&f, &st), 0);
    CHECK(is_link(link));
    CHECK_INT_EQ(size_of(link), 3);
    CHECK_INT_EQ(size_of(target), 3);
    CHECK(access(target_tmp, F_OK) != 0);
    unlink(link);
    unlink(target);
    rmdir(store);
}

static void a_dangling_link_is_refused(void) {
    char link[128];
    path_in_folder("dangling", link, sizeof link);
    CHECK_INT_EQ(symlink("nowhere/weights", link), 0);
    AtomicFile f;
    Status st;
    status_clear(&st);
    CHECK_INT_EQ(atomic_file_check_target(link, &st), STATUS_BAD_INPUT);
    CHECK_CONTAINS(st.message, "is a symbolic link to nowhere/weights, which does not exist");
    CHECK_CONTAINS(st.hint, "create the file it points to");
    status_clear(&st);
    CHECK_INT_EQ(atomic_file_open(&f, link, &st), STATUS_BAD_INPUT);
    CHECK_CONTAINS(st.file, "dangling");
    CHECK(is_link(link));
    char nowhere[128];
    path_in_folder("nowhere", nowhere, sizeof nowhere);
    CHECK(access(nowhere, F_OK) != 0);
    unlink(link);
}

static void a_missing_folder_is_named(void) {
    char path[160];
    path_in_folder("absent/weights.safetensors", path, sizeof path);
    Status st;
    status_clear(&st);
    CHECK_INT_EQ(atomic_file_check_target(path, &st), STATUS_BAD_INPUT);
    CHECK_CONTAINS(st.message, "/absent does not exist");
    CHECK_CONTAINS(st.hint, "mkdir -p");
}

// The check's probe is created new: a FILE.tmp already there (another program's, or a user's)
// is neither emptied nor removed, and the folder still passes as writable.
static void an_existing_probe_name_is_left_alone(void) {
    char path[160], probe[176];
    path_in_folder("kept.safetensors", path, sizeof path);
    snprintf(probe, sizeof probe, "%s.tmp", path);
    FILE *f = fopen(probe, "wb");
    CHECK(f != NULL);
    if (f) {
        fputs("someone's data", f);
        fclose(f);
    }
    Status st;
    status_clear(&st);
    CHECK_INT_EQ(atomic_file_check_target(path, &st), 0);
    struct stat info;
    CHECK(stat(probe, &info) == 0 && info.st_size == 14);
    unlink(probe);
}

// A FILE.tmp that the writer could not replace (a directory) is refused by the check, before
// a run trains, not by the first write after an epoch.
static void a_probe_name_in_the_way_is_refused(void) {
    char path[160], probe[176];
    path_in_folder("blocked.safetensors", path, sizeof path);
    snprintf(probe, sizeof probe, "%s.tmp", path);
    CHECK_INT_EQ(mkdir(probe, 0700), 0);
    Status st;
    status_clear(&st);
    CHECK_INT_EQ(atomic_file_check_target(path, &st), STATUS_BAD_INPUT);
    CHECK_CONTAINS(st.message, "is in the way: it is a directory");
    rmdir(probe);
}

// A path longer than the writer holds is refused, not cut to another file's name.
static void a_path_too_long_is_refused(void) {
    char path[1200];
    int n = snprintf(path, sizeof path, "%s/", folder);
    memset(path + n, 'a', sizeof path - (size_t)n - 1);
    path[sizeof path - 1] = '\0';
    Status st;
    status_clear(&st);
    CHECK_INT_EQ(atomic_file_check_target(path, &st), STATUS_BAD_INPUT);
    CHECK_CONTAINS(st.message, "path too long");
}

int main(void) {
    snprintf(folder, sizeof folder, "/tmp/test_atomic_file.XXXXXX");
    if (!mkdtemp(folder)) {
        perror("mkdtemp");
        return 1;
    }
    a_fifo_is_never_replaced();
    a_directory_is_refused();
    commit_checks_the_target_again();
    a_regular_file_is_replaced();
    a_missing_folder_is_named();
    a_link_is_written_through();
    a_dangling_link_is_refused();
    an_existing_probe_name_is_left_alone();
    a_probe_name_in_the_way_is_refused();
    a_path_too_long_is_refused();
    rmdir(folder);
    return test_exit_code("test_atomic_file");
}

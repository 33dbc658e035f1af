// directory_lock: a folder locked by this process is refused to another (EWOULDBLOCK), is
// granted again to this one (checkpoints_open after the early check in train), and is free
// once the holder ends, however it ends: here a child killed with SIGKILL.
// directory_lock_shared (--save's folder): shared with other sharers, refused to and by an
// exclusive holder; directory_lock_holder names the process that holds it.
#define _DEFAULT_SOURCE  // mkdtemp, kill, flock
#include "check.h"
#include "base/directories.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/file.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

// In a child process, with flock itself (the child inherits this process's memory, where
// directory_lock remembers the folder as held): 0 when it could take the lock (LOCK_EX or
// LOCK_SH), 1 when refused with EWOULDBLOCK.
static int child_tries(const char *folder, int operation) {
    pid_t pid = fork();
    if (pid == 0) {
        int fd = open(folder, O_RDONLY | O_DIRECTORY);
        _exit(fd < 0 ? 2 : flock(fd, operation | LOCK_NB) == 0 ? 0 : errno == EWOULDBLOCK ? 1 : 2);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// A child that takes the lock (shared or not) and waits to be killed.
static pid_t child_holds(const char *folder, int shared, int ready[2]) {
    pid_t pid = fork();
    if (pid == 0) {
        int rc = shared ? directory_lock_shared(folder) : directory_lock(folder);
        char ok = rc == 0 ? 'y' : 'n';
        if (write(ready[1], &ok, 1) != 1) _exit(2);
        for (;;) pause();
    }
    return pid;
}

int main(void) {
    char folder[] = "/tmp/trainer-lock-XXXXXX";
    CHECK(mkdtemp(folder) != NULL);

    // Held by a child: refused here; free once the child is killed.
    int ready[2];
    CHECK_INT_EQ(pipe(ready), 0);
    pid_t holder = child_holds(folder, 0, ready);
    char ok = 0;
    CHECK_INT_EQ((int)read(ready[0], &ok, 1), 1);
    CHECK(ok == 'y');
    errno = 0;
    CHECK_INT_EQ(directory_lock(folder), -1);
    CHECK_INT_EQ(errno, EWOULDBLOCK);
    errno = 0;
    CHECK_INT_EQ(directory_lock_shared(folder), -1);
    CHECK_INT_EQ(errno, EWOULDBLOCK);
    CHECK_INT_EQ((int)directory_lock_holder(folder), (int)holder);
    kill(holder, SIGKILL);
    waitpid(holder, NULL, 0);
    CHECK_INT_EQ((int)directory_lock_holder(folder), 0);

    // Shared by a child: shared here too, so a third sharer may join and no one takes it
    // exclusively; once the child is gone, this process's shared lock becomes exclusive.
    holder = child_holds(folder, 1, ready);
    CHECK_INT_EQ((int)read(ready[0], &ok, 1), 1);
    CHECK(ok == 'y');
    CHECK_INT_EQ(directory_lock_shared(folder), 0);
    CHECK_INT_EQ(child_tries(folder, LOCK_SH), 0);
    CHECK_INT_EQ(child_tries(folder, LOCK_EX), 1);
    errno = 0;
    CHECK_INT_EQ(directory_lock(folder), -1);
    CHECK_INT_EQ(errno, EWOULDBLOCK);
    kill(holder, SIGKILL);
    waitpid(holder, NULL, 0);
    CHECK_INT_EQ(child_tries(folder, LOCK_EX), 1);  // the refused upgrade kept this one's

    // Now this process takes it, takes it again, and a child is refused either lock.
    CHECK_INT_EQ(directory_lock(folder), 0);
    CHECK_INT_EQ(directory_lock(folder), 0);
    CHECK_INT_EQ(directory_lock_shared(folder), 0);
    CHECK_INT_EQ(child_tries(folder, LOCK_EX), 1);
    CHECK_INT_EQ(child_tries(folder, LOCK_SH), 1);

    // A path that is no folder is -1 with its own errno, not a refusal.
    errno = 0;
    CHECK_INT_EQ(directory_lock("/tmp/trainer-lock-no-such-folder/x"), -1);
    CHECK(errno != EWOULDBLOCK);
    rmdir(folder);
    return test_exit_code("test_directory_lock");
}

#define _POSIX_C_SOURCE 200809L  // dup, fileno
#include "tools/result_sink.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "kernels/mpi/mpi_world.h"

// One sink per process: the commands print from many files (the header, the epoch hook,
// the checkpoints), and every one of them prints to stdout.
static struct {
    int json, quiet;
    FILE *lines;      // --json: the original stdout, which stdout no longer is
    int write_errno;  // the first failed write of a JSON line
} sink;

int result_sink_json(void) { return sink.json; }

// The text the command prints on stdout (file descriptor 1) goes to `fd` from now on.
static int move_text_to(int fd, const char *where, Status *st) {
    if (dup2(fd, STDOUT_FILENO) >= 0) return 0;
    return status_fail(st, STATUS_RUNTIME_ERROR, "cannot send the text output to %s: %s", where,
                       strerror(errno));
}

int result_sink_open(const Command *cmd, const ParsedArgs *args, Status *st) {
    sink.json = args_get(cmd, args, "--json") != NULL;
    sink.quiet = args_get(cmd, args, "--quiet") != NULL;
    if (!sink.json && !sink.quiet) return 0;
    if (sink.quiet) {
        progress_hide();
        turn_notices_off();
    }
    fflush(stdout);
    if (sink.json) {
        int fd = dup(STDOUT_FILENO);
        sink.lines = fd >= 0 ? fdopen(fd, "w") : NULL;
        if (!sink.lines) {
            if (fd >= 0) close(fd);
            return status_fail(st, STATUS_RUNTIME_ERROR, "cannot open stdout for the JSON "
                               "lines: %s", strerror(errno));
        }
    }
    if (!sink.quiet) return move_text_to(STDERR_FILENO, "stderr", st);
    int null = open("/dev/null", O_WRONLY);
    if (null < 0)
        return status_fail(st, STATUS_RUNTIME_ERROR, "cannot open /dev/null for --quiet: %s",
                           strerror(errno));
    int rc = move_text_to(null, "/dev/null", st);
    close(null);
    return rc;
}

cJSON *result_event(const char *event) {
    cJSON *item = cJSON_CreateObject();
    if (item) json_add_text(item, "event", event);
    return item;
}

// Under mpirun every rank runs the same run: rank 0 speaks for all, as with notices.
void result_emit(cJSON *event) {
    if (sink.lines && event && mpi_launch_rank() <= 0) {
        json_print(sink.lines, event, 0);
        if ((fflush(sink.lines) || ferror(sink.lines)) && !sink.write_errno)
            sink.write_errno = errno ? errno : EIO;
    }
    cJSON_Delete(event);
}

int result_sink_close(int exit_code) {
    if (!sink.lines) return exit_code;
    if ((fclose(sink.lines) || sink.write_errno) && !sink.write_errno)
        sink.write_errno = errno ? errno : EIO;
    sink.lines = NULL;
    if (!sink.write_errno) return exit_code;
    Status st;
    status_clear(&st);
    status_fail(&st, STATUS_RUNTIME_ERROR, "cannot write the JSON lines to stdout: %s",
                strerror(sink.write_errno));
    status_hint(&st, "stdout must have room (a disk not full) and a reader that reads to "
                "the end");
    int code = report_failure(&st);
    return exit_code ? exit_code : code;
}

// What a command says on stderr beside its results: failures in the project's format with
// the error catalog's explanation, notices, and whether stdout took everything. The state
// this depends on (--quiet, a CUDA device opened) is told to it, so that it calls back into
// neither the argument parser nor the result sink.
#include <errno.h>
#include <stdarg.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "base/error_catalog.h"
#include "base/escape.h"
#include "diagnostics/machine_facts.h"
#include "kernels/mpi/mpi_world.h"
#include "tools/cli.h"

static int opened_cuda;  // a CUDA device was opened in this process
static int notices_off;  // --quiet: errors alone

void note_cuda_device_opened(void) { opened_cuda = 1; }
int cuda_device_opened(void) { return opened_cuda; }
void turn_notices_off(void) { notices_off = 1; }

// The catalog's explanation of the library error behind a failure, a few indented lines
// under the standard two; the whole text is one `trainer explain NAME` away.
static void print_error_explanation(const ErrorEntry *entry, const Status *st) {
    enum { CAUSES_SHOWN = 3 };
    // trainer's own checks (a label past the last class, a launch CUDA would refuse) name
    // the CUDA error a framework would have stopped with: what follows explains that error,
    // and no context was harmed.
    int caught_before = st->code == STATUS_BAD_INPUT;
    if (caught_before)
        fputs("  caught by trainer's own check, so nothing on the device broke; on a GPU, a "
              "framework would stop with this CUDA error:\n", stderr);
    fprintf(stderr, "  meaning: %s\n", entry->meaning);
    fputs("  likely causes:", stderr);
    for (int i = 0; i < CAUSES_SHOWN && entry->causes[i]; i++)
        fprintf(stderr, " (%d) %s", i + 1, entry->causes[i]);
    fputc('\n', stderr);
    ErrorFacts facts;
    error_catalog_machine_facts(entry, &facts);
    for (int i = 0; i < facts.count; i++) {
        char shown[4 * sizeof facts.lines[i]];  // the environment's bytes among them
        fprintf(stderr, "%s%s", i ? "; " : "  on this machine: ",
                text_escape(facts.lines[i], strlen(facts.lines[i]), shown, sizeof shown));
    }
    if (facts.count) fputc('\n', stderr);
    fprintf(stderr, "  confirm: %s\n", entry->confirm);
    // The hint usually is the catalog's fix already (kernels/cuda/cuda_errors.cu).
    // Caught before, the hint is the fix: the catalog's would restart a healthy process.
    if (!caught_before && strncmp(st->hint, entry->fix, sizeof st->hint - 1) != 0)
        fprintf(stderr, "  fix: %s\n", entry->fix);
    // The catalog's advice is for anyone; the steps that only apply to trainer follow.
    if (entry->with_trainer && !caught_before)
        fprintf(stderr, "  with trainer: %s\n", entry->with_trainer);
    if (entry->poisons_context && !caught_before)
        fputs("  the CUDA context is now unusable: the process must restart (with --checkpoint "
              "DIR, --resume DIR continues from the last checkpoint)\n", stderr);
    fprintf(stderr, "  more: trainer explain %s\n", entry->name);
}

// errno of the first failed flush of stdout; 0 when none failed (or only printf's own
// flushes did, which leave no trace but the stream's error flag).
static int stdout_errno;

void flush_stdout(void) {
    errno = 0;
    if (fflush(stdout) != 0 && !stdout_errno) stdout_errno = errno;
}

void write_stdout_text(void *user, const char *text, size_t length) {
    fwrite(text, 1, length, stdout);
}

const TextOut stdout_text = {write_stdout_text, NULL, NULL};

void print_and_delete_json(cJSON *item, int lines) {
    json_print(stdout, item, lines);
    cJSON_Delete(item);
}

int finish_stdout(int exit_code) {
    flush_stdout();
    int failed = ferror(stdout) || stdout_errno;
    errno = 0;
    // close() reports what only the file system knows at the end (NFS, quotas). A
    // descriptor that was never open (`>&-`) fails close with EBADF; that is no loss unless
    // something was written, which ferror has already seen.
    if (fclose(stdout) != 0 && errno != EBADF) {
        failed = 1;
        if (!stdout_errno) stdout_errno = errno;
    }
    if (!failed) return exit_code;
    // A reader that stopped reading (`| head`) knows it did: no message. The exit code still
    // says the output was cut, as SIGPIPE's default (when not ignored) would.
    if (stdout_errno != EPIPE) {
        Status st;
        status_clear(&st);
        if (stdout_errno)
            status_fail(&st, STATUS_RUNTIME_ERROR, "writing to standard output failed: %s",
                        strerror(stdout_errno));
        else
            status_fail(&st, STATUS_RUNTIME_ERROR, "writing to standard output failed");
        status_hint(&st, "check where the output goes: the disk may be full, or the file or "
                         "pipe no longer writable");
        char text[2400];
        status_format(&st, text, sizeof text);
        fputs(text, stderr);
    }
    return exit_code ? exit_code : 1;
}

int report_failure(const Status *st) {
    char text[2400];
    status_format(st, text, sizeof text);
    flush_stdout();
    fputs(text, stderr);
    const ErrorEntry *entry = st->error_name[0] ? error_catalog_lookup_name(st->error_name) : NULL;
    // What a GPU framework would have stopped with is news only where a GPU ran: on the CPU
    // the two lines above are the whole story.
    int caught_on_cpu = st->code == STATUS_BAD_INPUT && !cuda_device_opened();
    if (entry && !caught_on_cpu) print_error_explanation(entry, st);
    return status_exit_code(st);
}

void print_notice(const char *fmt, ...) {
    // Every process of `mpirun -np N` reads the same command line, files and data, so a
    // notice about them would come N times: rank 0 says it. What one rank alone meets while
    // training goes through print_rank_notice. --quiet: errors alone.
    if (mpi_launch_rank() > 0 || notices_off) return;
    va_list ap;
    va_start(ap, fmt);
    fputs("trainer: notice: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

void print_notice_line(void *user, const char *line) {
    print_notice("%s", line);
}

const RunNotice printed_notice = {print_notice_line, NULL};
void print_rank_notice(int rank, int ranks, const char *host, const char *line) {
    fprintf(stderr, "trainer: notice: rank %d of %d (%s): %s\n", rank, ranks, host, line);
}

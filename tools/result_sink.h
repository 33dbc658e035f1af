// Where train, eval and predict put what they print: text on stdout (the default), one JSON
// object per line on stdout (--json; the text they would print goes to stderr), or nothing
// but errors (--quiet: no text, no notices, no progress bar). With --json and --quiet,
// stdout has the JSON lines and nothing else is shown but errors. The commands print their
// text as they always did, and build each JSON line with result_event; docs/cli.md lists
// every field.
#ifndef TRAINER_RESULT_SINK_H
#define TRAINER_RESULT_SINK_H

#include "tools/cli.h"

#define RESULT_OPTION_SPECS                                                                  \
    {"--json", NULL, "print one JSON object per line on stdout: the run, each epoch or "    \
                     "prediction, the result (docs/cli.md); the text goes to stderr"},       \
    {"--quiet", NULL, "print nothing but errors (with --json: the JSON lines alone)"}

// Reads --json and --quiet and points stdout where they say. Call it before anything is
// printed on stdout.
int result_sink_open(const Command *cmd, const ParsedArgs *args, Status *st);
int result_sink_json(void);   // --json was given
// {"event": EVENT} to add fields to; NULL when out of memory (result_emit takes NULL).
struct cJSON *result_event(const char *event);
// The event as one line on stdout under --json (else dropped), flushed; frees it.
void result_emit(struct cJSON *event);
// At the command's end: a JSON line that could not be written (a closed pipe, a full disk)
// is an error (exit 1 unless exit_code says a failure already). Returns the exit code.
int result_sink_close(int exit_code);

#endif

// `trainer explain`'s texts: an error catalog entry (base/error_catalog.c) told in full,
// in at most 8 lines, or as JSON, with the facts of this machine that bear on it and the
// verdict when those facts decide the cause; the catalog's list; and which entry a
// name, code or pasted message means. Nothing here prints: the text goes to a TextOut and
// the JSON comes back as a cJSON tree, for tools/cmd_explain.c to print.
#ifndef TRAINER_EXPLAIN_H
#define TRAINER_EXPLAIN_H

#include "base/error_catalog.h"
#include "base/status.h"
#include "base/text_out.h"

struct cJSON;

// The one entry `text` (a name, a code like cuda:2, or a pasted message) means; NULL with
// st set (STATUS_BAD_INPUT, the nearest name or the families a bare code is in) when it
// means none, or several.
const ErrorEntry *explain_find(const char *text, Status *st);

// The entry in full: header, close matches of the pasted `text`, verdict, meaning, causes,
// confirm, fix, the frameworks' wordings, trainer's exit code, this machine's facts.
void explain_entry(const TextOut *out, const ErrorEntry *e, const char *text);
// At most 8 lines: the meaning, the cause (this machine's verdict when there is one), and
// the command to run next.
void explain_short(const TextOut *out, const ErrorEntry *e);
// Every entry, grouped by family; and every entry's wordings as a Markdown table.
void explain_list(const TextOut *out);
void explain_wordings(const TextOut *out);

// The entry as JSON with this machine's facts and verdict; every entry without them.
struct cJSON *explain_entry_json(const ErrorEntry *e);
struct cJSON *explain_list_json(void);

#endif

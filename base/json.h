// JSON text for `--json` outputs: built as a cJSON tree, strings made valid UTF-8 on the
// way in (cJSON escapes but does not validate), and written with ", " and ": " between
// items, the layout the commands printed before cJSON.
#ifndef TRAINER_JSON_H
#define TRAINER_JSON_H

#include <stdio.h>

// A string from json_text is valid UTF-8 whatever the bytes given (invalid ones become
// U+FFFD); NULL text is JSON null.
struct cJSON;
struct cJSON *json_text(const char *text);
void json_add_text(struct cJSON *object, const char *key, const char *text);
// The item and a newline into `out`; `lines`: the outermost object's or array's items one
// per line.
void json_print(FILE *out, const struct cJSON *item, int lines);

#endif

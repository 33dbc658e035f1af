// cJSON strings made valid UTF-8 on the way in (cJSON escapes but does not validate), for
// the JSON that diagnostics/ builds and tools/ prints (doctor --json, explain --json).
#ifndef TRAINER_JSON_TEXT_H
#define TRAINER_JSON_TEXT_H

struct cJSON;

// A cJSON string of `text`, invalid bytes turned into U+FFFD; NULL text is JSON null.
struct cJSON *json_text(const char *text);
void json_add_text(struct cJSON *object, const char *key, const char *text);

#endif

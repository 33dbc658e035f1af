#include "base/json_text.h"

#include <stdlib.h>

#include <cjson/cJSON.h>

#include "base/utf8.h"

cJSON *json_text(const char *text) {
    if (!text) return cJSON_CreateNull();
    size_t size = utf8_valid_size(text);
    char *valid = malloc(size);
    if (!valid) return NULL;
    utf8_make_valid(text, valid, size);
    cJSON *item = cJSON_CreateString(valid);
    free(valid);
    return item;
}

void json_add_text(cJSON *object, const char *key, const char *text) {
    cJSON_AddItemToObject(object, key, json_text(text));
}

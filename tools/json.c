// The JSON of `doctor --json` and `explain --json`: built as a cJSON tree (strings made
// valid UTF-8 by base/json_text.c), and written out here with ", " and ": " between items,
// the layout both commands printed before cJSON.
#include <cjson/cJSON.h>

#include "base/json_text.h"
#include "tools/cli.h"

static void write_leaf(FILE *out, const cJSON *item) {
    char *text = cJSON_PrintUnformatted(item);
    fputs(text ? text : "null", out);
    cJSON_free(text);
}

static void write_key(FILE *out, const char *key) {
    cJSON *item = json_text(key);
    write_leaf(out, item);
    cJSON_Delete(item);
    fputs(": ", out);
}

static void write_item(FILE *out, const cJSON *item, int depth, int lines) {
    int object = cJSON_IsObject(item);
    if (!object && !cJSON_IsArray(item)) {
        write_leaf(out, item);
        return;
    }
    int one_per_line = lines && depth == 0;
    fputc(object ? '{' : '[', out);
    for (const cJSON *child = item->child; child; child = child->next) {
        if (one_per_line) fputs(child == item->child ? "\n  " : ",\n  ", out);
        else if (child != item->child) fputs(", ", out);
        if (object) write_key(out, child->string);
        write_item(out, child, depth + 1, lines);
    }
    if (one_per_line && item->child) fputc('\n', out);
    fputc(object ? '}' : ']', out);
}

void json_print(FILE *out, const cJSON *item, int lines) {
    write_item(out, item, 0, lines);
    fputc('\n', out);
}

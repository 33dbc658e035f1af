// `trainer explain --json`: an error catalog entry, or every entry, as a cJSON tree.
#include <cjson/cJSON.h>

#include "base/json.h"
#include "diagnostics/explain.h"
#include "diagnostics/machine_facts.h"

static cJSON *json_strings(const char *const *texts, int count) {
    cJSON *list = cJSON_CreateArray();
    for (int i = 0; i < count; i++) cJSON_AddItemToArray(list, json_text(texts[i]));
    return list;
}

// The machine's facts: these are where bytes from the environment (CUDA_VISIBLE_DEVICES)
// enter, which json_text makes valid UTF-8.
static cJSON *json_machine_facts(const ErrorEntry *e) {
    ErrorFacts facts;
    error_catalog_machine_facts(e, &facts);
    const char *lines[ERROR_FACTS_MAX];
    for (int i = 0; i < facts.count; i++) lines[i] = facts.lines[i];
    return json_strings(lines, facts.count);
}

static void add_machine(cJSON *entry, const ErrorEntry *e) {
    cJSON_AddItemToObject(entry, "machine", json_machine_facts(e));
    ErrorVerdict verdict;
    if (error_catalog_verdict(e, &verdict)) {
        cJSON *v = cJSON_CreateObject();
        json_add_text(v, "cause", verdict.cause);
        cJSON_AddItemToObject(v, "next", json_strings(verdict.next, verdict.next_count));
        cJSON_AddItemToObject(entry, "verdict", v);
    }
}

static cJSON *json_entry(const ErrorEntry *e, int with_facts) {
    char code[64];
    error_entry_code(e, code, sizeof code);
    int causes = 0;
    while (causes < ERROR_CAUSES_MAX && e->causes[causes]) causes++;
    cJSON *entry = cJSON_CreateObject();
    json_add_text(entry, "family", error_family_prefix(e->family));
    json_add_text(entry, "type", error_family_type(e->family));
    json_add_text(entry, "name", e->name);
    cJSON_AddNumberToObject(entry, "number", e->number);
    json_add_text(entry, "code", code);
    json_add_text(entry, "string", e->short_string);
    json_add_text(entry, "meaning", e->meaning);
    cJSON_AddItemToObject(entry, "causes", json_strings(e->causes, causes));
    json_add_text(entry, "confirm", e->confirm);
    json_add_text(entry, "fix", e->fix);
    json_add_text(entry, "with_trainer", e->with_trainer);
    json_add_text(entry, "pytorch", e->pytorch);
    json_add_text(entry, "tensorflow", e->tensorflow);
    cJSON_AddBoolToObject(entry, "poisons_context", e->poisons_context);
    cJSON_AddNumberToObject(entry, "exit_code", status_exit_code(&(Status){.code = e->status}));
    json_add_text(entry, "related", e->related);
    if (with_facts) add_machine(entry, e);
    return entry;
}

cJSON *explain_entry_json(const ErrorEntry *e) { return json_entry(e, 1); }

cJSON *explain_list_json(void) {
    cJSON *list = cJSON_CreateArray();
    for (int i = 0; i < error_catalog_count(); i++)
        cJSON_AddItemToArray(list, json_entry(error_catalog_at(i), 0));
    return list;
}

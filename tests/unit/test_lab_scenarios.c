// `trainer lab`'s table of scenarios (diagnostics/lab_show.c) as its lookup reads it: the
// count comes from the table, so every row counted is a whole scenario, each is found by
// its name, and a name that is none is refused with the nearest one (`all` included).
#include "check.h"
#include "diagnostics/lab.h"

static void every_counted_row_is_a_scenario(void) {
    int count = lab_scenario_count();
    CHECK(count > 0 && count <= LAB_SCENARIO_ROOM);
    for (int i = 0; i < count; i++) {
        const LabScenario *s = &lab_scenarios[i];
        CHECK(s->name && s->summary && s->show);
        if (!s->name) continue;
        Status st;
        status_clear(&st);
        CHECK(lab_scenario_find(s->name, &st) == s);
    }
}

static void unknown_names_are_refused(void) {
    Status st;
    status_clear(&st);
    CHECK(lab_scenario_find("version-reprot", &st) == NULL);
    CHECK_INT_EQ(st.code, STATUS_BAD_INPUT);
    CHECK_CONTAINS(st.message, "did you mean 'version-report'?");
    status_clear(&st);
    CHECK(lab_scenario_find("al", &st) == NULL);
    CHECK_CONTAINS(st.message, "did you mean 'all'?");
    status_clear(&st);
    CHECK(lab_scenario_find("nothing-like-any", &st) == NULL);
    CHECK_CONTAINS(st.message, "unknown lab scenario 'nothing-like-any'");
}

int main(void) {
    every_counted_row_is_a_scenario();
    unknown_names_are_refused();
    return test_exit_code("test_lab_scenarios");
}

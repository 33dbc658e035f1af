// lr_at's values for each schedule at chosen steps, worked out by hand from its definition
// (core/lr_schedule.h), and the `schedule` statement and --schedule reading into a config.
#include "check.h"
#include "core/lr_schedule.h"

#include <math.h>
#include <string.h>

static void constant_without_warmup_is_the_base_rate_itself(void) {
    ScheduleConfig s = {.kind = SCHEDULE_CONSTANT};
    for (long step = 0; step < 1000; step += 97) CHECK(lr_at(&s, 0.001, step, 1000) == 0.001);
}

static void warmup_rises_linearly_then_holds(void) {
    ScheduleConfig s = {.kind = SCHEDULE_CONSTANT, .warmup = 4};
    CHECK_NEAR(lr_at(&s, 0.1, 0, 100), 0.025, 1e-15);
    CHECK_NEAR(lr_at(&s, 0.1, 1, 100), 0.05, 1e-15);
    CHECK_NEAR(lr_at(&s, 0.1, 3, 100), 0.1, 1e-15);
    CHECK_NEAR(lr_at(&s, 0.1, 4, 100), 0.1, 1e-15);
    CHECK_NEAR(lr_at(&s, 0.1, 99, 100), 0.1, 1e-15);
}

static void step_decays_by_gamma_every_period(void) {
    ScheduleConfig epochs = {.kind = SCHEDULE_STEP, .every = 2, .gamma = 0.5,
                             .unit = SCHEDULE_UNIT_EPOCH};
    ScheduleConfig s = schedule_in_steps(&epochs, 10);  // every 2 epochs of 10 steps
    CHECK_INT_EQ(s.every, 20);
    CHECK_NEAR(lr_at(&s, 1.0, 0, 100), 1.0, 1e-15);
    CHECK_NEAR(lr_at(&s, 1.0, 19, 100), 1.0, 1e-15);
    CHECK_NEAR(lr_at(&s, 1.0, 20, 100), 0.5, 1e-15);
    CHECK_NEAR(lr_at(&s, 1.0, 45, 100), 0.25, 1e-15);
    CHECK_NEAR(lr_at(&s, 1.0, 99, 100), 0.0625, 1e-15);
    ScheduleConfig steps = {.kind = SCHEDULE_STEP, .every = 3, .gamma = 0.1,
                            .unit = SCHEDULE_UNIT_STEP};
    s = schedule_in_steps(&steps, 10);
    CHECK_INT_EQ(s.every, 3);
    CHECK_NEAR(lr_at(&s, 1.0, 6, 100), 0.01, 1e-15);
}

// Cosine over steps 2..10 after a warmup of 2: t = (step - 2) / 8.
static void cosine_falls_from_base_to_min_at_the_last_step(void) {
    ScheduleConfig s = {.kind = SCHEDULE_COSINE, .warmup = 2, .min_lr = 0.1};
    CHECK_NEAR(lr_at(&s, 1.0, 0, 11), 0.5, 1e-15);
    CHECK_NEAR(lr_at(&s, 1.0, 2, 11), 1.0, 1e-15);
    CHECK_NEAR(lr_at(&s, 1.0, 6, 11), 0.55, 1e-12);  // t = 1/2: halfway
    CHECK_NEAR(lr_at(&s, 1.0, 4, 11), 0.1 + 0.9 * 0.5 * (1.0 + sqrt(0.5)), 1e-12);  // t = 1/4
    CHECK_NEAR(lr_at(&s, 1.0, 10, 11), 0.1, 1e-12);
    CHECK_NEAR(lr_at(&s, 1.0, 50, 11), 0.1, 1e-12);  // past the end: stays at min_lr
    // One step after warmup: t would be 0 and 1 at once; it trains at lr (docs say so).
    CHECK_NEAR(lr_at(&s, 1.0, 2, 3), 1.0, 1e-15);
    ScheduleConfig no_warmup = {.kind = SCHEDULE_COSINE, .min_lr = 0.0};
    CHECK_NEAR(lr_at(&no_warmup, 1.0, 0, 1), 1.0, 1e-15);  // a one-step run learns
}

static int read_schedule(const char *text, ScheduleConfig *out, Status *st) {
    ModelFile file;
    TRY(model_file_parse_text("test.model", text, &file, st));
    int rc = schedule_read_statement("test.model", &file.statements[0], out, st);
    model_file_free(&file);
    return rc;
}

static void statement_reads_each_kind_and_refuses_mistakes(void) {
    Status st;
    status_clear(&st);
    ScheduleConfig s;
    CHECK_INT_EQ(read_schedule("schedule cosine warmup=100 min_lr=0.0001\n", &s, &st), 0);
    CHECK(s.kind == SCHEDULE_COSINE && s.warmup == 100 && s.min_lr == 0.0001);
    CHECK_INT_EQ(read_schedule("schedule step every=500 unit=step gamma=0.5\n", &s, &st), 0);
    CHECK(s.kind == SCHEDULE_STEP && s.every == 500 && s.unit == SCHEDULE_UNIT_STEP &&
          s.gamma == 0.5);
    CHECK_INT_EQ(read_schedule("schedule cosin\n", &s, &st), STATUS_BAD_INPUT);
    CHECK_CONTAINS(st.message, "did you mean 'cosine'?");
    CHECK_INT_EQ(st.column, 10);
    CHECK_INT_EQ(read_schedule("schedule step gamma=0.5\n", &s, &st), STATUS_BAD_INPUT);
    CHECK_CONTAINS(st.message, "needs every=N");
    CHECK_INT_EQ(read_schedule("schedule cosine every=3\n", &s, &st), STATUS_BAD_INPUT);
    CHECK_CONTAINS(st.message, "unknown key 'every'");
}

int main(void) {
    constant_without_warmup_is_the_base_rate_itself();
    warmup_rises_linearly_then_holds();
    step_decays_by_gamma_every_period();
    cosine_falls_from_base_to_min_at_the_last_step();
    statement_reads_each_kind_and_refuses_mistakes();
    return test_exit_code("test_lr_schedule");
}

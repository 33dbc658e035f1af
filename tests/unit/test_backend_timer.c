// The CPU backend's timer ops (Backend.timer_*, which trainer bench times with): a mark
// read against itself is 0, marks around work measure it (within the host clock's view of
// the same interval), and later marks never measure less than earlier ones.
#define _POSIX_C_SOURCE 200809L  // nanosleep
#include <time.h>

#include "check.h"
#include "base/clock.h"
#include "core/train.h"
#include "kernels/backend.h"

int main(void) {
    const Backend *b = cpu_backend();
    Status st;
    status_clear(&st);
    CHECK(b->timer_create && b->timer_record && b->timer_elapsed && b->timer_destroy);
    void *start = NULL, *stop = NULL;
    CHECK_INT_EQ(b->timer_create(b, &start, &st), 0);
    CHECK_INT_EQ(b->timer_create(b, &stop, &st), 0);
    double ms = -1.0;
    CHECK_INT_EQ(b->timer_record(b, start, &st), 0);
    CHECK_INT_EQ(b->timer_elapsed(b, start, start, &ms, &st), 0);
    CHECK_NEAR(ms, 0.0, 0.0);

    double host_start = monotonic_seconds();
    CHECK_INT_EQ(b->timer_record(b, start, &st), 0);
    struct timespec nap = {0, 20 * 1000 * 1000};  // 20 ms
    nanosleep(&nap, NULL);
    CHECK_INT_EQ(b->timer_record(b, stop, &st), 0);
    double host_ms = (monotonic_seconds() - host_start) * 1e3;
    CHECK_INT_EQ(b->timer_elapsed(b, start, stop, &ms, &st), 0);
    printf("20 ms sleep: timer %.3f ms, host clock %.3f ms\n", ms, host_ms);
    CHECK(ms >= 20.0);
    CHECK(ms <= host_ms);

    double earlier = ms;
    CHECK_INT_EQ(b->timer_record(b, stop, &st), 0);
    CHECK_INT_EQ(b->timer_elapsed(b, start, stop, &ms, &st), 0);
    CHECK(ms >= earlier);
    b->timer_destroy(b, start);
    b->timer_destroy(b, stop);
    return test_exit_code("test_backend_timer");
}

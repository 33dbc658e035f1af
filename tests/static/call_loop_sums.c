// core/grad_sums.c as it was, cut down: see call_loop_clock.c.
struct GradSums {
    double waited;
};
double monotonic_seconds(void);

int grad_sums_open(struct GradSums **out) {
    static struct GradSums sums;
    sums.waited = monotonic_seconds();
    *out = &sums;
    return 0;
}

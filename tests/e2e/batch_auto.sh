#!/usr/bin/env bash
# --batch auto (issue 6): the memory plan proposes the largest batch under the limit, a
# trial step confirms it, and training then runs that batch without running out of memory.
source "$(dirname "${BASH_SOURCE[0]}")/common.bash"
require_fashion_mnist

tiny=(train models/lenet.model --device cpu --epochs 1 --train-limit 600 --test-limit 200
    --batch auto)

run "$TRAINER" "${tiny[@]}" --memory-limit 48M
expect_rc 0 "--batch auto under a 48 MiB limit trains"
expect_match out "^batch auto: [0-9]+ \(the memory plan allows [0-9]+ in 43\.2 MiB on cpu, keeping 10% free; [0-9]+ trial steps?\)" \
    "the choice is reported with the plan and the budget"
chosen=$(sed -n 's/^batch auto: \([0-9]*\).*/\1/p' <<<"$out")
expect_match out "batch $chosen, 1 epoch" "training runs the chosen batch"
expect_match out "^memory on cpu: .* 0 out-of-memory" "the chosen batch never runs out of memory"
if [ -n "$chosen" ] && [ "$chosen" -gt 1 ]; then pass "a useful batch ($chosen) fits"; else fail "a useful batch fits" "chose '$chosen'"; fi

run "$TRAINER" "${tiny[@]}" --memory-limit 8M
expect_error 1 "out of memory" "a limit under the parameters' needs is the out-of-memory error"

run "$TRAINER" "${tiny[@]}" --batch sometimes
expect_error 2 "--batch sometimes" "a --batch that is neither a number nor auto is a usage error"

finish

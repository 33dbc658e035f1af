#!/usr/bin/env bash
# Out of memory at every allocation a training run makes (issue 6): TRAINER_FAIL_ALLOC=N
# makes the Nth allocation of the process fail as a real out-of-memory would. For every N
# from 1 to the number of allocations a clean run makes, `trainer train` must either
# recover (the dataset stays on the host, the batch runs as micro-batches: exit 0) or stop
# with a clear out-of-memory error (exit 1) — never crash, never another failure, and under
# the sanitizers never a leak or an invalid access.
source "$(dirname "${BASH_SOURCE[0]}")/common.bash"

# The run of the issue (mlp, 512 training and 128 test samples, one epoch) on a tiny IDX
# dataset of that size made here: the same allocations as on Fashion-MNIST, without
# decompressing 60 000 images for each of the runs below.
make_dataset "$work/data" 512 128

small=(train models/mlp.model --data "idx:$work/data" --device cpu --epochs 1)
# Sanitizer reports get an exit code of their own, so they cannot pass for exit 1.
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}exitcode=86"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:+$UBSAN_OPTIONS:}exitcode=86"
export LSAN_OPTIONS="${LSAN_OPTIONS:+$LSAN_OPTIONS:}exitcode=86"

run "$TRAINER" "${small[@]}"
expect_rc 0 "a clean run trains"
stats=$(grep -E '^memory on cpu: ' <<<"$out")
count=$(sed -nE 's/.* ([0-9]+) allocations .*/\1/p' <<<"$stats")
if [ -z "$count" ] || [ "$count" -lt 10 ]; then
    fail "the memory line counts the allocations" "got '$stats'"
    finish
fi
pass "a clean run makes $count allocations"
clean_epoch=$(last_epoch_result)

# Each run takes well under a second; the cap keeps a model that grows from making this
# test slow.
cap=120
[ "$count" -gt "$cap" ] && count=$cap
recovered=0 stopped=0 bad=0
for n in $(seq 1 "$count"); do
    TRAINER_FAIL_ALLOC=$n run "$TRAINER" "${small[@]}"
    problem=""
    if grep -qE 'Sanitizer|runtime error:' <<<"$err"; then
        problem="sanitizer report"
    elif [ "$rc" -eq 0 ]; then
        # Recovered: the failure is counted in the memory line.
        grep -qE '^memory on cpu: .* 1 out-of-memory' <<<"$out" ||
            problem="exit 0 but the memory line does not count the out-of-memory"
        # ... and learned what the clean run learned (losses and accuracies to 4 places).
        epoch=$(last_epoch_result)
        [ "$epoch" = "$clean_epoch" ] ||
            problem="recovered, but ended at '$epoch' instead of '$clean_epoch'"
        recovered=$((recovered + 1))
    elif [ "$rc" -eq 1 ]; then
        grep -q '^trainer: error: .*out of memory' <<<"$err" || problem="no out-of-memory error"
        grep -qF "injected: TRAINER_FAIL_ALLOC=$n " <<<"$err" ||
            problem="the error does not say the failure was injected"
        grep -q '^  hint: .' <<<"$err" || problem="no hint"
        stopped=$((stopped + 1))
    else
        problem="exit code $rc (a crash or another failure)"
    fi
    if [ -n "$problem" ]; then
        fail "TRAINER_FAIL_ALLOC=$n: recovers or stops with out of memory" "$problem"
        bad=$((bad + 1))
    fi
done
if [ "$bad" -eq 0 ]; then
    pass "allocations 1..$count failed in turn: $recovered recovered, $stopped stopped with an out-of-memory error, none crashed"
fi

# A value that names no allocation is a usage mistake, said as such.
TRAINER_FAIL_ALLOC=abc run "$TRAINER" "${small[@]}"
expect_error 2 "TRAINER_FAIL_ALLOC='abc'" "an unreadable TRAINER_FAIL_ALLOC is reported"

finish

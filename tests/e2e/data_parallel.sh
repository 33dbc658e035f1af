#!/usr/bin/env bash
# Data parallelism from the command line (issue 4's --gpus, DESIGN.md §6). On a machine
# without a GPU, --replicas N runs the same split-the-batch, sum-the-gradients path on the
# CPU: it must learn exactly what one device learns. --gpus needs GPUs: without one it
# exits 3 with the reason (a GPU listed twice too: two replicas share it); malformed lists are
# usage errors.
source "$(dirname "${BASH_SOURCE[0]}")/common.bash"
require_fashion_mnist

tiny=(train models/mlp.model --train-limit 2000 --test-limit 500 --epochs 2 --seed 3)

run "$TRAINER" "${tiny[@]}" --device cpu
expect_rc 0 "one CPU device trains"
single=$(last_epoch_result)

run "$TRAINER" "${tiny[@]}" --device cpu --replicas 3
expect_rc 0 "three CPU replicas train"
expect_in out "device cpu,cpu,cpu (3 data-parallel replicas)" "the replicas are announced"
triple=$(last_epoch_result)
if [ -n "$single" ] && [ "$single" = "$triple" ]; then
    pass "three replicas end where one device does ($triple)"
else
    fail "three replicas end where one device does" "one: '$single', three: '$triple'"
fi

if ! "$TRAINER" devices 2>/dev/null | grep -q '^cuda:0'; then
    run "$TRAINER" "${tiny[@]}" --gpus 0,1
    expect_error 3 "--gpus 0,1: cuda:0: " "--gpus without a usable GPU exits 3 and says why"
    expect_no_match err "--device cuda" "naming the option given, not --device"
    # A GPU listed twice holds two replicas (tests/gpu/replicas_one_card.sh trains them);
    # here it is only the missing GPU that stops it.
    run "$TRAINER" "${tiny[@]}" --gpus 0,0
    expect_error 3 "--gpus 0,0: cuda:0: " "--gpus 0,0 without a GPU exits 3, not a usage error"
fi

run "$TRAINER" "${tiny[@]}" --gpus 0,x
expect_error 2 "expected GPU ordinals" "a malformed --gpus list is a usage error"
run "$TRAINER" "${tiny[@]}" --gpus 0 --device cpu
expect_error 2 "--gpus chooses CUDA devices" "--gpus with --device cpu is a usage error"
run "$TRAINER" "${tiny[@]}" --gpus 0 --replicas 2
expect_error 2 "--gpus and --replicas" "--gpus with --replicas is a usage error"
run "$TRAINER" "${tiny[@]}" --device cpu --replicas 0
expect_error 2 "--replicas 0" "--replicas 0 is a usage error"

finish

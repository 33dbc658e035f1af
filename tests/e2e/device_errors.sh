#!/usr/bin/env bash
# Device selection (DESIGN.md §4): an explicit CUDA request that cannot be served exits 3
# and says why; `auto` falls back to the CPU with a one-line notice; a device string that
# is not one at all is a usage error (exit 2). Written to pass both on machines without a
# GPU and on machines with one.
source "$(dirname "${BASH_SOURCE[0]}")/common.bash"
require_fashion_mnist

tiny=(--data fashion-mnist --train-limit 256 --test-limit 128 --epochs 1)

# Words that explain why no CUDA device can be used: no driver, not built with CUDA, none
# visible, ordinal out of range, backend missing.
why='driver|not built|built without|no CUDA device|not visible|out of range|visible:|backend'

run "$TRAINER" train models/mlp.model "${tiny[@]}" --device cuda:0
if [ "$rc" -eq 0 ] && grep -q "device cuda" <<<"$out"; then
    pass "--device cuda:0 trained on a usable GPU (nothing to refuse on this machine)"
else
    expect_error 3 "--device cuda:0" "--device cuda:0 without a usable GPU exits 3"
    expect_match err "$why" "the cuda:0 error says why no GPU can be used"
fi

# An ordinal no machine has is refused everywhere.
run "$TRAINER" train models/mlp.model "${tiny[@]}" --device cuda:999
expect_error 3 "--device cuda:999" "--device cuda:999 exits 3"
expect_match err "$why" "the cuda:999 error says why"

# No device visible, whatever the machine has.
run env CUDA_VISIBLE_DEVICES= "$TRAINER" train models/mlp.model "${tiny[@]}" --device cuda
expect_error 3 "--device cuda" "--device cuda with CUDA_VISIBLE_DEVICES empty exits 3"
expect_match err "$why" "that error says why"

run "$TRAINER" train models/mlp.model "${tiny[@]}" --device auto
expect_rc 0 "--device auto trains"
notices=$(grep -c '^trainer: notice: ' <<<"$err")
if grep -q "; device cpu$" <<<"$out"; then
    if [ "$notices" -eq 1 ]; then pass "auto on the CPU prints exactly one notice"
    else fail "auto on the CPU prints exactly one notice" "found $notices"; fi
    expect_match err '^trainer: notice: .*(CPU|cpu)' "the notice says training runs on the CPU"
    other=$(grep -vc '^trainer: notice: ' <<<"$err")
    if [ -z "$err" ] || [ "$other" -eq 0 ]; then pass "auto prints nothing else on stderr"
    else fail "auto prints nothing else on stderr"; fi
else
    pass "--device auto picked a GPU ($(grep -o 'device .*$' <<<"$out" | head -n 1))"
fi
expect_match out '^epoch 1/1 ' "--device auto ran an epoch"

run "$TRAINER" devices
expect_rc 0 "trainer devices lists what is usable"
expect_match out '^cpu ' "trainer devices lists the CPU"
expect_match out '^cuda' "trainer devices says what it found for CUDA (a GPU or why none)"

for bad in tpu gpu cuda:x cuda:; do
    run "$TRAINER" train models/mlp.model "${tiny[@]}" --device "$bad"
    expect_error 2 "'$bad'" "--device $bad is a usage error"
done

finish

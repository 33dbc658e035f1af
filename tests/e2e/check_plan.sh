#!/usr/bin/env bash
# `trainer check` prints the memory plan (DESIGN.md §2: static graph, static plan) and the
# largest batch that fits. Then the allocator is held to it: training at that batch under
# the same limit runs whole and peaks at exactly the planned bytes, and one sample more
# does not fit (the trainer splits the batch into micro-batches). Works on a tiny IDX
# dataset made here, so it needs no installed dataset.
source "$(dirname "${BASH_SOURCE[0]}")/common.bash"

run "$TRAINER" check models/lenet.model --batch 256 --device cpu --memory-limit 64M
expect_rc 0 "check --batch 256 --device cpu --memory-limit 64M succeeds"
expect_in out "model models/lenet.model: valid, 857,738 parameters" "the model is still checked"
expect_match out "^memory at batch 256: " "the one-line summary is still there"
expect_match out "^memory plan for training at batch 256 on cpu " "the plan names batch and device"
for category in parameters "parameter gradients" "optimizer state" activations \
    "activation gradients" "layer state" workspace "labels and loss sums" dataset total; do
    expect_match out "^  $category +[0-9.]+ (bytes|KiB|MiB|GiB)" "the plan has a '$category' line"
done
expect_match out "^  optimizer state .* adam: 2 tensors per parameter" "Adam keeps two tensors"
# Per-layer rows: conv2d has parameters, activations and a workspace; maxpool its argmax.
expect_match out "^conv2d1 +conv2d +[0-9.]+ KiB +[0-9.]+ MiB +0 bytes +[0-9.]+ KiB " \
    "conv2d1's row has parameters, activations and an im2col workspace"
expect_match out "^maxpool1 +maxpool +0 bytes +[0-9.]+ MiB +[0-9.]+ MiB +0 bytes " \
    "maxpool1's row has its argmax as layer state"
expect_match out "^flatten1 +flatten " "a view has a row too"
expect_match out "^largest batch in 64\.0 MiB \(--memory-limit\): [0-9]+ \(plan [0-9.]+ MiB\)$" \
    "check prints the largest batch that fits the limit"
if [ -z "$err" ]; then pass "check prints nothing on stderr"; else fail "check prints nothing on stderr"; fi

# Without --memory-limit the budget is the device's memory less the margin.
run "$TRAINER" check models/mlp.model --device cpu
expect_rc 0 "check --device cpu succeeds"
expect_match out "^largest batch in .* \(cpu total .* less 10% for what the allocator does not see\): [0-9]+" \
    "without a limit the budget is the CPU's memory less a margin"

# A training set of 3 samples: the plan's batch is the whole set, which is said as such (it
# said "the most the planner tries").
make_dataset "$work/three" 3 2
run "$TRAINER" check models/mlp.model --device cpu --data "idx:$work/three"
expect_match out "^largest batch in .*: 3 \(plan [0-9.]+ [KM]iB\), the whole training set: a \
larger one fits$" "a batch capped by the training set says so"

# Not even one sample fits: said, not an error (check's job is to tell).
run "$TRAINER" check models/mlp.model --memory-limit 1M
expect_rc 0 "check under a limit the parameters exceed still succeeds"
expect_match out "^largest batch in 1\.0 MiB \(--memory-limit\): none; batch 1 needs [0-9.]+ MiB" \
    "check says when not even batch 1 fits"

# 1.0 is a fraction: all of the device's memory (it was read as 1 byte); a bare 1 is a byte.
run "$TRAINER" check models/mlp.model --device cpu --memory-limit 1.0
expect_rc 0 "check --memory-limit 1.0 succeeds"
expect_match out "^largest batch in [0-9.]+ (MiB|GiB|TiB) \(--memory-limit\): [0-9]+ " \
    "--memory-limit 1.0 is the device's whole memory, and a batch fits it"
run "$TRAINER" check models/mlp.model --device cpu --memory-limit 1
expect_match out "^largest batch in 1 byte \(--memory-limit\): none; " \
    "--memory-limit 1 is one byte, said in the singular"

run "$TRAINER" check models/mlp.model --memory-limit abc
expect_error 2 "memory limit 'abc'" "a bad --memory-limit is a usage error"
run "$TRAINER" check models/mlp.model --device tpu
expect_error 2 "unknown device 'tpu'" "an unknown --device is a usage error"
run "$TRAINER" check models/lenet.model --device cuda
if [ "$rc" -eq 0 ]; then
    expect_match out "^memory plan for training at batch 128 on cuda:0 " "with a GPU, check plans for it"
else
    expect_error 3 "--device cuda" "without a usable GPU, check --device cuda exits 3 with the reason"
    [ -z "$out" ] && pass "and prints no plan" || fail "and prints no plan"
fi

# ---- the allocator holds the plan to its word ---------------------------------------------

make_dataset "$work/data" 200 40
data=(--data "idx:$work/data" --memory-limit 24M --device cpu)

run "$TRAINER" check models/cnn-bn.model "${data[@]}"
expect_rc 0 "check with --data succeeds"
# At the file's batch 128 the activations exceed the limit: the training set is uploaded
# first (it takes less than half of what the parameters leave), the test set finds no room.
expect_match out "^  dataset +[0-9.]+ KiB +training set on the device, test set staged through the host" \
    "with --data the plan says where each dataset copy lives"
largest=$(sed -nE 's/^largest batch in 24\.0 MiB \(--memory-limit\): ([0-9]+) .*/\1/p' <<<"$out")
if [ -z "$largest" ] || [ "$largest" -lt 2 ] || [ "$largest" -ge 200 ]; then
    fail "check finds a largest batch between 2 and the 200 samples" "got '$largest'"
    finish
fi
pass "the largest batch in 24 MiB is $largest"

run "$TRAINER" check models/cnn-bn.model "${data[@]}" --batch "$largest"
planned=$(sed -nE 's/^  total +([0-9.]+ [A-Za-z]+) .*/\1/p' <<<"$out")
run "$TRAINER" train models/cnn-bn.model "${data[@]}" --batch "$largest" --epochs 1
expect_rc 0 "training at the largest batch under the same limit succeeds"
if grep -q "out of memory" <<<"$err"; then
    fail "training at the largest batch runs whole (no out-of-memory split)"
else
    pass "training at the largest batch runs whole (no out-of-memory split)"
fi
expect_match out "^memory on cpu: peak $planned in use, .* 0 out-of-memory" \
    "the allocator's peak is the planned total ($planned)"

run "$TRAINER" train models/cnn-bn.model "${data[@]}" --batch $((largest + 1)) --epochs 1
expect_rc 0 "one sample more still trains (split into micro-batches)"
expect_in err "out of memory" "one sample more than the largest batch does not fit whole"

# A limit past the machine's memory limits nothing: said (1T typed for 1G), check goes on.
run "$TRAINER" check models/mlp.model --device cpu --memory-limit 1000T
expect_rc 0 "check under a limit past the memory"
expect_match err "notice: --memory-limit [0-9.]+ [KMGTP]iB is more than cpu's [0-9.]+ [KMGTP]iB \
of memory: it limits nothing" "a limit past the machine's memory gets a notice"

finish

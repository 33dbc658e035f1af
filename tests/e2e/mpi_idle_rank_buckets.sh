#!/usr/bin/env bash
# A rank with no samples in a step starts the same gradient buckets as the ranks with
# samples. 402 samples in batches of 16 over 4 ranks: the last step's 2 samples leave ranks 2
# and 3 idle, their backward never runs, and they must still start the buckets backward
# starts on the others, in the same order, or the nonblocking sums do not match (before the
# fix: `MPI_Waitall failed: MPI_ERR_IN_STATUS` at that step). Two hidden layers, so that
# 0.01 MiB buckets start one after the middle layer and one after the first.
source "$(dirname "${BASH_SOURCE[0]}")/common.bash"
require_python3 "compare the weights files"
require_mpirun
require_fashion_mnist
cat >"$work/deep.model" <<MODEL
input     shape=784 dtype=f32
dense     units=64 act=relu
dense     units=64 act=relu
dense     units=10
loss      softmax_cross_entropy
optimizer sgd lr=0.05 momentum=0.9
train     batch=16 epochs=1 seed=3
MODEL
args=(train "$work/deep.model" --data fashion-mnist --train-limit 402 --test-limit 80
      --device cpu --threads 1)

require_trainer_mpi
ranks 4 "${args[@]}" --bucket-mb 0.01 --save "$work/buckets.safetensors"
expect_rc 0 "4 ranks, 2 of them idle in the last step, with 0.01 MiB buckets"
expect_match err "gradient sums over 4 processes: .* in 26 steps .* buckets of 0.01 MiB" \
    "every step, the last included, summed in buckets"
ranks 4 "${args[@]}" --bucket-mb 0 --save "$work/one-sum.safetensors"
expect_rc 0 "the same with one sum after backward"
if cmp -s "$work/buckets.safetensors" "$work/one-sum.safetensors"; then
    pass "buckets and one sum after backward: the same weights"
else
    expect_same_weights "$work/one-sum.safetensors" "$work/buckets.safetensors" \
        "buckets and one sum after backward: the same weights"
fi
finish

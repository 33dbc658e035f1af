#!/usr/bin/env bash
# `mpirun -np 1` on a GPU ends with the parameters of `--gpus 0`, the single-GPU path (FP32,
# no TF32; relative error <= 1e-5), and whatever --bucket-mb says (0, 0.01, the default 25)
# with the same bytes: one rank is a world of one, which sums nothing, so the bucket size
# must change nothing. Skipped (77) without a usable GPU or without mpirun.
source "$(dirname "${BASH_SOURCE[0]}")/../e2e/common.bash"
require_python3 "read trainer doctor --json and compare weights"
require_fashion_mnist
require_mpirun
require_usable_gpu
write_sgd_mlp "$work/plain.model" 64 64
args=(train "$work/plain.model" --data fashion-mnist --train-limit 2048 --test-limit 256
      --no-tf32)

run "$TRAINER" "${args[@]}" --gpus 0 --save "$work/gpus0.safetensors"
expect_rc 0 "--gpus 0 trains"
run mpirun -np 1 "$TRAINER" "${args[@]}" --device cuda --save "$work/one-rank.safetensors"
expect_rc 0 "mpirun -np 1 trains on the GPU"
expect_same_weights "$work/gpus0.safetensors" "$work/one-rank.safetensors" \
    "mpirun -np 1 ends with --gpus 0's parameters"
for mb in 0 0.01 25; do
    run mpirun -np 1 "$TRAINER" "${args[@]}" --device cuda --bucket-mb "$mb" \
        --save "$work/one-rank-$mb.safetensors"
    expect_rc 0 "mpirun -np 1 --bucket-mb $mb trains"
    if cmp -s "$work/one-rank.safetensors" "$work/one-rank-$mb.safetensors"; then
        pass "mpirun -np 1 --bucket-mb $mb: the same bytes"
    else
        fail "mpirun -np 1 --bucket-mb $mb changes nothing" "the weights differ"
    fi
done
finish

#!/usr/bin/env bash
# `mpirun -np 2` on 2 GPUs (each rank on its local GPU) ends with the parameters of one GPU
# training the same global batch (FP32, no TF32; relative error <= 1e-5), whatever the
# gradient buckets (--bucket-mb 0: one sum after backward; 0.01: a bucket per layer or two,
# summed on the communication stream while backward goes on; the default 25); with
# --sync-batchnorm, likewise for a conv + batchnorm model (its statistics summed over NCCL
# too, among 0.01 MiB buckets). Skipped (77)
# without mpirun or with fewer than 2 usable GPUs, saying which.
source "$(dirname "${BASH_SOURCE[0]}")/../e2e/common.bash"
require_python3 "read trainer doctor --json and compare weights"
require_fashion_mnist
require_mpirun
require_usable_gpu
write_sgd_mlp "$work/plain.model" 64 64
args=(train "$work/plain.model" --data fashion-mnist --train-limit 2048 --test-limit 256
      --no-tf32)

if [ "$usable_gpus" -lt 2 ]; then
    echo "SKIP: $usable_gpus usable GPU; mpirun -np 2 against one GPU needs 2"
    exit 77
fi
run "$TRAINER" "${args[@]}" --gpus 0 --save "$work/gpus0.safetensors"
expect_rc 0 "one GPU trains"
run mpirun -np 2 "$TRAINER" "${args[@]}" --device cuda --save "$work/two-ranks.safetensors"
expect_rc 0 "mpirun -np 2 trains, a GPU each"
expect_match out "^ranks: 2 processes .* 1 on [^ ]+ \(cuda:1" "rank 1 on its local GPU, cuda:1"
expect_match err "gradient sums over 2 processes: .* s waited in .* steps \(.* ms a step\), buckets of 25 MiB started during backward, on a communication stream" \
    "rank 0 says how long the GPU waited for the sums"
expect_same_weights "$work/gpus0.safetensors" "$work/two-ranks.safetensors" \
    "2 ranks on 2 GPUs end with one GPU's parameters"
for mb in 0 0.01; do
    run mpirun -np 2 "$TRAINER" "${args[@]}" --device cuda --bucket-mb "$mb" \
        --save "$work/two-ranks-$mb.safetensors"
    expect_rc 0 "mpirun -np 2 --bucket-mb $mb trains"
    expect_same_weights "$work/gpus0.safetensors" "$work/two-ranks-$mb.safetensors" \
        "2 ranks with --bucket-mb $mb end with one GPU's parameters"
done
expect_match err "buckets of 0.01 MiB started during backward, on a communication stream" \
    "0.01 MiB buckets are started during backward"

write_bn_model "$work/bn.model" 8 32 64
# 2051 = 32 * 64 + 3: the last batch, 3 samples, split 1 + 2 (not 2: see
# tests/e2e/sync_batchnorm.sh on two values per channel). The first 2051 samples
# (--limit-order first), the ones this agreement was measured on.
bn=(train "$work/bn.model" --data fashion-mnist --train-limit 2051 --test-limit 256
    --limit-order first --no-tf32)
run "$TRAINER" "${bn[@]}" --gpus 0 --save "$work/bn-gpus0.safetensors"
expect_rc 0 "one GPU trains the batchnorm model"
run mpirun -np 2 "$TRAINER" "${bn[@]}" --device cuda --sync-batchnorm --bucket-mb 0.01 \
    --save "$work/bn-two-ranks.safetensors"
expect_rc 0 "mpirun -np 2 --sync-batchnorm trains, a GPU each"
expect_same_weights "$work/bn-gpus0.safetensors" "$work/bn-two-ranks.safetensors" \
    "2 synced ranks on 2 GPUs end with one GPU's parameters and running statistics"
finish

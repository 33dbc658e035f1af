#!/usr/bin/env bash
# `mpirun -np 1` on a GPU ends with the parameters of `--gpus 0`, the single-GPU path (FP32,
# no TF32; relative error <= 1e-5). Skipped (77) without a usable GPU or without mpirun.
source "$(dirname "${BASH_SOURCE[0]}")/../e2e/common.bash"
require_python3 "read trainer doctor --json and compare weights"
require_fashion_mnist
if ! command -v mpirun >/dev/null; then
    echo "SKIP: mpirun is not installed (apt-get install openmpi-bin libopenmpi-dev)"
    exit 77
fi
require_usable_gpu
usable=$usable_gpus
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
cat >"$work/plain.model" <<'MODEL'
input     shape=784 dtype=f32
dense     units=64 act=relu
dense     units=10
loss      softmax_cross_entropy
optimizer sgd lr=0.05 momentum=0.9
train     batch=64 epochs=2 seed=3
MODEL
args=(train "$work/plain.model" --data fashion-mnist --train-limit 2048 --test-limit 256
      --no-tf32)
compare() {  # compare A B WHAT
    local result
    if result=$(python3 tests/e2e/compare_weights.py "$1" "$2"); then pass "$3: $result"
    else fail "$3" "$result"; fi
}

run "$TRAINER" "${args[@]}" --gpus 0 --save "$work/gpus0.safetensors"
expect_rc 0 "--gpus 0 trains"
run mpirun -np 1 "$TRAINER" "${args[@]}" --device cuda --save "$work/one-rank.safetensors"
expect_rc 0 "mpirun -np 1 trains on the GPU"
compare "$work/gpus0.safetensors" "$work/one-rank.safetensors" \
    "mpirun -np 1 ends with --gpus 0's parameters"
finish

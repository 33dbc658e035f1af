#!/usr/bin/env bash
# `mpirun -np 2` on 2 GPUs (each rank on its local GPU) ends with the parameters of one GPU
# training the same global batch (FP32, no TF32; relative error <= 1e-5). Skipped (77)
# without mpirun or with fewer than 2 usable GPUs, saying which.
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

if [ "$usable" -lt 2 ]; then
    echo "SKIP: $usable usable GPU; mpirun -np 2 against one GPU needs 2"
    exit 77
fi
run "$TRAINER" "${args[@]}" --gpus 0 --save "$work/gpus0.safetensors"
expect_rc 0 "one GPU trains"
run mpirun -np 2 "$TRAINER" "${args[@]}" --device cuda --save "$work/two-ranks.safetensors"
expect_rc 0 "mpirun -np 2 trains, a GPU each"
expect_match out "^ranks: 2 processes .* 1 on [^ ]+ \(cuda:1" "rank 1 on its local GPU, cuda:1"
compare "$work/gpus0.safetensors" "$work/two-ranks.safetensors" \
    "2 ranks on 2 GPUs end with one GPU's parameters"
finish

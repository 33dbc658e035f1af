#!/usr/bin/env bash
# Two data-parallel replicas on one GPU in one process (`--gpus 0,0`) end with the
# parameters of one replica training the same global batch, 2 epochs (FP32, no TF32;
# relative error <= 1e-5): by default (auto) their gradients are added on the card itself
# (replica 0's stream), since NCCL refuses one device twice, with a notice naming the
# replicas; --collective mpi stages them through host memory instead, to the same bits.
# --collective nccl lets NCCL refuse (ncclInvalidUsage, "Duplicate GPU detected") and says
# beside it which replicas share which GPU (exit 1). Skipped (77) without a usable GPU.
source "$(dirname "${BASH_SOURCE[0]}")/../e2e/common.bash"
require_python3 "read trainer doctor --json and compare weights"
require_fashion_mnist
require_usable_gpu
write_sgd_mlp "$work/plain.model" 64 64
args=(train "$work/plain.model" --data fashion-mnist --train-limit 2048 --test-limit 256
      --no-tf32)

run "$TRAINER" "${args[@]}" --gpus 0 --save "$work/one.safetensors"
expect_rc 0 "one replica on cuda:0 trains"

run "$TRAINER" "${args[@]}" --gpus 0,0 --save "$work/two.safetensors"
expect_rc 0 "--gpus 0,0 trains two replicas on cuda:0"
expect_in out "device cuda:0,cuda:0 (2 data-parallel replicas)" "both replicas are announced"
expect_match err "notice: --collective auto: replicas 0 and 1 share cuda:0, which NCCL refuses.* on the device itself" \
    "a notice says why the sums are made on the card"
expect_same_weights "$work/one.safetensors" "$work/two.safetensors" \
    "two replicas on one card end with one replica's parameters"

run "$TRAINER" "${args[@]}" --gpus 0,0 --collective mpi --save "$work/two-mpi.safetensors"
expect_rc 0 "--gpus 0,0 --collective mpi trains"
expect_no_match err "notice: --collective" "no notice when host memory was asked for"
expect_same_weights "$work/one.safetensors" "$work/two-mpi.safetensors" \
    "--collective mpi: two replicas on one card end with one replica's parameters"
if cmp -s "$work/two.safetensors" "$work/two-mpi.safetensors"; then
    pass "the sum on the card and the host-staged one give the same bits"
else fail "the sum on the card and the host-staged one give the same bits" "the weights differ"; fi

run "$TRAINER" "${args[@]}" --gpus 0,0 --collective nccl
if [ "$rc" = 0 ]; then
    fail "--gpus 0,0 --collective nccl is refused by NCCL" "it trained: this NCCL accepts one device twice"
else
    expect_error 1 "--collective nccl: replicas 0 and 1 share cuda:0, and NCCL takes one replica per GPU" \
        "--gpus 0,0 --collective nccl: NCCL's refusal, with the replicas and the GPU"
    expect_match err "ncclInvalidUsage" "NCCL's own result is kept"
    expect_match err "hint: list each GPU once in --gpus" "the hint says how to fix it"
fi
finish

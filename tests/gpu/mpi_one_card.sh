#!/usr/bin/env bash
# `mpirun -np 2` with both ranks on one GPU (--device cuda:0 on each, as a launch on a
# one-GPU machine or a wrong device mapping gives): with --collective auto (the default)
# the ranks find that they share a card (their PCI bus ids, gathered over MPI before NCCL)
# and sum through host memory (MPI_Allreduce, bucketed), saying so in a notice, and end
# with the parameters of one GPU training the same global batch, 2 epochs (FP32, no TF32;
# relative error <= 1e-5), whatever the buckets; --collective mpi likewise. --collective
# nccl lets NCCL refuse ("Duplicate GPU detected", ncclInvalidUsage) and says beside it
# which ranks share which GPU and the local-rank mapping that fixes it (exit 1). Skipped
# (77) without mpirun or a usable GPU.
source "$(dirname "${BASH_SOURCE[0]}")/../e2e/common.bash"
require_python3 "read trainer doctor --json and compare weights"
require_fashion_mnist
require_mpirun
require_usable_gpu
write_sgd_mlp "$work/plain.model" 64 64
args=(train "$work/plain.model" --data fashion-mnist --train-limit 2048 --test-limit 256
      --no-tf32 --device cuda:0)

run "$TRAINER" "${args[@]}" --save "$work/one.safetensors"
expect_rc 0 "one process on cuda:0 trains"

run mpirun -np 2 "$TRAINER" "${args[@]}" --save "$work/auto.safetensors"
expect_rc 0 "mpirun -np 2, both ranks on cuda:0, trains (auto)"
expect_match out "^ranks: 2 processes .* 0 on [^ ]+ \(cuda:0\), 1 on [^ ]+ \(cuda:0\)" \
    "rank 0 lists both ranks on cuda:0"
expect_match err "notice: --collective auto: ranks 0 and 1 of 2 share the GPU at PCI [0-9a-f:.]+ on " \
    "a notice names the ranks and the GPU they share"
expect_match err "through host memory \(MPI_Allreduce\)" "the notice says what sums instead"
expect_same_weights "$work/one.safetensors" "$work/auto.safetensors" \
    "2 ranks on one card end with one GPU's parameters"

for mb in 0 0.01; do
    run mpirun -np 2 "$TRAINER" "${args[@]}" --collective mpi --bucket-mb "$mb" \
        --save "$work/mpi-$mb.safetensors"
    expect_rc 0 "mpirun -np 2 --collective mpi --bucket-mb $mb trains"
    expect_no_match err "notice: --collective" "no notice when MPI was asked for"
    expect_same_weights "$work/one.safetensors" "$work/mpi-$mb.safetensors" \
        "--collective mpi --bucket-mb $mb: 2 ranks on one card end with one GPU's parameters"
done

run mpirun -np 2 "$TRAINER" "${args[@]}" --collective nccl
if [ "$rc" = 0 ]; then
    fail "--collective nccl with 2 ranks on one GPU is refused by NCCL" \
        "it trained: this NCCL accepts one device twice"
else
    if [ "$rc" = 1 ] || [ "$rc" = 3 ]; then pass "--collective nccl on one card fails (exit $rc)"
    else fail "--collective nccl on one card fails with 1 or 3" "exit $rc"; fi
    expect_match err "--collective nccl: ranks 0 and 1 of 2 share the GPU at PCI [0-9a-f:.]+ on [^ ]+ \(cuda:0 in rank 0, cuda:0 in rank 1\), and NCCL takes one rank per GPU" \
        "the error names the ranks and the GPU they share"
    expect_match err "ncclInvalidUsage" "NCCL's own result is kept"
    expect_match err "hint: .*CUDA_VISIBLE_DEVICES=\\\$OMPI_COMM_WORLD_LOCAL_RANK" \
        "the hint gives the local-rank mapping"
fi
finish

#!/usr/bin/env bash
# --collective auto|nccl|mpi (docs/distributed.md) where no GPU is needed: CPU replicas and
# CPU ranks sum through host memory, which auto and mpi accept; nccl there, or a word that
# is not one of the three, is a usage error (exit 2) with a hint, said before any data is
# read; ranks of one launch given different ones disagree (exit 2). The GPU halves (two
# replicas or two ranks on one card) are tests/gpu/*_one_card.sh.
source "$(dirname "${BASH_SOURCE[0]}")/common.bash"
require_fashion_mnist
write_sgd_mlp "$work/plain.model" 16 32
args=(train "$work/plain.model" --train-limit 256 --test-limit 64 --epochs 1 --device cpu
      --threads 1)

run "$TRAINER" "${args[@]}" --collective ring
expect_error 2 "--collective ring: expected auto, nccl or mpi" "an unknown collective is refused"
run "$TRAINER" "${args[@]}" --collective nccl
expect_error 2 "--collective nccl sums over GPUs, but the device is cpu" \
    "--collective nccl on the CPU is refused"
expect_match err "hint: .*--collective mpi" "the hint names what the CPU uses"
expect_no_match out "^data " "refused before the data is read"
run "$TRAINER" "${args[@]}" --replicas 2 --collective nccl
expect_error 2 "--collective nccl sums over GPUs" "--collective nccl with CPU replicas is refused"

run "$TRAINER" "${args[@]}" --replicas 2 --save "$work/auto.safetensors"
expect_rc 0 "two CPU replicas train with the default (auto)"
for choice in auto mpi; do
    run "$TRAINER" "${args[@]}" --replicas 2 --collective "$choice" \
        --save "$work/$choice.safetensors"
    expect_rc 0 "two CPU replicas train with --collective $choice"
    expect_no_match err "notice: --collective" "no notice: the CPU sums through host memory"
    if cmp -s "$work/auto.safetensors" "$work/$choice.safetensors"; then
        pass "--collective $choice ends where the default does"
    else fail "--collective $choice ends where the default does" "the weights differ"; fi
done

if command -v mpirun >/dev/null; then
    require_mpirun
    require_trainer_mpi
    ranks 2 "${args[@]}" --collective mpi --save "$work/ranks.safetensors"
    expect_rc 0 "mpirun -np 2 on the CPU with --collective mpi trains"
    ranks 2 "${args[@]}" --collective nccl
    expect_error 2 "--collective nccl sums over GPUs, but the device is cpu" \
        "mpirun -np 2 on the CPU with --collective nccl is refused"
    # Ranks on different paths would meet in different collectives: refused before either.
    run timeout 120 mpirun --oversubscribe -np 1 "$TRAINER" "${args[@]}" --collective auto \
        : -np 1 "$TRAINER" "${args[@]}" --collective mpi
    expect_error 2 "ranks disagree on collective: rank 0 has auto, rank 1 has mpi" \
        "ranks given different --collective are stopped before the first step"
else
    echo "note: mpirun is not installed; the mpirun checks did not run"
fi

finish

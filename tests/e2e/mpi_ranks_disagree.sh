#!/usr/bin/env bash
# Ranks of one `mpirun` launch started on different runs (mpirun's `A : B` form gives each
# rank its own command line) are stopped before the first step: mpirun exits 2, rank 0
# says once "ranks disagree on FIELD: rank 0 has X, rank R has Y", and every rank exits 2.
# Before: models of different shapes failed in the parameter broadcast or overflowed the
# gradient sums (rc 139), different --epochs, --batch or --train-limit hung forever, and a
# different --seed or --lr trained silently. Each launch runs under `timeout`: a hang fails.
source "$(dirname "${BASH_SOURCE[0]}")/common.bash"
require_mpirun
# Random 28x28 images, more than the limit: the ranks stop before the first step, and each
# rank reading all of Fashion-MNIST's 60000 took 0.3 s of CPU (0.5 s under ASan) a launch.
make_random_dataset "$work/data" 128 32
write_sgd_mlp "$work/a.model" 32 16
write_sgd_mlp "$work/b.model" 16 16
args=(--data "idx:$work/data" --train-limit 64 --test-limit 16 --epochs 1 --device cpu
      --threads 1)
require_trainer_mpi

# A wrapper that records each rank's own exit code: mpirun reports only one.
cat >"$work/rank.sh" <<'WRAPPER'
#!/usr/bin/env bash
"$@"
code=$?
echo "$code" >"$RANK_CODES/rank$OMPI_COMM_WORLD_RANK"
exit "$code"
WRAPPER
chmod +x "$work/rank.sh"
export RANK_CODES="$work/codes"

# disagree NAME "MODEL0 ARGS0" "MODEL1 ARGS1" FIELD: two ranks, each its own command line
# (ARGS after the common ones: the last of an option given twice counts).
disagree() {
    local name=$1 field=$4
    local -a first second
    read -r -a first <<<"$2"
    read -r -a second <<<"$3"
    run timeout 120 mpirun --oversubscribe \
        -np 1 "$TRAINER" train "${first[0]}" "${args[@]}" "${first[@]:1}" \
        : -np 1 "$TRAINER" train "${second[0]}" "${args[@]}" "${second[@]:1}"
    expect_error 2 "ranks disagree on $field: rank 0 has" "$name: mpirun exits 2 naming $field"
    if [ "$(grep -c "ranks disagree on" <<<"$err")" = 1 ]; then pass "$name: said once"
    else fail "$name: said once" "$(grep -c "ranks disagree on" <<<"$err") times"; fi
    # The sanitizer build (-fno-sanitize-recover) would also change the exit codes.
    expect_no_match err "Sanitizer|runtime error" "$name: no sanitizer report"
    # Every rank's own code, with mpirun told not to end the others once one has exited.
    rm -rf "$RANK_CODES" && mkdir -p "$RANK_CODES"
    timeout 120 mpirun --oversubscribe --mca orte_abort_on_non_zero_status 0 \
        -np 1 "$work/rank.sh" "$TRAINER" train "${first[0]}" "${args[@]}" "${first[@]:1}" \
        : -np 1 "$work/rank.sh" "$TRAINER" train "${second[0]}" "${args[@]}" "${second[@]:1}" \
        >/dev/null 2>&1
    local codes
    codes=$(cat "$RANK_CODES/rank0" "$RANK_CODES/rank1" 2>/dev/null | tr '\n' ' ')
    if [ "$codes" = "2 2 " ]; then pass "$name: every rank exits 2"
    else fail "$name: every rank exits 2" "rank codes: ${codes:-none recorded}"; fi
}

a=$work/a.model b=$work/b.model
disagree "models of different shapes" "$a" "$b" "parameter 1"
expect_in err "rank 0 has dense1.weight 32x784, rank 1 has dense1.weight 16x784" \
    "the shapes are named"
disagree "--batch" "$a --batch 16" "$a --batch 32" "batch"
expect_in err "rank 0 has 16, rank 1 has 32" "both batches are named"
disagree "--epochs" "$a" "$a --epochs 2" "epochs"
disagree "--seed" "$a" "$a --seed 5" "seed"
disagree "--lr" "$a" "$a --lr 0.1" "lr"
expect_in err "rank 0 has 0.05, rank 1 has 0.1" "both rates are named"
disagree "--train-limit" "$a" "$a --train-limit 32" "train samples"
disagree "--bucket-mb" "$a" "$a --bucket-mb 1" "bucket_mb"

# What does not define the run may differ: a copy of the model file elsewhere, --threads.
cp "$a" "$work/copy.model"
run timeout 120 mpirun --oversubscribe -np 1 "$TRAINER" train "$a" "${args[@]}" \
    : -np 1 "$TRAINER" train "$work/copy.model" "${args[@]}" --threads 2
expect_rc 0 "ranks with a copy of the model and other --threads train"
expect_match out "^epoch 1/1 " "and rank 0 reports the epoch"
finish

#!/usr/bin/env bash
# `mpirun -np N trainer train` on the CPU (oversubscribed: N processes on 2 cores is fine):
# - with global batch B, 2 and 4 ranks end with the parameters of one process with batch B,
#   same seed (relative error <= 1e-5), for a model without dropout or batchnorm; the log's
#   loss and accuracy are the whole step's, the same figures;
# - rank 0 alone prints, and writes --save and checkpoints; every rank resumes from them;
# - a batch the ranks cannot share evenly is refused naming both numbers, or lowered with
#   --drop-remainder; a usage error is said once, not once per rank;
# - a rank killed mid-run ends the launch with an error naming it, within a minute: no hang.
source "$(dirname "${BASH_SOURCE[0]}")/common.bash"
require_python3 "compare the weights files"
require_mpirun

# Seeded random 28x28 images, the same every run: 40 ranks start in this test, and each
# reading all of Fashion-MNIST's 60000 took 0.3 s of CPU (0.5 s under ASan).
make_random_dataset "$work/data" 480 100
write_sgd_mlp "$work/plain.model" 32 16
args=(train "$work/plain.model" --data "idx:$work/data" --train-limit 400 --test-limit 80
      --device cpu --threads 1)

run "$TRAINER" "${args[@]}" --save "$work/one.safetensors"
expect_rc 0 "one process trains"
one_result=$(last_epoch_result)
require_trainer_mpi

for n in 2 4; do
    ranks "$n" "${args[@]}" --save "$work/ranks$n.safetensors"
    expect_rc 0 "mpirun -np $n trains"
    expect_match out "^ranks: $n processes \(Open MPI [^)]*\): 0 on [^ ]+ \(cpu\)" \
        "rank 0 lists the $n ranks, their hosts and devices"
    if [ "$(grep -c '^epoch 2/2' <<<"$out")" = 1 ]; then pass "only rank 0 prints"
    else fail "only rank 0 prints" "$(grep -c '^epoch 2/2' <<<"$out") epoch-2 lines"; fi
    if [ "$(last_epoch_result)" = "$one_result" ]; then
        pass "$n ranks log the one process's loss and accuracy"
    else
        fail "$n ranks log the one process's figures" "one: $one_result; $n: $(last_epoch_result)"
    fi
    expect_same_weights "$work/one.safetensors" "$work/ranks$n.safetensors" \
        "$n ranks end with one process's parameters"
done

# Buckets: summing each layer's gradients while backward goes on, in small buckets, gives
# what one sum after backward gives, byte for byte (two ranks: a + b in any chunking).
ranks 2 "${args[@]}" --bucket-mb 0.01 --save "$work/small-buckets.safetensors"
expect_rc 0 "2 ranks with 10 KiB buckets"
expect_match err "gradient sums over 2 processes: .* buckets of 0.01 MiB started during backward" \
    "rank 0 says how long it waited for the sums"
ranks 2 "${args[@]}" --bucket-mb 0 --save "$work/no-buckets.safetensors"
expect_rc 0 "2 ranks with one sum after backward"
if cmp -s "$work/small-buckets.safetensors" "$work/no-buckets.safetensors" &&
    cmp -s "$work/small-buckets.safetensors" "$work/ranks2.safetensors"; then
    pass "small buckets, 25 MiB buckets and one sum after backward: the same weights"
else
    fail "bucket sizes change nothing" "the weights differ"
fi

# Checkpoints: rank 0 writes, every rank resumes; 1 epoch + 1 resumed = the 2-epoch run.
ranks 2 "${args[@]}" --epochs 1 --checkpoint "$work/ck"
expect_rc 0 "an epoch with a checkpoint"
ranks 2 "${args[@]}" --resume "$work/ck" --save "$work/resumed.safetensors"
expect_rc 0 "both ranks resume from rank 0's checkpoint"
expect_same_weights "$work/ranks2.safetensors" "$work/resumed.safetensors" \
    "resumed, the ranks end where the uninterrupted launch ended"

# The batch over the ranks.
ranks 4 "${args[@]}" --batch 18 --epochs 1
expect_error 2 "the batch of 18 samples does not split evenly over the 4 processes" \
    "an uneven batch is refused naming both numbers"
ranks 4 "${args[@]}" --batch 18 --epochs 1 --drop-remainder
expect_rc 0 "--drop-remainder trains"
expect_in err "--drop-remainder: batch 18 over 4 processes; training with batch 16" \
    "and says what it trains with"
ranks 2 "${args[@]}" --epochs 1 --replicas 2
expect_error 2 "with mpirun, a process trains one" "replicas inside ranks are refused"
# A notice about the options or data is the same on every rank: rank 0 says it once.
ranks 2 "${args[@]}" --epochs 1 --threads 999
expect_rc 0 "2 ranks with --threads past the cores"
if [ "$(grep -c "notice: --threads 999 is more than" <<<"$err")" = 1 ]; then
    pass "a notice about the options is said once"
else fail "a notice about the options is said once" "$(grep -c "threads 999" <<<"$err") times"; fi
# A mistyped option is the same mistake on every rank: said once, by rank 0, which exits 2
# (the others exit 0, so that mpirun cannot end rank 0 before its message). Three times:
# with every rank exiting 2, a run could say nothing at all.
for _ in 1 2 3; do
    ranks 3 "${args[@]}" --epochs 1 --bogus
    expect_error 2 "unknown option '--bogus' for train" "a usage error under mpirun"
    if [ "$(grep -c "unknown option '--bogus'" <<<"$err")" = 1 ]; then pass "it is said once"
    else fail "a usage error is said once" "$(grep -c "unknown option" <<<"$err") times"; fi
done

# A rank killed mid-run: the launch ends, naming it, instead of the others waiting forever.
(mpirun -np 2 --oversubscribe "$TRAINER" "${args[@]}" --epochs 1000 \
    >"$work/kill.out" 2>&1; echo "$?" >"$work/kill.rc") &
launcher=$!
victim=""
for _ in $(seq 100); do
    victim=$(pgrep -f "^$TRAINER train $work/plain.model" | sort -n | tail -n 1)
    [ -n "$victim" ] && grep -q '^epoch 1/1000' "$work/kill.out" 2>/dev/null && break
    sleep 0.2
done
if [ -z "$victim" ]; then
    fail "a rank to kill was found" "no trainer process under mpirun"
else
    kill -9 "$victim"
    for _ in $(seq 300); do [ -f "$work/kill.rc" ] && break; sleep 0.2; done
    if [ -f "$work/kill.rc" ]; then
        out=$(cat "$work/kill.out") err="" rc=$(cat "$work/kill.rc") ran="mpirun ... (one rank killed)"
        if [ "$rc" -ne 0 ]; then pass "the launch ended, failing (exit $rc), within a minute"
        else fail "the launch failed" "exit 0"; fi
        expect_match out "(exited on signal 9|killed|Killed)" "mpirun names the killed rank"
    else
        kill -9 "$launcher" 2>/dev/null
        pkill -9 -f "^$TRAINER train $work/plain.model"
        fail "the launch ended within a minute" "still running after a rank was killed"
    fi
fi
wait 2>/dev/null

finish

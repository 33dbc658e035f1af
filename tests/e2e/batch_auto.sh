#!/usr/bin/env bash
# --batch auto (issue 6): the memory plan proposes the largest batch under the limit, a
# trial step confirms it, and training then runs that batch without running out of memory;
# a choice capped at the training set says so, and --resume keeps the checkpoint's batch.
source "$(dirname "${BASH_SOURCE[0]}")/common.bash"
require_fashion_mnist

tiny=(train models/lenet.model --device cpu --epochs 1 --train-limit 600 --test-limit 200
    --batch auto)

run "$TRAINER" "${tiny[@]}" --memory-limit 48M
expect_rc 0 "--batch auto under a 48 MiB limit trains"
expect_match out "^batch auto: [0-9]+ \(the memory plan allows [0-9]+ in 43\.2 MiB on cpu, keeping 10% free; [0-9]+ trial steps?\)" \
    "the choice is reported with the plan and the budget"
chosen=$(sed -n 's/^batch auto: \([0-9]*\).*/\1/p' <<<"$out")
expect_match out "batch $chosen, 1 epoch" "training runs the chosen batch"
expect_match out "^memory on cpu: .* 0 out-of-memory" "the chosen batch never runs out of memory"
if [ -n "$chosen" ] && [ "$chosen" -gt 1 ]; then pass "a useful batch ($chosen) fits"; else fail "a useful batch fits" "chose '$chosen'"; fi

# Past the training set's size the plan's own answer is meaningless (it clamps a batch to
# the data, so 1048576 "fit" in 14.4 MiB): the cap is what is reported.
small=(train models/mlp.model --device cpu --train-limit 500 --test-limit 100)
run "$TRAINER" "${small[@]}" --epochs 1 --batch auto --memory-limit 16M
expect_in out "batch auto: 500 (the memory plan allows the whole training set, 500 samples," \
    "a choice capped at the training set says so, not the plan's uncapped number"
expect_no_match out "1048576" "the plan's uncapped answer is not shown"
run "$TRAINER" train models/mlp.model --device cpu --train-limit 1 --test-limit 10 --epochs 1 \
    --batch auto --memory-limit 16M
expect_in out "the whole training set, 1 sample," "one sample, singular"
# Replicas sharing the CPU each hold their own parameters, optimizer state and
# activations: the choice is per replica, in its share of the memory. It was made for one
# replica in all of it, and the first step ran out of memory (2 micro-batches of 11).
run "$TRAINER" train models/lenet.model --device cpu --epochs 1 --train-limit 300 \
    --test-limit 100 --batch auto --replicas 2 --memory-limit 64M
expect_rc 0 "--batch auto with two CPU replicas trains"
expect_match out "^batch auto: [0-9]+ \([0-9]+ on each of 2 replicas; the memory plan allows .* \
per replica in [0-9.]+ MiB \(each replica's share\) on cpu" "the choice is per replica"
expect_no_match err "out of memory at batch" "and training never runs out of memory"
# The trial holds both replicas' state and activations in the whole trial share, so it
# confirms the plan's answer (exact on the CPU) at once. It used to try one replica under
# its share with the other's parameters and state counted against it: 7 per replica of
# the 12 planned, in 5 trial steps, and the memory line showed their 3 out-of-memory probes.
per_replica=$(sed -n 's/^batch auto: [0-9]* (\([0-9]*\) on each of 2 replicas.*/\1/p' <<<"$out")
planned=$(sed -n 's/^batch auto: .* the memory plan allows \([0-9]*\) per replica.*/\1/p' <<<"$out")
if [ -n "$per_replica" ] && [ "$per_replica" = "$planned" ]; then
    pass "two replicas get the plan's batch each ($per_replica)"
else fail "two replicas get the plan's batch each" "chose '$per_replica' of '$planned' planned"; fi
expect_match out "; 1 trial step\)$" "one trial step confirms it"
expect_match out "^memory on cpu: .* 0 out-of-memory" "the run never runs out of memory"
chosen=$(sed -n 's/^batch auto: \([0-9]*\) .*/\1/p' <<<"$out")
run "$TRAINER" train models/lenet.model --device cpu --epochs 1 --train-limit 300 \
    --test-limit 100 --batch $((2 * ${chosen:-1})) --replicas 2 --memory-limit 64M
expect_in err "out of memory at batch" "twice the choice does not fit: it is not half of what does"

# A batch capped to the training set need not divide over the replicas: 9 samples over 4
# are 3 on the first and 2 on each of the others (replica_share). It said "2 on each of 4".
cat >"$work/three.model" <<'MODEL'
input shape=3
dense units=4 act=relu
dense units=2
loss softmax_cross_entropy
optimizer sgd lr=0.1
train batch=4 epochs=1 seed=1
MODEL
{
    echo "a,b,c,label"
    for i in $(seq 1 12); do echo "$i,$((i % 5)),0.5,$((i % 2))"; done
} >"$work/twelve.csv"
run "$TRAINER" train "$work/three.model" --data "csv:$work/twelve.csv" --val-split 0.25 \
    --device cpu --epochs 1 --batch auto --replicas 4
expect_rc 0 "--batch auto with four replicas on 9 samples trains"
expect_in out "9 train, 3 val samples" "a quarter of 12 rows is held out"
expect_in out "batch auto: 9 (3 on 1 of 4 replicas and 2 on each of the other 3; the memory \
plan allows the whole training set, 9 samples, per replica" \
    "a batch that does not divide says how the replicas share it"
run "$TRAINER" train "$work/three.model" --data "csv:$work/twelve.csv" --val-split 0.25 \
    --device cpu --epochs 1 --batch auto --replicas 2
expect_in out "batch auto: 9 (5 on 1 of 2 replicas and 4 on the other; " \
    "with one replica left over, 'the other'"
run "$TRAINER" train "$work/three.model" --data "csv:$work/twelve.csv" --val-split 0.25 \
    --device cpu --epochs 1 --batch auto --replicas 3
expect_in out "batch auto: 9 (3 on each of 3 replicas; " "an even split says 'each'"

# A batch given past the training set is one step of all of it, and the header says so.
run "$TRAINER" "${small[@]}" --epochs 1 --batch 5000
expect_in out "batch 500 (the whole training set; 5000 asked), 1 epoch" \
    "the header gives the batch the steps take, and the one asked"

# --resume continues at the checkpoint's batch: no trial steps, no choice to override.
run "$TRAINER" "${small[@]}" --epochs 1 --checkpoint "$work/ck"
run "$TRAINER" "${small[@]}" --epochs 2 --batch auto --memory-limit 16M --resume "$work/ck" \
    --checkpoint "$work/ck"
expect_rc 0 "--batch auto with --resume trains"
expect_in out "batch auto: not chosen: --resume continues at the checkpoint's batch" \
    "with --resume the checkpoint's batch is used, and said so"
expect_no_match out "trial step" "no trial step is run"
expect_match out "batch 128, 2 epochs" "the run continues at the checkpoint's batch, 128"

run "$TRAINER" "${tiny[@]}" --memory-limit 8M
expect_error 1 "out of memory" "a limit under the parameters' needs is the out-of-memory error"

run "$TRAINER" "${tiny[@]}" --batch sometimes
expect_error 2 "--batch sometimes" "a --batch that is neither a number nor auto is a usage error"

finish

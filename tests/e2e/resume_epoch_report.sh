#!/usr/bin/env bash
# What a resumed run reports of the epoch it resumes in.
# - A signal during an epoch's evaluation leaves a checkpoint at the epoch's end that says
#   its evaluation did not finish (epoch_evaluated 0). The resume evaluates that epoch
#   first: its figures, its log row and best.safetensors were lost before, and a resume
#   with no epoch left to train did nothing at all.
# - Resumed mid-epoch, the epoch's train figures cover only the steps this run took: the
#   epoch line says which.
source "$(dirname "${BASH_SOURCE[0]}")/common.bash"
require_fashion_mnist

# lenet on one thread takes seconds over the 10,000 test samples and a moment over its 64
# training samples (one step), so a signal sent once the step's row is in metrics.jsonl
# lands in the evaluation, however loaded the machine. Once with a checkpoint after each
# epoch, once with one after every step, whose file at the epoch's end is written before
# the evaluation.
for every in epoch 1; do
    ck="$work/ck-$every" logs="$work/logs-$every"
    first=("$TRAINER" train models/lenet.model --device cpu --threads 1 --epochs 1
        --train-limit 64 --checkpoint "$ck" --checkpoint-every "$every" --logdir "$logs")
    "${first[@]}" </dev/null >"$work/first.out" 2>"$work/first.err" &
    pid=$!
    ran="${first[*]}"
    wait_for_output "$logs/metrics.jsonl" '"kind":"step"' "$pid"
    kill -INT "$pid"
    wait "$pid"
    rc=$?
    out=$(cat "$work/first.out")
    err=$(cat "$work/first.err")
    expect_rc 130 "--checkpoint-every $every: SIGINT during the epoch's evaluation"
    expect_no_match out '^epoch 1/1' "the epoch's figures were not printed"
    checkpoint=$(ls "$ck"/step-*.safetensors 2>/dev/null | tail -n 1)
    if [ -n "$checkpoint" ] && [ ! -e "$ck/best.safetensors" ]; then
        pass "a step checkpoint, and no best.safetensors yet"
    else fail "a step checkpoint, and no best.safetensors yet" "$(ls "$ck")"; fi

    if [ "$every" = epoch ]; then
        # A signal in the evaluation the resume does first, before it trains a step: no
        # checkpoint is written, and the one it resumed from resumes it again (the resume
        # command was not printed).
        again=("$TRAINER" train models/lenet.model --device cpu --threads 1 --epochs 1
            --train-limit 64 --checkpoint "$ck" --resume "$ck")
        "${again[@]}" </dev/null >"$work/again.out" 2>"$work/again.err" &
        pid=$!
        wait_for_output "$work/again.err" 'evaluating it first' "$pid"
        sleep 0.3
        kill -INT "$pid"
        wait "$pid"
        rc=$?
        err=$(cat "$work/again.err")
        expect_rc 130 "SIGINT during the evaluation a resume does first"
        expect_in err "trainer: to resume: $TRAINER train models/lenet.model --resume $ck/step-" \
            "... prints the command that resumes it, from the same checkpoint"
    fi

    resume=("$TRAINER" train models/lenet.model --device cpu --epochs 1 --train-limit 64
        --test-limit 1000 --checkpoint "$ck" --checkpoint-every "$every" --logdir "$logs"
        --resume "$ck")
    run "${resume[@]}"
    expect_rc 0 "the resume with no epoch left to train"
    expect_in err "trainer: notice: epoch 1's evaluation did not finish before the checkpoint \
was written: evaluating it first" "says it evaluates the epoch first"
    expect_match out '^epoch 1/1  \(evaluated on resume\)  test loss [0-9.]+ acc [0-9.]+  lr ' \
        "prints the epoch's evaluation"
    if [ -e "$ck/best.safetensors" ]; then pass "best.safetensors is written"
    else fail "best.safetensors is written" "$(ls "$ck")"; fi
    if grep -q '^{"kind":"epoch","step":[0-9]*,"epoch":1,"test_loss":' "$logs/metrics.jsonl"
    then pass "the log gets the epoch's row, without train figures"
    else fail "the log gets the epoch's row, without train figures" "$(cat "$logs/metrics.jsonl")"
    fi

    # The step file now says its epoch was evaluated: resumed again, nothing is evaluated
    # twice, and the log keeps one epoch row.
    run "${resume[@]}"
    expect_rc 0 "resumed once more"
    expect_no_match out "evaluated on resume" "the epoch is not evaluated again"
    expect_no_match err "evaluating it first" "and no notice says so"
    if [ "$(grep -c '"kind":"epoch"' "$logs/metrics.jsonl")" -eq 1 ]; then
        pass "the log holds one epoch row"
    else fail "the log holds one epoch row" "$(cat "$logs/metrics.jsonl")"; fi
done

# With --checkpoint-every N the step file at an epoch's end is written before the epoch's
# evaluation, then again after it: a resume from it does not evaluate the epoch twice.
make_dataset "$work/data" 640 64
steps=("$TRAINER" train models/mlp.model --data "idx:$work/data" --device cpu --batch 16)
run "${steps[@]}" --epochs 1 --checkpoint "$work/every" --checkpoint-every 20 --keep-last 10
expect_rc 0 "one epoch of 40 steps, a checkpoint every 20"
run "${steps[@]}" --epochs 2 --resume "$work/every/step-0000000040.safetensors"
expect_rc 0 "resumed from the epoch's last step file"
expect_no_match out "evaluated on resume" "the finished evaluation is not repeated"

# Resumed mid-epoch: the epoch's train loss and accuracy are of steps 21-40 only.
run "${steps[@]}" --epochs 1 --resume "$work/every/step-0000000020.safetensors"
expect_rc 0 "resumed from the middle of the epoch"
expect_match out '^epoch 1/1  train loss [0-9.]+ acc [0-9.]+ \(steps 21-40\)  test loss ' \
    "the epoch line says which steps its train figures cover"

finish

#!/usr/bin/env bash
# Ctrl-C during training: the trainer stops after the current step, saves the weights it
# has to --save FILE, says so, and exits 130 (128 + SIGINT) within a few seconds; the
# saved file is complete and loads in `trainer eval`.
source "$(dirname "${BASH_SOURCE[0]}")/common.bash"
require_fashion_mnist

weights="$work/interrupted.safetensors"
# The full training set and far more epochs than the test waits for, so that the signal
# always lands mid-training.
"$TRAINER" train models/mlp.model --data fashion-mnist --epochs 1000 --device cpu \
    --save "$weights" </dev/null >"$work/train.out" 2>"$work/train.err" &
pid=$!
ran="trainer train models/mlp.model --data fashion-mnist --epochs 1000 --device cpu --save $weights"

# Wait for the header it prints once the data is loaded and training is about to start
# (the Ctrl-C handler is installed right after it), then let it train a moment.
if ! wait_for_output "$work/train.out" '^optimizer ' "$pid"; then
    kill -KILL "$pid" 2>/dev/null
    wait "$pid"
    rc=$?
    out=$(cat "$work/train.out")
    err=$(cat "$work/train.err")
    fail "training started within 60 s"
    finish
fi
pass "training started"
sleep 2

kill -INT "$pid"
start=$SECONDS
for ((i = 0; i < 150; i++)); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
done
if kill -0 "$pid" 2>/dev/null; then
    kill -KILL "$pid" 2>/dev/null
    stopped=0
else
    stopped=1
fi
wait "$pid"
rc=$?
out=$(cat "$work/train.out")
err=$(cat "$work/train.err")

if [ "$stopped" -eq 1 ]; then pass "training stopped within 15 s of SIGINT ($((SECONDS - start)) s)"
else fail "training stopped within 15 s of SIGINT" "still running; killed it"; fi
expect_rc 130 "an interrupted training exits 130"
expect_match err '^trainer: .*interrupted' "stderr says the training was interrupted"
expect_in err "saved the weights" "stderr says the weights were saved"
expect_in err "$weights" "that message names the weights file"
if [ -s "$weights" ]; then pass "the weights file exists"
else fail "the weights file exists" "$weights is missing or empty"; fi
if ls "$work" | grep -q '\.tmp$'; then fail "no temporary file is left behind" "$(ls "$work")"
else pass "no temporary file is left behind"; fi

run "$TRAINER" eval models/mlp.model --weights "$weights" --data fashion-mnist --test-limit 1000 \
    --device cpu
expect_rc 0 "the weights saved on interrupt load in trainer eval"
expect_match out "^test loss [0-9.]+  accuracy [0-9.]+  \(1000 samples" "eval reports loss and accuracy"

# With --val-split the test split is evaluated once after the last epoch: lenet on 10,000
# samples, one thread, takes seconds. SIGINT there stops it at the next batch and exits
# 130; it was swallowed: the evaluation ran to its end and the run exited 0.
final="$work/final.safetensors"
"$TRAINER" train models/lenet.model --device cpu --threads 1 --epochs 1 --train-limit 256 \
    --val-split 0.5 --save "$final" </dev/null >"$work/final.out" 2>"$work/final.err" &
pid=$!
ran="trainer train models/lenet.model --device cpu --threads 1 --epochs 1 --train-limit 256 \
--val-split 0.5 --save $final"
wait_for_output "$work/final.out" '^epoch 1/1 ' "$pid"
kill -INT "$pid"
start=$SECONDS
wait "$pid"
rc=$?
out=$(cat "$work/final.out")
err=$(cat "$work/final.err")
expect_rc 130 "SIGINT during the final test evaluation exits 130 ($((SECONDS - start)) s)"
expect_in err "interrupted during the test split's evaluation after the last epoch; the \
training itself is finished and saved" "stderr says what was cut short"
expect_no_match out '^test loss ' "no partial test figures are printed"
if [ -s "$final" ]; then pass "--save holds the trained weights"
else fail "--save holds the trained weights" "$final is missing or empty"; fi

finish

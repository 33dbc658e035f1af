#!/usr/bin/env bash
# A planted divergence: an MLP under an MSE loss with sgd lr=100 blows up within the
# first steps. Training must stop with exit 1, an error placed at the statement of the
# first layer whose values went non-finite, naming that layer, the step and the rate.
# The same model with gradients clipped to norm 1 and a small rate trains.
source "$(dirname "${BASH_SOURCE[0]}")/common.bash"

make_dataset "$work/data" 512 64
cat >"$work/diverge.model" <<'MODEL'
input shape=1x28x28
flatten
dense units=32 act=relu name=hidden
dense units=10 name=out
loss mse
optimizer sgd lr=100
train batch=32 epochs=1 seed=1
MODEL

run "$TRAINER" train "$work/diverge.model" --data "idx:$work/data" --device cpu \
    --logdir "$work/log"
expect_error 1 "training diverged: the loss became" "a divergence stops training"
# The log ends in the non-finite loss (null), not at the last finite row.
if tail -n 1 "$work/log/metrics.jsonl" | grep -q '"loss":null'; then
    pass "the log's last row holds the diverged loss, as null"
else fail "the log's last row holds the diverged loss, as null" \
    "$(tail -n 1 "$work/log/metrics.jsonl")"; fi
# Which layer goes first depends on the data; it must be one of the model's, and the error's
# place must be that layer's statement (line 3 or 4).
expect_match err "^trainer: error: $work/diverge.model:[34]:[0-9]+: " \
    "the error is placed at the first non-finite layer's statement"
named="the first non-finite value: the (output|gradient of [a-z' .]+|value of parameter"
named+=" [a-z'.]+) of layer"
expect_match err "$named '(hidden|hidden\.act|out)'" "the layer is named"
expect_match err "at epoch 1, step [0-9]+ \(step [0-9]+ of the run, learning rate 100\)" \
    "the step and the learning rate are named"
expect_in err "add --clip-norm" "the hint suggests clipping"

run "$TRAINER" train "$work/diverge.model" --data "idx:$work/data" --device cpu --lr 0.01 \
    --clip-norm 1
expect_rc 0 "with --lr 0.01 --clip-norm 1 the same model trains"
expect_in out "clip_norm=1" "the header shows the clipping"

# A checkpoint every 5 steps: the loss is read every 16, so the weights went NaN steps
# before the loss said so (here at 55, the loss at 63). Those checkpoints were written and
# the good ones pruned (--keep-last 3), and the hint named a NaN file as the last good one.
# Weights that are not finite are not written now: the run stops there, the good files stay.
require_fashion_mnist  # the divergence needs real images
cat >"$work/momentum.model" <<'MODEL'
input shape=784 dtype=f32
dense units=64
dense units=64
dense units=10
loss softmax_cross_entropy
optimizer sgd lr=0.1 momentum=0.9
train batch=32 epochs=3 seed=1
MODEL
# The first 2000 samples (--limit-order first): the step it diverges at is theirs.
first=(--train-limit 2000 --test-limit 200 --limit-order first)
run "$TRAINER" train "$work/momentum.model" "${first[@]}" \
    --device cpu --checkpoint "$work/ck" --checkpoint-every 5
expect_error 1 "after step 55: not written: training diverged, 12 tensors hold NaN" \
    "a step checkpoint of NaN weights is refused"
expect_in err "the newest checkpoint: $work/ck/step-0000000050.safetensors" \
    "... and the hint names the newest kept"
run "$TRAINER" train "$work/momentum.model" "${first[@]}" --device cpu
expect_error 1 "every parameter is non-finite (the updates since the last loss read spread it)" \
    "a NaN spread to every parameter is said as that (the first layer's was blamed)"
# (The weights at step 50 are already on their way out: what counts is that the file reads.)
run "$TRAINER" train "$work/momentum.model" "${first[@]}" \
    --device cpu --lr 0.01 --resume "$work/ck"
expect_in err "resuming from $work/ck/step-0000000050.safetensors" \
    "the folder resumes from its newest file"
expect_no_match err "holds NaN or infinite values" "... which holds no NaN (it was refused)"

# Losses past a million print in 4 digits (a 16-byte field cut them: "19549691209318."), a
# NaN evaluation as nan (it printed glibc's "-nan").
run "$TRAINER" train "$work/momentum.model" --train-limit 500 --test-limit 100 --batch 500 \
    --device cpu --lr 2 --epochs 20
expect_match out "^epoch [0-9]+/20  train loss [0-9.]+e\\+[0-9]+ acc " "a huge loss in 4 digits"
expect_match out "test loss nan acc " "a NaN test loss prints as nan"
expect_no_match out "-nan" "never as -nan"

finish

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

run "$TRAINER" train "$work/diverge.model" --data "idx:$work/data" --device cpu
expect_error 1 "training diverged: the loss became" "a divergence stops training"
# Which layer goes first depends on the data; it must be one of the model's, and the error's
# place must be that layer's statement (line 3 or 4).
expect_match err "^trainer: error: $work/diverge.model:[34]:[0-9]+: " \
    "the error is placed at the first non-finite layer's statement"
named="the first non-finite value: the (output|gradient of [a-z' .]+) of layer"
expect_match err "$named '(hidden|hidden\.act|out)'" "the layer is named"
expect_match err "at epoch 1, step [0-9]+ \(step [0-9]+ of the run, learning rate 100\)" \
    "the step and the learning rate are named"
expect_in err "add --clip-norm" "the hint suggests clipping"

run "$TRAINER" train "$work/diverge.model" --data "idx:$work/data" --device cpu --lr 0.01 \
    --clip-norm 1
expect_rc 0 "with --lr 0.01 --clip-norm 1 the same model trains"
expect_in out "clip_norm=1" "the header shows the clipping"

finish

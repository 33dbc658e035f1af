#!/usr/bin/env bash
# A short real training run on Fashion-MNIST, then the weights it saved: `trainer eval`
# must reproduce the last epoch's test figures, and must refuse weights that are not
# this model's (another model's, a truncated file, none at all). Two runs with the same
# seed must print the same epoch lines apart from the timing columns.
source "$(dirname "${BASH_SOURCE[0]}")/common.bash"
require_fashion_mnist

weights="$work/mlp.safetensors"
train=("$TRAINER" train models/mlp.model --data fashion-mnist --train-limit 6000
    --test-limit 1000 --epochs 2 --device cpu)

run "${train[@]}" --save "$weights"
expect_rc 0 "training the MLP for 2 epochs on 6000 samples succeeds"
first_out=$out
epoch_lines=$(grep -E '^epoch [0-9]+/2 ' <<<"$out")
count=$(grep -c . <<<"$epoch_lines")
if [ "$count" -eq 2 ]; then pass "the output has two epoch lines"
else fail "the output has two epoch lines" "found $count"; fi
expect_in out "data $FASHION_DIR: 6000 train, 1000 test samples; device cpu" \
    "the limits and the device are reported"

last=$(tail -n 1 <<<"$epoch_lines")
test_loss=$(sed -n 's/.*  test loss \([0-9.]*\) acc \([0-9.]*\) .*/\1/p' <<<"$last")
test_acc=$(sed -n 's/.*  test loss \([0-9.]*\) acc \([0-9.]*\) .*/\2/p' <<<"$last")
if [ -n "$test_acc" ] && awk -v a="$test_acc" 'BEGIN { exit !(a > 0.70) }'; then
    pass "final test accuracy $test_acc > 0.70"
else
    fail "final test accuracy > 0.70" "last epoch line: '$last'"
fi

# Not a terminal: no carriage returns or ANSI escapes (the progress bar) in either stream.
if grep -q $'[\r\033]' "$work/.stdout" "$work/.stderr"; then
    fail "no progress-bar control characters when output is not a terminal" \
        "$(grep -c $'[\r\033]' "$work/.stdout" "$work/.stderr")"
else
    pass "no progress-bar control characters when output is not a terminal"
fi

if [ -s "$weights" ]; then pass "--save wrote the weights file"
else fail "--save wrote the weights file" "$weights is missing or empty"; fi
if ls "$work" | grep -q '\.tmp$'; then fail "no temporary file is left behind" "$(ls "$work")"
else pass "no temporary file is left behind"; fi

# eval of the saved weights gives exactly the last epoch's test figures.
run "$TRAINER" eval models/mlp.model --weights "$weights" --data fashion-mnist \
    --test-limit 1000 --device cpu
expect_rc 0 "eval of the saved weights succeeds"
expect_in out "test loss $test_loss  accuracy $test_acc  (1000 samples" \
    "eval reports the last epoch's test loss $test_loss and accuracy $test_acc"

# Same seed, same data, same flags: the same numbers. Only samples/s and seconds vary.
strip_timing() { grep -E '^epoch ' | sed -E 's/  [0-9.]+ samples\/s  [0-9.]+ s$//'; }
run "${train[@]}"
expect_rc 0 "a second run with the same seed succeeds"
a=$(strip_timing <<<"$first_out")
b=$(strip_timing <<<"$out")
if [ -n "$a" ] && [ "$a" = "$b" ]; then pass "the same seed gives identical epoch lines"
else fail "the same seed gives identical epoch lines" "first run: $(tr '\n' '|' <<<"$a")"; fi

# Weights of another model (dense 128 -> 64 in the middle) are refused by name.
sed 's/units=128/units=64/' models/mlp.model >"$work/narrow.model"
run "$TRAINER" train "$work/narrow.model" --data fashion-mnist --train-limit 500 \
    --test-limit 100 --epochs 1 --device cpu --save "$work/narrow.safetensors"
expect_rc 0 "training a narrower model for the mismatch test succeeds"
run "$TRAINER" eval models/mlp.model --weights "$work/narrow.safetensors" --data fashion-mnist \
    --test-limit 100 --device cpu
expect_error 2 "dense2.weight" "eval with another model's weights names the parameter"
expect_in err "$work/narrow.safetensors" "that error names the weights file"

# A weights file cut in half.
head -c $(($(wc -c <"$weights") / 2)) "$weights" >"$work/truncated.safetensors"
run "$TRAINER" eval models/mlp.model --weights "$work/truncated.safetensors" --data fashion-mnist \
    --test-limit 100 --device cpu
expect_error 2 "truncated" "eval of a truncated weights file is refused"

# Not a weights file at all.
run "$TRAINER" eval models/mlp.model --weights models/mlp.model --data fashion-mnist \
    --test-limit 100 --device cpu
expect_error 2 "not a safetensors file: it starts with text" \
    "eval of a file that is not weights is refused"

run "$TRAINER" eval models/mlp.model --weights "$work/absent.safetensors" --data fashion-mnist \
    --test-limit 100 --device cpu
expect_error 2 "$work/absent.safetensors" "eval of a missing weights file names it"

run "$TRAINER" eval models/mlp.model --data fashion-mnist --test-limit 100 --device cpu
expect_error 2 "--weights" "eval without --weights is refused"

finish

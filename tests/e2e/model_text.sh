#!/usr/bin/env bash
# Weights and checkpoints record the model file's text as the run parsed it (model_text,
# model_hash). It was read from disk again at every save: a file edited during training
# was recorded as what the weights were trained from, and a model read from a pipe was
# recorded as nothing. eval, predict and --resume compare the hash with the model file
# they are given: the tensors of another activation or dropout rate have the same names
# and shapes, so this notice is all that tells. And a checkpoint holds every key at once.
source "$(dirname "${BASH_SOURCE[0]}")/common.bash"
require_python3 "read the safetensors header"

make_dataset "$work/data" 64 16
data=(--data "idx:$work/data" --device cpu)
write_tiny_model "$work/tiny.model"

# The model read from a pipe: the file is gone by the time the weights are saved.
run "$TRAINER" train <(cat "$work/tiny.model") "${data[@]}" --epochs 1 \
    --save "$work/piped.safetensors"
expect_rc 0 "a model read from a pipe trains"
if [ "$(metadata "$work/piped.safetensors" model_text)" = "$(cat "$work/tiny.model")" ]; then
    pass "model_text is the text the run parsed"
else fail "model_text is the text the run parsed" \
    "got '$(metadata "$work/piped.safetensors" model_text | head -c 80)'"; fi
if [ -n "$(metadata "$work/piped.safetensors" model_hash)" ]; then pass "model_hash is recorded"
else fail "model_hash is recorded"; fi

# The same weights under the same text: no notice; under an edited text: a notice, and
# the result as asked.
run "$TRAINER" train "$work/tiny.model" "${data[@]}" --epochs 1 --save "$work/w.safetensors" \
    --checkpoint "$work/ck"
expect_rc 0 "training writes weights and a checkpoint"
checkpoint=$(ls "$work"/ck/step-*.safetensors | tail -n 1)
run "$TRAINER" eval "$work/tiny.model" "${data[@]}" --weights "$work/w.safetensors"
expect_rc 0 "eval under the model it was trained from"
expect_no_match err "model_hash" "no notice for the same text"
sed 's/^dense     units=32 act=relu$/dense     units=32 act=tanh/' "$work/tiny.model" \
    >"$work/tanh.model"
grep -q 'act=tanh' "$work/tanh.model" || fail "the tanh model file was made"
run "$TRAINER" eval "$work/tanh.model" "${data[@]}" --weights "$work/w.safetensors"
expect_rc 0 "eval under an edited model still evaluates"
expect_in err "trainer: notice: $work/w.safetensors was trained from another text than \
$work/tanh.model (its model_hash differs): the layers match by name and shape, but a changed \
activation, dropout or loss would not show" "eval says the text differs"
run "$TRAINER" data export "idx:$work/data" "png:$work/png" --train-limit 1 --test-limit 1
expect_rc 0 "an image to predict"
image=$(find "$work/png/train" -name '*.png' | head -n 1)
run "$TRAINER" predict "$work/tanh.model" --weights "$work/w.safetensors" --device cpu "$image"
expect_rc 0 "predict under an edited model still predicts"
expect_in err "was trained from another text than" "so does predict"
run "$TRAINER" train "$work/tanh.model" "${data[@]}" --epochs 2 --resume "$work/ck"
expect_rc 0 "a resume under an edited model goes on (an edit of epochs= changes the text too)"
expect_in err "trainer: notice: $work/tanh.model is not the text $checkpoint was trained from \
(its model_hash differs)" "with a notice"

# Every metadata key at once (normalization, class names, a held-out split with a limit, an
# evaluated epoch, the resize): checkpoint_save has room for a fixed number, and drops what
# would not fit.
if [ -e "$FASHION_DIR/train-images-idx3-ubyte" ] || [ -e "$FASHION_DIR/train-images-idx3-ubyte.gz" ]
then
    run "$TRAINER" train models/mlp.model --device cpu --epochs 1 --train-limit 300 \
        --test-limit 50 --val-split 0.2 --normalize auto --checkpoint "$work/all"
    expect_rc 0 "a run that records every key"
    keys=$(python3 - "$work/all/best.safetensors" <<'PY'
import json, struct, sys
with open(sys.argv[1], "rb") as f:
    size = struct.unpack("<Q", f.read(8))[0]
    print(" ".join(sorted(json.loads(f.read(size))["__metadata__"])))
PY
)
    want="batch class_names epoch epoch_evaluated format model_file model_hash model_text \
normalize_mean normalize_std optimizer optimizer_settings optimizer_steps precision resize \
schedule seed step_in_epoch test_accuracy train_limit train_limit_order trainer_version \
val_split val_split_of val_split_seed"
    if [ "$keys" = "$want" ]; then pass "best.safetensors holds all 25 metadata keys"
    else fail "best.safetensors holds all 25 metadata keys" "got: $keys"; fi
fi

finish

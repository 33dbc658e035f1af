#!/usr/bin/env bash
# A checkpoint resumed under a model file whose optimizer is another (adam's state under
# `optimizer sgd`, sgd with momentum under sgd without) is refused naming both optimizers
# and the model file's line, not as "a different model file": the layers are the same,
# and the hint offers --init-from, which takes the parameters only. The message it
# replaced listed every state tensor as missing or unexpected and blamed the model file.
# A state tensor renamed under the same optimizer is named, missing and unexpected.
source "$(dirname "${BASH_SOURCE[0]}")/common.bash"

make_dataset "$work/data" 64 16
data=(--data "idx:$work/data" --device cpu --epochs 2)
write_tiny_model "$work/adam.model"
sed 's/^optimizer adam lr=0.001$/optimizer sgd lr=0.01/' "$work/adam.model" >"$work/sgd.model"
sed 's/^optimizer adam lr=0.001$/optimizer sgd lr=0.01 momentum=0.9/' "$work/adam.model" \
    >"$work/momentum.model"
grep -q '^optimizer sgd lr=0.01$' "$work/sgd.model" || fail "the sgd model file was made"

run "$TRAINER" train "$work/adam.model" "${data[@]}" --epochs 1 --checkpoint "$work/adam-ck"
expect_rc 0 "one epoch with adam and --checkpoint"
checkpoint=$(ls "$work"/adam-ck/step-*.safetensors | tail -n 1)

run "$TRAINER" train "$work/sgd.model" "${data[@]}" --resume "$work/adam-ck"
expect_error 2 "$checkpoint: the checkpoint holds optimizer state for adam (adam_m and adam_v \
for each parameter), but $work/sgd.model:6 asks for sgd without momentum (no state): the \
optimizer cannot change on resume" "adam's checkpoint under optimizer sgd names both optimizers"
expect_in err "hint: resume with the optimizer the checkpoint was trained with (adam), or \
start from its weights with \`trainer train $work/sgd.model --init-from $checkpoint\`, which \
loads the parameters only" "the hint offers the same optimizer or --init-from"
expect_no_match err "different model file" "it does not blame the model's layers"
expect_no_match out '^epoch ' "nothing is trained"

run "$TRAINER" train "$work/momentum.model" "${data[@]}" --epochs 1 --checkpoint "$work/m-ck"
expect_rc 0 "one epoch with sgd momentum=0.9 and --checkpoint"
run "$TRAINER" train "$work/sgd.model" "${data[@]}" --resume "$work/m-ck"
expect_error 2 "holds optimizer state for sgd with momentum (momentum for each parameter), \
but $work/sgd.model:6 asks for sgd without momentum (no state)" \
    "sgd with momentum under sgd without: the same name, another state"
run "$TRAINER" train "$work/adam.model" "${data[@]}" --resume "$work/m-ck"
expect_error 2 "asks for adam (adam_m and adam_v for each parameter)" \
    "sgd's checkpoint under optimizer adam names what adam keeps"

# adam and adamw keep the same state tensors: the name the checkpoint records tells them
# apart (adamw's decoupled weight decay is another update, so the run would change silently).
sed 's/^optimizer adam lr=0.001$/optimizer adamw lr=0.001/' "$work/adam.model" \
    >"$work/adamw.model"
grep -q '^optimizer adamw lr=0.001$' "$work/adamw.model" || fail "the adamw model file was made"
run "$TRAINER" train "$work/adamw.model" "${data[@]}" --resume "$work/adam-ck"
expect_error 2 "the checkpoint holds optimizer state for adam (adam_m and adam_v for each \
parameter), but $work/adamw.model:6 asks for adamw (adam_m and adam_v for each parameter): \
the optimizer cannot change on resume" "adam's checkpoint under adamw is refused by its name"
expect_no_match out '^epoch ' "nothing is trained under adamw"

# The way out the hint gives works, and the same optimizer still resumes.
run "$TRAINER" train "$work/sgd.model" "${data[@]}" --init-from "$checkpoint"
expect_rc 0 "--init-from the adam checkpoint trains with sgd"
run "$TRAINER" train "$work/adam.model" "${data[@]}" --resume "$work/adam-ck"
expect_rc 0 "the same optimizer resumes"

# Another model and another optimizer at once: the layers are what to fix first.
write_tiny_model "$work/wide.model" 48
sed -i 's/^optimizer adam lr=0.001$/optimizer sgd lr=0.01/' "$work/wide.model"
run "$TRAINER" train "$work/wide.model" "${data[@]}" --resume "$work/adam-ck"
expect_error 2 "dense1.weight (32x784 in the file, 48x784 in the model)" \
    "with the layers changed too, the tensors are named as before"

# One state tensor renamed (the file edited by hand or by another tool): the optimizer is
# the same, so the tensors are named as the model's are, not "adam ... asks for adam: the
# optimizer cannot change".
require_python3 "rename a tensor in a checkpoint"
python3 - "$checkpoint" "$work/renamed.safetensors" <<'PY'
import sys
data = open(sys.argv[1], "rb").read()
old, new = b'"optimizer.dense1.weight.adam_m"', b'"optimizer.dense1.weight.adam_x"'
assert data.count(old) == 1
open(sys.argv[2], "wb").write(data.replace(old, new))
PY
run "$TRAINER" train "$work/adam.model" "${data[@]}" --resume "$work/renamed.safetensors"
expect_error 2 "$work/renamed.safetensors: the checkpoint's optimizer state does not match the \
model: missing optimizer.dense1.weight.adam_m; unexpected optimizer.dense1.weight.adam_x" \
    "a renamed state tensor is named, missing and unexpected"
expect_in err "hint: the parameters match, but the optimizer state does not" \
    "... and the hint says the parameters match"
expect_no_match err "cannot change" "... not blamed on the optimizer"
expect_no_match out '^epoch ' "... and nothing is trained"

finish

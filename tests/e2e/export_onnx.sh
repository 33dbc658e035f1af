#!/usr/bin/env bash
# `trainer export onnx` for every bundled model: the file passes onnx.checker, and ONNX
# Runtime's probabilities of 64 images equal `trainer predict`'s within 1e-5. onnx and
# onnxruntime come from PyPI into a venv (common.bash's require_venv), made once and kept.
source "$(dirname "${BASH_SOURCE[0]}")/common.bash"
source "$(dirname "${BASH_SOURCE[0]}")/export_models.bash"

require_venv export-venv "import onnx, onnxruntime, numpy" onnx onnxruntime numpy

compared=()
names=()
draw_images "$python" $(export_models)
for model in $(export_models); do
    prepare_model "$model" "$python" || continue
    run "$TRAINER" export onnx "$model" --weights "$weights" -o "$work/$name.onnx"
    expect_rc 0 "$name: trainer export onnx writes $name.onnx"
    compared+=("$work/$name.onnx" "$images" "$predicted")
    names+=("$name")
done
run "$python" "$EXPORT_HELPER" onnx "${compared[@]}"
for name in "${names[@]}"; do
    expect_match out "^$name: ok " "$name: onnx.checker passes, onnxruntime equals trainer predict: $(grep "^$name: " <<<"$out")"
done
expect_rc 0 "every model compared"

run "$TRAINER" export onnx models/mlp.model -o "$work/x.onnx"
expect_error 2 "trainer export onnx needs --weights FILE" "onnx without --weights is refused"
run "$TRAINER" export tflite models/mlp.model -o "$work/x"
expect_error 2 "unknown export format 'tflite'" "an unknown format is refused"
run "$TRAINER" export onnx models/mlp.model --weights "$work/none.safetensors"
expect_error 2 "needs -o FILE" "no -o is refused"
# The graph's input and output names are taken: a layer called so is refused at its line.
printf 'input shape=784\ndense units=10 name=probabilities\nloss softmax_cross_entropy\n' \
    >"$work/named.model"
run "$TRAINER" train "$work/named.model" --data "png:$work/mlp" --epochs 1 \
    --save "$work/named.safetensors"
run "$TRAINER" export onnx "$work/named.model" --weights "$work/named.safetensors" \
    -o "$work/named.onnx"
expect_error 2 "named.model:2:1: layer 'probabilities' has the name of the ONNX model's output" \
    "a layer named like the ONNX output is refused at its line"
finish

#!/usr/bin/env bash
# `trainer export onnx` and `trainer export pytorch` for every bundled model, each model
# trained and predicted once for both (export_models.bash):
# - ONNX: the file passes onnx.checker, and ONNX Runtime's probabilities of 64 images equal
#   `trainer predict`'s within 1e-5; onnx and onnxruntime come from PyPI into a venv
#   (common.bash's require_venv), made once and kept;
# - PyTorch: the generated module loads the weights file with load_state_dict(strict=True)
#   (its load() helper), and its probabilities of the 64 images equal `trainer predict`'s
#   within 1e-5; Debian's python3-torch (/usr/bin/python3).
# A half whose Python lacks its packages is skipped, saying why; the test exits 77 when both
# are.
source "$(dirname "${BASH_SOURCE[0]}")/common.bash"
source "$(dirname "${BASH_SOURCE[0]}")/export_models.bash"

torch_python=/usr/bin/python3
if ! python_has "$torch_python" torch numpy; then
    torch_skip="$torch_python has no torch and numpy (apt-get install python3-torch)"
    torch_python=""
fi
# require_venv exits 77 where the venv cannot be made: in a subshell, which says so.
onnx_python=$(require_venv export-venv "import onnx, onnxruntime, numpy" onnx onnxruntime \
    numpy >"$work/onnx-skip"; echo "$python") || onnx_python=""
onnx_skip=$(sed 's/^SKIP: //' "$work/onnx-skip")
if [ -z "$torch_python" ] && [ -z "$onnx_python" ]; then
    echo "SKIP: $torch_skip; $onnx_skip"
    exit 77
fi

onnx_compared=() torch_compared=() names=()
draw_images "${torch_python:-$onnx_python}" $(export_models)
for model in $(export_models); do
    prepare_model "$model" "${torch_python:-$onnx_python}" || continue
    names+=("$name")
    if [ -n "$onnx_python" ]; then
        run "$TRAINER" export onnx "$model" --weights "$weights" -o "$work/$name.onnx"
        expect_rc 0 "$name: trainer export onnx writes $name.onnx"
        onnx_compared+=("$work/$name.onnx" "$images" "$predicted")
    fi
    if [ -n "$torch_python" ]; then
        run "$TRAINER" export pytorch "$model" -o "$work/$name.py"
        expect_rc 0 "$name: trainer export pytorch writes $name.py"
        torch_compared+=("$work/$name.py" "$weights" "$images" "$predicted")
    fi
done

# expect_each_ok WHAT: the helper's "NAME: ok" line for every model, each said as WHAT.
expect_each_ok() {
    for name in "${names[@]}"; do
        expect_match out "^$name: ok " "$name: $1: $(grep "^$name: " <<<"$out")"
    done
}

if [ -n "$onnx_python" ]; then
    run "$onnx_python" "$EXPORT_HELPER" onnx "${onnx_compared[@]}"
    expect_each_ok "onnx.checker passes, onnxruntime equals trainer predict"
    expect_rc 0 "every model compared in ONNX Runtime"
else
    echo "skip - ONNX Runtime: $onnx_skip"
fi

if [ -n "$torch_python" ]; then
    run "$torch_python" "$EXPORT_HELPER" pytorch "${torch_compared[@]}"
    expect_each_ok "loads strictly, equals trainer predict"
    expect_rc 0 "every model compared in PyTorch"

    # A checkpoint holds the optimizer's state too: load() leaves it out, strict all the
    # same; the state_dict's keys are the weights file's names.
    run "$TRAINER" train models/mlp.model --data "png:$work/mlp" --epochs 1 --batch 32 \
        --checkpoint "$work/ckpt"
    checkpoint=$(ls "$work"/ckpt/*.safetensors 2>/dev/null | tail -1)
    run "$TRAINER" export pytorch models/mlp.model -o "$work/mlp.py"
    run "$torch_python" -c "
import importlib.util, sys
spec = importlib.util.spec_from_file_location('m', '$work/mlp.py')
m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m)
tensors = m.read_safetensors('$checkpoint')
assert any(k.startswith('optimizer.') for k in tensors), sorted(tensors)
model = m.load('$checkpoint')
print(' '.join(sorted(model.state_dict())))"
    expect_rc 0 "load() of a checkpoint with optimizer state loads strictly"
    expect_in out "dense1.bias dense1.weight dense2.bias dense2.weight dense3.bias dense3.weight" \
        "the state_dict keys are trainer's tensor names"
else
    echo "skip - PyTorch: $torch_skip"
fi

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

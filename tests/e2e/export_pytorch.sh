#!/usr/bin/env bash
# `trainer export pytorch` for every bundled model: the generated module loads the weights
# file with load_state_dict(strict=True) (its load() helper), and its probabilities of 64
# images equal `trainer predict`'s within 1e-5. Debian's python3-torch (/usr/bin/python3).
source "$(dirname "${BASH_SOURCE[0]}")/common.bash"
source "$(dirname "${BASH_SOURCE[0]}")/export_models.bash"

python=/usr/bin/python3
if ! python_has "$python" torch numpy; then
    echo "SKIP: $python has no torch and numpy (apt-get install python3-torch)"
    exit 77
fi

compared=()
names=()
draw_images "$python" $(export_models)
for model in $(export_models); do
    prepare_model "$model" "$python" || continue
    run "$TRAINER" export pytorch "$model" -o "$work/$name.py"
    expect_rc 0 "$name: trainer export pytorch writes $name.py"
    compared+=("$work/$name.py" "$weights" "$images" "$predicted")
    names+=("$name")
done
run "$python" "$EXPORT_HELPER" pytorch "${compared[@]}"
for name in "${names[@]}"; do
    expect_match out "^$name: ok " "$name: loads strictly, equals trainer predict: $(grep "^$name: " <<<"$out")"
done
expect_rc 0 "every model compared"

# A checkpoint holds the optimizer's state too: load() leaves it out, strict all the same;
# the state_dict's keys are the weights file's names.
prepare_model models/mlp.model "$python"
run "$TRAINER" train models/mlp.model --data "png:$images" --epochs 1 --batch 32 \
    --checkpoint "$work/ckpt"
checkpoint=$(ls "$work"/ckpt/*.safetensors 2>/dev/null | tail -1)
run "$TRAINER" export pytorch models/mlp.model -o "$work/mlp.py"
run "$python" -c "
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
finish

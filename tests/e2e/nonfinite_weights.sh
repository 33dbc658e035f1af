#!/usr/bin/env bash
# Weights that are NaN, infinite, or finite but past what float32 sums can hold are never
# taken as a success. --init-from refuses NaN or infinity (exit 2) naming the tensors, as
# --resume does: it said "every parameter matched" and then blamed the learning rate for
# the divergence at step 1. eval of weights that give a NaN loss fails (exit 1): with NaN in
# the weights naming those tensors, with finite but huge ones naming the largest value, its
# tensor and the first layer whose output went non-finite. It printed `test loss nan` and
# exited 0.
source "$(dirname "${BASH_SOURCE[0]}")/common.bash"
require_python3 "edit a weights file"

make_dataset "$work/data" 64 16
data=(--data "idx:$work/data" --device cpu)
write_tiny_model "$work/tiny.model"
run "$TRAINER" train "$work/tiny.model" "${data[@]}" --epochs 1 --save "$work/w.safetensors"
expect_rc 0 "one epoch, saved"

# set_tensor FROM TO NAME VALUE: a copy of FROM with every value of tensor NAME set to VALUE.
set_tensor() {
    python3 - "$@" <<'PY'
import json, struct, sys
source, target, name, value = sys.argv[1:]
data = bytearray(open(source, "rb").read())
n = struct.unpack("<Q", data[:8])[0]
begin, end = json.loads(data[8:8 + n])[name]["data_offsets"]
data[8 + n + begin:8 + n + end] = struct.pack("<f", float(value)) * ((end - begin) // 4)
open(target, "wb").write(data)
PY
}
set_tensor "$work/w.safetensors" "$work/nan.safetensors" dense2.bias nan
set_tensor "$work/w.safetensors" "$work/inf.safetensors" dense1.bias -inf
set_tensor "$work/w.safetensors" "$work/huge.safetensors" dense1.weight 1e38

# ---- --init-from ----
run "$TRAINER" train "$work/tiny.model" "${data[@]}" --init-from "$work/nan.safetensors"
expect_error 2 "$work/nan.safetensors: the file holds NaN or infinite values in 1 tensor: \
dense2.bias" "--init-from refuses NaN weights, naming the tensor"
expect_in err "hint: the run that wrote it had diverged" "... with a hint that says why"
expect_no_match err "every parameter matched|training diverged" "... not as a divergence"
expect_no_match out '^epoch ' "... before any training"
run "$TRAINER" train "$work/tiny.model" "${data[@]}" --init-from "$work/inf.safetensors"
expect_error 2 "holds NaN or infinite values in 1 tensor: dense1.bias" \
    "--init-from refuses infinite weights too"
# A tensor that is not loaded (another shape here) is not checked: it is kept fresh.
sed 's/^dense     units=10$/dense     units=12/' "$work/tiny.model" >"$work/twelve.model"
grep -q 'units=12' "$work/twelve.model" || fail "the 12-class model was made"
run "$TRAINER" train "$work/twelve.model" "${data[@]}" --epochs 1 \
    --init-from "$work/nan.safetensors"
expect_rc 0 "NaN only in a tensor --init-from keeps fresh does not matter"
expect_in err "kept fresh (new or reshaped): dense2.weight, dense2.bias" "... and it is listed"

# ---- eval ----
run "$TRAINER" eval "$work/tiny.model" "${data[@]}" --weights "$work/nan.safetensors"
expect_error 1 "$work/nan.safetensors: the test loss is NaN over 16 samples, not a \
measurement: the weights hold NaN or infinite values in 1 tensor: dense2.bias" \
    "eval of NaN weights fails, naming the tensor"
expect_in err "warning: $work/nan.safetensors: 1 tensor holds NaN or infinite values" \
    "... after the warning given when they load"
expect_no_match out '^test loss' "... and prints no result line"
run "$TRAINER" eval "$work/tiny.model" "${data[@]}" --weights "$work/huge.safetensors"
expect_error 1 "$work/huge.safetensors: the test loss is NaN over 16 samples, not a \
measurement: every weight is finite, the largest |value| 1e+38 (in dense1.weight); the \
first non-finite value: the output of layer 'dense1.act'" \
    "eval of finite but huge weights fails, naming the largest value and the first layer"
expect_in err "values this large overflow float32" "... and the hint says why"
expect_no_match out '^test loss' "... no result line"
run "$TRAINER" eval "$work/tiny.model" "${data[@]}" --weights "$work/w.safetensors"
expect_rc 0 "the trained weights still evaluate"
expect_match out '^test loss [0-9.]+  accuracy ' "... with a finite loss"

finish

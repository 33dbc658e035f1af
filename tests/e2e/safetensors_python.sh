#!/usr/bin/env bash
# Python reads what trainer writes, and trainer reads what Python writes, with the real
# library: safetensors.numpy from PyPI, installed into a virtual environment beside the
# build (made once, reused). A checkpoint loads with load_file with the expected names and
# shapes, its metadata reads back, and numpy computing the test loss from the loaded
# values agrees with `trainer eval` on the same file; a file written by save_file with
# values numpy chose evaluates in trainer to the loss numpy computes; a model path and a
# class folder that are not UTF-8 give a file Python opens. Skipped (exit 77,
# with the reason) when python3 -m venv or PyPI is unavailable.
source "$(dirname "${BASH_SOURCE[0]}")/common.bash"

require_venv python-venv "import safetensors.numpy" safetensors numpy

make_random_dataset "$work/data" 200 50
write_tiny_model "$work/tiny.model"
data=(--data "idx:$work/data" --device cpu)

# numpy's test loss for a weights file: the tiny model evaluated on the test split.
numpy_loss() {
    "$python" - "$1" "$work/data" <<'PY'
import sys, numpy as np
from safetensors.numpy import load_file
w = load_file(sys.argv[1])
raw = open(sys.argv[2] + "/t10k-images-idx3-ubyte", "rb").read()
x = np.frombuffer(raw[16:], np.uint8).reshape(-1, 784).astype(np.float64) / 255.0
y = np.frombuffer(open(sys.argv[2] + "/t10k-labels-idx1-ubyte", "rb").read()[8:], np.uint8)
h = np.maximum(x @ w["dense1.weight"].T.astype(np.float64) + w["dense1.bias"], 0.0)
z = h @ w["dense2.weight"].T.astype(np.float64) + w["dense2.bias"]
z -= z.max(axis=1, keepdims=True)
logp = z - np.log(np.exp(z).sum(axis=1, keepdims=True))
print("%.4f" % -logp[np.arange(len(y)), y].mean())
PY
}
trainer_loss() { sed -n 's/^test loss \([0-9.]*\) .*/\1/p' <<<"$out"; }
# same_loss A B: both printed to 4 decimals, float32 against float64: one unit of rounding.
same_loss() { [ -n "$1" ] && [ -n "$2" ] && awk -v a="$1" -v b="$2" 'BEGIN { d = a - b;
    exit !(d <= 0.00011 && d >= -0.00011) }'; }
# expect_same_loss WEIGHTS WHAT: the last run's (trainer eval's) test loss is numpy's on WEIGHTS.
expect_same_loss() {
    local ours theirs
    ours=$(trainer_loss)
    theirs=$(numpy_loss "$1")
    if same_loss "$ours" "$theirs"; then pass "$2 ($ours)"
    else fail "$2" "trainer $ours, numpy $theirs"; fi
}

# ---- trainer writes, Python reads ----
run "$TRAINER" train "$work/tiny.model" "${data[@]}" --epochs 2 --checkpoint "$work/ck"
expect_rc 0 "training writes a checkpoint"
checkpoint="$work/ck/step-0000000026.safetensors"
cat >"$work/read.py" <<'PY'
import sys
from safetensors import safe_open
from safetensors.numpy import load_file
t = load_file(sys.argv[1])
shapes = {"dense1.weight": (32, 784), "dense1.bias": (32,), "dense2.weight": (10, 32),
          "dense2.bias": (10,)}
for name, shape in list(shapes.items()):
    for moment in ("adam_m", "adam_v"):
        shapes["optimizer.%s.%s" % (name, moment)] = shape
assert set(t) == set(shapes), sorted(t)
for name, shape in shapes.items():
    assert t[name].shape == shape and str(t[name].dtype) == "float32", (name, t[name].shape)
assert (t["optimizer.dense1.weight.adam_v"] >= 0).all()
meta = safe_open(sys.argv[1], "np").metadata()
assert meta["epoch"] == "2" and meta["step_in_epoch"] == "0", meta
assert meta["optimizer_steps"] == "26" and meta["precision"] == "fp32", meta
assert meta["model_text"].startswith("input"), meta["model_text"][:40]
print("ok", len(t), "tensors")
PY
run "$python" "$work/read.py" "$checkpoint"
expect_rc 0 "safetensors.numpy.load_file reads the checkpoint: names, shapes, dtype, metadata"
expect_in out "ok 12 tensors" "... all 12 tensors"
run "$TRAINER" eval "$work/tiny.model" "${data[@]}" --weights "$checkpoint"
expect_rc 0 "trainer eval reads its checkpoint"
expect_same_loss "$checkpoint" "numpy's loss from the loaded values equals trainer's"

# ---- names that are not UTF-8 ----
# A class folder or model path in Latin-1 went into the header raw, and Python refused the
# whole file ("invalid UTF-8 in header"). Such a byte is written as the text \xNN.
latin1=$'caf\xe9'
write_class_pngs "$work/latin1/b" 10 8
write_class_pngs "$work/latin1/$latin1" 200 8
cp models/mlp.model "$work/mod"$'\xe8'"le.model"
png_run=(--data "png:$work/latin1" --device cpu --val-split 0.25 --batch 4)
run "$TRAINER" train "$work/mod"$'\xe8'"le.model" "${png_run[@]}" --epochs 1 \
    --save "$work/latin1.safetensors"
expect_rc 0 "a model path and a class folder in Latin-1 train and save"
cat >"$work/read_latin1.py" <<'PY'
import json, sys
from safetensors import safe_open
from safetensors.numpy import load_file
assert "dense1.weight" in load_file(sys.argv[1])
meta = safe_open(sys.argv[1], "np").metadata()
assert meta["model_file"].endswith("mod\\xe8le.model"), meta["model_file"]
assert json.loads(meta["class_names"]) == ["b", "caf\\xe9"], meta["class_names"]
print("ok latin1")
PY
run "$python" "$work/read_latin1.py" "$work/latin1.safetensors"
expect_rc 0 "Python opens it, the bytes that are not UTF-8 written as \\xNN"
expect_in out "ok latin1" "... the model path and class names read as written"
run "$TRAINER" eval "$work/mod"$'\xe8'"le.model" "${png_run[@]}" --weights "$work/latin1.safetensors"
expect_rc 0 "trainer eval takes the checkpoint's class names as those of the folders"
expect_no_match err "label" "... with no notice that the labels may mean other classes"

# ---- Python writes, trainer reads ----
cat >"$work/write.py" <<'PY'
import sys, numpy as np
from safetensors.numpy import save_file
rng = np.random.default_rng(7)
shapes = {"dense1.weight": (32, 784), "dense1.bias": (32,), "dense2.weight": (10, 32),
          "dense2.bias": (10,)}
save_file({n: (rng.standard_normal(s) * 0.1).astype(np.float32) for n, s in shapes.items()},
          sys.argv[1], metadata={"written_by": "numpy"})
PY
run "$python" "$work/write.py" "$work/numpy.safetensors"
expect_rc 0 "save_file writes weights for the tiny model"
run "$TRAINER" eval "$work/tiny.model" "${data[@]}" --weights "$work/numpy.safetensors"
expect_rc 0 "trainer eval reads a file written by save_file"
expect_same_loss "$work/numpy.safetensors" "trainer's loss on save_file's values equals numpy's"

finish

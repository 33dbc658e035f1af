#!/usr/bin/env bash
# `trainer bench` on a real GPU: every figure is positive and below the card's theoretical
# peak where the peak is known (a figure above it means a wrong timer, a wrong FLOP count
# or a wrong peak), every GEMM precision runs on a card of compute capability 8.0 or newer,
# every copy runs, the convolutions (f32, bf16 and f16 data) name cuDNN's algorithm, and
# training steps and layers are timed, with every lever on and with each turned off
# (--without), and fp16 steps with training's dynamic loss scaling. Without a usable GPU
# (as `trainer doctor --json` reports it) the test is skipped with exit 77.
source "$(dirname "${BASH_SOURCE[0]}")/../e2e/common.bash"

require_usable_gpu

GPU=(--device cuda:0 --repeats 3 --warmup 2)

# json_check WHAT PYTHON: as in tests/e2e/bench.sh, with `below(value, peak, what)`: value
# is positive, and under peak when the peak is known.
json_check() {
    local why
    if why=$(python3 -c 'import json, math, sys
def refuse(constant):
    raise ValueError("non-finite number in the JSON: " + constant)
doc = json.loads(sys.stdin.read(), parse_constant=refuse)
def below(value, peak, what):
    assert value is not None and value > 0 and math.isfinite(value), "%s: %r" % (what, value)
    assert peak is None or value < peak, "%s: %r is not below the peak %r" % (what, value, peak)
    print("%s: %.4g (peak %s)" % (what, value, peak))
exec(sys.argv[1])' "$2" <<<"$out" 2>&1); then
        pass "$1"
        sed 's/^/      /' <<<"$why"
    else
        fail "$1" "$(tail -n 3 <<<"$why")"
    fi
}

# ---- the device and its peaks ----
run "$TRAINER" bench gemm "${GPU[@]}" --sizes 1024 --precisions fp32
expect_rc 0 "bench gemm on cuda:0"
expect_match out '^trainer bench gemm on cuda:0 .+ \(compute [0-9]+\.[0-9]+, [0-9]+ SMs, SM clock [1-9][0-9]* MHz' \
    "the header describes the card"
expect_match out '^(peak \(theoretical, dense, at the max SM clock\): fp32 [0-9.]+|peak: unknown \()' \
    "the header gives the peaks, or says why they are unknown"

# ---- gemm ----
run "$TRAINER" bench gemm "${GPU[@]}" --sizes 1024,4096 --json
expect_rc 0 "bench gemm --json on cuda:0"
json_check "every precision measured, positive and below its peak" '
d = doc["device"]
major = int(d["compute_capability"].split(".")[0])
for r in doc["gemm"]:
    what = "gemm %s %d" % (r["precision"], r["m"])
    if not r["available"]:
        assert major < 8 and r["precision"] in ("tf32", "bf16"), (what, r["reason"])
        continue
    below(r["tflops"], r["peak_tflops"], what)
    assert r["peak_tflops"] is None or r["peak_tflops"] == d["peak_tflops"][r["precision"]]
if "H100" in d["name"]:
    assert 900 < d["peak_tflops"]["bf16"] < 1200, d["peak_tflops"]
    assert 3000 < d["peak_memory_gbs"] < 5000, d["peak_memory_gbs"]
'

# ---- memory ----
run "$TRAINER" bench memory "${GPU[@]}" --bytes 256M --json
expect_rc 0 "bench memory --json on cuda:0"
json_check "every copy measured, the device copy below the DRAM peak" '
rows = doc["memory"]
assert len(rows) == 5 and all(r["available"] for r in rows), rows
for r in rows:
    below(r["gbs"], r["peak_gbs"], r["copy"])
    if r["copy"] != "device-to-device":
        assert r["peak_gbs"] is None and "PCIe" in r["peak_unknown"], r
pinned = {r["copy"]: r["gbs"] for r in rows}
print("pinned/pageable host-to-device: %.2f" % (pinned["host-to-device pinned"] /
                                                pinned["host-to-device pageable"]))
'

# ---- conv ----
run "$TRAINER" bench conv "${GPU[@]}" --batch 32 --json
expect_rc 0 "bench conv --json on cuda:0"
json_check "every convolution in f32, bf16 and f16 data below its peak, with cuDNN's algorithm" '
d = doc["device"]
major = int(d["compute_capability"].split(".")[0])
rows = doc["conv"]["rows"]
assert len(rows) == 54, len(rows)
for i in range(0, len(rows), 3):
    assert [r["dtype"] for r in rows[i:i + 3]] == ["f32", "bf16", "f16"], rows[i:i + 3]
for r in rows:
    what = "%s %s %s (%s)" % (r["shape"], r["op"], r["precision"], r.get("algorithm"))
    if not r["available"]:
        assert major < 8 and r["precision"] == "bf16", (what, r["reason"])
        assert "needs compute capability 8.0" in r["reason"], r
        continue
    below(r["tflops"], r["peak_tflops"], what)
    assert r["peak_tflops"] is None or r["peak_tflops"] == d["peak_tflops"][r["precision"]]
    assert "im2col" not in r["algorithm"] and "widened" not in r["algorithm"], r
    if r["dtype"] != "f32":
        assert r["precision"] == {"bf16": "bf16", "f16": "fp16"}[r["dtype"]], r
        # 16-bit data are never converted down again (cuda_conv2d.cu candidate_math).
        assert "FP16 conversion" not in r["algorithm"], r
'
run "$TRAINER" bench conv "${GPU[@]}" --batch 8 --no-tf32 --json
json_check "--no-tf32 compares f32 convolutions with the fp32 peak; 16-bit data keep theirs" '
f32 = [r for r in doc["conv"]["rows"] if r["dtype"] == "f32"]
assert f32 and all(r["precision"] == "fp32" for r in f32)
assert all("FMA" in r["algorithm"] or "direct" in r["algorithm"] for r in f32)
assert {r["precision"] for r in doc["conv"]["rows"] if r["dtype"] == "f16"} == {"fp16"}
'

# ---- train ----
run "$TRAINER" bench train models/lenet.model "${GPU[@]}" --per-layer --json
expect_rc 0 "bench train lenet --per-layer --json on cuda:0"
json_check "training steps and every layer timed" '
t = doc["train"]
below(t["tflops"], t["peak_tflops"], "lenet training TFLOP/s")
assert t["samples_per_second"] > 0 and t["step_ms"] > 0
timed = 0
for l in t["per_layer"]["layers"]:
    for phase in ("forward", "backward"):
        ms = l[phase + "_ms"]
        assert ms is not None or l.get(phase + "_below_resolution"), l
        timed += ms is not None
assert timed >= 10, timed
'
run "$TRAINER" bench train models/mlp.model "${GPU[@]}" --per-layer
expect_rc 0 "bench train mlp --per-layer on cuda:0"
expect_match out '^samples/s +[0-9,]+ ' "the table has samples/s"
expect_match out '^dense1 +dense +[0-9.]+ (ns|us|ms) +[0-9.]+ (ns|us|ms) +[0-9.]+%$' \
    "the per-layer table times dense1"

# fp16 runs with training's dynamic loss scaling: a gradient check read on the host every
# step (so plain launches, never a CUDA Graph), the update skipped on an overflow.
run "$TRAINER" bench train models/mlp.model "${GPU[@]}" --precision fp16 --steps 5 --per-layer \
    --cuda-graph auto
expect_rc 0 "bench train mlp --precision fp16 on cuda:0"
expect_match out '^fp16 loss scaling  final scale [0-9.e+]+, [0-9]+ of [0-9]+ steps skipped' \
    "fp16 says its loss scale and skipped steps"
expect_match out '^cuda graph  plain launches: fp16 loss scaling reads the gradients' \
    "fp16 refuses CUDA Graphs as training does"
expect_match out '^\(update\) +adam \+ fp16 scan +[0-9.]+ (ns|us|ms) ' \
    "the per-layer update holds the gradients' check"
run "$TRAINER" bench train models/mlp.model "${GPU[@]}" --precision fp16 --steps 5 --json
expect_rc 0 "bench train mlp --precision fp16 --json on cuda:0"
json_check "fp16 --json: a loss scale, skipped steps counted" '
t = doc["train"]
assert t["precision"] == "fp16", t["precision"]
assert t["loss_scale"] is not None and t["loss_scale"] > 0, t["loss_scale"]
assert 0 <= t["skipped_steps"] <= t["steps_run"] == 2 + 3 * 5, t
print("loss scale %g, %d of %d steps skipped" % (t["loss_scale"], t["skipped_steps"],
                                                t["steps_run"]))
'
run "$TRAINER" bench train models/mlp.model "${GPU[@]}" --precision fp32 --steps 2 --json
json_check "no loss scaling outside fp16" '
t = doc["train"]
assert t["loss_scale"] is None and "skipped_steps" not in t and "steps_run" not in t, t
'

# ---- each lever off (--without; bench/levers_gpu.sh measures them at full size) ----
# A tiny run per lever: it trains, and the log and the JSON say what was off.
for lever in bias-gradient batchnorm-split maxpool-scatter multi-tensor gemm-epilogue conv-fused; do
    model=models/lenet.model
    [ "$lever" = batchnorm-split ] && model=models/cnn-bn.model
    run "$TRAINER" bench train "$model" "${GPU[@]}" --batch 64 --steps 2 --without "$lever"
    expect_rc 0 "bench train $model --without $lever"
    expect_in out "levers: OFF (--without): $lever" "the header says $lever was off"
done
run "$TRAINER" bench train models/lenet.model "${GPU[@]}" --batch 64 --steps 2 --json \
    --without bias-gradient,conv-fused
json_check "--json lists the levers that were off" '
assert doc["train"]["levers_off"] == ["bias-gradient", "conv-fused"], doc["train"]["levers_off"]
assert doc["train"]["layout"] == "nchw" and "nhwc_layers" not in doc["train"], doc["train"]
'

# ---- --layout nhwc: lenet's convolutions, pools and their activations in NHWC ----
run "$TRAINER" bench train models/lenet.model "${GPU[@]}" --batch 64 --steps 2 --json \
    --layout nhwc
json_check "--layout nhwc lays lenet's six trunk layers out NHWC" '
assert doc["train"]["layout"] == "nhwc" and doc["train"]["nhwc_layers"] == 6, doc["train"]
'
run "$TRAINER" bench train models/lenet.model "${GPU[@]}" --batch 64 --steps 2 --layout nhwc
expect_rc 0 "bench train --layout nhwc"
expect_in out "layout: NHWC for 6 layers (--layout nhwc)" "the report says NHWC"
expect_in err "6 layers hold NHWC images (--layout nhwc)" "a notice says it too"

# ---- --layout nhwc with a colour input and batchnorm: to_nhwc converts the input, and the
# batchnorms run on channels-last rows (64 x 32 x 32 x 16 values and more) ----
run "$TRAINER" bench train models/cifar-resnet.model "${GPU[@]}" --batch 64 --steps 2 --json \
    --layout nhwc
json_check "--layout nhwc lays cifar-resnet's 29 trunk layers out NHWC, its conversion first" '
assert doc["train"]["layout"] == "nhwc" and doc["train"]["nhwc_layers"] == 29, doc["train"]
'

finish

#!/usr/bin/env bash
# `trainer bench` on the CPU, at sizes that take seconds: every benchmark prints its table
# rows, --json parses and holds no figure that is 0, NaN or infinite (a figure that cannot
# be measured is a row with a reason, a peak that is not known is null), precisions and
# copies the CPU cannot run say why, and usage mistakes are errors in the project's format
# with exit 2 (3 for a device that is not there). The GPU's figures: tests/gpu/bench.sh.
source "$(dirname "${BASH_SOURCE[0]}")/common.bash"

if ! command -v python3 >/dev/null; then
    echo "SKIP: python3 is needed to parse the JSON"
    exit 77
fi

QUICK=(--device cpu --repeats 2 --warmup 1)

# json_check WHAT PYTHON: $out parsed as `doc` (NaN and Infinity refused, as strict JSON
# parsers do), then PYTHON run with it; passes when PYTHON raises nothing.
json_check() {
    local why
    if why=$(python3 -c 'import json, math, sys
def refuse(constant):
    raise ValueError("non-finite number in the JSON: " + constant)
doc = json.loads(sys.stdin.read(), parse_constant=refuse)
# Settings that may be 0; every other number is a measurement, a size or a count: > 0.
ZERO_ALLOWED = {"warmup", "workspace_bytes", "pad"}
def numbers(value, key=""):
    if isinstance(value, dict):
        for k, v in value.items():
            yield from numbers(v, k)
    elif isinstance(value, list):
        for v in value:
            yield from numbers(v, key)
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        yield key, value
for key, value in numbers(doc):
    assert math.isfinite(value), "%s is %r" % (key, value)
    assert value > 0 or (key in ZERO_ALLOWED and value == 0), "%s is %r" % (key, value)
exec(sys.argv[1])' "$2" <<<"$out" 2>&1); then
        pass "$1"
    else
        fail "$1" "$(tail -n 3 <<<"$why")"
    fi
}

# ---- gemm ----
run "$TRAINER" bench gemm "${QUICK[@]}" --sizes 64,32x48x16
expect_rc 0 "bench gemm on the CPU"
expect_match out '^trainer bench gemm on cpu \(' "gemm names the device"
expect_match out '^peak: unknown \(' "the CPU's peak is unknown, not a number"
expect_in out "the median of 2 timed repeats after 1 warm-up run;" "one warm-up run, singular"
expect_match out '^fp32 +64x64x64 +[0-9.]+ (ns|us|ms|s) +[0-9.]+ +unknown ' \
    "an fp32 row with time and TFLOP/s"
expect_match out '^fp32 +32x48x16 +[0-9.]+ (ns|us|ms|s) ' "an MxNxK size"
for p in tf32 bf16 fp16; do
    expect_match out "^$p +64x64x64 +not available on the CPU" "$p says it is not available"
done
expect_no_match out ' 0\.0* ' "no figure printed as zero"
# 16 sets of a 64x64x64 GEMM (768 KiB) fit in any last cache: the footnote says so. It
# claimed the sets outgrew twice the cache at every size.
expect_match out "^A, B and C rotate through up to 16 sets .*: at 2 of these sizes even all \
16 fit in twice the last cache \([0-9.]+ [KMG]iB\), so their figures are partly the cache's" \
    "the footnote names the sizes that stay in cache"

run "$TRAINER" bench gemm "${QUICK[@]}" --sizes 64 --json
expect_rc 0 "bench gemm --json"
json_check "gemm --json: fp32 measured, the others unavailable with a reason" '
rows = doc["gemm"]
assert doc["benchmark"] == "gemm" and doc["device"]["kind"] == "cpu", doc["device"]
assert [r["precision"] for r in rows] == ["fp32", "tf32", "bf16", "fp16"], rows
assert rows[0]["available"] and rows[0]["tflops"] > 0 and rows[0]["median_ms"] > 0
assert rows[0]["peak_tflops"] is None and rows[0]["fraction_of_peak"] is None
for r in rows[1:]:
    assert r["available"] is False and "not available on the CPU" in r["reason"], r
    assert "tflops" not in r and "median_ms" not in r, r
assert doc["device"]["peak_tflops"]["fp32"] is None and doc["device"]["peak_unknown"]
'

run "$TRAINER" bench gemm "${QUICK[@]}" --sizes 64 --precisions fp32 --json
json_check "--precisions keeps only the ones asked for" \
    'assert [r["precision"] for r in doc["gemm"]] == ["fp32"]'

# ---- memory ----
run "$TRAINER" bench memory "${QUICK[@]}" --bytes 1M
expect_rc 0 "bench memory on the CPU"
expect_match out '^device-to-device +1\.0 MiB +[0-9.]+ (ns|us|ms) +[0-9.]+ +unknown' \
    "memory: the host memmove row"
expect_match out '^host-to-device pinned +1\.0 MiB +no device' "host-to-device says no device"
expect_match out '^device-to-host pageable +1\.0 MiB +no device' "device-to-host says no device"

# Every copy refused (the first allocation fails, as out of memory at a huge --bytes would):
# the rows say why, and the benchmark, which measured nothing, exits 1 (it exited 0). The
# size below 1 MiB is said as such (it read "0 MiB").
TRAINER_FAIL_ALLOC=1 run "$TRAINER" bench memory "${QUICK[@]}" --bytes 64K
expect_rc 1 "a memory benchmark that measured nothing fails"
# (The pairs rotated through are as many as the cache asks for: the count is the machine's.)
expect_match err "bench memory measured nothing: out of memory for [0-9]+ buffer pairs? of \
64\\.0 KiB" "... naming why"
expect_match out '^device-to-device +64\.0 KiB +out of memory' "... after its rows say why"

run "$TRAINER" bench memory "${QUICK[@]}" --bytes 1M,64K --json
expect_rc 0 "bench memory --json"
json_check "memory --json: 2 sizes x 5 copies, only the memmove measured" '
rows = doc["memory"]
assert len(rows) == 10, len(rows)
for r in rows:
    if r["copy"] == "device-to-device":
        assert r["available"] and r["gbs"] > 0 and r["peak_gbs"] is None and r["peak_unknown"]
    else:
        assert not r["available"] and r["reason"].startswith("no device"), r
'

# ---- conv ----
run "$TRAINER" bench conv "${QUICK[@]}" --batch 1 --repeats 1
expect_rc 0 "bench conv on the CPU"
expect_match out '^batch 1; per shape and op: f32 data in fp32 math, then bf16 and fp16 data' \
    "conv says its batch and storages"
expect_match out '^lenet conv2 32->64 5x5 14x14 +forward +fp32 +[0-9.]+ (ns|us|ms|s) +[0-9.]+ .*im2col' \
    "conv: lenet's second convolution forward, with the algorithm"
for p in bf16:bf16 fp16:f16; do
    expect_match out "^lenet conv2 32->64 5x5 14x14 +backward-data +${p%:*} +[0-9.]+ (ns|us|ms|s) +[0-9.]+ .*${p#*:} widened to f32" \
        "conv: a ${p%:*} row says the CPU widens it"
done
expect_match out '^resnet 512->512 3x3 7x7 +backward-filter +fp16 ' "conv: resnet's last stage"
expect_no_match out ' 0\.0* ' "conv: no figure printed as zero"

run "$TRAINER" bench conv "${QUICK[@]}" --batch 1 --repeats 1 --json
json_check "conv --json: 6 shapes x 3 ops x 3 storages, each with TFLOP/s and an algorithm" '
rows = doc["conv"]["rows"]
assert len(rows) == 54 and doc["conv"]["batch"] == 1, len(rows)
assert {r["op"] for r in rows} == {"forward", "backward-data", "backward-filter"}
assert all(r["available"] and r["tflops"] > 0 and r["median_ms"] > 0 and r["algorithm"]
           for r in rows), [r for r in rows if not r["available"]]
for i in range(0, len(rows), 3):
    group = rows[i:i + 3]
    assert len({(r["shape"], r["op"]) for r in group}) == 1, group
    assert [(r["precision"], r["dtype"]) for r in group] == \
        [("fp32", "f32"), ("bf16", "bf16"), ("fp16", "f16")], group
    assert "widened" not in group[0]["algorithm"], group[0]
    for r in group[1:]:
        assert r["algorithm"].startswith(r["dtype"] + " widened to f32"), r
        assert r["peak_tflops"] is None and r["fraction_of_peak"] is None, r
'

# ---- train ----
run "$TRAINER" bench train models/mlp.model "${QUICK[@]}" --batch 16 --steps 3
expect_rc 0 "bench train models/mlp.model"
expect_match out '^trainer bench train models/mlp\.model on cpu' "train names the model"
expect_match out '^batch 16, optimizer adam; 2 timed repeats of 3 steps' "train says its settings"
expect_match out '^samples/s +[0-9,]+ +\(repeats: [0-9,]+ [0-9,]+\)$' "samples/s with each repeat"
expect_match out '^TFLOP/s +[0-9.]+ +\(3 x 0\.470 MFLOP forward per sample, fp32 math\); peak unknown$' \
    "TFLOP/s from the model's FLOPs"
expect_no_match out '^per layer' "no per-layer table unless asked"

run "$TRAINER" bench train models/mlp.model "${QUICK[@]}" --batch 16 --steps 3 --per-layer
expect_rc 0 "bench train --per-layer"
for layer in dense1 dense2 dense3 loss1; do
    expect_match out "^$layer +[a-z_]+ +([0-9.]+ (ns|us|ms|s)|<resolution) +([0-9.]+ (ns|us|ms|s)|<resolution) +[0-9.]+%$" \
        "per-layer row for $layer"
done
# A fused activation has no time of its own (it showed the timer marks' nanoseconds).
for layer in dense1 dense2; do
    expect_match out "^$layer\\.act +act \\(in $layer\\) +- +- +-$" \
        "$layer.act's row says it is computed in $layer"
done
expect_match out '^\(update\) +adam +[0-9.]+ (ns|us|ms|s) +[0-9.]+%$' "per-layer update row"

run "$TRAINER" bench train models/lenet.model "${QUICK[@]}" --batch 2 --steps 2 --per-layer --json
expect_rc 0 "bench train lenet --per-layer --json"
json_check "train --json: samples/s, the repeats, and every layer timed or flagged" '
t = doc["train"]
assert t["model"] == "models/lenet.model" and t["batch"] == 2 and t["steps_per_repeat"] == 2
assert t["samples_per_second"] > 0 and len(t["repeat_samples_per_second"]) == 2
assert t["tflops"] > 0 and t["peak_tflops"] is None
assert t["layout"] == "nchw" and "nhwc_layers" not in t, t
layers = t["per_layer"]["layers"]
assert [l["name"] for l in layers][:3] == ["conv2d1", "conv2d1.act", "maxpool1"], layers
assert layers[1]["fused_into"] == "conv2d1" and "fused_into" not in layers[0], layers
for l in layers:
    for phase in ("forward", "backward"):
        assert l[phase + "_ms"] is not None or l.get(phase + "_below_resolution"), l
'

# ---- all ----
run "$TRAINER" bench all "${QUICK[@]}" --repeats 1 --sizes 32 --bytes 64K --batch 1 --json
expect_rc 0 "bench all --json"
json_check "all --json holds gemm, memory and conv" '
assert doc["benchmark"] == "all" and doc["gemm"] and doc["memory"] and doc["conv"]["rows"]
assert "train" not in doc
'

# ---- usage ----
run "$TRAINER" bench
expect_error 2 "trainer bench needs a benchmark" "bench without a benchmark"
run "$TRAINER" bench gem
expect_error 2 "unknown benchmark 'gem'; did you mean 'gemm'?" "a misspelt benchmark"
run "$TRAINER" bench train
expect_error 2 "trainer bench train needs a model file" "train without a model"
run "$TRAINER" bench train models/no-such.model --device cpu
expect_error 2 "no-such.model" "train with a model that is not there"
run "$TRAINER" bench gemm extra --device cpu
expect_error 2 "unexpected argument 'extra'" "an extra argument"
run "$TRAINER" bench gemm --device cpu --sizes 12x
expect_error 2 "--sizes 12x: cannot read '12x'" "a malformed size"
run "$TRAINER" bench gemm --device cpu --precisions fp64
expect_error 2 "cannot read 'fp64'" "an unknown precision"
run "$TRAINER" bench memory --device cpu --bytes 0
expect_error 2 "--bytes 0: '0' is out of range" "zero bytes"
run "$TRAINER" bench gemm --device cpu --per-layer
expect_error 2 "--per-layer does not apply to trainer bench gemm" "--per-layer outside train"
run "$TRAINER" bench gemm --device cpu --repeats 0
expect_error 2 "--repeats 0" "zero repeats"
run "$TRAINER" bench gemm --device cuda:99 --sizes 32
expect_error 3 "cuda:99" "a GPU that is not there exits 3"

# --precision: train only, checked against the device as `trainer train` checks it.
run "$TRAINER" bench gemm --device cpu --precision bf16
expect_error 2 "--precision does not apply to trainer bench gemm" "--precision outside train"
run "$TRAINER" bench train models/mlp.model --device cpu --precision bf16 --steps 1 --repeats 1
expect_error 3 "--precision bf16: layer 'dense1' (dense) would compute in bf16, but the CPU" \
    "bench train refuses bf16 on the CPU, naming the layer"
run "$TRAINER" bench train models/mlp.model --device cpu --precision fp32 --steps 1 --repeats 1 \
    --warmup 0 --json
expect_rc 0 "bench train --precision fp32 on the CPU"
expect_in out '"precision": "fp32"' "its JSON says fp32"

run "$TRAINER" bench --help
expect_rc 0 "bench --help"
expect_in out "--per-layer" "help lists --per-layer"
run "$TRAINER" --help
expect_match out '^  bench +measure GEMM' "trainer --help lists bench"

finish

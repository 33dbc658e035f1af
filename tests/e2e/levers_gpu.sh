#!/usr/bin/env bash
# `--without LEVER` and bench/levers_gpu.sh without a GPU: an unknown lever is exit 2
# naming the valid ones (with a did-you-mean), a lever on the CPU is refused with exit 2,
# bench --json says which levers were off; the script's dry run (-n) lists every run with
# the right options, its usage mistakes are exit 2, and its table writer (-r) reads a
# results file (built here from CPU runs, relabelled: the figures mean nothing). The levers
# themselves run on a GPU: tests/gpu/test_cuda_parity_FAMILY.c (every lever off) and
# tests/gpu/bench.sh.
source "$(dirname "${BASH_SOURCE[0]}")/common.bash"
require_python3 "read bench --json and the script's results"

MODEL=models/lenet.model
TINY=(--batch 4 --steps 1 --repeats 1 --warmup 1)

# ---- trainer --without ------------------------------------------------------------------
run "$TRAINER" bench train "$MODEL" --without nonsense
expect_error 2 "unknown lever 'nonsense'" "an unknown lever is bad usage"
expect_in err "bias-gradient,batchnorm-split,maxpool-scatter,multi-tensor,gemm-epilogue,conv-fused" \
    "the error lists every lever"
run "$TRAINER" bench train "$MODEL" --without conv-fused,maxpool-scater
expect_error 2 "did you mean 'maxpool-scatter'?" "a near miss gets a did-you-mean"
run "$TRAINER" bench train "$MODEL" --without ,
expect_error 2 "--without: no lever named" "an empty list is bad usage"
run "$TRAINER" bench train "$MODEL" --device cpu --without bias-gradient "${TINY[@]}"
expect_error 2 "--without: levers are the CUDA backend's" "--without on the CPU is refused"
run "$TRAINER" train "$MODEL" --device cpu --without multi-tensor --epochs 1
expect_error 2 "--without: levers are the CUDA backend's" "train refuses it on the CPU too"
run "$TRAINER" bench gemm --without gemm-epilogue --device cpu
expect_error 2 "--without does not apply to trainer bench gemm" "--without is for bench train"

# ---- --layout nchw|nhwc -------------------------------------------------------------------
run "$TRAINER" bench train "$MODEL" --layout nwhc "${TINY[@]}" --device cpu
expect_error 2 "--layout nwhc: expected nchw or nhwc" "an unknown layout is bad usage"
run "$TRAINER" train "$MODEL" --device cpu --layout nhwc --epochs 1
expect_error 2 "--layout nhwc: NHWC images are for a GPU's convolutions; the device is cpu" \
    "NHWC is refused on the CPU"
run "$TRAINER" bench gemm --layout nhwc --device cpu
expect_error 2 "--layout does not apply to trainer bench gemm" "--layout is for bench train"
run "$TRAINER" bench train "$MODEL" --device cpu --layout nchw "${TINY[@]}"
expect_rc 0 "--layout nchw, the default, runs on the CPU"
run "$TRAINER" bench --help
expect_in out "--without LIST" "bench --help lists --without"

run "$TRAINER" bench train "$MODEL" --device cpu --per-layer --json "${TINY[@]}"
expect_rc 0 "bench train --json on the CPU"
if python3 -c 'import json, sys; assert json.load(sys.stdin)["train"]["levers_off"] == []' \
    <<<"$out" 2>/dev/null; then
    pass "--json: train.levers_off is an empty list with every lever on"
else
    fail "--json: train.levers_off" "missing or not []"
fi
echo "$out" >"$work/all-on.json"

# ---- bench/levers_gpu.sh ------------------------------------------------------------------
script=bench/levers_gpu.sh
run bash "$script" -n
expect_rc 0 "the dry run"
expect_match out "--device cuda:0 --batch 1024 --per-layer --json +# all on$" "the all-on run"
for lever in bias-gradient batchnorm-split maxpool-scatter multi-tensor gemm-epilogue conv-fused; do
    expect_in out "models/lenet.model --device cuda:0 --batch 1024 --per-layer --json --without $lever" \
        "lenet without $lever"
done
expect_in out "models/cnn-bn.model --device cuda:0 --batch 1024 --per-layer --json --no-fuse" \
    "cnn-bn with --no-fuse"
expect_in out "--cuda-graph on  # cuda-graph on" "the CUDA Graph run"
expect_in out "--layout nhwc  # layout nhwc" "the NHWC run"
expect_match out "^levers_gpu.sh dry run: 10 runs per model" "ten runs per model"
run bash "$script" -n -m lenet -d cuda:1 128
expect_in out "models/lenet.model --device cuda:1 --batch 128 " "-m, a positional batch and -d"
expect_no_match out "cnn-bn" "-m lenet runs lenet only"
run bash "$script" -h
expect_rc 0 "-h"
expect_in out "Each GPU lever of issue 15 measured alone" "-h prints the usage"

usage() {  # usage WHAT ARGS...: a usage mistake is exit 2 with a hint
    run bash "$script" -n "${@:2}"
    if [ "$rc" -eq 2 ] && grep -q '^  hint: ' <<<"$err"; then pass "$1 (exit 2)"
    else fail "$1" "exit $rc, stderr: $err"; fi
}
usage "a batch of 0" 0
usage "a batch given twice" -b 64 128
usage "a second positional" 64 128
usage "the CPU as device" -d cpu
usage "an unknown model" -m nosuch
usage "a budget that is not a number" -s soon
usage "an unknown option" -x

# -r: the tables of a results file, here from the CPU run above relabelled as two configs.
python3 - "$work/all-on.json" "$work/results.jsonl" <<'EOF'
import json, sys
bench = json.load(open(sys.argv[1]))
with open(sys.argv[2], "w") as f:
    f.write(json.dumps({"model": "lenet", "batch": 4, "config": "all on", "status": "ok",
                        "bench": bench}) + "\n")
off = json.loads(json.dumps(bench))
off["train"]["levers_off"] = ["maxpool-scatter"]
off["train"]["samples_per_second"] = bench["train"]["samples_per_second"] / 2
f = open(sys.argv[2], "a")
f.write(json.dumps({"model": "lenet", "batch": 4, "config": "without maxpool-scatter",
                    "status": "ok", "bench": off}) + "\n")
f.write(json.dumps({"model": "lenet", "batch": 4, "config": "without conv-fused",
                    "status": "skipped", "reason": "10 s of the 480 s budget left"}) + "\n")
EOF
run bash "$script" -r "$work/results.jsonl"
expect_rc 0 "-r prints the tables of a results file"
expect_in out "| configuration | samples/s | x all-on | step ms |" "the samples/s table"
expect_match out '^\| without maxpool-scatter \(maxpool-scatter\) \| [0-9,]+ \| 0\.500 \|' \
    "a lever-off run against all-on, with what the run itself says was off"
expect_in out "| without conv-fused | skipped: 10 s of the 480 s budget left |" \
    "a skipped run says why"
expect_match out '^\| without maxpool-scatter \| maxpool1 \| maxpool \|' \
    "the per-layer table shows the layers the lever touches"
expect_no_match out '^\| without maxpool-scatter \| conv2d1 ' "and not the others"
run bash "$script" -r "$work/nosuch.jsonl"
expect_rc 2 "-r with no such file"

finish

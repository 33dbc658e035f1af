#!/usr/bin/env bash
# scripts/cli-transcript.sh TRAINER OUT_DIR: what trainer prints and writes for each bundled
# model on the CPU (check, train, resume, eval, predict, bench train) and for the usual
# mistakes, one file per command, so that a refactor can show its outputs are unchanged:
#
#   bash scripts/cli-transcript.sh build-before/trainer /tmp/before
#   bash scripts/cli-transcript.sh build/trainer /tmp/after
#   diff -r /tmp/before /tmp/after     # nothing: byte-identical
#
# Each command's stdout, stderr and exit code land in OUT_DIR/NN-name.{out,err,rc}; weights,
# checkpoints and logs in OUT_DIR/files. Only what a clock decides is masked (seconds,
# samples/s, bench timings, dates in logs); everything else, numbers of the loss included,
# is compared as it is. One BLAS thread, so sums are added in one order.
set -uo pipefail
[[ $# -eq 2 ]] || { echo "usage: $0 TRAINER OUT_DIR" >&2; exit 2; }
trainer=$(realpath "$1")
out=$2
top=$(cd "$(dirname "$0")/.." && pwd)
rm -rf "$out"
mkdir -p "$out/files"
files=$(realpath "$out/files")
cd "$top"
step=0

# Seconds, rates and timestamps vary from run to run; nothing else may.
mask_clock() {
  sed -E -e 's/[0-9]+ samples\/s/N samples\/s/g' \
    -e 's/[0-9]+(\.[0-9]+)? (s|ms|us|min)\b/N \2/g' \
    -e 's/"(seconds|elapsed_s|wall_s|samples_per_s|samples_per_second|time|ms|median_ms|timestamp|wall_time|step_ms)": ?[-0-9.e+]+/"\1":N/g' \
    -e 's/[0-9]+(\.[0-9]+)? (GFLOP\/s|TFLOP\/s|GB\/s|steps\/s|img\/s)/N \2/g' \
    -e 's/^(samples\/s|TFLOP\/s|step) .*/\1 N/' \
    -e "s|$files|FILES|g" -e "s|$trainer|TRAINER|g"
}

run() {
  local name=$1
  shift
  step=$((step + 1))
  local base
  base=$(printf '%s/%02d-%s' "$out" "$step" "$name")
  "$trainer" "$@" > "$base.out.raw" 2> "$base.err.raw"
  echo $? > "$base.rc"
  mask_clock < "$base.out.raw" > "$base.out"
  mask_clock < "$base.err.raw" > "$base.err"
  rm -f "$base.out.raw" "$base.err.raw"
}

# Predict's input: 8 rows of a CSV in Fashion-MNIST's shape, made without randomness.
python3 - "$files/eight.csv" << 'EOF'
import sys
with open(sys.argv[1], "w") as f:
    f.write("label," + ",".join("x%d" % c for c in range(784)) + "\n")
    for r in range(8):
        f.write("%d," % (r % 10) + ",".join(str((r * 37 + c * 11) % 256) for c in range(784)) + "\n")
EOF

run data-export data export fashion-mnist "png:$files/png" --limit 3

cpu=(--device cpu --threads 1)
small=(--epochs 1 --train-limit 512 --test-limit 256 --batch 64)
for m in mlp lenet cnn-bn resnet-mini wide-mlp; do
  run "$m-check" check "models/$m.model"
  run "$m-train" train "models/$m.model" "${small[@]}" "${cpu[@]}" --save "$files/$m.safetensors" \
    --checkpoint "$files/$m-checkpoints" --logdir "$files/$m-log"
  run "$m-resume" train "models/$m.model" --epochs 2 --train-limit 512 --test-limit 256 --batch 64 \
    "${cpu[@]}" --resume "$files/$m-checkpoints" --save "$files/$m-resumed.safetensors"
  run "$m-eval" eval "models/$m.model" --weights "$files/$m.safetensors" --test-limit 256 "${cpu[@]}"
  images=("--data" "csv:$files/eight.csv")
  [[ $m == *mlp ]] || images=("$files/png/test")
  run "$m-predict" predict "models/$m.model" --weights "$files/$m.safetensors" "${images[@]}" \
    "${cpu[@]}" --output "$files/$m-predictions.csv"
  run "$m-bench-train" bench train "models/$m.model" --batch 16 --steps 2 --repeats 1 --warmup 1 "${cpu[@]}"
done
run cifar-resnet-check check models/cifar-resnet.model
run mlp-json train models/mlp.model "${small[@]}" "${cpu[@]}" --json --quiet
run mlp-replicas train models/mlp.model "${small[@]}" "${cpu[@]}" --replicas 2 \
  --save "$files/mlp-replicas.safetensors"
run mlp-batch-auto train models/mlp.model --epochs 1 --train-limit 512 --test-limit 256 --batch auto \
  --memory-limit 8M "${cpu[@]}"
run mlp-val-split train models/mlp.model "${small[@]}" "${cpu[@]}" --val-split 0.2 --early-stop 1
run mlp-init-from train models/mlp.model "${small[@]}" "${cpu[@]}" --init-from "$files/mlp.safetensors"
run lenet-eval-json eval models/lenet.model --weights "$files/lenet.safetensors" --test-limit 256 \
  "${cpu[@]}" --json

# The usual mistakes: each must keep its words and its exit code.
run bad-batch train models/mlp.model --batch 0 "${cpu[@]}"
run bad-batch-word train models/mlp.model --batch lots "${cpu[@]}"
run bf16-on-cpu train models/mlp.model "${small[@]}" "${cpu[@]}" --precision bf16
run tf32-on-cpu train models/mlp.model "${small[@]}" "${cpu[@]}" --precision tf32
run gpus-on-cpu train models/mlp.model "${small[@]}" --device cpu --gpus 0,1
run nhwc-on-cpu train models/lenet.model "${small[@]}" "${cpu[@]}" --layout nhwc
run cuda-graph-on-cpu train models/mlp.model "${small[@]}" "${cpu[@]}" --cuda-graph on
run memory-too-small train models/lenet.model "${small[@]}" "${cpu[@]}" --memory-limit 64K
run missing-weights eval models/mlp.model --weights "$files/none.safetensors" "${cpu[@]}"
run wrong-weights eval models/lenet.model --weights "$files/mlp.safetensors" "${cpu[@]}"
run predict-no-input predict models/mlp.model --weights "$files/mlp.safetensors" "${cpu[@]}"
run resume-wrong-model train models/lenet.model "${small[@]}" "${cpu[@]}" \
  --resume "$files/mlp-checkpoints"
run replicas-and-gpus train models/mlp.model "${small[@]}" --device cpu --replicas 2 --gpus 0
run bench-train-bf16 bench train models/mlp.model --precision bf16 "${cpu[@]}"

# Logs carry wall times and outputs name the folder: mask them before comparing.
for f in "$files"/*-log/metrics.jsonl "$files"/*-predictions.csv; do
  [[ -f $f ]] && mask_clock < "$f" > "$f.masked" && rm -f "$f"
done
rm -f "$files"/*-log/events.out.tfevents.*  # wall times inside protobuf records

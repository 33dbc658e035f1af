#!/usr/bin/env bash
# bench/ranks_gpu.sh [-e EPOCHS] [-b "BUCKET_MB..."] [CONFIG...]
# How much of the gradient all-reduce the buckets hide on GPUs (issue 16; docs/distributed.md):
# the same global batch trained by one process on one GPU, then by `mpirun -np 2` (a GPU
# each, NCCL), with one sum after backward (--bucket-mb 0) and with each bucket size of -b
# (default "25 0.25": the default, one bucket for the bundled models, whose gradients are
# under 25 MiB, and a size that cuts them into several buckets summed while backward goes
# on). Each run's step time comes from its best epoch's samples/s (of EPOCHS, default 3, so
# the first epoch's warm-up does not count); "wait" is the time rank 0's compute stream
# waited for the sums per step, timed with CUDA events (its closing notice).
# hidden = (step time with --bucket-mb 0 - step time with buckets) / wait with --bucket-mb 0:
# the share of the sum that overlapping took off the step (0: none, 1: all of it).
#
# CONFIG is MODEL:BATCH:TRAIN_SAMPLES (default mlp:1024:60000 lenet:256:60000). Needs 2 usable
# GPUs, mpirun (openmpi-bin), a trainer built with CUDA, NCCL and MPI in ${BUILD:-build}
# and Fashion-MNIST; without them it says which and exits 77 (skipped).
set -euo pipefail
cd "$(dirname "$0")/.."
epochs=3 buckets="25 0.25"
while getopts "e:b:" opt; do
  case $opt in e) epochs=$OPTARG ;; b) buckets=$OPTARG ;; *) exit 2 ;; esac
done
shift $((OPTIND - 1))
if [ $# -gt 0 ]; then configs=("$@"); else configs=(mlp:1024:60000 lenet:256:60000); fi
build=${BUILD:-build}
skip() { echo "ranks_gpu.sh: skipped: $1"; exit 77; }

[ -x "$build/trainer" ] || bash scripts/build.sh "$build" >/dev/null
command -v mpirun >/dev/null || skip "no mpirun (install openmpi-bin)"
gpus=$("$build/trainer" doctor --json 2>/dev/null |
  python3 -c 'import json, sys; print(json.load(sys.stdin)["usable_devices"])' 2>/dev/null) ||
  gpus=0
[ "${gpus:-0}" -ge 2 ] || skip "trainer doctor sees ${gpus:-0} usable GPU(s); 2 ranks need 2"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

# launch NPROC ARGS...: "best samples/s, wait ms a step" of one launch (wait 0: one process)
launch() {
  local n=$1
  shift
  local runner=("$build/trainer")
  [ "$n" -gt 1 ] && runner=(mpirun -np "$n" "$build/trainer")
  "${runner[@]}" "$@" 2>&1 |
    awk '/^epoch/ { for (i = 1; i <= NF; i++) if ($i == "samples/s" && $(i - 1) + 0 > v) v = $(i - 1) + 0 }
         /gradient sums over/ { if (match($0, /\([0-9.]+ ms a step\)/))
                                  w = substr($0, RSTART + 1, RLENGTH - 12) }
         END { print v + 0, w + 0 }'
}
# step_ms BATCH RATE: milliseconds a step at RATE samples/s
step_ms() { awk -v b="$1" -v r="$2" 'BEGIN { printf "%.2f", r > 0 ? b * 1000 / r : 0 }'; }

"$build/trainer" doctor 2>/dev/null | grep -E '^  cuda:[0-9]+ ' # the GPUs, one line each
echo "best of $epochs epochs; step: ms a step (global batch); wait: ms a step rank 0's GPU waited"
for config in "${configs[@]}"; do
  IFS=: read -r model batch samples <<<"$config"
  args=(train "models/$model.model" --data fashion-mnist --epochs "$epochs" --batch "$batch"
        --train-limit "$samples" --test-limit 256)
  read -r rate _ <<<"$(launch 1 "${args[@]}" --gpus 0)"
  printf '%-6s batch %5s  1 GPU:                 step %8s\n' "$model" "$batch" \
    "$(step_ms "$batch" "$rate")"
  read -r rate0 wait0 <<<"$(launch 2 "${args[@]}" --device cuda --bucket-mb 0)"
  step0=$(step_ms "$batch" "$rate0")
  printf '%-6s batch %5s  2 ranks --bucket-mb 0:  step %8s  wait %7.2f\n' "$model" "$batch" \
    "$step0" "$wait0"
  for mb in $buckets; do
    read -r rate1 wait1 <<<"$(launch 2 "${args[@]}" --device cuda --bucket-mb "$mb")"
    step1=$(step_ms "$batch" "$rate1")
    hidden=$(awk -v s0="$step0" -v s1="$step1" -v w="$wait0" \
      'BEGIN { printf "%.2f", w > 0 ? (s0 - s1) / w : 0 }')
    printf '%-6s batch %5s  2 ranks --bucket-mb %-4s step %8s  wait %7.2f  hidden %5s\n' \
      "$model" "$batch" "$mb:" "$step1" "$wait1" "$hidden"
  done
done

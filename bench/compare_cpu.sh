#!/usr/bin/env bash
# bench/compare_cpu.sh [EPOCHS] [BATCH...]: training throughput on the CPU, trainer vs
# PyTorch (Debian's python3-torch, OpenBLAS), same model, data, batch, optimizer and
# thread count. Each side's figure is its best epoch's samples/s (training only).
# Needs: scripts/setup.sh --bench, and a build in build/.
set -euo pipefail
cd "$(dirname "$0")/.."
epochs=${1:-3}
shift || true
batches=("${@:-128}")
threads=${THREADS:-$(nproc)}
python=/usr/bin/python3
[ -x build/trainer ] || bash scripts/build.sh build

printf "%-6s %6s %8s %16s %16s %8s\n" model batch threads "trainer samp/s" "pytorch samp/s" ratio
for batch in "${batches[@]}"; do
  ours=$(./build/trainer train models/mlp.model --device cpu --threads "$threads" \
           --epochs "$epochs" --batch "$batch" 2>/dev/null |
         awk '/^epoch/ { for (i = 1; i <= NF; i++) if ($i == "samples/s") v = $(i-1);
                         if (v > best) best = v } END { print best }')
  theirs=$(OMP_NUM_THREADS=$threads $python bench/torch_train.py --model mlp --batch "$batch" \
             --epochs "$epochs" --threads "$threads" | sed -n 's/.*samples\/s=\([0-9]*\).*/\1/p')
  ratio=$(awk -v a="$ours" -v b="$theirs" 'BEGIN { printf "%.2f", a / b }')
  printf "%-6s %6s %8s %16s %16s %8s\n" mlp "$batch" "$threads" "$ours" "$theirs" "$ratio"
done

#!/usr/bin/env bash
# bench/compare_cpu.sh [-e EPOCHS] [-n TRAIN_SAMPLES] [-m "mlp lenet cnn-bn"] [BATCH...]
# Training throughput on the CPU, trainer vs PyTorch (Debian's python3-torch with
# OpenBLAS): same model, data, batch, optimizer and thread count. Each side's figure is
# its best epoch's samples/s over the training steps (evaluation excluded). PyTorch runs
# as a user gets it and with the OpenBLAS settings trainer picks for itself.
# Needs: scripts/setup.sh --bench, and a build in build/ (made if missing).
set -euo pipefail
cd "$(dirname "$0")/.."
epochs=2 limit=0 models="mlp lenet cnn-bn"
while getopts "e:n:m:" opt; do
  case $opt in e) epochs=$OPTARG ;; n) limit=$OPTARG ;; m) models=$OPTARG ;; *) exit 2 ;; esac
done
shift $((OPTIND - 1))
batches=("${@:-128}")
threads=${THREADS:-$(nproc)}
python=/usr/bin/python3
[ -x build/trainer ] || bash scripts/build.sh build
# Both sides get the same OpenBLAS kernels: trainer picks AVX-512/AVX2 ones where the
# library would fall back to generic code, and PyTorch uses the same libopenblas.
core=$(./build/trainer --version | sed -n 's/^BLAS: OpenBLAS, kernels \([A-Za-z0-9]*\).*/\1/p')
export OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-$core}
# trainer also makes OpenBLAS's idle threads sleep instead of spin (tools/main.c); PyTorch
# calls the same library, so it gets the same setting.
export OPENBLAS_THREAD_TIMEOUT=${OPENBLAS_THREAD_TIMEOUT:-4}
limit_args=() trainer_limit_args=()
# PyTorch's side (bench/torch_train.py) takes the first N samples: the trainer is told to
# take the same ones rather than its default stratified sample.
[ "$limit" -gt 0 ] && limit_args=(--train-limit "$limit") &&
  trainer_limit_args=(--train-limit "$limit" --limit-order first)

printf "%-8s %6s %8s %14s %16s %7s %16s %7s\n" model batch threads "trainer" \
  "pytorch default" ratio "pytorch same-env" ratio
for model in $models; do
  for batch in "${batches[@]}"; do
    ours=$(./build/trainer train "models/$model.model" --device cpu --threads "$threads" \
             --epochs "$epochs" --batch "$batch" --test-limit 1000 "${trainer_limit_args[@]}" 2>/dev/null |
           awk '/^epoch/ { for (i = 1; i <= NF; i++) if ($i == "samples/s") v = $(i-1);
                           if (v > best) best = v } END { print best + 0 }')
    # PyTorch twice: as a user gets it (no OpenBLAS variables), and with the OpenBLAS
    # settings trainer gives itself, so neither side wins by configuration alone.
    # torch_run ENV-COMMAND...: the PyTorch figure, run under `env ...`.
    torch_run() {
      "$@" OMP_NUM_THREADS="$threads" "$python" bench/torch_train.py --model "$model" \
        --batch "$batch" --epochs "$epochs" --threads "$threads" "${limit_args[@]}" |
        sed -n 's/.*samples\/s=\([0-9]*\).*/\1/p'
    }
    default=$(torch_run env -u OPENBLAS_CORETYPE -u OPENBLAS_THREAD_TIMEOUT)
    same=$(torch_run env)
    printf "%-8s %6s %8s %14s %16s %7s %16s %7s\n" "$model" "$batch" "$threads" "$ours" \
      "$default" "$(awk -v a="$ours" -v b="$default" 'BEGIN { printf "%.2f", a / b }')" \
      "$same" "$(awk -v a="$ours" -v b="$same" 'BEGIN { printf "%.2f", a / b }')"
  done
done

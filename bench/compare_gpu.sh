#!/usr/bin/env bash
# bench/compare_gpu.sh [-e EPOCHS] [-n TRAIN_SAMPLES] [-m "mlp lenet"] [-d cuda:N] [-f] [-T] [BATCH...]
# Training throughput on one GPU, trainer vs PyTorch eager (bench/torch_train.py --device):
# same model, data, batch (128 and 1024 unless given), optimizer (Adam) and precision, on
# the same card in the same run. Each side's figure is its best epoch's samples/s over the
# training steps, evaluation excluded; the best of EPOCHS (default 3), so the first epoch's
# warm-up (CUDA context, cuDNN algorithm choice, PyTorch's autotuner) does not count.
#
# Precision: fp32 weights and activations. TF32 is allowed on both sides by default, as
# trainer allows it by default (PyTorch gets torch.backends.cuda.matmul.allow_tf32 and
# torch.backends.cudnn.allow_tf32 = True); -f compares FP32 only (trainer --no-tf32,
# PyTorch with both flags False).
# Data: both keep the dataset's bytes on the GPU and gather each batch there from shuffled
# indices (trainer does when the dataset fits; torch_train.py does the same).
# -T: trainer only, for a machine without a CUDA build of PyTorch.
#
# Needs: an NVIDIA GPU; a trainer build with the CUDA backend in $BUILD (default build/,
# built if missing); python3 (or $PYTHON) with a CUDA build of PyTorch and numpy.
# Fashion-MNIST in /usr/share/datasets/fashion-mnist or $TRAINER_FASHION_MNIST_DIR.
# Without any of these it stops, saying which, with exit status 1.
set -euo pipefail
cd "$(dirname "$0")/.."
epochs=3 limit=0 models="mlp lenet" device=cuda:0 fp32=0 with_torch=1
while getopts "e:n:m:d:fT" opt; do
  case $opt in
    e) epochs=$OPTARG ;; n) limit=$OPTARG ;; m) models=$OPTARG ;; d) device=$OPTARG ;;
    f) fp32=1 ;; T) with_torch=0 ;; *) exit 2 ;;
  esac
done
shift $((OPTIND - 1))
if [ $# -gt 0 ]; then batches=("$@"); else batches=(128 1024); fi
build=${BUILD:-build}
python=${PYTHON:-python3}
data_dir=${TRAINER_FASHION_MNIST_DIR:-/usr/share/datasets/fashion-mnist}

die() {
  printf 'compare_gpu.sh: %s\n' "$1" >&2
  [ $# -gt 1 ] && printf '%s\n' "$2" | sed 's/^/  | /' >&2
  exit 1
}

case $device in cuda | cuda:[0-9]*) ;; *) die "-d $device: expected cuda or cuda:N" ;; esac
ls "$data_dir"/train-images-idx3-ubyte* >/dev/null 2>&1 ||
  die "Fashion-MNIST is not in $data_dir" \
    "apt-get install dataset-fashion-mnist, or set TRAINER_FASHION_MNIST_DIR to a folder of its IDX files"
data_args=(--data "idx:$data_dir")
limit_args=()
[ "$limit" -gt 0 ] && limit_args=(--train-limit "$limit")
trainer_tf32=() torch_tf32=on precision="TF32 allowed on both sides (trainer's default)"
if [ "$fp32" = 1 ]; then
  trainer_tf32=(--no-tf32) torch_tf32=off
  precision="FP32 only (trainer --no-tf32, PyTorch allow_tf32 off)"
fi

# ---- is there a GPU, and can both sides use it? -------------------------------------
gpus=""
if command -v nvidia-smi >/dev/null 2>&1; then
  gpus=$(nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader 2>&1) ||
    die "nvidia-smi found no usable GPU" "$gpus"
  [ -n "$gpus" ] || die "nvidia-smi lists no GPU"
fi
[ -x "$build/trainer" ] || bash scripts/build.sh "$build"
version=$("$build/trainer" --version)
grep -q "^CUDA runtime" <<<"$version" ||
  die "$build/trainer has no CUDA backend" "$version"$'\n'"Rebuild where the CUDA toolkit, cuDNN \
and NCCL are installed, or pick another build with BUILD=dir."
seen=${gpus:-none: nvidia-smi is not installed}
probe=$("$build/trainer" train models/mlp.model --device "$device" --epochs 1 --train-limit 256 \
          --test-limit 256 "${data_args[@]}" 2>&1) ||
  die "trainer cannot train on $device (GPUs nvidia-smi lists: $seen)" "$probe"
torch_version="(not run: -T)"
if [ "$with_torch" = 1 ]; then
  torch_version=$("$python" - "$device" 2>&1 <<'EOF'
import sys
try:
    import numpy  # noqa: F401
    import torch
except ImportError as e:
    sys.exit(f"cannot import torch and numpy: {e}")
if not torch.cuda.is_available():
    sys.exit(f"torch {torch.__version__} sees no CUDA device (built for CUDA {torch.version.cuda})")
d = torch.device(sys.argv[1])
print(f"PyTorch {torch.__version__} (CUDA {torch.version.cuda}, cuDNN "
      f"{torch.backends.cudnn.version()}) on {torch.cuda.get_device_name(d)}")
EOF
) || die "$python cannot run PyTorch on $device" "$torch_version"$'\n'"PYTHON=... picks another \
python; -T runs trainer alone."
fi

echo "GPU:       ${gpus:-unknown (no nvidia-smi)}"
while IFS= read -r line; do echo "trainer:   $line"; done <<<"$version"
echo "PyTorch:   $torch_version"
echo "precision: $precision"
echo "run:       $device, best of $epochs epochs, ${limit_args[1]:-all} training samples, data $data_dir"
echo

# Best epoch's samples/s and the last epoch's test accuracy from trainer's epoch lines.
parse_trainer() {
  awk '/^epoch/ { for (i = 1; i <= NF; i++) { if ($i == "samples/s") v = $(i-1);
                                             if ($i == "test") acc = $(i+4) }
                  if (v > best) best = v }
       END { printf "%d %s\n", best, acc }'
}

printf "%-8s %6s %16s %16s %8s %12s %12s\n" model batch "trainer samp/s" "pytorch samp/s" ratio \
  "trainer acc" "pytorch acc"
for model in $models; do
  for batch in "${batches[@]}"; do
    out=$("$build/trainer" train "models/$model.model" --device "$device" --epochs "$epochs" \
            --batch "$batch" "${data_args[@]}" "${limit_args[@]}" \
            "${trainer_tf32[@]}" 2>&1) ||
      die "trainer failed: $model, batch $batch" "$out"
    read -r ours our_acc <<<"$(parse_trainer <<<"$out")"
    theirs=- their_acc=- ratio=-
    if [ "$with_torch" = 1 ]; then
      out=$("$python" bench/torch_train.py --model "$model" --batch "$batch" --epochs "$epochs" \
              --device "$device" --tf32 "$torch_tf32" --data "$data_dir" "${limit_args[@]}" 2>&1) ||
        die "bench/torch_train.py failed: $model, batch $batch" "$out"
      theirs=$(sed -n 's/.*samples\/s=\([0-9]*\).*/\1/p' <<<"$out")
      their_acc=$(sed -n 's/.*test_acc=\([0-9.]*\).*/\1/p' <<<"$out")
      ratio=$(awk -v a="$ours" -v b="$theirs" 'BEGIN { printf "%.2f", a / b }')
    fi
    printf "%-8s %6s %16s %16s %8s %12s %12s\n" "$model" "$batch" "$ours" "$theirs" "$ratio" \
      "$our_acc" "$their_acc"
  done
done
echo
echo "ratio = trainer / PyTorch samples/s (above 1: trainer is faster); accuracies are on the"
echo "10 000 test images after the last epoch."

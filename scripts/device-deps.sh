#!/usr/bin/env bash
# Build dependencies for a lent GPU machine, which reaches no package registry and has
# CUDA, CMake and PyTorch (with cuDNN/NCCL inside its pip packages) but no OpenBLAS,
# libpng headers or Fashion-MNIST.
#
#   here:        bash scripts/device-deps.sh download   # Debian .debs into .deps/debs
#   device run:  source scripts/device-deps.sh env      # unpack to .deps/root, export paths
#                (carry `.deps` with the run; nothing is installed into /)
set -euo pipefail
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
deps=$top/.deps
packages=(libopenblas0-pthread libopenblas-pthread-dev libopenblas-dev libgfortran5
          libpng-dev libpng16-16 zlib1g-dev dataset-fashion-mnist)

case "${1:-}" in
download)
  mkdir -p "$deps/debs"
  (cd "$deps/debs" && apt-get download "${packages[@]}")
  du -sh "$deps/debs"
  ;;
env)
  root=$deps/root
  if [ ! -d "$root/usr" ]; then
    for f in "$deps"/debs/*.deb; do dpkg -x "$f" "$root"; done
  fi
  lib=$root/usr/lib/x86_64-linux-gnu
  # Debian's alternatives would point libblas.so.3 at OpenBLAS; here we link it directly.
  ln -sf openblas-pthread/libopenblas.so.0 "$lib/libopenblas.so" 2>/dev/null || true
  export CMAKE_PREFIX_PATH=$root/usr${CMAKE_PREFIX_PATH:+:$CMAKE_PREFIX_PATH}
  export LD_LIBRARY_PATH=$lib/openblas-pthread:$lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  export TRAINER_FASHION_MNIST_DIR=$root/usr/share/datasets/fashion-mnist
  # cuDNN and NCCL from PyTorch's pip packages, when the toolkit lacks them.
  site=$(python3 -c 'import nvidia, os; print(os.path.dirname(nvidia.__path__[0]))' 2>/dev/null || true)
  if [ -n "$site" ]; then
    export CUDNN_ROOT=$site/nvidia/cudnn NCCL_ROOT=$site/nvidia/nccl
    export LD_LIBRARY_PATH=$CUDNN_ROOT/lib:$NCCL_ROOT/lib:$LD_LIBRARY_PATH
  fi
  ;;
*)
  echo "usage: scripts/device-deps.sh download | source scripts/device-deps.sh env" >&2
  exit 2
  ;;
esac

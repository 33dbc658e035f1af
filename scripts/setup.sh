#!/usr/bin/env bash
# Installs the Debian packages trainer needs to build, test and train, when missing.
#   scripts/setup.sh          build + test + train dependencies (python3-venv: the e2e test
#                             that has TensorBoard read our logs installs it from PyPI)
#   scripts/setup.sh --test   also what the tests drive: PyTorch, NumPy and PIL (the
#                             export, race and comparison tests; scripts/test.sh), strace
#                             (resume_lookup counts the files a resume opens)
#   scripts/setup.sh --bench  the same, for bench/ comparisons
set -euo pipefail

# libclang-rt-dev: libFuzzer and the sanitizers' runtimes for clang (scripts/fuzz.sh);
# python3-venv: the e2e tests that read our checkpoints and logs with PyPI's safetensors
# and tensorboard; libopenmpi-dev, openmpi-bin: `mpirun -np N trainer train` (optional at
# build time, installed so that its tests run).
packages=(cmake ninja-build gcc g++ clang libclang-rt-dev pkg-config libopenblas-dev zlib1g-dev
          libpng-dev libjpeg62-turbo-dev libjpeg-turbo-progs libcjson-dev dataset-fashion-mnist python3 python3-venv
          libopenmpi-dev openmpi-bin)
case "${1:-}" in
--test | --bench) packages+=(python3-torch python3-numpy python3-pil strace) ;;
esac

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then exit 0; fi

echo "setup: installing ${missing[*]}"
sudo=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "setup: need root (or sudo) to install: ${missing[*]}" >&2; exit 1; }
  sudo="sudo"
fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null

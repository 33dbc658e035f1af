#!/usr/bin/env bash
# scripts/clang-check.sh [BUILD_DIR]: every source (C, and the host side of the CUDA code)
# built a second time with clang, warnings as errors, then clang's static analyzer over
# all of it (scripts/static_analysis.py) and the unit tests of that build.
#
# Why: a GPU machine's compiler is newer than ours. GCC 13 there refused code GCC 12 here
# accepted (a read after free() in kernels/cuda/cuda_collective.cu); a second compiler
# and the analyzer catch that class of bug here first.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-build-clang}
command -v clang >/dev/null && command -v clang++ >/dev/null ||
  { echo "clang-check.sh: clang not found: install Debian's clang (scripts/setup.sh does)" >&2; exit 1; }

# One GPU architecture is enough here: the host code is the same for every one.
CC=clang CUDAHOSTCXX=clang++ bash scripts/build.sh "$dir" -DCMAKE_CUDA_ARCHITECTURES=75-real \
  -DCMAKE_EXPORT_COMPILE_COMMANDS=ON
[ -z "${CONFIGURE_ONLY:-}" ] || exit 0  # build.sh's: configure and stop
CUDAHOSTCXX=clang++ python3 scripts/static_analysis.py "$dir"
# Less the checks of the sources alone (the floors, device recursion): no build changes them.
(cd "$dir" && ctest --output-on-failure -j"$(nproc)" -L unit -E '^(include_floors|device_recursion)$')

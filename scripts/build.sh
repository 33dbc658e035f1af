#!/usr/bin/env bash
# scripts/build.sh [BUILD_DIR [extra cmake args...]]: configure (once) and build.
# The CUDA backend is compiled whenever the toolkit is found (TRAINER_CUDA=AUTO).
# CONFIGURE_ONLY=1: configure and stop (scripts/test.sh configures a later pass's folder
# beside an earlier one's: configuring is one process, CMake's CUDA checks 11 s of it).
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-build}
shift || true
cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release "$@" >"$dir.configure.log" 2>&1 ||
  { cat "$dir.configure.log"; exit 1; }
[ -z "${CONFIGURE_ONLY:-}" ] || exit 0
cmake --build "$dir" -- -j"$(nproc)"

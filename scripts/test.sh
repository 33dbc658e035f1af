#!/usr/bin/env bash
# One command for the whole test suite: install what is missing, build, run every
# ctest label (unit, e2e, fuzz; gpu tests skip themselves without a GPU), build every
# source again with clang and run its static analyzer, then build the CPU path with
# AddressSanitizer + UndefinedBehaviorSanitizer and run it again, then run each libFuzzer
# target briefly (scripts/fuzz.sh; FUZZ_SECONDS, default 10: 11 targets, two at a time on
# 2 cores, about a minute).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh --test
jobs=$(nproc)
# Each phase's header says how long the suite has run so far: CI has 20 minutes on 2 cores.
phase() { echo "== $1 (at $((SECONDS / 60)) min $((SECONDS % 60)) s)"; }

phase "release build (CUDA compiled and linked when the toolkit is present)"
# CMake configures on one core: the clang and sanitizer folders are configured beside the
# release folder (CMake's CUDA checks take 11 s in each CUDA folder), not each alone later.
sanitizer_args=(-DTRAINER_CUDA=OFF -DTRAINER_SANITIZE=ON)
CONFIGURE_ONLY=1 bash scripts/clang-check.sh build-clang &
clang_configured=$!
CONFIGURE_ONLY=1 bash scripts/build.sh build-asan "${sanitizer_args[@]}" &
sanitizer_configured=$!
bash scripts/build.sh build
wait "$clang_configured"
wait "$sanitizer_configured"
(cd build && ctest --output-on-failure -j"$jobs")

phase "second compiler (clang, warnings as errors) and clang's static analyzer"
bash scripts/clang-check.sh build-clang

# The default build type, Release, as README's `-DTRAINER_SANITIZE=ON` gives it: at -O3 with
# the sanitizers GCC found a format truncation (-Werror) that RelWithDebInfo's -O2 did not.
phase "sanitizer build (ASan + UBSan, CPU path, Release)"
bash scripts/build.sh build-asan "${sanitizer_args[@]}"
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1
# The e2e tests' Python environments from PyPI (onnx, safetensors, tensorboard): the ones the
# release pass made in build/, not made again in build-asan/ (common.bash's require_venv).
export TRAINER_VENV_DIR=$PWD/build
# Fashion-MNIST as plain IDX files, decompressed once: each test's trainer otherwise inflates
# Debian's .gz files anew (0.2 s of CPU a run under ASan, 3.3 s of batch_auto's 14). The
# bytes read and the reader's own code are the same; the gzip stream is zlib's, which the
# sanitizers do not instrument, and our side of it runs here in test_idx (gzip files,
# corrupted ones); the release pass reads the .gz files themselves in every test.
fashion_mnist_gz=(/usr/share/datasets/fashion-mnist/{train,t10k}-{images-idx3,labels-idx1}-ubyte.gz)
if ls "${fashion_mnist_gz[@]}" >/dev/null 2>&1; then
    mkdir -p build-asan/fashion-mnist
    for f in "${fashion_mnist_gz[@]}"; do
        gzip -dc "$f" >"build-asan/fashion-mnist/$(basename "$f" .gz)"
    done
    export TRAINER_FASHION_MNIST_DIR=$PWD/build-asan/fashion-mnist
fi
# Left out of this pass: e2e tests whose time goes to Python, PyTorch or a shell script, not
# to trainer's C code (the sanitizers' subject), and which the release pass ran already:
# bench/gpu_table.py's tables and bench/compare_gpu.sh (compare_gpu_table), the PyTorch race
# of bench/time_to_accuracy.sh (race_cpu: the trainer side is a plain mlp run, which other
# e2e tests train here), and scripts that never start the trainer (ptx_diff_script,
# gpu_check_script, device_deps_sourced), and train_limit_stratified_accuracy: an accuracy
# compared, 26 s of CPU here exporting 20000 PNGs and training on them, code that runs
# here in data_export (Fashion-MNIST exported to class folders and trained from them) and
# train_limit_stratified (the stratified limit on a class folder). About 80 s of CPU here.
# Nor the checks of the sources alone, which no build changes (scripts/check-floors.sh,
# check-device-recursion.py): the release pass ran them.
sanitizer_pass_leaves_out='^(e2e_(compare_gpu_table|race_cpu|ptx_diff_script|gpu_check_script|device_deps_sourced|train_limit_stratified_accuracy)|include_floors|device_recursion)$'
(cd build-asan && ctest --output-on-failure -j"$jobs" -L 'unit|fuzz|e2e' -E "$sanitizer_pass_leaves_out")

phase "coverage-guided fuzzing (libFuzzer, clang): each target ${FUZZ_SECONDS:-10} s"
bash scripts/fuzz.sh all "${FUZZ_SECONDS:-10}"
phase "done"

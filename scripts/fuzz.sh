#!/usr/bin/env bash
# scripts/fuzz.sh [TARGET|all] [SECONDS]: coverage-guided fuzzing with libFuzzer.
# Builds tests/libfuzzer/fuzz_*.c with clang, ASan and UBSan into build-fuzz/ and runs each
# target (or the one named) for SECONDS (default 60) over its seed corpus and regressions,
# as many targets at once as there are cores (FUZZ_JOBS).
# New interesting inputs collect in build-fuzz/corpus/TARGET (the seeds in the repository
# stay as they are); a crash leaves build-fuzz/artifacts/TARGET/crash-* and fails the run:
# fix it, then copy the input into tests/libfuzzer/regressions/TARGET/ so it stays fixed.
set -euo pipefail
cd "$(dirname "$0")/.."
target=${1:-all}
seconds=${2:-60}
build=build-fuzz

if ! command -v clang >/dev/null; then
  echo "fuzz.sh: clang is not installed (scripts/setup.sh installs it)" >&2
  exit 1
fi
CC=clang cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTRAINER_CUDA=OFF \
  -DTRAINER_LIBFUZZER=ON -DBUILD_TESTING=OFF >"$build.configure.log" 2>&1 ||
  { cat "$build.configure.log"; exit 1; }

if [ "$target" = all ]; then
  targets=$(ls tests/libfuzzer/fuzz_*.c | sed 's|.*/fuzz_||; s|\.c$||')
else
  targets=$target
fi
cmake --build "$build" --target $(printf 'libfuzzer_%s ' $targets) -- -j"$(nproc)"

export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1
# fuzz TARGET: one libFuzzer run, its output in $build/TARGET.log, its exit code in .rc.
fuzz() {
  local t=$1
  local seeds=tests/libfuzzer/corpus/$t regressions=tests/libfuzzer/regressions/$t
  local corpus=$build/corpus/$t artifacts=$build/artifacts/$t/
  mkdir -p "$corpus" "$artifacts" "$regressions"
  # -malloc_limit_mb: one allocation over 256 MB for an input of a few KB is a bug (a length
  # believed before it was checked), reported as such rather than as a slow climb in RSS.
  local options=(-max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=256
                 -print_final_stats=1
                 -artifact_prefix="$artifacts")
  [ -f "tests/libfuzzer/$t.dict" ] && options+=(-dict="tests/libfuzzer/$t.dict")
  # The first folder receives what libFuzzer finds; the others are only read.
  local rc=0
  "$build/tests/libfuzzer/libfuzzer_$t" "${options[@]}" "$corpus" "$seeds" "$regressions" \
    >"$build/$t.log" 2>&1 || rc=$?
  echo "$rc" >"$build/$t.rc"
}

# A libFuzzer run is one process on one core: as many run at once as there are cores
# (FUZZ_JOBS), each still for its SECONDS, so that `all` takes SECONDS per round of them.
jobs=${FUZZ_JOBS:-$(nproc)}
running=0
for t in $targets; do
  rm -f "$build/$t.rc"
  fuzz "$t" &
  running=$((running + 1))
  if [ "$running" -ge "$jobs" ]; then
    wait -n || true
    running=$((running - 1))
  fi
done
wait

failed=0
for t in $targets; do
  echo "== libFuzzer: $t for $seconds s (corpus $build/corpus/$t, seeds" \
    "tests/libfuzzer/corpus/$t, regressions tests/libfuzzer/regressions/$t)"
  rc=$(cat "$build/$t.rc" 2>/dev/null || echo "none recorded")
  summary='^(#[0-9]+[[:space:]]+(INITED|DONE)|stat::(number_of_exec|average_exec|peak_rss)'
  grep -E "$summary|==[0-9]+==ERROR|SUMMARY)" "$build/$t.log" || true
  if [ "$rc" != 0 ]; then
    tail -n 60 "$build/$t.log"
    echo "fuzz.sh: $t failed (exit $rc); a crashing input is in $build/artifacts/$t/ (copy" \
      "it to tests/libfuzzer/regressions/$t/ once fixed)" >&2
    failed=1
  fi
done
exit "$failed"

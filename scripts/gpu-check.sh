#!/usr/bin/env bash
# scripts/gpu-check.sh: what a lent GPU machine should run, in calls that fit its lease.
# A lease is 15 minutes of device time in all, the machine's start (~30-35 s a call) and
# the transfers included, and 10 minutes a command; so the checks are two calls of at most
# 6 minutes each:
#   call 1: bash scripts/gpu-check.sh                      build, `ctest -L gpu`, sanitizers
#   call 2: bash scripts/gpu-check.sh --compare --race     PyTorch comparison, time to accuracy
# Each writes its results folder, $OUT/results/DATE-GPU/ on a lent machine (else
# bench/results/DATE-GPU/; bench/results_folder.sh), to be committed under bench/results/.
# See `bash scripts/gpu-check.sh -h`.
#
# Exit: 0 every step passed (steps skipped on request, and a test that needs more GPUs than
# the machine has, do not count), 1 a step failed or timed out, 2 bad usage, 3 no usable GPU
# (nothing is built then).
set -uo pipefail # no -e: a failing step is a FAIL row and the next step runs
cd "$(dirname "$0")/.." || exit 1

usage() {
  cat <<'EOF'
usage: bash scripts/gpu-check.sh [options]

A lease is 15 minutes of device time, the machine's start included: two calls of at most
6 minutes each, each writing its results folder ($OUT/results/DATE-GPU on a lent machine):
  call 1: bash scripts/gpu-check.sh                   build, ctest -L gpu, sanitizers
  call 2: bash scripts/gpu-check.sh --compare --race  PyTorch comparison, time to accuracy

Builds trainer for the GPU it finds (Release, Ninja, CUDA architectures from nvidia-smi's
compute capability) and runs, each step under a timeout, within --budget (default 330 s,
so that a call with the machine's start stays under 6 minutes):
  build                         ~20 s on an H200 (11-19 s seen)
  trainer doctor                ~2 s
  ctest -L gpu in two parts: first the tests that need the card to themselves (RUN_SERIAL,
  one at a time, nothing beside them), then the rest (label card_shared, -j 4), the op
  parity tests (one per op family, test_cuda_parity_FAMILY) among them, all but
  test_cuda_parity_conv_pool, which runs beside them as 2 processes, one per group of its
  sections (conv2d; pooling and layout_convert), as a parity test takes section words:
  ~106 s for the other tests, ~190 s for the parity tests in one process, so about 200 s
  in all (estimated from the H200 runs of 2026-11-26/27; not yet measured this way). A
  test that needs two GPUs on a one-GPU machine is SKIP, not FAIL; any other skip is a
  FAIL: on a GPU machine every gpu test must run.
  compute-sanitizer memcheck (leak check on) over test_cuda_graph_step and
  test_cuda_parity_losses and test_cuda_parity_linear_algebra's "gemm with bias" section: ~10 s (6 s seen)
then prints one row per step: PASS/FAIL/SKIP, time, samples/s and test accuracy.

--all adds what older calls ran (more than one call's time): trainer lab all, every
models/*.model for 5 epochs on cuda:0, mlp with --cuda-graph on, PyTorch eager at batch
128 and 1024, and memcheck over every gpu test binary plus racecheck over every parity test
(test_cuda_parity_FAMILY).

With --compare and/or --race, only the build and then, in the time the build leaves:
  --compare   bench/compare_gpu.sh's default set: issue 33's rows, trainer against PyTorch's
              eager (fused Adam), whole-step torch.compile and whole-step CUDA graph columns
  --race      bench/time_to_accuracy.sh: cnn-bn to 91.5% test accuracy, 3 seeds, trainer
              against each PyTorch column (with --compare: its last 150 s of the budget)
Commit the results folder they write, then make the docs' tables from every folder:
  python3 bench/gpu_table.py --write docs/benchmarks.md

With --levers, only the build and then bench/levers_gpu.sh (each GPU lever alone: lenet
and cnn-bn at batch 1024 with all on, each `--without LEVER`, --no-fuse and --cuda-graph
on) in the time the build leaves; its results (levers-gpu.jsonl) and tables
(levers-gpu.md) are in the logs, and in $OUT.

With --profile, only the build and then `trainer bench train --per-layer --json` for
mlp at batch 128 in tf32 (samples/s with steps plain, then replayed from a CUDA Graph;
per-layer times from plain steps in both), each kernel of mlp's steps at batch 128 timed
by Nsight Compute where ncu is found (kernels-mlp-tf32-128.csv), then lenet at 128 in
tf32, the wide MLP at batch 4096 in bf16 and tf32, and lenet and cnn-bn at 1024 in bf16:
each layer's forward and backward time and the update's; the JSON is in the logs
(profile-*.json).

options:
  --quick           skip the sanitizers
  --all             the default steps, then the longer ones (above)
  --compare         build, then the PyTorch comparison (above)
  --race            build, then time to accuracy (above); with --compare, both
  --levers          build, then each lever alone only (above)
  --profile         build, then the per-layer profiles only (above)
  --no-bench        skip the PyTorch comparison of --all
  --no-sanitize     skip compute-sanitizer
  --build-dir DIR   build folder (default build-gpu)
  --logs DIR        folder for the logs and summary.txt (default gpu-check-logs)
  --budget SECONDS  stop starting steps after this long (default 330); a step's timeout
                    never runs past it
  -h, --help        this text

Dependencies: when .deps/debs exists (`bash scripts/device-deps.sh download` on a machine
with apt-get), `source scripts/device-deps.sh env` unpacks OpenBLAS, libpng,
Fashion-MNIST and Open MPI from it and takes cuDNN/NCCL from PyTorch's pip packages.
Results: after every step, the results folder gets gpu-check.tsv (one row per step),
gpu-check.log (the summary, then every step's log), versions.txt (nvidia-smi, nvcc,
trainer, PyTorch), commands.txt and commit.txt; when $OUT is set, $OUT/summary.txt too.

Exit status: 0 every step passed, 1 a step failed or timed out, 2 bad usage,
3 no usable GPU (nvidia-smi missing, failing or listing none; nothing is built).
EOF
}

command_line="bash scripts/gpu-check.sh${*:+ $*}" # for commands.txt, before the options go
build_dir=build-gpu
log_dir=gpu-check-logs
budget=330
run_bench=1
run_sanitize=1
run_all=0
run_compare=0
run_race=0
run_levers=0
run_profile=0
while [ $# -gt 0 ]; do
  case $1 in
  -h | --help) usage; exit 0 ;;
  --quick) run_sanitize=0 ;;
  --all) run_all=1 ;;
  --compare) run_compare=1 ;;
  --race) run_race=1 ;;
  --levers) run_levers=1 ;;
  --profile) run_profile=1 ;;
  --no-bench) run_bench=0 ;;
  --no-sanitize) run_sanitize=0 ;;
  --build-dir | --logs | --budget)
    if [ $# -lt 2 ]; then echo "gpu-check.sh: $1 needs a value" >&2; exit 2; fi
    case $1 in
    --build-dir) build_dir=$2 ;;
    --logs) log_dir=$2 ;;
    --budget) budget=$2 ;;
    esac
    shift
    ;;
  *) echo "gpu-check.sh: unknown option '$1' (-h lists them)" >&2; exit 2 ;;
  esac
  shift
done
case $budget in '' | *[!0-9]*) echo "gpu-check.sh: --budget takes whole seconds" >&2; exit 2 ;; esac
if [ $((run_compare | run_race)) -eq 1 ] && [ $((run_levers + run_profile)) -gt 0 ] ||
  [ $((run_levers + run_profile)) -gt 1 ]; then
  echo "gpu-check.sh: --levers and --profile each take the whole budget, and neither goes with --compare or --race: give one" >&2
  exit 2
fi

trainer=$build_dir/trainer
deadline=$((SECONDS + budget))
reserve=5 # seconds kept back at the end for the summary and the tarball
built=0
log_seq=0
active_pids=" " # the running steps' timeout processes, " pid pid "

# ---- results: one row per step ----------------------------------------------------------
rows_step=() rows_result=() rows_time=() rows_rate=() rows_acc=() rows_detail=()

# record STEP RESULT SECONDS RATE ACC DETAIL (RESULT: PASS, FAIL or SKIP; "" for none).
record() {
  rows_step+=("$1") rows_result+=("$2") rows_time+=("$3") rows_rate+=("$4")
  rows_acc+=("$5") rows_detail+=("$6")
  printf '%-4s %s%s\n' "$2" "$1" "${6:+: $6}"
  publish
}

summary() {
  local i failed=0 ran=0
  echo "gpu-check $(date -u '+%Y-%m-%d %H:%M UTC'), working tree of commit $commit"
  echo "gpu:      $gpu_text"
  [ -n "${versions:-}" ] && echo "versions: $versions"
  echo
  printf '%-32s %-6s %6s %12s %8s  %s\n' step result time samples/s "test acc" detail
  for i in "${!rows_step[@]}"; do
    printf '%-32s %-6s %6s %12s %8s  %s\n' "${rows_step[$i]}" "${rows_result[$i]}" \
      "${rows_time[$i]:+${rows_time[$i]}s}" "${rows_rate[$i]}" "${rows_acc[$i]}" \
      "${rows_detail[$i]}"
    [ "${rows_result[$i]}" = SKIP ] || ran=$((ran + 1))
    [ "${rows_result[$i]}" = FAIL ] && failed=$((failed + 1))
  done
  echo
  echo "$failed of $ran steps failed, ${SECONDS}s in all; logs in $log_dir/"
}

# publish: summary.txt in the log folder, and (on a lent machine) summary.txt and a tarball
# of every log in $OUT. Done after every step, so a run cut short still returns its logs;
# $OUT gets two files because the device tool returns at most 8.
publish() {
  summary >"$log_dir/summary.txt"
  if [ -n "${results_dir:-}" ]; then
    { cat "$log_dir/summary.txt"; for f in "$log_dir"/[0-9][0-9]-*.log; do
        [ -f "$f" ] && { printf '\n===== %s\n' "$(basename "$f")"; cat "$f"; }; done; } \
      >"$results_dir/gpu-check.log"
    local i
    { printf 'meta\tcommand\t%s\n' "$command_line"
      for i in "${!rows_step[@]}"; do
        printf 'step\t%s\t%s\t%s\t%s\t%s\t%s\n' "${rows_step[$i]}" "${rows_result[$i]}" \
          "${rows_time[$i]}" "${rows_rate[$i]}" "${rows_acc[$i]}" "${rows_detail[$i]}"
      done; } >"$results_dir/gpu-check.tsv"
  fi
  if [ -n "${OUT:-}" ] && [ -d "$OUT" ]; then
    cp "$log_dir/summary.txt" "$OUT/summary.txt"
    tar -czf "$OUT/gpu-check.tar.gz" -C "$(dirname "$log_dir")" "$(basename "$log_dir")" 2>/dev/null
  fi
}

# ---- running a step ------------------------------------------------------------------------
# time_left WANT: the timeout a step may have: WANT, or less where the budget ends sooner.
time_left() {
  local left=$((deadline - SECONDS - reserve))
  left=$((left < $1 ? left : $1))
  echo $((left < 1 ? 1 : left)) # never 0: `timeout 0` would mean no timeout at all
}

# start_logged LOG SECONDS CMD...: starts CMD in the background under `timeout`, output
# appended to LOG; sets job_pid and job_limit. (In the background and waited for, so that
# Ctrl-C reaches the trap below: timeout puts CMD in a process group of its own.)
start_logged() {
  local log=$1 want=$2
  shift 2
  job_limit=$(time_left "$want")
  echo "\$ $* (timeout ${job_limit}s)" >>"$log"
  timeout -k 10 "$job_limit" "$@" >>"$log" 2>&1 </dev/null &
  job_pid=$!
  active_pids+="$job_pid "
}

# finish_logged PID LIMIT START: waits for the job; sets step_rc, step_secs, and
# step_timed_out (1 when timeout stopped it: 124, or 137 when it needed KILL).
finish_logged() {
  wait "$1"
  step_rc=$?
  step_secs=$((SECONDS - $3))
  active_pids=${active_pids/ $1 / }
  step_timed_out=0
  if [ "$step_rc" -eq 124 ] || { [ "$step_rc" -eq 137 ] && [ "$step_secs" -ge "$2" ]; }; then
    step_timed_out=1
  fi
}

# run_logged LOG SECONDS CMD...: start_logged, then finish_logged.
run_logged() {
  local start=$SECONDS
  start_logged "$@"
  finish_logged "$job_pid" "$job_limit" "$start"
}

# can_start STEP: 0 when there is time left to start STEP; else records it as not run.
can_start() {
  if [ "$(time_left 999999)" -lt 10 ]; then
    record "$1" FAIL "" "" "" "not run: the ${budget}s budget is spent"
    return 1
  fi
}

# needs_build STEP: 0 when the build succeeded; else records STEP as not run.
needs_build() {
  [ "$built" = 1 ] && return 0
  record "$1" FAIL "" "" "" "not run: no build"
  return 1
}

# why_failed LOG: the timeout, or the first line of LOG that looks like the reason.
why_failed() {
  if [ "$step_timed_out" = 1 ]; then
    echo "timed out after ${step_secs}s"
    return
  fi
  local line how=""
  case $step_rc in
  77) how=" (the test skipped itself)" ;;
  134) how=" (SIGABRT)" ;;
  137) how=" (SIGKILL)" ;;
  139) how=" (SIGSEGV)" ;;
  esac
  # The first line that names the problem; "$ ..." lines are the commands the log echoes,
  # and the sanitizers' "SUMMARY: 0 errors" lines name none.
  line=$(grep -v -e '^\$ ' -e 'SUMMARY: ' "$1" |
    grep -m1 -E 'error|FAILED|FAIL |Segmentation|Aborted|not found|cannot' | cut -c1-110)
  echo "exit $step_rc$how${line:+: $line}"
}

# record_outcome STEP PASS_DETAIL FAIL_DETAIL: STEP's row, PASS or FAIL as its command
# ended (step_rc), with step_secs.
record_outcome() {
  if [ "$step_rc" -ne 0 ]; then
    record "$1" FAIL "$step_secs" "" "" "$3"
  else
    record "$1" PASS "$step_secs" "" "" "$2"
  fi
}

# new_log NAME: sets the caller's (local) `log` to a new, empty, numbered file in the log
# folder: 03-build.log, 04-doctor.log, ...
new_log() {
  log_seq=$((log_seq + 1))
  log=$log_dir/$(printf '%02d' "$log_seq")-$1.log
  : >"$log"
}

# shellcheck disable=SC2317 # invoked by the trap in main
on_signal() {
  local p
  for p in $active_pids; do kill -TERM "$p" 2>/dev/null; done
  record interrupted FAIL "" "" "" "stopped by a signal"
  exit 130
}

# ---- steps ----------------------------------------------------------------------------------
# The GPU first, before anything is built or written: no usable GPU is exit 3.
no_gpu() {
  echo "gpu-check.sh: no usable GPU, nothing built or run: $1" >&2
  exit 3
}

step_gpu() {
  command -v nvidia-smi >/dev/null 2>&1 || no_gpu "nvidia-smi is not installed"
  local out
  out=$(timeout 60 nvidia-smi --query-gpu=index,name,driver_version,memory.total \
    --format=csv,noheader 2>&1) || no_gpu "nvidia-smi failed: $(head -n 1 <<<"$out")"
  [ -n "$out" ] || no_gpu "nvidia-smi lists no GPU"
  gpu_text=$(head -n 1 <<<"$out" | sed 's/^0, //')
  gpu_count=$(wc -l <<<"$out")
  [ "$(wc -l <<<"$out")" -gt 1 ] && gpu_text+=" (and $(($(wc -l <<<"$out") - 1)) more)"
  # 9.0 -> 90; several cards of different kinds -> "80;90". Drivers too old to know
  # compute_cap leave it to nvcc's -arch=native.
  local caps
  caps=$(timeout 60 nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null |
    tr -d ' .' | grep -E '^[0-9]+$' | sort -un | paste -sd ';')
  arch=${caps:-native}
  gpu_text+=", CUDA architectures $arch"
}

step_deps() {
  local log
  if [ ! -d .deps/debs ] && [ ! -d .deps/root ]; then
    record deps SKIP "" "" "" "no .deps/debs: using the packages installed here"
    return
  fi
  new_log deps
  local start=$SECONDS
  # Sourced, to export the paths into this shell; it sets no shell options.
  # shellcheck source=scripts/device-deps.sh
  if source scripts/device-deps.sh env >"$log" 2>&1; then
    record deps PASS $((SECONDS - start)) "" "" \
      ".deps unpacked; cuDNN/NCCL: ${CUDNN_ROOT:-from the CUDA toolkit}"
  else
    record deps FAIL $((SECONDS - start)) "" "" "$(head -n 1 "$log")"
  fi
}

step_build() {
  local log start=$SECONDS
  can_start build || return
  new_log build
  # nvcc is often in /usr/local/cuda/bin without that being on PATH.
  if ! command -v nvcc >/dev/null 2>&1 && [ -x /usr/local/cuda/bin/nvcc ]; then
    export PATH=/usr/local/cuda/bin:$PATH
  fi
  {
    echo "nvcc: $(nvcc --version 2>&1 | tail -n 2 | head -n 1)"
    echo "cc:   $(cc --version 2>&1 | head -n 1)"
    echo "cmake: $(cmake --version 2>&1 | head -n 1)"
  } >>"$log"
  # TRAINER_CUDA=ON: a build that silently leaves out the CUDA backend is a failure here.
  run_logged "$log" 300 cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DTRAINER_CUDA=ON "-DCMAKE_CUDA_ARCHITECTURES=$arch"
  [ "$step_rc" -eq 0 ] && run_logged "$log" 300 cmake --build "$build_dir"
  if [ "$step_rc" -ne 0 ]; then
    step_secs=$((SECONDS - start))
    record build FAIL "$step_secs" "" "" "$(why_failed "$log")"
    return
  fi
  local version_text why
  version_text=$("$trainer" --version 2>&1)
  printf '%s\n' "$version_text" >>"$log"
  versions=$(grep '^CUDA runtime' <<<"$version_text")
  if [ -z "$versions" ]; then
    # The CUDA backend is trainer_cuda.so, opened at run time: --version's "CUDA: built in,
    # but ..." line says why it did not load (a library its RUNPATH does not reach, ...).
    why=$(grep -m1 '^CUDA' <<<"$version_text" | cut -c1-200)
    record build FAIL $((SECONDS - start)) "" "" \
      "$trainer has no CUDA backend: ${why:-no CUDA line}"
    return
  fi
  built=1
  record build PASS $((SECONDS - start)) "" "" "$build_dir, CUDA architectures $arch"
}

step_doctor() {
  local log
  needs_build doctor && can_start doctor || return
  new_log doctor
  run_logged "$log" 60 "$trainer" doctor
  local verdict
  verdict=$(grep -m1 '^verdict:' "$log" | cut -c1-100)
  record_outcome doctor "$verdict" "$(why_failed "$log")${verdict:+; $verdict}"
}

# The longest parity test's sections in groups of words (a parity test runs the sections
# whose name holds one of its arguments); together they name every section of
# test_cuda_parity_conv_pool. Words skip its coverage check, which --all's whole run keeps.
# The other parity tests, one per op family, run whole inside ctest.
parity_split=test_cuda_parity_conv_pool
parity_groups=("conv2d" "pooling layout_convert")

# ctest_counts LOG: "TOTAL PASSED|FAILED NAMES|SKIPPED NAMES" from ctest's lines
# "1/6 Test #23: test_cuda_devices ....   Passed    0.27 sec" ("***Skipped" for exit 77).
ctest_counts() {
  awk '/ Test +#[0-9]+: / {
         n++
         if ($0 ~ /  Passed /) p++
         else if ($0 ~ /Skipped|Not Run/) s = s " " $4
         else f = f " " $4 }
       END { printf "%d %d|%s|%s", n, p, f, s }' "$1"
}

step_ctest() {
  local log
  needs_build "ctest -L gpu" && can_start "ctest -L gpu" || return
  new_log ctest-gpu
  local ctest_log=$log start=$SECONDS group parity_jobs=() exclude="^$parity_split\$"
  # First, with nothing else on the card, the gpu tests that need it to themselves (RUN_SERIAL,
  # so ctest runs them one at a time): they fill it, run out of memory on purpose, size
  # batches from its free memory or time its work, so a process beside them (a section
  # group below) would fail for want of memory, or make them fail.
  run_logged "$ctest_log" 300 ctest --test-dir "$build_dir" -L gpu -LE card_shared \
    --output-on-failure
  local serial_rc=$step_rc serial_timed_out=$step_timed_out
  # Then the tests that share the card (label card_shared, tests/CMakeLists.txt), with
  # $parity_split in its groups beside them (16 cores; each process's OpenBLAS, the CPU
  # reference, gets 3 threads). --all runs it whole, inside ctest.
  if [ "$run_all" = 0 ] && [ -x "$build_dir/tests/$parity_split" ]; then
    for group in "${parity_groups[@]}"; do
      new_log "parity-${group%% *}"
      # shellcheck disable=SC2086 # the group's words are separate arguments
      start_logged "$log" 300 env OPENBLAS_NUM_THREADS=3 "$build_dir/tests/$parity_split" $group
      parity_jobs+=("$job_pid:$job_limit:$log:$group")
    done
  else
    exclude="^\$"
  fi
  run_logged "$ctest_log" 300 ctest --test-dir "$build_dir" -L card_shared -E "$exclude" -j 4 \
    --output-on-failure
  local ctest_rc=$((serial_rc | step_rc)) ctest_timed_out=$((serial_timed_out | step_timed_out))
  local counts
  counts=$(ctest_counts "$ctest_log")
  local total=${counts%% *} rest=${counts#* }
  local passed=${rest%%|*} failed skipped extra_skips=""
  failed=$(cut -d'|' -f2 <<<"$rest")
  skipped=$(cut -d'|' -f3 <<<"$rest")
  # A test of two GPUs skips on a one-GPU machine: reported, not failed.
  local name kept=""
  for name in $skipped; do
    if [[ $name == *two_gpus* ]] && [ "$gpu_count" -lt 2 ]; then
      extra_skips+=" $name"
      total=$((total - 1)) # reported on its own row
    else
      kept+=" $name"
    fi
  done
  skipped=$kept
  local job pid limit plog words parity_failed=""
  for job in "${parity_jobs[@]}"; do
    IFS=: read -r pid limit plog words <<<"$job"
    finish_logged "$pid" "$limit" "$start"
    total=$((total + 1))
    if [ "$step_rc" -eq 0 ]; then passed=$((passed + 1))
    else parity_failed+=" ${parity_split}[$words]($(why_failed "$plog"))"; fi
  done
  failed+=$parity_failed
  step_secs=$((SECONDS - start))
  local detail="$passed of $total passed${failed:+; failed:$failed}${skipped:+; skipped:$skipped}"
  [ ${#parity_jobs[@]} -gt 0 ] && detail+="; $parity_split as ${#parity_jobs[@]} section groups"
  if [ "$ctest_rc" -eq 0 ] && [ -z "$failed" ] && [ -z "$skipped" ] && [ "$total" -gt 0 ]; then
    record "ctest -L gpu" PASS "$step_secs" "" "" "$detail"
  elif [ "$ctest_timed_out" = 1 ]; then
    record "ctest -L gpu" FAIL "$step_secs" "" "" "timed out after ${step_secs}s; $detail"
  else
    record "ctest -L gpu" FAIL "$step_secs" "" "" "$detail"
  fi
  for name in $extra_skips; do
    record "$name" SKIP "" "" "" "needs two GPUs; this machine has $gpu_count"
  done
}

step_labs() {
  local log
  needs_build "lab all" && can_start "lab all" || return
  new_log lab-all
  run_logged "$log" 90 "$trainer" lab all
  # Every scenario prints a "== lab" header however it ends; the summary's lines say how
  # ("shown", "skipped: needs a GPU", "WENT WRONG"), and `lab all` exits 0 on a skip. On a
  # GPU every scenario is shown.
  local total shown
  total=$(grep -c '^== lab ' "$log")
  shown=$(grep -cE '^  [a-z0-9-]+ +shown$' "$log")
  if [ "$step_rc" -eq 0 ] && [ "$shown" -eq "$total" ] && [ "$total" -gt 0 ]; then
    record "lab all" PASS "$step_secs" "" "" "$shown scenarios shown"
  else
    record "lab all" FAIL "$step_secs" "" "" \
      "$(why_failed "$log"); $shown of $total scenarios shown (the summary says why)"
  fi
}

# epoch_figures LOG: sets the caller's (local) epochs, rate and acc from trainer's lines
# "epoch 5/5  train loss 0.2966 acc 0.8910  test loss 0.3512 acc 0.8719  lr 0.001  889182
# samples/s  0.1 s" (tools/cmd_train.c; "val" for "test" only under --val-split, unused here):
# how many, the best epoch's samples/s and the last test accuracy ("" where there is none).
epoch_figures() {
  read -r epochs rate acc <<<"$(awk '/^epoch [0-9]+\/[0-9]+ / {
         n++
         for (i = 1; i <= NF; i++) { if ($i == "samples/s") v = $(i - 1) + 0
                                     if ($i == "test") acc = $(i + 4) }
         if (v > best) best = v }
       END { printf "%d %d %s\n", n, best, (acc == "" ? "-" : acc) }' "$1")"
  [ "$rate" = 0 ] && rate=""
  [ "$acc" = - ] && acc=""
  return 0
}

# Five epochs reach 0.87 (mlp) to 0.91 (lenet) test accuracy on Fashion-MNIST, on the CPU
# and on the H100 alike; below 0.80 something computes wrongly (chance is 0.10).
min_accuracy=0.80

# A model of CIFAR-10's shape (3x32x32) trains on $TRAINER_CIFAR10_DIR, the binary
# version's folder, and only needs to learn something (5 epochs of a small ResNet reach
# about 0.7); nothing downloads it, so without the folder the step is skipped.
step_train() {
  local model=$1 name="train $1" log data=() floor=$min_accuracy
  if grep -q '^input .*shape=3x32x32' "models/$model.model"; then
    if [ -z "${TRAINER_CIFAR10_DIR:-}" ]; then
      record "$name" SKIP "" "" "" "needs CIFAR-10: set TRAINER_CIFAR10_DIR (binary version)"
      return
    fi
    data=(--data "cifar10:$TRAINER_CIFAR10_DIR")
    floor=0.50
  fi
  needs_build "$name" && can_start "$name" || return
  new_log "train-$model"
  run_logged "$log" 120 "$trainer" train "models/$model.model" --device cuda:0 --epochs 5 \
    "${data[@]}"
  local epochs rate acc
  epoch_figures "$log"
  if [ "$step_rc" -ne 0 ]; then
    record "$name" FAIL "$step_secs" "$rate" "$acc" "$(why_failed "$log")"
  elif [ "$epochs" -ne 5 ] || [ -z "$acc" ]; then
    record "$name" FAIL "$step_secs" "$rate" "$acc" "$epochs epoch lines instead of 5"
  elif awk -v a="$acc" -v m="$floor" 'BEGIN { exit !(a < m) }'; then
    record "$name" FAIL "$step_secs" "$rate" "$acc" "test accuracy below $floor"
  else
    record "$name" PASS "$step_secs" "$rate" "$acc" "5 epochs on cuda:0, best epoch's samples/s"
  fi
}

# bench_rows TSV: "MODEL BATCH PRECISION TRAINER TRAINER_ACC EAGER EAGER_ACC" for each row
# of compare_gpu.sh's results file (tab-separated "run MODEL BATCH PRECISION SIDE SAMPLES/S
# TEST_ACC FIRST_EPOCH_S NOTE" records; "-" where a run gave no figure).
bench_rows() {
  awk -F'\t' '$1 == "run" {
                 key = $2 " " $3 " " $4
                 if (!(key in seen)) { seen[key] = 1; keys[++n] = key }
                 if ($5 == "trainer") { t[key] = $6; ta[key] = $7 }
                 if ($5 == "eager") { e[key] = $6; ea[key] = $7 } }
               END { for (i = 1; i <= n; i++) { k = keys[i]
                       printf "%s %s %s %s %s\n", k, (k in t) ? t[k] : "-", (k in ta) ? ta[k] : "-",
                              (k in e) ? e[k] : "-", (k in ea) ? ea[k] : "-" } }' "$1"
}

# The plain mlp run above against the same run replaying its steps from CUDA Graphs: it
# must capture (one notice), never fall back, and reach the same accuracy floor.
step_train_graph() {
  local name="train mlp --cuda-graph on" log
  needs_build "$name" && can_start "$name" || return
  new_log train-mlp-cuda-graph
  run_logged "$log" 120 "$trainer" train models/mlp.model --device cuda:0 --epochs 5 \
    --cuda-graph on
  local epochs rate acc
  epoch_figures "$log"
  if [ "$step_rc" -ne 0 ]; then
    record "$name" FAIL "$step_secs" "$rate" "$acc" "$(why_failed "$log")"
  elif grep -q 'capturing the training step failed\|so training uses plain launches' "$log"; then
    record "$name" FAIL "$step_secs" "$rate" "$acc" \
      "$(grep -m1 -o 'CUDA Graph: capturing.*\|--cuda-graph on: .*' "$log" | cut -c1-110)"
  elif ! grep -q 'CUDA Graph: the training step is captured' "$log"; then
    record "$name" FAIL "$step_secs" "$rate" "$acc" "no capture notice"
  elif [ -z "$acc" ] || awk -v a="$acc" -v m="$min_accuracy" 'BEGIN { exit !(a < m) }'; then
    record "$name" FAIL "$step_secs" "$rate" "$acc" "test accuracy below $min_accuracy"
  else
    record "$name" PASS "$step_secs" "$rate" "$acc" "captured and replayed; best epoch's samples/s"
  fi
}

step_bench() {
  local log results=$log_dir/bench-vs-pytorch.tsv
  if [ "$run_bench" = 0 ]; then record bench SKIP "" "" "" "--no-bench/--quick"; return; fi
  needs_build bench && can_start bench || return
  new_log bench-vs-pytorch
  rm -f "$results"
  # -c eager -A: PyTorch eager only, no accuracy check, as this step has always been (the
  # compile columns take minutes: --compare); -b keeps the script inside the step's timeout.
  local left
  left=$(time_left 300)
  run_logged "$log" 300 env "BUILD=$build_dir" bash bench/compare_gpu.sh -c eager -A -e 3 \
    -b "$((left > 30 ? left - 10 : 20))" -o "$results" -m "mlp lenet cnn-bn" 128 1024
  local model batch precision ours our_acc theirs their_acc ratio rows=0
  while read -r model batch precision ours our_acc theirs their_acc; do
    ratio=-
    [ "$ours" != - ] && [ "$theirs" != - ] &&
      ratio=$(awk -v a="$ours" -v b="$theirs" 'BEGIN { printf "%.2f", a / b }')
    [ "$ours" = - ] && ours=""
    [ "$our_acc" = - ] && our_acc=""
    record "bench $model/$batch" PASS "" "$ours" "$our_acc" \
      "$precision; PyTorch eager $theirs samples/s, acc $their_acc; ratio $ratio"
    rows=$((rows + 1))
  done < <([ -f "$results" ] && bench_rows "$results")
  record_outcome bench "$rows rows: trainer vs PyTorch eager, TF32 allowed" \
    "$(why_failed "$log") ($rows rows done)"
}

# results_script_step STEP NAME SECONDS MARGIN FLOOR SCRIPT: what --compare and --race
# share: STEP is not run (1) without a build or time; else bench/SCRIPT runs under a SECONDS
# timeout with its own budget (-b) MARGIN seconds short of it (FLOOR at the least), its
# output in a new log NAME (the caller's `log`), its results in $log_dir/NAME.tsv, copied
# with their log into the results folder.
results_script_step() {
  local step=$1 name=$2 left=$3 margin=$4 floor=$5 script=$6 results=$log_dir/$2.tsv
  needs_build "$step" && can_start "$step" || return 1
  new_log "$name"
  rm -f "$results"
  run_logged "$log" "$left" env "BUILD=$build_dir" bash "bench/$script" \
    -b "$((left > floor + margin ? left - margin : floor))" -o "$results"
  [ -n "${results_dir:-}" ] && cp "$results" "${results%.tsv}.log" "$results_dir/" 2>/dev/null
  return 0
}

# Issue 15's comparison (compare_gpu.sh's default set) in whatever time the build left.
step_compare() {
  local log left targets
  left=$(time_left 999999)
  [ "$run_race" = 1 ] && left=$((left > 190 ? left - 150 : left / 2)) # the race's share
  results_script_step compare compare-gpu "$left" 15 25 compare_gpu.sh || return
  targets=$(grep -m1 '^targets: ' "$log" | cut -d: -f2-)
  record_outcome compare "targets:$targets; results in ${results_dir:-$log_dir}" \
    "$(why_failed "$log");${targets:- no table}"
}

# Time to accuracy (bench/time_to_accuracy.sh's defaults) in whatever time is left.
step_race() {
  local log verdict
  results_script_step race race "$(time_left 999999)" 10 30 time_to_accuracy.sh || return
  verdict=$(grep -m1 '^race .*: trainer: ' "$log" | cut -c1-150)
  record_outcome race "${verdict:-no trainer row}" "$(why_failed "$log")"
}

# Each lever alone (bench/levers_gpu.sh) in whatever time the build left.
step_levers() {
  local log results=$log_dir/levers-gpu.jsonl
  needs_build levers && can_start levers || return
  new_log levers-gpu
  rm -f "$results"
  local left
  left=$(time_left 999999)
  # Each run takes seconds on an H200 (2-3 s at batch 1024): a 20 s timeout per run, not
  # the script's 60 s, so that a short budget still runs them (a 41 s budget once skipped
  # every run under the 60 s timeout).
  run_logged "$log" "$left" env "BUILD=$build_dir" bash bench/levers_gpu.sh \
    -s "$((left > 40 ? left - 15 : 25))" -t 20 -o "$results"
  record_outcome levers "tables in $log_dir/levers-gpu.md" \
    "$(why_failed "$log"); tables in $log_dir/levers-gpu.md"
}

# trainer bench train --per-layer for the runs issue 15 measures, one row each: samples/s,
# and the JSON (every layer's forward and backward, the update) in the logs. mlp at batch
# 128 (a step of about 20 small kernels, 70 us on the H200) twice: its samples/s with
# steps plain and replayed from a CUDA Graph (the per-layer times of both come from plain
# steps, bench_train.c's marked_step), then each of its kernels timed by Nsight Compute
# (step_kernel_times), first, so that a short budget loses the others. lenet at 128 met
# its 5x over eager with 0.02x to spare.
step_profile() {
  local spec model batch precision graph name log json rate
  for spec in mlp:128:tf32:off mlp:128:tf32:on kernels lenet:128:tf32 wide-mlp:4096:bf16 \
    wide-mlp:4096:tf32 lenet:1024:bf16 cnn-bn:1024:bf16; do
    if [ "$spec" = kernels ]; then
      step_kernel_times
      continue
    fi
    IFS=: read -r model batch precision graph <<<"$spec"
    graph=${graph:-off}
    needs_build "profile $spec" && can_start "profile $spec" || continue
    name=profile-$model-$precision-$batch
    [ "$graph" = on ] && name=$name-graph
    new_log "$name"
    json=$log_dir/$name.json
    run_logged "$log" 120 "$trainer" bench train "models/$model.model" --device cuda:0 \
      --batch "$batch" --precision "$precision" --per-layer --steps 10 --cuda-graph "$graph" \
      --json
    # The log holds the command line and any notices, then the JSON object: kept alone.
    rate=$(python3 -c 'import json, sys
text = open(sys.argv[1]).read()
report, _ = json.JSONDecoder().raw_decode(text[text.index("\n{") + 1:])
json.dump(report, open(sys.argv[2], "w"), indent=1)
print(round(report["train"]["samples_per_second"]))' "$log" "$json" 2>>"$log")
    if [ "$step_rc" -ne 0 ] || [ -z "$rate" ]; then
      record "profile $spec" FAIL "$step_secs" "" "" "$(why_failed "$log")"
    else
      record "profile $spec" PASS "$step_secs" "$rate" "" "per-layer times in $json"
    fi
  done
}

# Each kernel of `trainer bench train` for mlp at batch 128 (setup, one warm-up step, one
# timed step), with its duration (gpu__time_duration.sum). Nsight Compute runs them one at
# a time at the card's own clocks and warm caches (--clock-control none, --cache-control
# none: its defaults lock base clocks and flush the caches), so launch gaps are not in it.
# bench train loads its batches with copies, so the training loop's gather and step-values
# kernels are not among them; the rest are the kernels a replayed step is made of.
step_kernel_times() {
  local ncu csv log count
  needs_build "kernel times mlp:128:tf32" && can_start "kernel times mlp:128:tf32" || return 0
  if ! ncu=$(find_cuda_tool ncu /usr/local/cuda/bin/ncu); then
    record "kernel times mlp:128:tf32" SKIP "" "" "" "no ncu (Nsight Compute) on this machine"
    return 0
  fi
  new_log "kernels-mlp-tf32-128"
  csv=$log_dir/kernels-mlp-tf32-128.csv
  run_logged "$log" 120 "$ncu" --metrics gpu__time_duration.sum --clock-control none \
    --cache-control none --csv --log-file "$csv" \
    "$trainer" bench train models/mlp.model --device cuda:0 --batch 128 --precision tf32 \
    --steps 1 --warmup 1 --repeats 1
  # ncu writes its own messages (==PROF==, ==ERROR==, ==WARNING==) into the csv too: into
  # the log as well, where why_failed looks (no access to the performance counters, say).
  grep -h '^==' "$csv" >>"$log" 2>/dev/null
  count=$(grep -c gpu__time_duration "$csv" 2>/dev/null)
  if [ "$step_rc" -ne 0 ] || [ "${count:-0}" -eq 0 ]; then
    record "kernel times mlp:128:tf32" FAIL "$step_secs" "" "" \
      "$(why_failed "$log"); ${count:-0} kernels timed"
  else
    record "kernel times mlp:128:tf32" PASS "$step_secs" "" "" "$count kernels in $csv"
  fi
}

# find_cuda_tool NAME [PATH...]: NAME on the PATH, else the first PATH that is executable.
find_cuda_tool() {
  local name=$1 c
  shift
  for c in "$(command -v "$name" 2>/dev/null)" "$@"; do
    [ -n "$c" ] && [ -x "$c" ] && { echo "$c"; return 0; }
  done
  return 1
}

# sanitize_row TOOL TEST LOG: one row from a finished compute-sanitizer run. Its summary
# lines: "========= ERROR SUMMARY: 0 errors", "========= LEAK SUMMARY: 0 bytes leaked in 0
# allocations" (memcheck), "========= RACECHECK SUMMARY: 0 hazards displayed (0 errors, 0
# warnings)" (racecheck). A missing one (the run was cut short) reads as "?".
sanitize_row() {
  local tool=$1 test=$2 log=$3 found clean=1 n
  if [ "$tool" = memcheck ]; then
    n=$(sed -n 's/.*ERROR SUMMARY: \([0-9]*\) error.*/\1/p' "$log" | tail -n 1)
    found="${n:-?} errors"
    [ "${n:-?}" = 0 ] || clean=0
    n=$(sed -n 's/.*LEAK SUMMARY: \([0-9]*\) bytes leaked.*/\1/p' "$log" | tail -n 1)
    found+=", ${n:-?} bytes leaked"
    [ "${n:-?}" = 0 ] || clean=0
  else
    n=$(sed -n 's/.*RACECHECK SUMMARY: \([0-9]*\) hazard.*/\1/p' "$log" | tail -n 1)
    found="${n:-?} hazards"
    [ "${n:-?}" = 0 ] || clean=0
  fi
  if [ "$clean" = 0 ]; then
    [ "$step_timed_out" = 1 ] && found+="; timed out after ${step_secs}s"
    record "$tool $test" FAIL "$step_secs" "" "" "$found"
  elif [ "$step_rc" -ne 0 ]; then
    # Clean, but the test failed: a test that stopped early checked less.
    record "$tool $test" FAIL "$step_secs" "" "" "$found, but $(why_failed "$log")"
  else
    record "$tool $test" PASS "$step_secs" "" "" "$found; the test passed"
  fi
}

# memcheck (leak check on) over the gpu test binaries (those of `ctest -L gpu`) and
# racecheck over the parity tests (together they run every kernel of the op table), all at once: the
# runs are independent, the sanitizers are slow, and one after the other they would not
# fit the budget. Left out: test_sync_check plants an out-of-bounds write on purpose, and
# test_cuda_full_card takes all but 384 MiB of the card, which would starve the runs
# beside it (ctest runs both, alone).
step_sanitize() {
  if [ "$run_sanitize" = 0 ]; then
    record sanitizers SKIP "" "" "" "--no-sanitize/--quick"
    return
  fi
  needs_build sanitizers && can_start sanitizers || return
  local sanitizer
  if ! sanitizer=$(find_cuda_tool compute-sanitizer /usr/local/cuda/bin/compute-sanitizer \
    /usr/local/cuda/compute-sanitizer/compute-sanitizer); then
    record sanitizers FAIL "" "" "" "compute-sanitizer not found (PATH, /usr/local/cuda)"
    return
  fi
  local test runs=()
  if [ "$run_all" = 1 ]; then
    for test in $(ctest --test-dir "$build_dir" -L gpu -N | sed -n 's/^ *Test *#[0-9]*: //p'); do
      case $test in test_sync_check | test_cuda_full_card) continue ;; esac
      [ -x "$build_dir/tests/$test" ] && runs+=("memcheck:$test")
      [[ $test == test_cuda_parity_* ]] && runs+=("racecheck:$test")
    done
  else # the subset a short call affords: a captured step, and two parity sections
    runs=(memcheck:test_cuda_graph_step memcheck:test_cuda_parity_losses
      "memcheck:test_cuda_parity_linear_algebra:gemm with bias")
  fi
  # --report-api-errors no: the tests fail a cudaMalloc of 4x the card on purpose, which
  # the default would count as an error; whether the test handled it is the test's verdict.
  local common=(--print-limit 100 --report-api-errors no)
  local jobs=() job tool log extra start=$SECONDS start_epoch words_text
  start_epoch=$(date +%s)
  local words=()
  for job in "${runs[@]}"; do
    IFS=: read -r tool test words_text <<<"$job"
    words=()
    [ -n "$words_text" ] && IFS=: read -r -a words <<<"$words_text"
    new_log "$tool-$test"
    extra=()
    [ "$tool" = memcheck ] && extra=(--leak-check full)
    # Five runs or so on 16 cores: each one's OpenBLAS (the CPU reference) gets 3 threads.
    start_logged "$log" 420 env OPENBLAS_NUM_THREADS=3 "$sanitizer" --tool "$tool" \
      "${extra[@]}" "${common[@]}" "$build_dir/tests/$test" "${words[@]}"
    jobs+=("$job_pid:$job_limit:$tool:$test${words_text:+ (${words_text//:/, })}:$log")
  done
  local pid limit
  for job in "${jobs[@]}"; do
    IFS=: read -r pid limit tool test log <<<"$job"
    finish_logged "$pid" "$limit" "$start"
    # They ran side by side: a run's time is from the start to its log's last write.
    step_secs=$(($(stat -c %Y "$log") - start_epoch))
    sanitize_row "$tool" "$test" "$log"
  done
}

# ---- main ------------------------------------------------------------------------------------
step_gpu
mkdir -p "$log_dir" || exit 1
rm -f "$log_dir"/[0-9][0-9]-*.log "$log_dir/summary.txt"
commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
versions=""
# shellcheck source=bench/results_folder.sh
source bench/results_folder.sh
results_dir=$(results_folder) || { echo "gpu-check.sh: cannot make the results folder" >&2; exit 1; }
export RESULTS_DIR
RESULTS_DIR=$(dirname "$results_dir")
trap on_signal INT TERM
echo "gpu-check: $gpu_text; budget ${budget}s; logs in $log_dir/, results in $results_dir/"
record gpu PASS 0 "" "" "$gpu_text"

step_deps
step_build
results_folder_record "$results_dir" "$command_line" "$trainer" python3
if [ $((run_compare + run_race)) -gt 0 ]; then
  [ "$run_compare" = 1 ] && step_compare
  [ "$run_race" = 1 ] && step_race
elif [ "$run_levers" = 1 ]; then
  step_levers
elif [ "$run_profile" = 1 ]; then
  step_profile
else
  step_doctor
  step_ctest
  step_sanitize
  if [ "$run_all" = 1 ]; then
    step_labs
    for model_file in models/*.model; do
      step_train "$(basename "$model_file" .model)"
    done
    step_train_graph
    step_bench
  fi
fi

echo
summary
publish
for result in "${rows_result[@]}"; do
  [ "$result" = FAIL ] && exit 1
done
exit 0

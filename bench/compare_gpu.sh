#!/usr/bin/env bash
# bench/compare_gpu.sh [-s issue|quick|rest|full] [-m "MODELS"] [-p "PRECISIONS"] [BATCH...]
#                      [-c "eager compile graphs"] [-e EPOCHS] [-n TRAIN_SAMPLES] [-d cuda:N|cpu]
#                      [-f] [-T] [-g off|auto|on] [-a|-A] [-b SECONDS] [-o RESULTS.tsv] [-h]
# Training throughput on one GPU, trainer against PyTorch at its best (bench/torch_train.py)
# in three columns: eager with Adam(fused=True); the whole step in one
# torch.compile(mode="max-autotune-no-cudagraphs"); the whole step (forward, backward,
# Adam(capturable=True)) captured as one CUDA graph and replayed. Every column gathers its
# batches on the device from an order drawn there, reads the loss back every 16 steps (as
# trainer does) and runs the CNNs channels_last. Same model, data, batch, optimizer (Adam)
# and precision, on the same card in the same run. Each figure is the best epoch's samples/s
# over the training steps, evaluation excluded; the best of EPOCHS (default 3), so the first
# epoch's warm-up (CUDA context, cuDNN's algorithm choice, PyTorch's compilation and
# autotuning, the graph's capture) does not count. The table's ratio is trainer against the
# best PyTorch column of each row, which it names, and issue 33's targets (met / not met:
# reported, never an exit status).
#
# What runs (rows are model, batch, precision):
#   -s issue  (the default) the rows issue 33 sets targets for: mlp, lenet and cnn-bn at
#             batch 128 and lenet and cnn-bn at 1024 in TF32, and models/wide-mlp.model at
#             batch 4096 in bf16 (PyTorch: bf16 autocast) beside `trainer bench gemm`'s bf16
#             TFLOP/s. No accuracy check (-a adds it).
#   -s quick  mlp 128, lenet 1024 and the wide MLP in bf16; eager and CUDA graph only.
#   -s rest   what the issue's rows leave out: mlp 1024, resnet-mini 128 and 1024 in TF32,
#             the wide MLP in tf32, fp16 and fp32.
#   -s full   issue, then rest, with the accuracy check: more than a lent machine's call;
#             run -s issue and -s rest as two calls, into the same results folder.
#   -m/-p/BATCH  instead of a set: every model of -m (default "mlp lenet") at every BATCH
#             (default 128 1024) in every precision of -p (default tf32; -f: fp32). Models:
#             mlp lenet cnn-bn resnet-mini wide-mlp; precisions: fp32 tf32 bf16 fp16.
# How long: not yet measured with these columns. The old ones (an H100, 2026-11-23) took
# 1-6 s for a PyTorch run's first epoch eager and 11-25 s compiled; max-autotune's
# autotuning adds to that, so the compile column runs last in each row and -b cuts what
# does not fit. -b (default 540 s) is the budget: a run that would start with less than
# 20 s left is not started (its cell says so), a run is stopped when the budget ends, and
# the table is written with what was measured.
#
# Options:
#   -c MODES  PyTorch's columns, some of: eager compile graphs (default all three), and
#             reduce-overhead (optional: the compile column's step under
#             torch.compile(mode="reduce-overhead"), its pieces replayed as CUDA graphs)
#   -e N      epochs per run (default 3); -n N: the first N training samples only
#   -d DEV    cuda or cuda:N (default cuda:0); cpu: the whole pipeline on the CPU (a test of
#             the scripts: the figures mean nothing; PyTorch's graphs column skips there, and
#             its compile column without torch.compile)
#   -f        FP32 only: the same as -p fp32 (trainer --precision fp32, PyTorch allow_tf32 off)
#   -T        trainer only, for a machine without PyTorch
#   -g MODE   trainer's --cuda-graph (default auto: each step replayed from a CUDA Graph
#             where the run allows it; off: plain launches); the versions table says how
#             trainer's steps ran
#   -a / -A   the accuracy check (tests/gpu/precision_train.sh: bf16 and fp16 against fp32,
#             10 epochs) on / off (default: on for -s full, else off)
#   -o FILE   the results file (tab-separated, bench/gpu_table.py reads them), with every
#             run's output in FILE's name with .log. Default on a GPU: the run's results
#             folder, $RESULTS/DATE-GPU/compare-gpu.tsv (RESULTS: $OUT/results on a lent
#             machine, else bench/results), with versions.txt, commands.txt and commit.txt
#             beside it (bench/results_folder.sh); on the CPU a new file under $TMPDIR.
# Commit the folder, then make the docs' tables from every folder:
#   python3 bench/gpu_table.py --write docs/benchmarks.md
#
# Precision: tf32 allows TF32 on both sides (trainer's default; PyTorch's allow_tf32 flags);
# fp32 keeps both in full FP32; bf16/fp16 are trainer's --precision (compute in bf16/fp16 on
# fp32 storage) against PyTorch's autocast (fp16 with a GradScaler, as trainer's fp16 scales
# the loss; not in the CUDA graph column). Data: both keep the dataset's bytes on the device
# and gather each batch there.
#
# Needs: an NVIDIA GPU; a trainer build with the CUDA backend: $TRAINER, or $BUILD/trainer
# (default build/, built if missing); python3 (or $PYTHON) for the tables, with PyTorch and
# numpy unless -T; Fashion-MNIST in /usr/share/datasets/fashion-mnist or
# $TRAINER_FASHION_MNIST_DIR. Without any of these it stops, saying which, with exit status
# 1. Exit 1 also when a run failed (the table is still written, the cell says why); a
# PyTorch column that cannot run here (torch_train.py's exit 77) is a skipped cell, no failure.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=bench/results_folder.sh
source bench/results_folder.sh
command_line=$(typed_command bench/compare_gpu.sh "$@")
[ -n "${BUILD:-}" ] && command_line="BUILD=$BUILD $command_line"
set_name="" epochs=3 limit=0 models="" precisions="" modes="" device=cuda:0 fp32=0
with_torch=1 accuracy="" budget=540 results="" cuda_graph=auto
while getopts "s:e:n:m:p:c:d:fTg:aAb:o:h" opt; do
  case $opt in
    s) set_name=$OPTARG ;; e) epochs=$OPTARG ;; n) limit=$OPTARG ;; m) models=$OPTARG ;;
    p) precisions=$OPTARG ;; c) modes=$OPTARG ;; d) device=$OPTARG ;; f) fp32=1 ;;
    T) with_torch=0 ;; g) cuda_graph=$OPTARG ;; a) accuracy=1 ;; A) accuracy=0 ;; b) budget=$OPTARG ;;
    o) results=$OPTARG ;;
    h) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) exit 2 ;;
  esac
done
shift $((OPTIND - 1))
build=${BUILD:-build}
trainer=${TRAINER:-$build/trainer}
python=${PYTHON:-python3}
data_dir=${TRAINER_FASHION_MNIST_DIR:-/usr/share/datasets/fashion-mnist}
start_time=$SECONDS

die() {
  printf 'compare_gpu.sh: %s\n' "$1" >&2
  [ $# -gt 1 ] && printf '%s\n' "$2" | sed 's/^/  | /' >&2
  exit 1
}

# ---- what to run: rows of model:batch:precision ------------------------------------------
known_models=" mlp lenet cnn-bn resnet-mini wide-mlp "
known_precisions=" fp32 tf32 bf16 fp16 "
case $cuda_graph in off | auto | on) ;; *) die "-g takes off, auto or on, not '$cuda_graph'" ;; esac
graph_replayed=0 graph_plain=()
issue_rows=(mlp:128:tf32 lenet:128:tf32 cnn-bn:128:tf32 lenet:1024:tf32 cnn-bn:1024:tf32
  wide-mlp:4096:bf16)
rest_rows=(mlp:1024:tf32 resnet-mini:128:tf32 resnet-mini:1024:tf32
  wide-mlp:4096:tf32 wide-mlp:4096:fp16 wide-mlp:4096:fp32)
[ "$fp32" = 1 ] && [ -n "$precisions" ] && [ "$precisions" != fp32 ] &&
  die "-f is -p fp32; it cannot go with -p \"$precisions\""
[ "$fp32" = 1 ] && precisions=fp32
if [ -n "$models$precisions" ] || [ $# -gt 0 ]; then
  [ -n "$set_name" ] && die "-s $set_name names the rows itself; leave out -m, -p and BATCH"
  if [ $# -gt 0 ]; then batches=("$@"); else batches=(128 1024); fi
  rows=()
  for model in ${models:-mlp lenet}; do
    for batch in "${batches[@]}"; do
      for precision in ${precisions:-tf32}; do rows+=("$model:$batch:$precision"); done
    done
  done
  default_modes="eager compile graphs" default_accuracy=0
else
  case ${set_name:-issue} in
    issue) rows=("${issue_rows[@]}")
      default_modes="eager compile graphs" default_accuracy=0 ;;
    quick) rows=(mlp:128:tf32 lenet:1024:tf32 wide-mlp:4096:bf16)
      default_modes="eager graphs" default_accuracy=0 ;;
    rest) rows=("${rest_rows[@]}")
      default_modes="eager compile graphs" default_accuracy=0 ;;
    full) rows=("${issue_rows[@]}" "${rest_rows[@]}")
      default_modes="eager compile graphs" default_accuracy=1 ;;
    *) die "-s $set_name: the sets are issue, quick, rest and full" ;;
  esac
fi
modes=${modes:-$default_modes}
accuracy=${accuracy:-$default_accuracy}
for row in "${rows[@]}"; do
  IFS=: read -r model batch precision <<<"$row"
  [[ $known_models == *" $model "* ]] || die "unknown model '$model' (known:$known_models)"
  [[ $known_precisions == *" $precision "* ]] ||
    die "unknown precision '$precision' (known:$known_precisions)"
  [[ $batch =~ ^[1-9][0-9]*$ ]] || die "batch '$batch' is not a positive whole number"
done
for mode in $modes; do
  case $mode in eager | compile | graphs | reduce-overhead) ;;
    *) die "-c: '$mode' is none of eager compile graphs reduce-overhead" ;; esac
done
[[ $epochs =~ ^[1-9][0-9]*$ ]] || die "-e $epochs: a positive number of epochs"
[[ $limit =~ ^[0-9]+$ ]] || die "-n $limit: a number of training samples"
[[ $budget =~ ^[1-9][0-9]*$ ]] || die "-b $budget: whole seconds"
[ "$with_torch" = 0 ] && modes=""

case $device in
  cuda | cuda:[0-9]*) ;;
  cpu) accuracy=0 ;; # precision_train.sh trains on a GPU or skips
  *) die "-d $device: expected cuda or cuda:N (or cpu with -T)" ;;
esac
ls "$data_dir"/train-images-idx3-ubyte* >/dev/null 2>&1 ||
  die "Fashion-MNIST is not in $data_dir" \
    "apt-get install dataset-fashion-mnist, or set TRAINER_FASHION_MNIST_DIR to a folder of its IDX files"
command -v "$python" >/dev/null 2>&1 ||
  die "$python is not installed: bench/gpu_table.py makes the tables (PYTHON=... picks another)"
command -v timeout >/dev/null 2>&1 || die "timeout (coreutils) is not installed"
data_args=(--data "idx:$data_dir")
limit_args=() trainer_limit_args=()
# PyTorch's side (bench/torch_train.py) takes the first N samples: the trainer is told to
# take the same ones rather than its default stratified sample.
[ "$limit" -gt 0 ] && limit_args=(--train-limit "$limit") &&
  trainer_limit_args=(--train-limit "$limit" --limit-order first)

# ---- is there a GPU, and can both sides use it? -------------------------------------
gpus=""
if command -v nvidia-smi >/dev/null 2>&1 && [ "$device" != cpu ]; then
  gpus=$(nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader 2>&1) ||
    die "nvidia-smi found no usable GPU" "$gpus"
  [ -n "$gpus" ] || die "nvidia-smi lists no GPU"
fi
if [ -z "${TRAINER:-}" ] && [ ! -x "$trainer" ]; then bash scripts/build.sh "$build"; fi
[ -x "$trainer" ] || die "$trainer is not an executable trainer (TRAINER= or BUILD= names one)"
version=$("$trainer" --version)
if [ "$device" != cpu ] && ! grep -q "^CUDA runtime" <<<"$version"; then
  die "$trainer has no CUDA backend" "$version"$'\n'"Rebuild where the CUDA toolkit, cuDNN \
and NCCL are installed, or pick another build with BUILD=dir."
fi
seen=${gpus:-none: nvidia-smi is not installed}
probe=$("$trainer" train models/mlp.model --device "$device" --epochs 1 --train-limit 256 \
          --test-limit 256 "${data_args[@]}" 2>&1) ||
  die "trainer cannot train on $device (GPUs nvidia-smi lists: $seen)" "$probe"
torch_version="(not run: -T)"
if [ "$with_torch" = 1 ]; then
  out=$("$python" bench/torch_train.py --versions --device "$device" 2>&1) ||
    die "$python cannot run PyTorch on $device" "$out"$'\n'"PYTHON=... picks another \
python; -T runs trainer alone."
  # Its one line, without the warnings an import may print beside it.
  torch_version=$(grep -m1 '^versions ' <<<"$out") ||
    die "bench/torch_train.py --versions printed no versions line" "$out"
fi

# ---- the results file: in the run's results folder on a GPU ----------------------------
results_open compare-gpu "$command_line" "$trainer" "$python"

# emit FIELD...: one tab-separated record; tabs and newlines inside a field become spaces.
emit() {
  local fields=() f
  for f in "$@"; do fields+=("$(printf '%s' "$f" | tr '\t\n\r' '   ' | cut -c1-200)"); done
  (IFS=$'\t'; printf '%s\n' "${fields[*]}") >>"$results"
}

gpu_name=$(head -n 1 <<<"$gpus" | cut -d, -f2 | sed 's/^ *//')
driver=$(head -n 1 <<<"$gpus" | cut -d, -f3 | sed 's/^ *//')
emit meta date "$(date -u '+%Y-%m-%d %H:%M UTC')"
emit meta command "$command_line"
emit meta gpu "${gpu_name:-unknown (no nvidia-smi; device $device)}"
emit meta driver "${driver:-unknown}"
emit meta trainer_libraries "$(grep -m1 '^CUDA runtime' <<<"$version" || echo "no CUDA backend")"
emit meta pytorch "$torch_version"
emit meta commit "$(git describe --always --dirty --abbrev=7 2>/dev/null || echo unknown)"
emit meta epochs "$epochs"
emit meta accuracy_epochs 10

echo "GPU:       ${gpus:-unknown (no nvidia-smi)}"
while IFS= read -r line; do echo "trainer:   $line"; done <<<"$version"
echo "PyTorch:   $torch_version"
echo "run:       $device, best of $epochs epochs, ${limit_args[1]:-all} training samples, data $data_dir"
echo "rows:      ${rows[*]}; PyTorch: ${modes:-none}; accuracy check: $([ "$accuracy" = 1 ] && echo on || echo off)"
echo "budget:    ${budget}s; results $results, log $log"
echo

# ---- running under the budget ----------------------------------------------------------
deadline=$((start_time + budget))
reserve=10  # seconds kept for the tables
min_run=20  # a run given less is not started: starting PyTorch alone takes seconds
failed=0 not_run=0

# time_left: seconds a run may take now (0 when the budget is spent).
time_left() {
  local left=$((deadline - SECONDS - reserve))
  echo $((left < min_run ? 0 : left))
}

# timed LIMIT CMD...: CMD's output in $out (and the log), its status in $rc.
timed() {
  local limit=$1
  shift
  printf '\n$ %s  (limit %ss)\n' "$*" "$limit" >>"$log"
  rc=0
  out=$(timeout -k 10 "$limit" "$@" 2>&1 </dev/null) || rc=$?
  printf '%s\n' "$out" >>"$log"
}

# why: the reason a run gave no figure, for its table cell.
why() {
  if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then echo "timed out after $1 s"; return; fi
  local line
  line=$(grep -v '^\s*$' <<<"$out" | grep -m1 -E 'error|Error|cannot|unknown|refuse' ||
    grep -v '^\s*$' <<<"$out" | tail -n 1)
  echo "failed (exit $rc): $(cut -c1-150 <<<"$line")"
}

# Best epoch's samples/s, the last epoch's test accuracy, and the first epoch's seconds
# from trainer's lines "epoch 2/3  train loss .. acc ..  test loss .. acc 0.8652  lr 0.001
# 801003 samples/s  0.1 s".
parse_trainer() {
  awk '/^epoch [0-9]+\/[0-9]+ / {
         for (i = 1; i <= NF; i++) { if ($i == "samples/s") v = $(i - 1) + 0
                                     if ($i == "test") acc = $(i + 4) }
         if (first == "") first = $(NF - 1)
         if (v > best) best = v }
       END { printf "%s %s %s\n", (best > 0 ? best : "-"), (acc == "" ? "-" : acc),
                                  (first == "" ? "-" : first) }'
}

run_trainer() {
  local model=$1 batch=$2 precision=$3 limit samples acc first
  limit=$(time_left)
  if [ "$limit" = 0 ]; then
    emit run "$model" "$batch" "$precision" trainer - - - "not run: the ${budget} s budget was spent"
    not_run=$((not_run + 1))
    return
  fi
  timed "$limit" "$trainer" train "models/$model.model" --device "$device" --epochs "$epochs" \
    --batch "$batch" --precision "$precision" --cuda-graph "$cuda_graph" "${data_args[@]}" \
    "${trainer_limit_args[@]}"
  # How the steps ran: replayed from a graph, or plain launches (trainer's notice says why).
  if grep -q "CUDA Graph: the training step is captured" <<<"$out"; then
    graph_replayed=$((graph_replayed + 1))
  elif grep -qE "so training uses plain launches|capturing the training step failed" <<<"$out"; then
    graph_plain+=("$model $batch $precision")
  fi
  read -r samples acc first <<<"$(parse_trainer <<<"$out")"
  if [ "$rc" != 0 ] || [ "$samples" = - ]; then
    emit run "$model" "$batch" "$precision" trainer - - - "$(why "$limit")"
    failed=$((failed + 1))
  else
    emit run "$model" "$batch" "$precision" trainer "$samples" "$acc" "$first" ""
  fi
}

run_torch() {
  local model=$1 batch=$2 precision=$3 mode=$4 limit samples acc first
  limit=$(time_left)
  if [ "$limit" = 0 ]; then
    emit run "$model" "$batch" "$precision" "$mode" - - - "not run: the ${budget} s budget was spent"
    not_run=$((not_run + 1))
    return
  fi
  timed "$limit" "$python" bench/torch_train.py --model "$model" --batch "$batch" \
    --epochs "$epochs" --device "$device" --precision "$precision" --column "$mode" \
    --data "$data_dir" "${limit_args[@]}"
  samples=$(sed -n 's/^pytorch .*samples\/s=\([0-9]*\).*/\1/p' <<<"$out")
  acc=$(sed -n 's/^pytorch .*test_acc=\([0-9.]*\).*/\1/p' <<<"$out")
  first=$(sed -n 's/^pytorch .*first_epoch_s=\([0-9.]*\).*/\1/p' <<<"$out")
  if [ "$rc" = 77 ]; then # a column this machine cannot run (graphs on the CPU, ...)
    emit run "$model" "$batch" "$precision" "$mode" - - - \
      "$(sed -n 's/^torch_train.py: //p' <<<"$out" | head -n 1)"
  elif [ "$rc" != 0 ] || [ -z "$samples" ]; then
    emit run "$model" "$batch" "$precision" "$mode" - - - "$(why "$limit")"
    failed=$((failed + 1))
  else
    emit run "$model" "$batch" "$precision" "$mode" "$samples" "${acc:--}" "${first:--}" ""
  fi
}

# The GEMM rate the wide MLP is measured against, at the precisions of its rows: 4096 is
# its own hidden layers' shape, 8192 usually the card's best.
run_gemm() {
  local wanted=() row model batch precision sizes=4096,8192 repeats=()
  for row in "${rows[@]}"; do
    IFS=: read -r model batch precision <<<"$row"
    [ "$model" = wide-mlp ] && [[ " ${wanted[*]} " != *" $precision "* ]] && wanted+=("$precision")
  done
  [ ${#wanted[@]} -gt 0 ] || return 0
  [ "$device" = cpu ] && sizes=256 repeats=(--repeats 2 --warmup 1) # a dry run: seconds
  local limit
  limit=$(time_left)
  [ "$limit" = 0 ] && return 0
  timed "$limit" "$trainer" bench gemm --device "$device" --json --sizes "$sizes" \
    --precisions "$(IFS=,; echo "${wanted[*]}")" "${repeats[@]}"
  if [ "$rc" != 0 ]; then
    emit gemm "${wanted[0]}" "$sizes" - "$(why "$limit")"
    failed=$((failed + 1))
    return 0
  fi
  # The JSON's rows, as gemm records: tflops, or the reason a precision is unavailable.
  "$python" -c 'import json, sys
for r in json.load(sys.stdin)["gemm"]:
    size = "%dx%dx%d" % (r["m"], r["n"], r["k"])
    figure = r.get("tflops") if r.get("available") else None
    note = "" if figure else r.get("reason") or "no figure"
    print("gemm\t%s\t%s\t%s\t%s" % (r["precision"], size, "%.4g" % figure if figure else "-",
                                    note.replace("\t", " ").replace("\n", " ")))' \
    <<<"$out" >>"$results" || { emit gemm "${wanted[0]}" "$sizes" - "unreadable --json"; failed=$((failed + 1)); }
}

# bf16 and fp16 against fp32's test accuracy: tests/gpu/precision_train.sh with the issue's
# models and epochs on the full training set; gpu_table.py reads both accuracies from its
# verdict lines and judges them (fp32's less at most 0.5 points).
run_accuracy() {
  local limit
  limit=$(time_left)
  if [ "$limit" = 0 ]; then
    echo "accuracy check: not run, the ${budget} s budget was spent"
    not_run=$((not_run + 1))
    return 0
  fi
  timed "$limit" env PRECISION_MODELS="mlp lenet cnn-bn" PRECISION_EPOCHS=10 \
    PRECISION_TRAIN_LIMIT=0 PRECISION_DEVICE="$device" TRAINER="$(realpath "$trainer")" \
    TRAINER_SOURCE_DIR="$PWD" TRAINER_FASHION_MNIST_DIR="$data_dir" \
    bash tests/gpu/precision_train.sh
  printf '%s\n' "$out" >"$results.accuracy"
  "$python" bench/gpu_table.py --accuracy-records "$results.accuracy" >>"$results"
  rm -f "$results.accuracy"
  # A verdict outside the 0.5 points is the table's to report; any other failed check (a
  # run that did not train) is a failure of the run.
  local broken line
  # (gpu_table.py's ACCURACY_LINE reads the verdicts' exact wording; here any line with
  # both accuracies is one.)
  broken=$(grep '^FAIL - ' <<<"$out" | grep -vE " test accuracy [0-9.]+ .*fp32's [0-9.]+" ||
    true)
  if [ "$rc" = 77 ]; then
    echo "accuracy check: skipped: $(grep -m1 '^SKIP' <<<"$out")"
  elif [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
    echo "accuracy check: timed out after $limit s (the rows it finished are in the table)"
    failed=$((failed + 1))
  elif [ -n "$broken" ]; then
    echo "accuracy check failed (the log has its output):"
    while IFS= read -r line; do echo "  $line"; done <<<"$broken"
    failed=$((failed + 1))
  fi
  return 0
}

run_gemm
# Each row's cells in turn; the compile column last in a row, as its autotuning takes the
# longest, so a budget that runs short costs it first.
for row in "${rows[@]}"; do
  IFS=: read -r model batch precision <<<"$row"
  printf '%s batch %s %s:' "$model" "$batch" "$precision"
  run_trainer "$model" "$batch" "$precision"
  printf ' trainer'
  for mode in eager graphs reduce-overhead compile; do
    [[ " $modes " == *" $mode "* ]] || continue
    run_torch "$model" "$batch" "$precision" "$mode"
    printf ' %s' "$mode"
  done
  printf ' (%s s so far)\n' $((SECONDS - start_time))
done
[ "$accuracy" = 1 ] && run_accuracy
# The notices themselves are in the results' .log.
graph_summary="--cuda-graph $cuda_graph: $graph_replayed runs replayed from CUDA Graphs"
[ ${#graph_plain[@]} -gt 0 ] &&
  graph_summary+=", plain launches in $(IFS=,; echo "${graph_plain[*]}" | sed 's/,/, /g')"
emit meta trainer_cuda_graph "$graph_summary"
emit meta run "$device, ${limit_args[1]:-all} training samples, $((SECONDS - start_time)) s"

echo
"$python" bench/gpu_table.py "$results"
echo
echo "results: $results; every run's output: $log"
[ "$device" != cpu ] && [ -z "${OUT:-}" ] &&
  echo "commit $(dirname "$results")/, then: python3 bench/gpu_table.py --write docs/benchmarks.md"
[ "$not_run" -gt 0 ] && echo "$not_run runs not started: the ${budget} s budget (-b) was spent"
if [ "$failed" -gt 0 ]; then
  echo "compare_gpu.sh: $failed runs failed; their cells say why, the log has their output" >&2
  exit 1
fi
exit 0

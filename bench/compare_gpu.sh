#!/usr/bin/env bash
# bench/compare_gpu.sh [-s issue|quick|rest|full] [-m "MODELS"] [-p "PRECISIONS"] [BATCH...]
#                      [-c "eager compile graphs"] [-e EPOCHS] [-n TRAIN_SAMPLES] [-d cuda:N]
#                      [-f] [-T] [-g off|auto|on] [-a|-A] [-b SECONDS] [-o RESULTS.tsv] [-w] [-h]
# Training throughput on one GPU, trainer against PyTorch (bench/torch_train.py) in three
# ways: eager, torch.compile, and torch.compile(mode="reduce-overhead"), which replays CUDA
# graphs. Same model, data, batch, optimizer (Adam) and precision, on the same card in the
# same run. Each figure is the best epoch's samples/s over the training steps, evaluation
# excluded; the best of EPOCHS (default 3), so the first epoch's warm-up (CUDA context,
# cuDNN's algorithm choice, PyTorch's compilation and CUDA-graph recording) does not count.
# Then the table: trainer | eager | compile | compile + CUDA graphs, trainer's ratio to each,
# and issue 15's targets (met / not met: reported, never an exit status).
#
# What runs (rows are model, batch, precision):
#   -s issue  (the default) the rows issue 15 sets targets for: mlp 128, lenet 128,
#             lenet 1024, cnn-bn 1024 in TF32, and models/wide-mlp.model at batch 4096 in
#             bf16 (PyTorch: bf16 autocast) beside `trainer bench gemm`'s bf16 TFLOP/s; then
#             bf16 and fp16 training against fp32's test accuracy (tests/gpu/precision_train.sh:
#             mlp, lenet, cnn-bn, 10 epochs, full data). About 5 minutes on an H100.
#   -s quick  mlp 128, lenet 1024 and the wide MLP in bf16; eager and CUDA graphs only; no
#             accuracy check. About 2 minutes.
#   -s rest   what the issue's rows leave out: mlp 1024, cnn-bn 128, resnet-mini 128 and
#             1024 in TF32, the wide MLP in tf32, fp16 and fp32. About 7 minutes.
#   -s full   issue, then rest: about 12 minutes, more than a lent GPU machine's 10-minute
#             command; there run -s issue -o a.tsv and -s rest -o b.tsv, and make one table
#             of both: python3 bench/gpu_table.py --write docs/benchmarks.md a.tsv b.tsv.
#   -m/-p/BATCH  instead of a set: every model of -m (default "mlp lenet") at every BATCH
#             (default 128 1024) in every precision of -p (default tf32; -f: fp32). Models:
#             mlp lenet cnn-bn resnet-mini wide-mlp; precisions: fp32 tf32 bf16 fp16.
# The estimates add up the H100 run of 2026-11-23 (shared/gpu-runs/2026-11-23-h100): a
# PyTorch run's first epoch took 1-6 s eager, 11-25 s under torch.compile and 6-13 s with
# CUDA graphs, later epochs ~1 s at batch 128 and less at 1024, trainer's epochs under a
# second; with ~5 s to start a PyTorch process and load the data (assumed: the logs do not
# time it) a row costs 45-70 s with all four columns (resnet-mini's PyTorch side was not
# in that run: taken as cnn-bn's). Not yet checked against a whole run of this script.
# -b (default 540 s) is the budget: a run that would start with less than 20 s left is not
# started (its cell says so), a run is stopped when the budget ends, and the table is
# written with what was measured. The plain torch.compile column, which no target of issue
# 15 reads, runs last, after every row's other cells and the accuracy check.
#
# Options:
#   -c MODES  PyTorch's columns, some of: eager compile graphs (default all three)
#   -e N      epochs per run (default 3); -n N: the first N training samples only
#   -d DEV    cuda or cuda:N (default cuda:0); cpu with -T: a dry run of the pipeline on the
#             CPU (trainer's side only; the figures mean nothing)
#   -f        FP32 only: the same as -p fp32 (trainer --precision fp32, PyTorch allow_tf32 off)
#   -T        trainer only, for a machine without a CUDA build of PyTorch
#   -g MODE   trainer's --cuda-graph (default auto: each step replayed from a CUDA Graph
#             where the run allows it, as the compile + CUDA graphs column does; off:
#             plain launches); the versions table says how trainer's steps ran
#   -a / -A   the accuracy check on / off (default: on for -s issue and full, else off)
#   -o FILE   the results (tab-separated, bench/gpu_table.py reads them; default a new file
#             under $TMPDIR), with every run's output in FILE's name with .log
#   -w        write the tables, the versions (GPU, driver, CUDA, cuDNN, cuBLAS, PyTorch,
#             trainer's commit, the date) and this command into docs/benchmarks.md, in place
#             of the block between its "compare_gpu.sh: generated block" markers
# When $OUT is set (a lent GPU machine, whose working tree does not come back), the
# results, the log and the generated block are copied there; make the table here with
# python3 bench/gpu_table.py --write docs/benchmarks.md RESULTS.tsv.
#
# Precision: tf32 allows TF32 on both sides (trainer's default; PyTorch's allow_tf32 flags);
# fp32 keeps both in full FP32; bf16/fp16 are trainer's --precision (compute in bf16/fp16 on
# fp32 storage) against PyTorch's autocast (fp16 with a GradScaler, as trainer's fp16 scales
# the loss). Data: both keep the dataset's bytes on the GPU and gather each batch there from
# shuffled indices (trainer does when the dataset fits; torch_train.py does the same).
#
# Needs: an NVIDIA GPU; a trainer build with the CUDA backend: $TRAINER, or $BUILD/trainer
# (default build/, built if missing); python3 (or $PYTHON) for the tables, with a CUDA build
# of PyTorch and numpy unless -T; Fashion-MNIST in /usr/share/datasets/fashion-mnist or
# $TRAINER_FASHION_MNIST_DIR. Without any of these it stops, saying which, with exit status
# 1. Exit 1 also when a run failed (the table is still written, the cell says why).
set -euo pipefail
cd "$(dirname "$0")/.."
# The command as it was typed, for the docs: arguments with spaces in double quotes.
command_line="bash bench/compare_gpu.sh"
for arg in "$@"; do
  [[ $arg =~ [[:space:]] ]] && arg="\"$arg\""
  command_line+=" $arg"
done
[ -n "${BUILD:-}" ] && command_line="BUILD=$BUILD $command_line"
set_name="" epochs=3 limit=0 models="" precisions="" modes="" device=cuda:0 fp32=0
with_torch=1 accuracy="" budget=540 results="" write=0 cuda_graph=auto
while getopts "s:e:n:m:p:c:d:fTg:aAb:o:wh" opt; do
  case $opt in
    s) set_name=$OPTARG ;; e) epochs=$OPTARG ;; n) limit=$OPTARG ;; m) models=$OPTARG ;;
    p) precisions=$OPTARG ;; c) modes=$OPTARG ;; d) device=$OPTARG ;; f) fp32=1 ;;
    T) with_torch=0 ;; g) cuda_graph=$OPTARG ;; a) accuracy=1 ;; A) accuracy=0 ;; b) budget=$OPTARG ;;
    o) results=$OPTARG ;; w) write=1 ;;
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
issue_rows=(mlp:128:tf32 lenet:128:tf32 lenet:1024:tf32 cnn-bn:1024:tf32 wide-mlp:4096:bf16)
rest_rows=(mlp:1024:tf32 cnn-bn:128:tf32 resnet-mini:128:tf32 resnet-mini:1024:tf32
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
      default_modes="eager compile graphs" default_accuracy=1 ;;
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
  case $mode in eager | compile | graphs) ;; *) die "-c: '$mode' is none of eager compile graphs" ;; esac
done
[[ $epochs =~ ^[1-9][0-9]*$ ]] || die "-e $epochs: a positive number of epochs"
[[ $limit =~ ^[0-9]+$ ]] || die "-n $limit: a number of training samples"
[[ $budget =~ ^[1-9][0-9]*$ ]] || die "-b $budget: whole seconds"
[ "$with_torch" = 0 ] && modes=""

case $device in
  cuda | cuda:[0-9]*) ;;
  cpu) [ "$with_torch" = 0 ] || die "-d cpu is a dry run of trainer's side only: add -T"
    accuracy=0 ;; # precision_train.sh trains on a GPU or skips
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

# ---- the results file ----------------------------------------------------------------
if [ -z "$results" ]; then
  results=$(mktemp "${TMPDIR:-/tmp}/compare_gpu.XXXXXX") || die "cannot make a results file"
  mv "$results" "$results.tsv" && results=$results.tsv
fi
log=${results%.tsv}.log
: >"$results" 2>/dev/null || die "cannot write $results"
: >"$log"

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
  local model=$1 batch=$2 precision=$3 mode=$4 limit compile samples acc first
  case $mode in eager) compile=none ;; compile) compile=default ;; graphs) compile=reduce-overhead ;; esac
  limit=$(time_left)
  if [ "$limit" = 0 ]; then
    emit run "$model" "$batch" "$precision" "$mode" - - - "not run: the ${budget} s budget was spent"
    not_run=$((not_run + 1))
    return
  fi
  timed "$limit" "$python" bench/torch_train.py --model "$model" --batch "$batch" \
    --epochs "$epochs" --device "$device" --precision "$precision" --compile "$compile" \
    --data "$data_dir" "${limit_args[@]}"
  samples=$(sed -n 's/^pytorch .*samples\/s=\([0-9]*\).*/\1/p' <<<"$out")
  acc=$(sed -n 's/^pytorch .*test_acc=\([0-9.]*\).*/\1/p' <<<"$out")
  first=$(sed -n 's/^pytorch .*first_epoch_s=\([0-9.]*\).*/\1/p' <<<"$out")
  if [ "$rc" != 0 ] || [ -z "$samples" ]; then
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
# Issue 15's targets read trainer, eager and CUDA graphs, and the accuracy check; plain
# torch.compile is no target. So every row's targeted cells run first, then the accuracy
# check, and the compile column last: a budget that runs out leaves that column's cells
# "not run" rather than a target's.
for row in "${rows[@]}"; do
  IFS=: read -r model batch precision <<<"$row"
  printf '%s batch %s %s:' "$model" "$batch" "$precision"
  run_trainer "$model" "$batch" "$precision"
  printf ' trainer'
  for mode in eager graphs; do
    [[ " $modes " == *" $mode "* ]] || continue
    run_torch "$model" "$batch" "$precision" "$mode"
    printf ' %s' "$mode"
  done
  printf ' (%s s so far)\n' $((SECONDS - start_time))
done
[ "$accuracy" = 1 ] && run_accuracy
if [[ " $modes " == *" compile "* ]]; then
  for row in "${rows[@]}"; do
    IFS=: read -r model batch precision <<<"$row"
    printf '%s batch %s %s: compile' "$model" "$batch" "$precision"
    run_torch "$model" "$batch" "$precision" compile
    printf ' (%s s so far)\n' $((SECONDS - start_time))
  done
fi
# The notices themselves are in the results' .log.
graph_summary="--cuda-graph $cuda_graph: $graph_replayed runs replayed from CUDA Graphs"
[ ${#graph_plain[@]} -gt 0 ] &&
  graph_summary+=", plain launches in $(IFS=,; echo "${graph_plain[*]}" | sed 's/,/, /g')"
emit meta trainer_cuda_graph "$graph_summary"
emit meta run "$device, ${limit_args[1]:-all} training samples, $((SECONDS - start_time)) s"

echo
"$python" bench/gpu_table.py "$results"
block=${results%.tsv}.md
"$python" bench/gpu_table.py --markdown "$results" >"$block"
if [ "$write" = 1 ]; then
  "$python" bench/gpu_table.py --write docs/benchmarks.md "$results"
fi
if [ -n "${OUT:-}" ] && [ -d "${OUT:-}" ]; then
  cp "$results" "$log" "$block" "$OUT/"
  echo "copied $(basename "$results"), $(basename "$log") and $(basename "$block") to \$OUT"
fi
echo
echo "results: $results (python3 bench/gpu_table.py --write docs/benchmarks.md $results"
echo "         makes the docs' table from it); every run's output: $log"
[ "$not_run" -gt 0 ] && echo "$not_run runs not started: the ${budget} s budget (-b) was spent"
if [ "$failed" -gt 0 ]; then
  echo "compare_gpu.sh: $failed runs failed; their cells say why, the log has their output" >&2
  exit 1
fi
exit 0

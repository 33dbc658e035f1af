#!/usr/bin/env bash
# bench/time_to_accuracy.sh [-m MODEL] [-t TARGET] [-s "SEEDS"] [-E MAX_EPOCHS]
#                           [-c "eager compile graphs reduce-overhead"] [-d cuda:N|cpu]
#                           [-n TRAIN] [-N TEST] [-b SECONDS] [-o RESULTS.tsv] [-T] [-h]
# Time to accuracy, the figure a user feels: the wall time from a process's start to the end
# of the first epoch whose Fashion-MNIST test accuracy reaches TARGET, data loading,
# compilation, warm-up and every epoch's evaluation included. trainer (`trainer train
# models/MODEL.model`) against each PyTorch column of bench/torch_train.py (eager with fused
# Adam; the whole step under torch.compile; the whole step as one CUDA graph), each run once
# per seed; the table gives each side's median and trainer's against the fastest PyTorch
# column's (issue 33's target: at most 0.5x).
#
# Same recipe on both sides: the model file's layers, optimizer (Adam, lr 0.001) and batch
# (its `train batch=`), the seed, no augmentation and no schedule, at most MAX_EPOCHS epochs;
# a side that has not reached TARGET by then gives no time ("not reached"), and a side with
# any seed not reached has no median. Each side reads its test accuracy once an epoch
# (trainer's epoch line, torch_train.py --target-acc); this script stamps each line as it
# arrives and stops the run at the first that reaches TARGET.
#
# Defaults: -m cnn-bn -t 0.915 -s "1 2 3" -E 20 -c "eager compile graphs" -d cuda:0, all
# 60,000 training and 10,000 test images, -b 300 seconds for the whole race (a run that would
# start with under 20 s left is not started; its cell says so). On the CPU (-d cpu, a test of
# the script) give a low target and -n/-N: the figures mean nothing there.
#
# Each side runs all its seeds before the next side starts (trainer, eager, CUDA graph,
# torch.compile): a budget that runs short costs the last side's median first. PyTorch's
# compile caches on disk (Inductor's) stay as they are between runs, as on a user's machine,
# so its seeds after the first may compile faster.
#
# Results: on a GPU in the run's results folder, $RESULTS/DATE-GPU/race.tsv and race.log
# (bench/results_folder.sh; RESULTS: $OUT/results on a lent machine, else bench/results), or
# -o FILE; the tables: python3 bench/gpu_table.py FILE, and in the docs from every folder,
# python3 bench/gpu_table.py --write docs/benchmarks.md. -T runs trainer alone.
#
# Needs: trainer ($TRAINER, or $BUILD/trainer, default build/), python3 (or $PYTHON) with
# PyTorch and numpy unless -T, Fashion-MNIST ($TRAINER_FASHION_MNIST_DIR or
# /usr/share/datasets/fashion-mnist). Exit 0; 1 when something is missing or a run failed
# (the table is still made); 2 bad usage. Not reaching the target is a figure, not a failure.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=bench/results_folder.sh
source bench/results_folder.sh
command_line=$(typed_command bench/time_to_accuracy.sh "$@")
model=cnn-bn target=0.915 seeds="1 2 3" max_epochs=20 modes="eager compile graphs"
device=cuda:0 train_limit=0 test_limit=0 budget=300 results="" with_torch=1
while getopts "m:t:s:E:c:d:n:N:b:o:Th" opt; do
  case $opt in
    m) model=$OPTARG ;; t) target=$OPTARG ;; s) seeds=$OPTARG ;; E) max_epochs=$OPTARG ;;
    c) modes=$OPTARG ;; d) device=$OPTARG ;; n) train_limit=$OPTARG ;; N) test_limit=$OPTARG ;;
    b) budget=$OPTARG ;; o) results=$OPTARG ;; T) with_torch=0 ;;
    h) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) exit 2 ;;
  esac
done
shift $((OPTIND - 1))
usage() { printf 'time_to_accuracy.sh: %s\n' "$1" >&2; exit 2; }
die() {
  printf 'time_to_accuracy.sh: %s\n' "$1" >&2
  [ $# -gt 1 ] && printf '%s\n' "$2" | sed 's/^/  | /' >&2
  exit 1
}
[ $# -eq 0 ] || usage "unexpected argument '$1' (-h lists the options)"
[ -f "models/$model.model" ] || usage "-m $model: there is no models/$model.model"
[[ $target =~ ^0?\.[0-9]+$ ]] || usage "-t $target: a test accuracy between 0 and 1 (0.915)"
[[ $max_epochs =~ ^[1-9][0-9]*$ ]] || usage "-E $max_epochs: a positive number of epochs"
[[ $budget =~ ^[1-9][0-9]*$ ]] || usage "-b $budget: whole seconds"
[[ $train_limit =~ ^[0-9]+$ && $test_limit =~ ^[0-9]+$ ]] || usage "-n and -N take numbers"
for seed in $seeds; do [[ $seed =~ ^[0-9]+$ ]] || usage "-s: '$seed' is not a seed (a number)"; done
[ -n "$seeds" ] || usage "-s: no seed"
for mode in $modes; do
  case $mode in eager | compile | graphs | reduce-overhead) ;;
    *) usage "-c: '$mode' is none of eager compile graphs reduce-overhead" ;; esac
done
[ "$with_torch" = 0 ] && modes=""
case $device in cpu | cuda | cuda:[0-9]*) ;; *) usage "-d $device: cuda, cuda:N or cpu" ;; esac

build=${BUILD:-build}
trainer=${TRAINER:-$build/trainer}
python=${PYTHON:-python3}
data_dir=${TRAINER_FASHION_MNIST_DIR:-/usr/share/datasets/fashion-mnist}
ls "$data_dir"/train-images-idx3-ubyte* >/dev/null 2>&1 ||
  die "Fashion-MNIST is not in $data_dir" \
    "apt-get install dataset-fashion-mnist, or set TRAINER_FASHION_MNIST_DIR to its folder"
[ -x "$trainer" ] || die "$trainer is not an executable trainer (TRAINER= or BUILD= names one)"
command -v "$python" >/dev/null 2>&1 || die "$python is not installed (PYTHON=... picks another)"
# The recipe's batch: the model file's `train batch=`, given to both sides.
batch=$(sed -n 's/^train .*batch=\([0-9]*\).*/\1/p' "models/$model.model" | head -n 1)
batch=${batch:-32}
if [ "$with_torch" = 1 ]; then
  out=$("$python" bench/torch_train.py --versions --device "$device" 2>&1) ||
    die "$python cannot run bench/torch_train.py on $device (-T runs trainer alone)" "$out"
  torch_version=$(grep -m1 '^versions ' <<<"$out") || torch_version="unknown"
else
  torch_version="(not run: -T)"
fi

results_open race "$command_line" "$trainer" "$python"

emit() { (IFS=$'\t'; printf '%s\n' "$*") >>"$results"; }
gpu=$(timeout 60 nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null |
  head -n 1 || true)
emit meta date "$(date -u '+%Y-%m-%d %H:%M UTC')"
emit meta command "$command_line"
emit meta gpu "${gpu%%,*}"
emit meta driver "${gpu#*, }"
emit meta trainer_libraries "$("$trainer" --version 2>&1 | grep -m1 '^CUDA runtime' || echo "no CUDA backend")"
emit meta pytorch "$torch_version"
emit meta commit "$(git describe --always --dirty --abbrev=7 2>/dev/null || echo unknown)"
emit meta max_epochs "$max_epochs"
emit meta run "$device, batch $batch, ${train_limit/#0/all} training and ${test_limit/#0/all} test samples"

limits=()
[ "$train_limit" -gt 0 ] && limits+=(--train-limit "$train_limit")
[ "$test_limit" -gt 0 ] && limits+=(--test-limit "$test_limit")
deadline=$((SECONDS + budget))
failed=0

# race SIDE SEED CMD...: runs CMD, stamps its epoch lines, stops it at the target; one race
# record. The stamping is python (standard library): seconds from just before the process
# is started to the arrival of the line, whose epoch reached the target.
race() {
  local side=$1 seed=$2 left=$((deadline - SECONDS))
  shift 2
  if [ "$left" -lt 20 ]; then
    emit race "$model" "$target" "$side" "$seed" - - - "not run: the ${budget} s budget was spent"
    return
  fi
  printf '\n$ %s  (limit %ss)\n' "$*" "$left" >>"$log"
  local record rc=0
  record=$("$python" - "$target" "$left" "$log" "$@" <<'EOF'
import re, signal, subprocess, sys, time
target, limit, log_path, command = float(sys.argv[1]), float(sys.argv[2]), sys.argv[3], sys.argv[4:]
# trainer: "epoch 3/20  train loss .. acc ..  test loss 0.27 acc 0.8973  ..."; torch_train.py
# --target-acc: "epoch 3/20 test_acc=0.8973 ...".
epoch_line = re.compile(r"^epoch (\d+)/\d+\b.*?(?:test loss \S+ acc |test_acc=)([0-9.]+)")
start = time.monotonic()
process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                           errors="replace")
reached, last, why, skipped = None, ("-", "-"), "", ""
with open(log_path, "a") as log:
    for line in process.stdout:
        now = time.monotonic() - start
        log.write(f"[{now:8.2f}s] {line}")
        if line.startswith("torch_train.py: skipped: "):
            skipped = line.strip()[len("torch_train.py: "):]
        match = epoch_line.match(line)
        if match:
            last = match.groups()
            if float(match.group(2)) >= target:
                reached = (now, match.group(1), match.group(2))
                process.send_signal(signal.SIGTERM)  # the rest is not timed
                break
        if now > limit:
            why = f"timed out after {limit:.0f} s"
            process.kill()
            break
    try:
        rc = process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        process.kill()
        rc = process.wait()
    log.write(f"[exit {rc}]\n")
if reached:
    print("%.2f\t%s\t%s\t" % reached)
elif why:
    print(f"-\t{last[0]}\t{last[1]}\t{why}")
elif rc == 77:
    print(f"-\t-\t-\t{skipped or 'skipped: this machine cannot run it'}")
elif rc != 0:
    print(f"-\t{last[0]}\t{last[1]}\tfailed (exit {rc}; the log has its output)")
    sys.exit(3)
else:
    print(f"-\t{last[0]}\t{last[1]}\tnot reached in {last[0]} epochs (test acc {last[1]})")
EOF
) || rc=$?
  [ "$rc" = 0 ] || failed=$((failed + 1))
  [ -n "$record" ] || record=$'-\t-\t-\tfailed: the stamping helper printed nothing'
  printf 'race\t%s\t%s\t%s\t%s\t%s\n' "$model" "$target" "$side" "$seed" "$record" >>"$results"
}

echo "race:      $model to test accuracy $target on $device, seeds $seeds, at most $max_epochs epochs, batch $batch"
echo "PyTorch:   ${modes:-not run} ($torch_version)"
echo "results:   $results, log $log"
# Side by side, every seed of a side before the next side, the slowest to start (compile,
# with its autotuning) last: a budget that runs short costs that side's median, not every
# side's last seed.
printf 'trainer, seeds'
for seed in $seeds; do
  printf ' %s' "$seed"
  # No stdbuf: trainer flushes each epoch line itself, and stdbuf's preload would come
  # before a sanitizer build's runtime, which ASan refuses.
  race trainer "$seed" "$trainer" train "models/$model.model" --device "$device" \
    --epochs "$max_epochs" --batch "$batch" --seed "$seed" --data "idx:$data_dir" "${limits[@]}"
done
echo
for mode in eager graphs reduce-overhead compile; do
  [[ " $modes " == *" $mode "* ]] || continue
  printf '%s, seeds' "$mode"
  for seed in $seeds; do
    printf ' %s' "$seed"
    race "$mode" "$seed" "$python" -u bench/torch_train.py --model "$model" --device "$device" \
      --column "$mode" --batch "$batch" --epochs "$max_epochs" --seed "$seed" \
      --target-acc "$target" --data "$data_dir" "${limits[@]}"
  done
  echo
done
echo
"$python" bench/gpu_table.py "$results"
if [ "$failed" -gt 0 ]; then
  echo "time_to_accuracy.sh: $failed runs failed; the log has their output: $log" >&2
  exit 1
fi
exit 0

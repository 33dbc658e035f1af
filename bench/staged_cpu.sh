#!/usr/bin/env bash
# bench/staged_cpu.sh [-r REPEATS] [-t THREADS] [-o OLD_TRAINER | -b GIT_REV] [-n NEW_TRAINER]
#                     [CONFIG...]
# The host-staged batch path before and after, on the CPU, side by side: training
# samples/s with the training set on the device (no limit) and staged through the host (a
# --memory-limit that leaves no room for the dataset's copy but fits the batch whole, so
# nothing is split), for an old trainer and a new one.
#
# CONFIG is MODEL:BATCH:TRAIN_SAMPLES:EPOCHS (default: mlp:128:60000:3 mlp:1024:60000:3
# lenet:32:26000:1; the staged limit must leave less than twice the dataset's bytes beside
# the model, hence LeNet's small batch and large subset). The limit is the new trainer's
# memory plan for the batch (`trainer check`) plus 64 KiB; a row whose runs did not stage,
# or split the batch, says so. Each figure is the best epoch over REPEATS runs (default 2),
# old and new interleaved so that drift on a shared machine hits both alike. THREADS
# (--threads, default: the trainer's own choice, all cores) below the core count leaves
# the staged path's prefetch thread a core of its own.
#
# OLD_TRAINER: a built binary; or GIT_REV (default HEAD): built here in a git worktree
# (CPU only) under ${TMPDIR:-/tmp}. NEW_TRAINER: default build/trainer (built if missing).
set -euo pipefail
cd "$(dirname "$0")/.."
repeats=2 threads=() old="" rev=HEAD new=build/trainer
while getopts "r:t:o:b:n:" opt; do
  case $opt in
    r) repeats=$OPTARG ;; t) threads=(--threads "$OPTARG") ;; o) old=$OPTARG ;;
    b) rev=$OPTARG ;; n) new=$OPTARG ;; *) exit 2 ;;
  esac
done
shift $((OPTIND - 1))
if [ $# -gt 0 ]; then configs=("$@"); else configs=(mlp:128:60000:3 mlp:1024:60000:3 lenet:32:26000:1); fi

[ -x "$new" ] || bash scripts/build.sh "$(dirname "$new")"
if [ -z "$old" ]; then
  tree="${TMPDIR:-/tmp}/trainer-bench-$(git rev-parse --short "$rev")"
  [ -d "$tree" ] || git worktree add --detach "$tree" "$rev" >/dev/null
  [ -x "$tree/build/trainer" ] || (cd "$tree" && bash scripts/build.sh build -DTRAINER_CUDA=OFF >/dev/null)
  old="$tree/build/trainer"
fi

# "116.3 MiB" -> bytes, rounded up.
to_bytes() {
  awk -v v="$1" -v u="$2" 'BEGIN { m = u == "GiB" ? 2^30 : u == "MiB" ? 2^20 : u == "KiB" ? 1024 : 1;
                                  printf "%d", v * m + 0.999 }'
}

# The graph's planned peak at the batch, without any dataset copy.
staged_limit() {
  local model=$1 batch=$2 line
  line=$("$new" check "models/$model.model" --batch "$batch" --device cpu | grep -E '^  total ')
  echo $(( $(to_bytes "$(awk '{ print $2 }' <<<"$line")" "$(awk '{ print $3 }' <<<"$line")") + 65536 ))
}

# run_once TRAINER ARGS...: sets $rate to the best epoch's samples/s ("-" when the run
# failed) and $notes to whether it staged and whether it split.
run_once() {
  local out err
  err=$(mktemp)
  rate="-" notes="failed"
  if out=$("$@" 2>"$err"); then
    notes=""
    grep -q "staged through the host" "$err" && notes="staged"
    grep -q "out of memory at batch" "$err" && notes+=" split"
    rate=$(awk '/^epoch/ { for (i = 1; i <= NF; i++) if ($i == "samples/s") v = $(i - 1);
                           if (v > best) best = v } END { print best + 0 }' <<<"$out")
  fi
  rm -f "$err"
}

max() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "-") print b; else if (b == "-") print a;
                                         else print (a > b ? a : b) }'; }

echo "old: $old"
echo "new: $new"
printf "%-6s %6s %7s %-9s %10s %12s %12s %9s  %s\n" model batch samples data limit \
  "old samp/s" "new samp/s" "new/old" notes
commands=()
for config in "${configs[@]}"; do
  IFS=: read -r model batch samples epochs <<<"$config"
  limit=$(staged_limit "$model" "$batch")
  for mode in resident staged; do
    args=(train "models/$model.model" --device cpu --batch "$batch" --epochs "$epochs"
          --train-limit "$samples" --test-limit 1000 "${threads[@]}")
    [ "$mode" = staged ] && args+=(--memory-limit "$limit")
    commands+=("TRAINER ${args[*]}")
    # Every run must have staged (staged mode) or not (resident), and none split.
    want=$([ "$mode" = staged ] && echo staged || echo "")
    best_old="-" best_new="-" flag=ok
    for _ in $(seq "$repeats"); do
      run_once "$old" "${args[@]}"
      best_old=$(max "$best_old" "$rate")
      [ "$notes" = "$want" ] || flag="old run: '$notes'"
      run_once "$new" "${args[@]}"
      best_new=$(max "$best_new" "$rate")
      [ "$notes" = "$want" ] || flag="new run: '$notes'"
    done
    printf "%-6s %6s %7s %-9s %10s %12s %12s %9s  %s\n" "$model" "$batch" "$samples" "$mode" \
      "$([ "$mode" = staged ] && echo "$limit" || echo none)" "$best_old" "$best_new" \
      "$(awk -v a="$best_new" -v b="$best_old" 'BEGIN { if (a == "-" || b == "-" || b == 0) print "-";
                                                       else printf "%.3f", a / b }')" "$flag"
  done
done
echo
echo "commands (TRAINER = the old or new binary; best epoch of $repeats runs each):"
printf '  %s\n' "${commands[@]}"

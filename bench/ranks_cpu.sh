#!/usr/bin/env bash
# bench/ranks_cpu.sh [-r REPEATS] [-b BUCKET_MB] [CONFIG...]
# Data-parallel scaling over processes on the CPU: `mpirun -np N trainer train` for N = 1,
# 2, 4, the training samples/s of the epoch line (median of REPEATS, default 3) and the
# scaling efficiency. Every configuration gets the same cores: the processes together take
# the machine's cores as BLAS threads (--threads cores/N, at least 1), so the ideal is the
# one-process rate, and efficiency = rate(N) / rate(1) (1.00: the split cost nothing). It
# measures what splitting a step over processes costs (the collectives, smaller GEMMs per
# process), not a speedup; that needs more machines. Beyond the core count the processes
# are oversubscribed (marked).
#
# The all-reduce: each launch of N > 1 runs twice, with one gradient sum after backward
# (--bucket-mb 0) and with buckets of BUCKET MiB (-b, default 0.25: the MLP's 0.9 MiB of
# gradients in 4 buckets; 25 MiB, the default, would be one bucket for these models) started
# while backward goes on. "wait" is the time rank 0 spent waiting for the sums per step (its
# notice); hidden = (step time without buckets - step time with) / wait without buckets:
# the share of the all-reduce that overlapping took off the step (0: none, 1: all).
#
# CONFIG is MODEL:BATCH:TRAIN_SAMPLES (default mlp:128:12000 mlp:1024:12000
# lenet:128:2048). Needs mpirun (openmpi-bin) and a trainer built with MPI in
# ${BUILD:-build}.
set -euo pipefail
cd "$(dirname "$0")/.."
repeats=3 bucket=0.25
while getopts "r:b:" opt; do
  case $opt in r) repeats=$OPTARG ;; b) bucket=$OPTARG ;; *) exit 2 ;; esac
done
shift $((OPTIND - 1))
if [ $# -gt 0 ]; then configs=("$@"); else configs=(mlp:128:12000 mlp:1024:12000 lenet:128:2048); fi
build=${BUILD:-build}
[ -x "$build/trainer" ] || bash scripts/build.sh "$build" >/dev/null
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl=self,vader
cores=$(nproc)

# launch NPROC ARGS...: "samples/s wait_ms" of one launch (wait 0 for one process)
launch() {
  local n=$1
  shift
  mpirun -np "$n" --oversubscribe "$build/trainer" "$@" 2>&1 |
    awk '/^epoch/ { for (i = 1; i <= NF; i++) if ($i == "samples/s") v = $(i - 1) }
         /gradient sums over/ { if (match($0, /\([0-9.]+ ms a step\)/))
                                  w = substr($0, RSTART + 1, RLENGTH - 12) }
         END { print v + 0, w + 0 }'
}
median() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
# measure NPROC ARGS...: medians of REPEATS launches into $rate and $wait
measure() {
  local rates=() waits=() line
  for _ in $(seq "$repeats"); do
    line=$(launch "$@")
    rates+=("${line% *}")
    waits+=("${line#* }")
  done
  rate=$(median "${rates[@]}") wait=$(median "${waits[@]}")
}

echo "machine: $cores cores, $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)"
echo "median of $repeats launches; samples/s of the training steps; wait: ms a step"
printf "%-6s %5s %5s %7s | %10s %7s | %10s %7s | %10s %7s\n" model batch ranks threads \
  "no buckets" wait "buckets" wait efficiency hidden
commands=()
for config in "${configs[@]}"; do
  IFS=: read -r model batch samples <<<"$config"
  base=""
  for n in 1 2 4; do
    threads=$((cores / n > 0 ? cores / n : 1))
    args=(train "models/$model.model" --device cpu --epochs 1 --batch "$batch"
          --train-limit "$samples" --test-limit 256 --threads "$threads")
    commands+=("mpirun -np $n --oversubscribe $build/trainer ${args[*]} --bucket-mb 0|$bucket")
    measure "$n" "${args[@]}" --bucket-mb 0
    plain_rate=$rate plain_wait=$wait
    if [ "$n" -gt 1 ]; then measure "$n" "${args[@]}" --bucket-mb "$bucket"; fi
    [ -z "$base" ] && base=$plain_rate
    awk -v m="$model" -v b="$batch" -v n="$n" -v t="$threads" -v r0="$plain_rate" \
        -v w0="$plain_wait" -v r1="$rate" -v w1="$wait" -v base="$base" -v cores="$cores" '
      BEGIN {
        best = r1 > r0 ? r1 : r0
        eff = sprintf("%.2f%s", base > 0 ? best / base : 0, n > cores ? "*" : "")
        if (n == 1) { printf "%-6s %5s %5s %7s | %10.0f %7s | %10s %7s | %10s %7s\n", m, b,
                      n, t, r0, "-", "-", "-", eff, "-"; exit }
        hidden = (w0 > 0 && r0 > 0 && r1 > 0) ? (b / r0 - b / r1) * 1000 / w0 : 0
        printf "%-6s %5s %5s %7s | %10.0f %7.2f | %10.0f %7.2f | %10s %7.2f\n", m, b, n, t,
               r0, w0, r1, w1, eff, hidden }'
  done
done
echo "efficiency: the better of the two rates over one process's (the same cores; * beyond"
echo "them, oversubscribed). commands (each run $repeats times):"
printf '  %s\n' "${commands[@]}"

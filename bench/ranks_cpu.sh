#!/usr/bin/env bash
# bench/ranks_cpu.sh [-r REPEATS] [CONFIG...]
# Data-parallel scaling over processes on the CPU: `mpirun -np N trainer train` for N = 1,
# 2, 4, the training samples/s of the epoch line (median of REPEATS, default 3) and the
# scaling efficiency. Every configuration gets the same cores: the processes together take
# the machine's cores as BLAS threads (--threads cores/N, at least 1), so the ideal is the
# one-process rate, and efficiency = rate(N) / rate(1) (1.00: the split cost nothing). It
# measures what splitting a step over processes costs (the collectives, smaller GEMMs per
# process), not a speedup; that needs more machines. Beyond the core count the processes
# are oversubscribed (marked).
#
# CONFIG is MODEL:BATCH:TRAIN_SAMPLES (default mlp:128:12000 mlp:1024:12000
# lenet:128:2048). Needs mpirun (openmpi-bin) and a trainer built with MPI in
# ${BUILD:-build}. The all-reduce is not overlapped with backward yet
# (docs/distributed.md), so there is no hidden share to report.
set -euo pipefail
cd "$(dirname "$0")/.."
repeats=3
while getopts "r:" opt; do
  case $opt in r) repeats=$OPTARG ;; *) exit 2 ;; esac
done
shift $((OPTIND - 1))
if [ $# -gt 0 ]; then configs=("$@"); else configs=(mlp:128:12000 mlp:1024:12000 lenet:128:2048); fi
build=${BUILD:-build}
[ -x "$build/trainer" ] || bash scripts/build.sh "$build" >/dev/null
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl=self,vader
cores=$(nproc)

rate() {  # rate NPROC ARGS...: the epoch line's samples/s of one launch
  local n=$1
  shift
  mpirun -np "$n" --oversubscribe "$build/trainer" "$@" 2>/dev/null |
    awk '/^epoch/ { for (i = 1; i <= NF; i++) if ($i == "samples/s") v = $(i - 1) }
         END { print v + 0 }'
}
median() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

echo "machine: $cores cores, $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)"
echo "median of $repeats launches; samples/s of the training steps"
printf "%-6s %5s %8s %5s %8s %10s %10s\n" model batch samples ranks threads samples/s \
  efficiency
commands=()
for config in "${configs[@]}"; do
  IFS=: read -r model batch samples <<<"$config"
  base=""
  for n in 1 2 4; do
    threads=$((cores / n > 0 ? cores / n : 1))
    args=(train "models/$model.model" --device cpu --epochs 1 --batch "$batch"
          --train-limit "$samples" --test-limit 256 --threads "$threads")
    commands+=("mpirun -np $n --oversubscribe $build/trainer ${args[*]}")
    values=()
    for _ in $(seq "$repeats"); do values+=("$(rate "$n" "${args[@]}")"); done
    r=$(median "${values[@]}")
    [ -z "$base" ] && base=$r
    awk -v m="$model" -v b="$batch" -v s="$samples" -v n="$n" -v t="$threads" -v r="$r" \
        -v base="$base" -v cores="$cores" 'BEGIN {
      eff = sprintf("%.2f%s", base > 0 ? r / base : 0, n > cores ? " (oversubscribed)" : "")
      printf "%-6s %5s %8s %5s %8s %10.0f %10s\n", m, b, s, n, t, r, eff }'
  done
done
echo "commands (each run $repeats times):"
printf '  %s\n' "${commands[@]}"

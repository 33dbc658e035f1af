#!/usr/bin/env bash
# bench/loader_cpu.sh [-r REPEATS] [-t THREADS] [-d CACHE_DIR] [-C] [-J] [CONFIG...]
# Does the loader keep up with training on the CPU? Three rates in samples/s, side by side:
#
#   decode    the whole training split read into memory as bytes by the trainer's own
#             reader (dataset_load_with: gzip IDX, or one libpng decode per file for
#             png:DIR), one thread. The trainer does this once per run, before the first
#             step, so it is also shown as seconds per epoch-equivalent (the split's
#             samples / decode rate) beside one epoch's training time; decode/step > 1
#             means even decoding every epoch afresh would keep up. Files are in the page
#             cache after the first repeat: this is decoding, not the disk.
#   assembly  decoded bytes into shuffled f32 batches (batcher_next at the row's batch),
#             one thread: the work the prefetch thread does for every step on the staged
#             path. On a resident dataset (the CPU's usual case) the backend's
#             gather_samples runs the same loop inside the step, so it is part of the step
#             rate too. loader/step = assembly / step; > 1: the loader keeps up.
#   step      `trainer train MODEL --device cpu --epochs 1 --batch B --train-limit N` on
#             the same source: the epoch line's samples/s (the steps, gather included;
#             loading and evaluation excluded), with THREADS BLAS threads (default: the
#             trainer's choice, all cores). On two cores the staged path's prefetch thread
#             would take one from BLAS; bench/staged_cpu.sh measures that path as a whole.
# Each rate is the median of REPEATS (default 3). bench/loader_rate (built with the
# project) measures decode and assembly; see bench/loader_rate.c.
#
# CONFIG is SOURCE:MODEL:BATCH:TRAIN_SAMPLES, SOURCE one of
#   idx     Fashion-MNIST from Debian's IDX files (--data fashion-mnist)
#   png     the same exported once to PNG folders (trainer data export ... png:DIR)
#   colour  synthetic CIFAR-sized 3x32x32 RGB PNG folders (bench/colour_pngs.py), for
#           a colour model such as cifar-resnet
#   stream  the png folders read with --decode stream: decode is then only the header
#           check of every file, assembly decodes each PNG as its batch is made (the whole
#           work of a streamed run's loader thread, every epoch), and the step rate is that
#           of `trainer train --decode stream` (staged batches, the loader thread beside
#           BLAS on the same cores)
# -J instead compares JPEG decoding with PIL's (Debian's python3-pil) on the same files, one
# thread each, decode rate in samples/s (median of REPEATS): the Fashion-MNIST training
# split as 28x28 gray JPEGs (quality 90, read as gray) and 1000 synthetic 256x256 colour
# photos (quality 90, read as RGB). The trainer's side is bench/loader_rate on the images:DIR
# (the whole split into memory as bytes, as a run loads it); PIL's is bench/jpeg_pil.py
# (Image.open, convert, tobytes per file). Both use libjpeg-turbo.
# Default: idx and png, each with mlp:128:60000 mlp:1024:60000 lenet:128:4096, stream with
# mlp:128:60000 lenet:128:4096, plus colour:cifar-resnet:128:512 unless -C. TRAIN_SAMPLES keeps the slow models' runs short;
# their epoch time is extrapolated to the full split at the measured rate.
# The PNG folders are made once under CACHE_DIR (default ${TMPDIR:-/tmp}/trainer-loader-bench)
# and reused. Needs python3 for the colour folders; the build in ${BUILD:-build}. A default
# run takes about 2 minutes on 2 cores (docs/benchmarks.md has one).
set -euo pipefail
cd "$(dirname "$0")/.."
repeats=3 threads=() cache="${TMPDIR:-/tmp}/trainer-loader-bench" colour=1 jpeg=0
while getopts "r:t:d:CJ" opt; do
  case $opt in
    r) repeats=$OPTARG ;; t) threads=(--threads "$OPTARG") ;; d) cache=$OPTARG ;;
    C) colour=0 ;; J) jpeg=1 ;; *) exit 2 ;;
  esac
done
shift $((OPTIND - 1))
if [ $# -gt 0 ]; then
  configs=("$@")
else
  configs=(idx:mlp:128:60000 idx:mlp:1024:60000 idx:lenet:128:4096
           png:mlp:128:60000 png:mlp:1024:60000 png:lenet:128:4096
           stream:mlp:128:60000 stream:lenet:128:4096)
  [ "$colour" = 1 ] && configs+=(colour:cifar-resnet:128:512)
fi

build=${BUILD:-build}
if [ -f "$build/build.ninja" ]; then
  cmake --build "$build" --target trainer loader_rate -- -j2 >/dev/null
else
  bash scripts/build.sh "$build" >/dev/null
fi
trainer=$build/trainer loader=$build/bench/loader_rate

# spec_of SOURCE: the --data spec, making the folders on first use. A folder counts as made
# only once its .complete marker is written, so an interrupted export is made again.
spec_of() {
  case $1 in
    idx) echo fashion-mnist ;;
    png | stream)
      if [ ! -f "$cache/fm-png/.complete" ]; then
        rm -rf "$cache/fm-png"
        mkdir -p "$cache"
        "$trainer" data export fashion-mnist "png:$cache/fm-png" >&2
        touch "$cache/fm-png/.complete"
      fi
      echo "png:$cache/fm-png" ;;
    colour)
      if [ ! -f "$cache/colour-png/.complete" ]; then
        rm -rf "$cache/colour-png"
        python3 bench/colour_pngs.py "$cache/colour-png" >&2
        touch "$cache/colour-png/.complete"
      fi
      echo "png:$cache/colour-png" ;;
    *) echo "unknown source '$1': idx, png, stream or colour" >&2; exit 2 ;;
  esac
}

# -J: JPEG decode, the trainer's reader against PIL on the same files.
if [ "$jpeg" = 1 ]; then
  pil=/usr/bin/python3  # Debian's, which has python3-pil
  "$pil" -c "import PIL" 2>/dev/null || { echo "-J needs python3-pil (scripts/setup.sh --bench)" >&2; exit 1; }
  png=$(spec_of png)
  if [ ! -f "$cache/fm-jpeg/.complete" ]; then
    rm -rf "$cache/fm-jpeg"
    "$pil" bench/jpeg_pil.py make "$cache/fm-jpeg" --from "${png#png:}"
    touch "$cache/fm-jpeg/.complete"
  fi
  if [ ! -f "$cache/photo-jpeg/.complete" ]; then
    rm -rf "$cache/photo-jpeg"
    "$pil" bench/jpeg_pil.py make "$cache/photo-jpeg" --photos 1000 --size 256
    touch "$cache/photo-jpeg/.complete"
  fi
  echo "machine: $(nproc) cores, $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)"
  echo "JPEG decode, one thread, median of $repeats runs; samples/s"
  printf "%-22s %7s %10s %10s %7s\n" files samples trainer PIL ratio
  for set in "fm-jpeg 1 L 28x28 gray" "photo-jpeg 3 RGB 256x256 RGB"; do
    read -r name channels mode label kind <<<"$set"
    ours=$("$loader" -r "$repeats" -c "$channels" "images:$cache/$name" | sed -n 's|.*samples/s=||p')
    theirs=$("$pil" bench/jpeg_pil.py time "$cache/$name" "$mode" --repeats "$repeats")
    count=$(sed -n 's/.*samples=\([0-9]*\).*/\1/p' <<<"$theirs")
    theirs=$(sed -n 's|.*samples/s=||p' <<<"$theirs")
    awk -v n="$label $kind" -v c="$count" -v a="$ours" -v b="$theirs" \
      'BEGIN { printf "%-22s %7d %10.0f %10.0f %7.2f\n", n, c, a, b, a / b }'
  done
  echo "ratio: trainer / PIL (> 1: the trainer decodes faster)"
  exit 0
fi

# median VALUE...: the middle one (the mean of the middle two for an even count).
median() {
  printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END {
    if (NR % 2) print v[(NR + 1) / 2]; else printf "%.0f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# field NAME LINE: the value of NAME=value in a loader_rate line.
field() { tr ' ' '\n' <<<"$2" | sed -n "s|^$1=||p"; }

# The loader's rates, once per source: decode, and assembly at every batch the configs
# name for it. The colour source is decoded as RGB, as a 3xHxW model asks the reader to.
declare -A decode_rate split_samples assembly_rate
loader_commands=()
sources=$(printf '%s\n' "${configs[@]}" | cut -d: -f1 | awk '!seen[$0]++')
for source in $sources; do
  spec=$(spec_of "$source")
  mapfile -t batches < <(printf '%s\n' "${configs[@]}" |
                         awk -F: -v s="$source" '$1 == s { print $3 }' | sort -un)
  channels=()
  [ "$source" = colour ] && channels=(-c 3)
  [ "$source" = stream ] && channels=(-S)
  args=(-r "$repeats" "${channels[@]}" "$spec" "${batches[@]}")
  loader_commands+=("$loader ${args[*]}")
  while read -r line; do
    case $line in
      decode*)
        decode_rate[$source]=$(field samples/s "$line")
        split_samples[$source]=$(field samples "$line") ;;
      assemble*) assembly_rate[$source:$(field batch "$line")]=$(field samples/s "$line") ;;
    esac
  done < <("$loader" "${args[@]}")
  # A failed loader_rate (its message is on stderr) leaves no decode line behind.
  [ -n "${decode_rate[$source]:-}" ] || { echo "loader_rate failed: $loader ${args[*]}" >&2; exit 1; }
done

# step_rate ARGS...: the epoch line's samples/s of one `trainer train` run.
step_rate() {
  "$trainer" "$@" 2>/dev/null |
    awk '/^epoch/ { for (i = 1; i <= NF; i++) if ($i == "samples/s") v = $(i - 1) }
         END { print v + 0 }'
}

echo "machine: $(nproc) cores, $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)"
echo "median of $repeats runs each; samples/s; loader/step = assembly / step (> 1: keeps up)"
printf "%-6s %9s %9s %-12s %5s %9s %7s %-8s %9s %7s %8s\n" source decode assembly model batch \
  step loader/ "" decode/ "decode" "train"
printf "%-6s %9s %9s %-12s %5s %9s %7s %-8s %9s %7s %8s\n" "" "" "" "" "" "" step "" step \
  s/epoch s/epoch
train_commands=()
for config in "${configs[@]}"; do
  IFS=: read -r source model batch samples <<<"$config"
  spec=$(spec_of "$source")
  args=(train "models/$model.model" --device cpu --epochs 1 --batch "$batch"
        --train-limit "$samples" --test-limit 256 --data "$spec" "${threads[@]}")
  [ "$source" = stream ] && args+=(--decode stream)
  train_commands+=("$trainer ${args[*]}")
  rates=()
  for _ in $(seq "$repeats"); do rates+=("$(step_rate "${args[@]}")"); done
  step=$(median "${rates[@]}")
  decode=${decode_rate[$source]} assembly=${assembly_rate[$source:$batch]}
  awk -v src="$source" -v dec="$decode" -v asm="$assembly" -v model="$model" -v b="$batch" \
      -v step="$step" -v n="${split_samples[$source]}" 'BEGIN {
    if (step <= 0) { printf "%-6s %9.0f %9.0f %-12s %5s %9s  (the training run failed)\n",
                     src, dec, asm, model, b, "-"; exit }
    printf "%-6s %9.0f %9.0f %-12s %5s %9.0f %7.1f %-8s %9.1f %7.2f %8.2f\n", src, dec, asm,
           model, b, step, asm / step, (asm > step ? "keeps up" : "behind"), dec / step,
           n / dec, n / step }'
done
echo
echo "decode s/epoch, train s/epoch: the source's whole training split at the decode rate and"
echo "at the step rate; decode/step = decode / step (> 1: decoding every epoch would keep up)."
for source in $sources; do echo "  $source: ${split_samples[$source]} training samples"; done
echo "commands (each run $repeats times):"
printf '  %s\n' "${loader_commands[@]}" "${train_commands[@]}"

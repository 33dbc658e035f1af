#!/usr/bin/env bash
# bench/results_folder.sh, sourced by the scripts that measure on a GPU (compare_gpu.sh,
# time_to_accuracy.sh, scripts/gpu-check.sh): every GPU run writes its files into one folder,
# RESULTS/DATE-GPU (2026-11-29-H200), to be committed under bench/results/; the figures in
# the docs are made from those files alone (bench/gpu_table.py). RESULTS is $RESULTS_DIR,
# else $OUT/results on a lent machine (whose $OUT comes back), else bench/results. Beside
# each tool's own files (compare-gpu.tsv and .log, race.tsv and .log, gpu-check.log, ...):
#   versions.txt   nvidia-smi, nvcc, trainer --version, PyTorch's versions
#   commands.txt   each command that wrote into the folder, one a line
#   commit.txt     the commit of the working tree (and whether it had changes)

# typed_command SCRIPT [ARG...]: "bash SCRIPT ARG...", the command as it was typed, for the
# docs and commands.txt: an argument with white space in double quotes.
typed_command() {
  local line="bash $1" arg
  shift
  for arg in "$@"; do
    [[ $arg =~ [[:space:]] ]] && arg="\"$arg\""
    line+=" $arg"
  done
  printf '%s\n' "$line"
}

# results_root: where the folders go.
results_root() {
  if [ -n "${RESULTS_DIR:-}" ]; then echo "$RESULTS_DIR"
  elif [ -n "${OUT:-}" ] && [ -d "${OUT:-}" ]; then echo "$OUT/results"
  else echo bench/results; fi
}

# gpu_slug: the first GPU's name as a folder name: "NVIDIA H200" -> H200, "NVIDIA H100 80GB
# HBM3" -> H100-80GB-HBM3; "cpu" without nvidia-smi.
gpu_slug() {
  local name
  name=$(timeout 60 nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -n 1)
  name=${name#NVIDIA }
  name=$(tr -cs 'A-Za-z0-9.' '-' <<<"$name" | sed 's/^-*//; s/-*$//')
  echo "${name:-cpu}"
}

# results_folder: makes (if needed) and prints today's folder for this GPU.
results_folder() {
  local folder
  folder=$(results_root)/$(date -u +%Y-%m-%d)-$(gpu_slug)
  mkdir -p "$folder" && echo "$folder"
}

# results_folder_record FOLDER COMMAND [TRAINER [PYTHON]]: the command appended to
# commands.txt, commit.txt and versions.txt written (what is not installed says so).
results_folder_record() {
  local folder=$1 command=$2 trainer=${3:-} python=${4:-python3}
  printf '%s  %s\n' "$(date -u '+%Y-%m-%d %H:%M:%S UTC')" "$command" >>"$folder/commands.txt" ||
    return 1
  {
    git rev-parse HEAD 2>/dev/null || echo unknown
    git status --porcelain --untracked-files=no 2>/dev/null | grep -q . &&
      echo "(the working tree had uncommitted changes)"
  } >"$folder/commit.txt"
  {
    echo "== nvidia-smi"
    timeout 60 nvidia-smi 2>&1 || echo "(nvidia-smi is not installed or failed)"
    echo "== nvcc --version"
    nvcc --version 2>&1 || /usr/local/cuda/bin/nvcc --version 2>&1 || echo "(no nvcc)"
    echo "== trainer --version"
    { [ -n "$trainer" ] && [ -x "$trainer" ] && "$trainer" --version 2>&1; } || echo "(no trainer)"
    echo "== PyTorch (torch, CUDA, cuDNN, Triton)"
    "$python" bench/torch_train.py --versions --device auto 2>&1 | tail -n 1
  } >"$folder/versions.txt"
}

# results_open NAME COMMAND TRAINER PYTHON: sets $results (the tsv) and $log beside it, both
# emptied. Unless $results is already set: a GPU run's go into today's results folder (its
# versions, command and commit recorded), a CPU run's into a new file under $TMPDIR.
results_open() {
  local name=$1 command=$2 trainer=$3 python=$4 folder
  if [ -z "${results:-}" ] && [ "$device" != cpu ]; then
    folder=$(results_folder) || die "cannot make the results folder under $(results_root)"
    results=$folder/$name.tsv
    results_folder_record "$folder" "$command" "$trainer" "$python" ||
      die "cannot write the versions, command and commit into $folder"
  elif [ -z "${results:-}" ]; then
    results=$(mktemp "${TMPDIR:-/tmp}/$name.XXXXXX") || die "cannot make a results file"
    mv "$results" "$results.tsv" && results=$results.tsv
  fi
  log=${results%.tsv}.log
  : >"$results" 2>/dev/null || die "cannot write $results"
  : >"$log"
}

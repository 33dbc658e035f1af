#!/usr/bin/env bash
# scripts/gpu-check.sh on a machine without a GPU: it exits 3 at once with a one-line
# message and builds nothing; -h prints its usage. On a machine with a GPU the test is
# skipped (77): the whole check takes minutes and builds its own tree, which is no job for
# ctest; run `bash scripts/gpu-check.sh` there instead.
source "$(dirname "${BASH_SOURCE[0]}")/common.bash"

script=scripts/gpu-check.sh
if command -v nvidia-smi >/dev/null 2>&1 &&
    [ -n "$(timeout 60 nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null)" ]; then
    echo "SKIP: this machine has a GPU; run 'bash $script' itself"
    exit 77
fi

# check_no_gpu WHAT: the last run was the script finding no usable GPU.
check_no_gpu() {
    expect_rc 3 "$1: exit 3"
    if [ "$(wc -l <<<"$err")" -eq 1 ] &&
        grep -q '^gpu-check.sh: no usable GPU, nothing built or run: ' <<<"$err"; then
        pass "$1: one line on stderr saying so"
    else
        fail "$1: one line on stderr saying so"
    fi
    if [ ! -e "$work/build" ] && [ ! -e "$work/logs" ]; then pass "$1: nothing built, no logs"
    else fail "$1: nothing built, no logs" "$(ls "$work")"; fi
}

# The folders are named, so that what the script would create is looked for in $work.
# `timeout`: a script that started building would hang ctest for minutes, not seconds.
run timeout 60 bash "$script" --build-dir "$work/build" --logs "$work/logs"
check_no_gpu "no GPU"
if command -v nvidia-smi >/dev/null 2>&1; then
    expect_in err "nvidia-smi " "the message names what nvidia-smi said"
else
    expect_in err "nvidia-smi is not installed" "the message says nvidia-smi is not installed"
fi

# nvidia-smi present but failing, as on a machine whose driver is not loaded.
mkdir -p "$work/bin"
printf '#!/bin/sh\necho "NVIDIA-SMI has failed because it could not communicate with the NVIDIA driver."\nexit 9\n' \
    >"$work/bin/nvidia-smi"
chmod +x "$work/bin/nvidia-smi"
run env PATH="$work/bin:$PATH" timeout 60 bash "$script" --build-dir "$work/build" --logs "$work/logs"
check_no_gpu "failing nvidia-smi"
expect_in err "nvidia-smi failed: NVIDIA-SMI has failed" "the message quotes nvidia-smi's failure"

run bash "$script" -h
expect_rc 0 "-h"
expect_match out '^usage: bash scripts/gpu-check.sh' "-h prints the usage"
expect_in out "Exit status: 0 every step passed" "-h documents the exit status"
expect_in out "--levers          build, then each lever alone only" "-h lists --levers"
expect_in out "--profile         build, then the per-layer profiles only" "-h lists --profile"
expect_in out "--race            build, then time to accuracy" "-h lists --race"
expect_in out "call 1: bash scripts/gpu-check.sh " "-h plans the lease's two calls"
run bash "$script" --levers --profile
expect_rc 2 "two whole-budget modes"
expect_in err "--levers and --profile each take the whole budget" "the pair is refused"
run bash "$script" --compare --levers
expect_rc 2 "--levers with --compare"
expect_in err "neither goes with --compare or --race" "that pair is refused too"
run bash "$script" --no-such-option
expect_rc 2 "an unknown option"
expect_in err "unknown option '--no-such-option'" "an unknown option is named"
finish

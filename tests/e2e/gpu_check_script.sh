#!/usr/bin/env bash
# scripts/gpu-check.sh on a machine without a GPU: it exits 3 at once with a one-line
# message and builds nothing; -h prints its usage. Then its first call (the default) with
# stand-ins for nvidia-smi (one H200), cmake, ctest, compute-sanitizer and the built
# binaries: the gpu tests that need the card alone run first, then test_cuda_parity_conv_pool
# runs as 2 processes, one per group of its sections, beside the ctest of the tests that
# share the card without it; the two-GPU test that skips on one card is SKIP, not FAIL, and
# the call exits 0; a failing section group fails the call, named; the memcheck subset
# runs; and the results folder (DATE-GPU) holds the log, the step rows, the versions, the
# command and the commit. On a machine with a GPU the test is skipped (77): the whole
# check takes minutes and builds its own tree, which is no job for ctest; run
# `bash scripts/gpu-check.sh` there instead.
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
# ---- the first call, with stand-ins ---------------------------------------------------
# Each stand-in appends its arguments to $work/calls, so the test sees what ran.
cat >"$work/bin/nvidia-smi" <<'EOF'
#!/bin/sh
case "$*" in
*compute_cap*) echo "9.0" ;;
*index,name*) echo "0, NVIDIA H200, 580.159.04, 143771 MiB" ;;
*name*) echo "NVIDIA H200" ;;
*) echo "NVIDIA-SMI stand-in" ;;
esac
EOF
cat >"$work/bin/cmake" <<'EOF'
#!/usr/bin/env bash
echo "cmake $*" >>"$CALLS"
[ "$1" = --version ] && { echo "cmake version stand-in"; exit 0; }
if [ "$1" = -S ]; then exit 0; fi  # configure
build=$2  # --build DIR: the binaries gpu-check.sh runs
mkdir -p "$build/tests"
printf '#!/bin/sh\ncase "$1" in --version) echo "trainer (stand-in)"; echo "CUDA runtime 13.0, driver 13.0, cuBLAS 13.1.0, cuDNN 9.19.0, NCCL 2.28.9" ;; doctor) echo "verdict: all well" ;; esac\n' >"$build/trainer"
printf '#!/bin/sh\necho "test_cuda_parity_conv_pool $*" >>"$CALLS"\ncase " $* " in *" $PARITY_FAIL "*) echo "FAIL $PARITY_FAIL [stand-in]"; exit 1 ;; esac\necho "========= ERROR SUMMARY: 0 errors"\n' >"$build/tests/test_cuda_parity_conv_pool"
printf '#!/bin/sh\necho "test_cuda_graph_step $*" >>"$CALLS"\n' >"$build/tests/test_cuda_graph_step"
chmod +x "$build/trainer" "$build/tests/"*
EOF
# The tests that need the card alone (-LE card_shared), then those that share it.
cat >"$work/bin/ctest" <<'EOF'
#!/usr/bin/env bash
echo "ctest $*" >>"$CALLS"
if [[ " $* " == *" -LE card_shared "* ]]; then
    echo "1/2 Test #21: test_cuda_full_card ..............   Passed    9.00 sec"
    echo "2/2 Test #25: gpu_mpi_two_gpus .................***Skipped   0.10 sec"
else
    echo "1/2 Test #23: test_cuda_devices ................   Passed    0.27 sec"
    echo "2/2 Test #24: test_cuda_graph_step .............   Passed    1.50 sec"
fi
EOF
cat >"$work/bin/compute-sanitizer" <<'EOF'
#!/usr/bin/env bash
echo "compute-sanitizer $*" >>"$CALLS"
echo "========= ERROR SUMMARY: 0 errors"
echo "========= LEAK SUMMARY: 0 bytes leaked in 0 allocations"
EOF
chmod +x "$work/bin/"*
gpu_check() {
    : >"$work/calls"
    run env PATH="$work/bin:$PATH" CALLS="$work/calls" RESULTS_DIR="$work/results" OUT= \
        PARITY_FAIL="${PARITY_FAIL:-none}" timeout 120 bash "$script" --build-dir "$work/build" \
        --logs "$work/logs" --budget 100 "$@"
}
gpu_check
expect_rc 0 "the first call with stand-ins: every step passed"
expect_match out '^ctest -L gpu +PASS +[0-9]+s +5 of 5 passed; test_cuda_parity_conv_pool as 2 section groups' \
    "ctest -L gpu passes: its 3 tests and the 2 section groups"
expect_in out "test_cuda_parity_conv_pool as 2 section groups" \
    "test_cuda_parity_conv_pool ran as 2 section groups"
expect_match out '^gpu_mpi_two_gpus +SKIP .*needs two GPUs; this machine has 1' \
    "the two-GPU test is SKIP on one card, not FAIL"
if grep -q '^ctest .*-L card_shared -E ^test_cuda_parity_conv_pool\$ -j 4' "$work/calls"; then
    pass "ctest runs every test that shares the card but test_cuda_parity_conv_pool"
else
    fail "ctest runs every test that shares the card but test_cuda_parity_conv_pool" \
        "$(cat "$work/calls")"
fi
# The tests that need the card to themselves run before the section groups start: a group
# beside test_cuda_full_card would fail for want of memory, or make it fail.
first_group=$(grep -n -m1 '^test_cuda_parity_conv_pool ' "$work/calls" | cut -d: -f1)
serial=$(grep -n -m1 '^ctest .*-L gpu -LE card_shared' "$work/calls" | cut -d: -f1)
if [ -n "$serial" ] && [ -n "$first_group" ] && [ "$serial" -lt "$first_group" ]; then
    pass "the tests that need the card alone run first, with no section group beside them"
else
    fail "the tests that need the card alone run first, with no section group beside them" \
        "$(cat "$work/calls")"
fi
groups=$(grep -c '^test_cuda_parity_conv_pool ' "$work/calls")
if [ "$groups" = 2 ] && grep -q '^test_cuda_parity_conv_pool conv2d$' "$work/calls" &&
    grep -q '^test_cuda_parity_conv_pool pooling layout_convert$' "$work/calls" &&
    grep -q '^compute-sanitizer .*/tests/test_cuda_parity_losses$' "$work/calls" &&
    grep -q '^compute-sanitizer .*/tests/test_cuda_parity_linear_algebra gemm with bias$' "$work/calls"; then
    pass "test_cuda_parity_conv_pool's 2 section groups, and the memcheck subset's parity runs"
else
    fail "test_cuda_parity_conv_pool's 2 section groups, and the memcheck subset's parity runs" \
        "$(cat "$work/calls")"
fi
if [ "$(grep -c '^compute-sanitizer --tool memcheck --leak-check full' "$work/calls")" = 3 ] &&
    ! grep -q racecheck "$work/calls"; then
    pass "memcheck over the subset only"
else
    fail "memcheck over the subset only" "$(grep compute-sanitizer "$work/calls")"
fi
folder=$(ls -d "$work/results/"*-H200 2>/dev/null)
if [ -n "$folder" ] && [ -s "$folder/gpu-check.log" ] && [ -s "$folder/versions.txt" ] &&
    grep -q '^step	ctest -L gpu	PASS	' "$folder/gpu-check.tsv" &&
    grep -q "bash scripts/gpu-check.sh --build-dir $work/build --logs $work/logs --budget 100\$" "$folder/commands.txt" &&
    [ -s "$folder/commit.txt" ] && grep -q '^== nvidia-smi' "$folder/versions.txt"; then
    pass "the results folder DATE-H200: log, step rows, versions, the command, the commit"
else
    fail "the results folder DATE-H200: log, step rows, versions, the command, the commit" \
        "$(ls -R "$work/results" 2>&1)"
fi

PARITY_FAIL=pooling gpu_check --no-sanitize
expect_rc 1 "a failing section group fails the call"
expect_in out "test_cuda_parity_conv_pool[pooling layout_convert](exit 1: FAIL pooling [stand-in])" \
    "and is named"
finish

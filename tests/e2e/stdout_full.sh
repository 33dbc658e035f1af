#!/usr/bin/env bash
# Output that cannot be written is an error: with stdout on /dev/full (every write fails
# with ENOSPC, as on a full disk) each command says so and exits 1, where it used to exit
# 0 with its output lost; a command that failed already keeps its own exit code; a reader
# that stopped reading (EPIPE, SIGPIPE ignored) gets no message.
source "$(dirname "${BASH_SOURCE[0]}")/common.bash"
require_fashion_mnist

# run_full CMD...: `run`, with stdout on /dev/full (a character device: nothing is stored).
run_full() {
    ran="$* >/dev/full"
    "$@" </dev/null >/dev/full 2>"$work/.stderr"
    rc=$?
    out=""
    err=$(cat "$work/.stderr")
}

tiny=(--epochs 1 --train-limit 500 --test-limit 200 --device cpu)
run "$TRAINER" train models/mlp.model "${tiny[@]}" --save "$work/mlp.safetensors"
expect_rc 0 "a tiny training saves weights for predict and eval"
run "$TRAINER" data export fashion-mnist "png:$work/png" --limit 1
expect_rc 0 "an image for predict"
image=$(find "$work/png" -name '*.png' | head -n 1)

full_error="writing to standard output failed: No space left on device"
while IFS= read -r line; do
    read -ra cmd <<<"$line"
    run_full "$TRAINER" "${cmd[@]}"
    expect_error 1 "$full_error" "${cmd[0]} ${cmd[1]:-} with stdout on /dev/full"
done <<EOF_COMMANDS
train models/mlp.model ${tiny[*]}
predict models/mlp.model --weights $work/mlp.safetensors $image --device cpu
eval models/mlp.model --weights $work/mlp.safetensors --test-limit 200 --device cpu
check models/mlp.model
data info fashion-mnist
explain cudaErrorMemoryAllocation
bench gemm --device cpu --json --sizes 64 --precisions fp32 --repeats 1 --warmup 0
--help
--version
check --help
EOF_COMMANDS

run_full "$TRAINER" check "$work/missing.model"
expect_error 2 "cannot open model file" "a failed command keeps its exit code"
expect_no_match err "standard output" "and has written nothing to stdout to fail"

# The reader is gone before the trainer writes; SIGPIPE ignored, the write gets EPIPE.
ran="trainer --help | (reader gone), SIGPIPE ignored"
(trap '' PIPE; sleep 0.5; exec "$TRAINER" --help 2>"$work/.stderr") | true
rc=${PIPESTATUS[0]}
err=$(cat "$work/.stderr")
out=""
expect_rc 1 "output cut by a reader that went away is no success"
expect_no_match err "error" "but gets no error message"

run "$TRAINER" check models/mlp.model
expect_rc 0 "a plain stdout still works"
finish

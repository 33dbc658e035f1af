#!/usr/bin/env bash
# --memory-limit and --memory-mode on the CPU device (DESIGN.md §4: the limit applies to
# the CPU too, so out-of-memory is testable without a GPU). Out of memory is a status,
# never a crash: exit 1 with a message and a hint.
source "$(dirname "${BASH_SOURCE[0]}")/common.bash"
require_fashion_mnist

tiny=(train models/mlp.model --data fashion-mnist --train-limit 512 --test-limit 256
    --epochs 1 --device cpu)

# The MLP's parameters alone are ~0.9 MiB, and with gradients, Adam state and the
# activations of a 128 batch it needs ~4.7 MiB: 1 MiB cannot hold it at any batch size.
run "$TRAINER" "${tiny[@]}" --memory-limit 1M
expect_error 1 "out of memory" "--memory-limit 1M is too small: exit 1, out of memory"
expect_in err "1.0 MiB" "the out-of-memory error quotes the limit"
# Host memory ran out, not a GPU's: no GPU or PyTorch advice follows the hint.
expect_no_match err "nvidia-smi|PYTORCH_CUDA_ALLOC_CONF|GPU|torch" \
    "a CPU out-of-memory gets no GPU explanation"
if [ "$rc" -ge 128 ]; then fail "out of memory is not a crash" "killed by signal $((rc - 128))"
else pass "out of memory is not a crash"; fi

run "$TRAINER" "${tiny[@]}" --memory-limit 64M
expect_rc 0 "--memory-limit 64M trains"
expect_match out "^memory on cpu: .* 0 out-of-memory" "the memory summary shows no out-of-memory"

run "$TRAINER" "${tiny[@]}" --memory-limit 67108864
expect_rc 0 "--memory-limit in plain bytes trains"

run "$TRAINER" "${tiny[@]}" --memory-limit 0.5
expect_rc 0 "--memory-limit as a fraction of the device's memory trains"

# 1.0 is the whole device's memory, not 1 byte (it ran out of memory at "limit 1 bytes").
run "$TRAINER" "${tiny[@]}" --memory-limit 1.0
expect_rc 0 "--memory-limit 1.0, all of the device's memory, trains"

for bad in abc 0 -5 12Q; do
    run "$TRAINER" "${tiny[@]}" --memory-limit "$bad"
    expect_error 2 "memory limit '$bad'" "--memory-limit $bad is a usage error"
done

run "$TRAINER" "${tiny[@]}" --memory-mode reserve --memory-limit 64M
expect_rc 0 "--memory-mode reserve --memory-limit 64M trains"
expect_match out "^memory on cpu: .* 64\.0 MiB reserved" "reserve mode reserves the whole limit"

run "$TRAINER" "${tiny[@]}" --memory-mode reserve
expect_error 2 "--memory-mode reserve needs --memory-limit" \
    "--memory-mode reserve without a limit is a usage error"

run "$TRAINER" "${tiny[@]}" --memory-mode grow --memory-limit 64M
expect_rc 0 "--memory-mode grow (the default, spelt out) trains"

run "$TRAINER" "${tiny[@]}" --memory-mode hoard
expect_error 2 "--memory-mode hoard" "an unknown --memory-mode is a usage error"

# CPU replicas share one allocator: the micro-batch notice counted its reserve once per
# replica (126.1 MiB "reserved" under a 64 MiB limit).
run "$TRAINER" train models/lenet.model --epochs 1 --train-limit 96 --test-limit 50 --device cpu \
    --replicas 2 --batch 48 --memory-limit 64M
expect_rc 0 "two CPU replicas under 64M, splitting their batch"
reserved=$(sed -nE 's/.*\(reserved ([0-9.]+) MiB before releasing.*/\1/p' <<<"$err" | head -n 1)
if [ -n "$reserved" ] && awk -v r="$reserved" 'BEGIN { exit !(r <= 64) }'; then
    pass "the notice's reserve ($reserved MiB) is within the limit"
else fail "the notice's reserve is within the limit" "$(grep micro-batch <<<"$err")"; fi

finish

#!/usr/bin/env bash
# Out of memory is not the end (issue 6): when the configured batch does not fit under
# --memory-limit, training continues as micro-batches with gradient accumulation, says so
# once, and learns what an unlimited run learns. Below what one sample needs, it stops with
# the clear error.
source "$(dirname "${BASH_SOURCE[0]}")/common.bash"
require_fashion_mnist

tiny=(train models/mlp.model --device cpu --train-limit 4096 --test-limit 1000 --epochs 2
    --batch 1024)

run "$TRAINER" "${tiny[@]}"
expect_rc 0 "batch 1024 trains without a limit"
unlimited=$(last_epoch_result)

# mlp at batch 1024 peaks near 6 MiB; 4 MiB holds the parameters, gradients and Adam state
# and a few dozen samples' activations: the memory plan sizes the micro-batch, so the split
# costs one out-of-memory, and the notice states the size training continues at.
run "$TRAINER" "${tiny[@]}" --memory-limit 4M
expect_rc 0 "batch 1024 under a 4 MiB limit still trains"
expect_match err "^trainer: notice: out of memory at batch 1024 on cpu \(layer [a-z0-9]+, .* free\): continuing as [0-9]+ micro-batches of [0-9]+ " \
    "the split is logged with the layer, the sizes and the new micro-batch"
expect_match out "^memory on cpu: .* 1 out-of-memory" "the split costs one out-of-memory, not one per halving"
expect_in err "reserved" "the log line shows the memory reserved before and after"
splits=$(grep -c "out of memory at batch" <<<"$err")
if [ "$splits" -eq 1 ]; then pass "the split is logged once"; else fail "the split is logged once" "$splits lines"; fi
limited=$(last_epoch_result)
if [ -n "$unlimited" ] && [ "$unlimited" = "$limited" ]; then
    pass "micro-batches learn what whole batches learn ($limited)"
else
    fail "micro-batches learn what whole batches learn" "unlimited: '$unlimited', limited: '$limited'"
fi

run "$TRAINER" "${tiny[@]}" --memory-limit 2M
expect_error 1 "out of memory" "a limit under the parameters' needs stops with the out-of-memory error"
if [ "$rc" -ge 128 ]; then fail "out of memory is not a crash" "signal $((rc - 128))"; fi

finish

#!/usr/bin/env bash
# On a GPU: training in bf16 and fp16 (--precision; GEMM and convolution inputs rounded,
# 16-bit activation storage where graph_set_storage puts it, fp32 master weights and sums,
# loss scaling for fp16) reaches the accuracy of fp32 training: mlp and lenet, 3 epochs on
# the first 20,000 Fashion-MNIST training images, each test accuracy on the whole test
# split at least that of the same run in fp32 (same seed, same order) less 0.5 points. Rounding changes the trajectory, not where it goes; a precision that broke
# the math (a wrong compute type, lost gradients) loses far more than half a point.
# Skipped (exit 77) without a usable GPU or without Fashion-MNIST; bf16 below compute
# capability 8.0 is checked to be refused instead.
# bench/compare_gpu.sh runs it at issue 15's size through the environment: PRECISION_MODELS
# (default "mlp lenet"), PRECISION_EPOCHS (3), PRECISION_TRAIN_LIMIT (20000; 0: all) and
# PRECISION_DEVICE (cuda).
source "$(dirname "${BASH_SOURCE[0]}")/../e2e/common.bash"
require_fashion_mnist

device=${PRECISION_DEVICE:-cuda}
limit=${PRECISION_TRAIN_LIMIT:-20000}
subset=(--data fashion-mnist --epochs "${PRECISION_EPOCHS:-3}" --device "$device")
[ "$limit" -gt 0 ] && subset+=(--train-limit "$limit")
run "$TRAINER" train models/mlp.model --data fashion-mnist --train-limit 256 --test-limit 256 \
    --epochs 1 --device "$device"
if [ "$rc" -ne 0 ]; then
    echo "SKIP: no usable GPU: $(grep -m1 '^trainer: error' <<<"$err")"
    exit 77
fi

# test_accuracy: the last epoch line's test accuracy.
test_accuracy() { grep '^epoch ' <<<"$out" | tail -n 1 | sed 's/.*test loss [0-9.]* acc \([0-9.]*\).*/\1/'; }

for model in ${PRECISION_MODELS:-mlp lenet}; do
    run "$TRAINER" train "models/$model.model" "${subset[@]}" --precision fp32
    expect_rc 0 "$model trains in fp32"
    reference=$(test_accuracy)
    for precision in bf16 fp16; do
        run "$TRAINER" train "models/$model.model" "${subset[@]}" --precision "$precision"
        if [ "$rc" -eq 3 ] && grep -q "needs [0-9.]* or newer" <<<"$err"; then
            expect_error 3 "--precision $precision: layer " \
                "$model: this GPU refuses $precision, naming the layer"
            continue
        fi
        expect_rc 0 "$model trains in $precision"
        expect_match out "^precision $precision on cuda:[0-9]+ \(--precision $precision\): " \
            "$model: the header says it computes in $precision"
        accuracy=$(test_accuracy)
        skipped=$(grep -c 'step skipped' <<<"$err")
        # Reaching fp32's accuracy is the bar: a run that ends above it passes (an H200 gave
        # lenet in fp16 0.8669 against fp32's 0.8619, a different rounding's luck).
        if awk -v a="$accuracy" -v r="$reference" 'BEGIN { exit !(a - r >= -0.005) }'
        then pass "$model $precision test accuracy $accuracy reaches fp32's $reference less 0.5 points ($skipped steps skipped)"
        else fail "$model $precision test accuracy $accuracy below fp32's $reference less 0.5 points" \
            "$skipped steps skipped by loss scaling"; fi
    done
done

finish

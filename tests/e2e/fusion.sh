#!/usr/bin/env bash
# Fusing act= activations into their dense/conv2d layer (the default) against --no-fuse:
# `trainer check` names the fused layers and plans less memory, and on the CPU a training
# run ends with the same weights, byte for byte, either way; `train fuse=false` in the
# model file turns fusion off as --no-fuse does.
source "$(dirname "${BASH_SOURCE[0]}")/common.bash"

make_random_dataset "$work/data" 96 32
model="$work/small-cnn.model"
cat >"$model" <<MODEL
input     shape=1x28x28 dtype=f32
conv2d    filters=4 kernel=3 pad=same act=relu
maxpool   size=2
conv2d    filters=6 kernel=3 pad=same act=tanh
maxpool   size=2
flatten
dense     units=16 act=relu
dropout   rate=0.25
dense     units=10
loss      softmax_cross_entropy
optimizer adam lr=0.001
train     batch=16 epochs=2 seed=5
MODEL

run "$TRAINER" check "$model"
expect_rc 0 "check of the small CNN succeeds"
expect_in out "fusion: 3 act= activations computed inside the forward op of conv2d1, conv2d2, dense1" \
    "check names the three fused layers"
expect_match out "^conv2d1 +conv2d 3x3 same\+relu " "the fused conv2d's row shows its activation"
expect_match out "^conv2d1\.act +relu \(in conv2d1\) " "the activation's row says where it runs"
fused_memory=$(sed -n 's/^memory at batch 16: .* = \(.*\)$/\1/p' <<<"$out")

run "$TRAINER" check "$model" --no-fuse
expect_rc 0 "check --no-fuse succeeds"
expect_in out "fusion: off (--no-fuse or train fuse=false)" "check --no-fuse says fusion is off"
expect_no_match out "\(in conv2d1\)" "with --no-fuse no activation runs inside conv2d1"
unfused_memory=$(sed -n 's/^memory at batch 16: .* = \(.*\)$/\1/p' <<<"$out")
if [ -n "$fused_memory" ] && [ "$fused_memory" != "$unfused_memory" ]; then
    pass "the plan differs without the pre-activations ($fused_memory fused, $unfused_memory not)"
else
    fail "the plan differs without the pre-activations" "'$fused_memory' vs '$unfused_memory'"
fi

train=("$TRAINER" train "$model" --data "idx:$work/data" --device cpu)
run "${train[@]}" --save "$work/fused.safetensors"
expect_rc 0 "training with fusion succeeds"
fused_result=$(last_epoch_result)
run "${train[@]}" --no-fuse --save "$work/unfused.safetensors"
expect_rc 0 "training with --no-fuse succeeds"
if [ "$(last_epoch_result)" = "$fused_result" ]; then pass "both runs print the same last epoch"
else fail "both runs print the same last epoch" "'$fused_result' vs '$(last_epoch_result)'"; fi
if cmp -s "$work/fused.safetensors" "$work/unfused.safetensors"; then
    pass "fused and unfused training save the same weights, byte for byte"
else
    fail "fused and unfused training save the same weights, byte for byte"
fi

sed 's/^train .*/train     batch=16 epochs=2 seed=5 fuse=false/' "$model" >"$work/off.model"
run "$TRAINER" check "$work/off.model"
expect_rc 0 "check of a model with train fuse=false succeeds"
expect_in out "fusion: off" "train fuse=false turns fusion off"

finish

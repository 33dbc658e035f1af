#!/usr/bin/env bash
# `trainer check` says which layers `train --layout nhwc` lays out NHWC on a GPU (checked
# on the CPU, which plans NCHW): the trunk after a one-channel input, the trunk after a
# colour input behind the to_nhwc that converts it (also under bf16, after the input's
# cast), and NCHW throughout where no layer can take NHWC. The check's table and plan stay
# the CPU's: no to_nhwc row.
source "$(dirname "${BASH_SOURCE[0]}")/common.bash"

run "$TRAINER" check models/lenet.model --device cpu
expect_rc 0 "check of lenet succeeds"
expect_in out "layout: NCHW; train --layout nhwc on a GPU lays the 6 layers from conv2d1 to \
maxpool2 out NHWC, as cuDNN's tensor-core convolutions read it (flatten1 copies them back \
into NCHW order)" "a one-channel input needs no conversion"

run "$TRAINER" check models/cifar-resnet.model --device cpu
expect_rc 0 "check of cifar-resnet succeeds"
expect_in out "lays the 29 layers from input1:nhwc to s3.act out NHWC, as cuDNN's \
tensor-core convolutions read it (input1:nhwc converts the input into NHWC first)" \
    "three input channels go NHWC through a conversion"
if grep -q "to_nhwc" <<<"$out"; then
    fail "the CPU's table and plan have no to_nhwc"
else
    pass "the CPU's table and plan have no to_nhwc"
fi

run "$TRAINER" check models/cifar-resnet.model --precision bf16
expect_rc 0 "check of cifar-resnet in bf16 succeeds"
expect_in out "lays the 29 layers from input1:bf16:nhwc to s3.act out NHWC" \
    "under bf16 the conversion follows the input's cast"

model="$work/rgb-reshape.model"
cat >"$model" <<MODEL
input   shape=3x6x6
conv2d  filters=2 kernel=3 pad=same act=relu
reshape shape=72
dense   units=3
loss    softmax_cross_entropy
MODEL
run "$TRAINER" check "$model" --device cpu
expect_rc 0 "check of a colour model with a reshape succeeds"
expect_in out "layout: NCHW throughout (NHWC is for the images between convolutions; no layer \
here can take it)" "a reshape reader keeps the colour model NCHW"

finish

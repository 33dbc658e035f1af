#!/usr/bin/env bash
# models/cifar-resnet.model trains on cifar10:DIR. There is no CIFAR-10 on the machine
# and tests never download: a small binary folder of random images is made here, in the
# layout of the real one (data_batch_1..5.bin, test_batch.bin, 3073-byte records).
source "$(dirname "${BASH_SOURCE[0]}")/common.bash"

run "$TRAINER" check models/cifar-resnet.model
expect_rc 0 "models/cifar-resnet.model is valid"
expect_in out "3x32x32" "its input is a CIFAR-10 image"

# cifar_random FILE COUNT SEED: COUNT records of labels 0..9 and random pixels (seeded:
# common.bash's random_bytes says why).
cifar_random() {
    require_python3 "draw the random images"
    python3 -c 'import random, sys
random.seed(int(sys.argv[2]))
sys.stdout.buffer.write(b"".join(bytes([i % 10]) + random.randbytes(3072)
                                 for i in range(int(sys.argv[1]))))' "$2" "$3" >"$1"
}
mkdir -p "$work/cifar"
for b in 1 2 3 4 5; do cifar_random "$work/cifar/data_batch_$b.bin" 24 "$b"; done
cifar_random "$work/cifar/test_batch.bin" 40 9

run "$TRAINER" train models/cifar-resnet.model --data "cifar10:$work/cifar" --epochs 1 \
    --batch 16 --device cpu
expect_rc 0 "models/cifar-resnet.model trains one epoch on cifar10:DIR"
expect_in out "120 train, 40 test samples" "on all five training batches and the test batch"
expect_match out '^epoch 1/1  train loss [0-9]+\.[0-9]+ acc [0-9.]+  test loss [0-9]+\.[0-9]+ ' \
    "with a finite training and test loss"
expect_no_match out '(^|[^a-z])(nan|inf)([^a-z]|$)' "no NaN or infinity in what it reports"

finish

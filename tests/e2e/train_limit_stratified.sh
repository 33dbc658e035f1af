#!/usr/bin/env bash
# --train-limit N takes a seeded sample that keeps each class's share (within one sample),
# on a class-sorted image folder as on any dataset; the run header says so; the first N
# only with --limit-order first. train_limit_stratified_accuracy.sh trains such a sample of
# Fashion-MNIST's class folders to the accuracy of the IDX files.
source "$(dirname "${BASH_SOURCE[0]}")/common.bash"

require_python3 "write the test PNGs"

# Classes a, b, c of 30, 20 and 10 images, read back in that order.
write_class_pngs "$work/sorted/a" 10 30
write_class_pngs "$work/sorted/b" 120 20
write_class_pngs "$work/sorted/c" 230 10

run "$TRAINER" data info "images:$work/sorted" --train-limit 12
expect_rc 0 "data info takes a limit"
expect_match out "class +0 a +6$" "a gets its share of 12: 30/60 of it, 6"
expect_match out "class +1 b +4$" "b: 20/60, 4"
expect_match out "class +2 c +2$" "c: 10/60, 2"
run "$TRAINER" data info "images:$work/sorted" --train-limit 13
expect_match out "class +0 a +(6|7)$" "shares of 13 (6.5, 4.33, 2.17) within one: a"
expect_match out "class +1 b +(4|5)$" "b"
expect_match out "class +2 c +(2|3)$" "c"
run "$TRAINER" data info "images:$work/sorted" --train-limit 12 --limit-order first
expect_match out "class +0 a +12$" "--limit-order first keeps the first 12, all of class a"
run "$TRAINER" data info "images:$work/sorted" --train-limit 12 --limit-order last
expect_error 2 "--limit-order last: expected stratified or first" "another order is refused"

sed 's/units=10$/units=3/' models/mlp.model >"$work/three.model"
run "$TRAINER" train "$work/three.model" --data "images:$work/sorted" --train-limit 12 \
    --val-split 0.25 --epochs 1 --device cpu --seed 5
expect_rc 0 "train takes the stratified limit"
expect_in out "train-limit: 12 of 60, stratified by class (seed 5)" "the header says how, and the seed"
expect_in out "9 train, 3 val samples" "the validation split is drawn from the 12"

finish

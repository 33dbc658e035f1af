#!/usr/bin/env bash
# Fashion-MNIST exported to class folders (sorted by class when read back) and trained with
# --train-limit 10000 --val-split 0.1 reaches the test accuracy of the IDX files with the
# same limit, within 2 points (the first 10000 files of that folder would be its first
# classes only). train_limit_stratified.sh checks the stratified sample itself.
source "$(dirname "${BASH_SOURCE[0]}")/common.bash"

require_python3 "compare the accuracies"
require_fashion_mnist
run "$TRAINER" data export fashion-mnist "png:$work/fm" --train-limit 20000
expect_rc 0 "Fashion-MNIST exports to class folders"
common=(--train-limit 10000 --val-split 0.1 --epochs 2 --device cpu)
run "$TRAINER" train models/mlp.model --data "images:$work/fm" "${common[@]}"
expect_rc 0 "the exported folder trains with --train-limit 10000"
expect_in out "train-limit: 10000 of 20000, stratified by class (seed 1)" "stratified"
folder_acc=$(sed -n 's/^test loss [0-9.]* acc \([0-9.]*\).*/\1/p' <<<"$out")
run "$TRAINER" train models/mlp.model --data fashion-mnist "${common[@]}"
expect_rc 0 "the IDX files train with the same limit"
idx_acc=$(sed -n 's/^test loss [0-9.]* acc \([0-9.]*\).*/\1/p' <<<"$out")
if [ -n "$folder_acc" ] && [ -n "$idx_acc" ] &&
    python3 -c "import sys; sys.exit(abs($folder_acc - $idx_acc) > 0.02)"; then
    pass "test accuracy from the folder ($folder_acc) within 2 points of the IDX run's ($idx_acc)"
else
    fail "test accuracy from the folder ($folder_acc) is not within 2 points of IDX ($idx_acc)"
fi

finish

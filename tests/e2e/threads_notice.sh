#!/usr/bin/env bash
# --threads beyond the cores this machine has online is said in a notice (1000 on two cores
# was taken without a word), and the run goes on with what was asked; up to the cores, not
# a word. Works on a tiny IDX dataset made here.
source "$(dirname "${BASH_SOURCE[0]}")/common.bash"

cores=$(getconf _NPROCESSORS_ONLN)
if [ -z "$cores" ] || [ "$cores" -ge 1000 ]; then
    echo "SKIP: needs a machine with fewer than 1000 cores online (getconf says '$cores')"
    exit 77
fi
make_dataset "$work/data" 64 16
tiny=(train models/mlp.model --data "idx:$work/data" --epochs 1 --batch 16 --device cpu)

run "$TRAINER" "${tiny[@]}" --threads 1000
expect_rc 0 "--threads 1000 still trains"
expect_match err "^trainer: notice: --threads 1000 is more than the $cores cores? here: " \
    "--threads past the $cores cores here is said in a notice"
expect_match out "^epoch 1/1 " "the run trains its epoch"

run "$TRAINER" "${tiny[@]}" --threads "$cores"
expect_rc 0 "--threads $cores trains"
expect_no_match err "notice: --threads" "--threads up to the cores gets no notice"

finish

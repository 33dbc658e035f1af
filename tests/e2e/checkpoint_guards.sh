#!/usr/bin/env bash
# Guards around --save, --checkpoint, --keep-last and --resume (docs/checkpoints.md,
# docs/cli.md), each checked before or as a run stops, so no training is lost:
# --keep-last without --checkpoint is refused like --checkpoint-every; 'already has 1 epoch'
# is singular.
source "$(dirname "${BASH_SOURCE[0]}")/common.bash"

make_random_dataset "$work/my data" 200 50
write_tiny_model "$work/tiny.model"
data=(--data "idx:$work/my data" --device cpu)

# ---- --keep-last ----
run "$TRAINER" train "$work/tiny.model" "${data[@]}" --epochs 1 --keep-last 2
expect_error 2 "--keep-last needs --checkpoint DIR" "--keep-last without --checkpoint"

# ---- --resume with nothing left to train ----
run "$TRAINER" train "$work/tiny.model" "${data[@]}" --epochs 1 --checkpoint "$work/ck-one"
expect_rc 0 "1 epoch into ck-one"
run "$TRAINER" train "$work/tiny.model" "${data[@]}" --epochs 1 --resume "$work/ck-one"
expect_in err "the checkpoint already has 1 epoch; nothing" "1 epoch, singular"

finish

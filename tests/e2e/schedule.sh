#!/usr/bin/env bash
# Learning-rate schedules from the command line: the header names the schedule, each
# epoch line the rate its last step used; --schedule takes the statement's words and
# gives its errors, named by the option; a cosine min_lr above lr is refused, and a warmup
# longer than the run gets a notice.
source "$(dirname "${BASH_SOURCE[0]}")/common.bash"

make_dataset "$work/data" 256 32
train=("$TRAINER" train models/mlp.model --data "idx:$work/data" --device cpu --epochs 3
    --batch 64)

run "${train[@]}" --schedule 'step every=1 gamma=0.5'
expect_rc 0 "a step schedule trains"
expect_in out "schedule step every=1 unit=epoch gamma=0.5" "the header names the schedule"
expect_match out "^epoch 1/3 .*  lr 0\.001  " "epoch 1 runs at the base rate"
expect_match out "^epoch 2/3 .*  lr 0\.0005  " "epoch 2 at half of it"
expect_match out "^epoch 3/3 .*  lr 0\.00025  " "epoch 3 at a quarter"

run "${train[@]}" --schedule cosine --warmup 2 --min-lr 0.0001
expect_rc 0 "a cosine schedule with warmup trains"
expect_in out "schedule cosine min_lr=0.0001 warmup=2" "the header names it"
expect_match out "^epoch 3/3 .*  lr 0\.0001  " "the last step runs at min_lr"

run "${train[@]}" --schedule cosin
expect_error 2 "--schedule 'cosin': unknown schedule 'cosin'; did you mean 'cosine'?" \
    "a misspelt --schedule gets a suggestion"
run "${train[@]}" --min-lr 0.1
expect_error 2 "--min-lr 0.1 applies to the cosine schedule" "--min-lr needs cosine"

# A cosine min_lr above lr would raise the rate over the run (to 0.1: the loss exploded).
run "${train[@]}" --schedule 'cosine min_lr=0.1'
expect_error 2 "--schedule 'cosine min_lr=0.1': min_lr=0.1 is above the learning rate 0.001" \
    "a cosine min_lr above lr is refused, naming both"
run "${train[@]}" --schedule cosine --min-lr 0.01 --lr 0.005
expect_error 2 "--min-lr 0.01: min_lr=0.01 is above the learning rate 0.005 (--lr 0.005)" \
    "so is one above --lr"
{ cat models/mlp.model; echo "schedule cosine min_lr=0.5"; } >"$work/rising.model"
run "$TRAINER" train "$work/rising.model" --data "idx:$work/data" --device cpu --epochs 1
expect_error 2 "$work/rising.model:11:1: min_lr=0.5 is above the learning rate 0.001" \
    "and the model file's, at its line"

# A warmup longer than the run (3 epochs of 4 steps) is run as asked, with a word.
run "${train[@]}" --warmup 99999999999
expect_rc 0 "a warmup longer than the run trains"
expect_in err "warmup of 99999999999 steps is longer than the run's 12; the rate rises only" \
    "with a notice that the rate never reaches lr"
run "${train[@]}" --warmup 12
expect_no_match err "warmup of" "a warmup that ends with the run gets none"

finish

#!/usr/bin/env bash
# Learning-rate schedules from the command line: the header names the schedule, each
# epoch line the rate its last step used; --schedule takes the statement's words and
# gives its errors, named by the option.
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

finish

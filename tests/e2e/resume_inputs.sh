#!/usr/bin/env bash
# A resumed run feeds its samples as the checkpoint's run did. Checkpoints record the
# validation split (val_split, val_split_seed, train_limit) and the normalization; a resume
# that would draw another split is refused (exit 2), as its validation samples would be
# ones the checkpoint was trained on (or it would train on those it was validated on), and
# so is another normalization. `normalize auto` computed on other data takes the recorded
# mean and std, with a notice. Before, each of these resumed silently: --val-split added at
# the resume validated on trained samples, and a forgotten --normalize auto changed every
# input the weights saw.
source "$(dirname "${BASH_SOURCE[0]}")/common.bash"
require_fashion_mnist

train=("$TRAINER" train models/mlp.model --device cpu --train-limit 600 --test-limit 100)

run "${train[@]}" --epochs 1 --val-split 0.2 --seed 7 --checkpoint "$work/split"
expect_rc 0 "one epoch holding out --val-split 0.2 with seed 7"
checkpoint=$(ls "$work"/split/step-*.safetensors | tail -n 1)

run "${train[@]}" --epochs 2 --resume "$work/split"
expect_error 2 "$checkpoint: the checkpoint's run held out --val-split 0.2 with seed 7 of \
600 training samples (--train-limit); this run holds out no validation split: it would \
train on the samples the checkpoint's run validated on" "the split dropped at the resume"
expect_in err "hint: resume with the run's data options (--val-split 0.2 --seed 7 \
--train-limit 600), or start from its weights with \`trainer train models/mlp.model \
--init-from $checkpoint\`" "the hint gives the run's options, or --init-from"
expect_no_match out '^epoch ' "nothing is trained"

run "${train[@]}" --epochs 2 --val-split 0.2 --resume "$work/split"
expect_error 2 "held out --val-split 0.2 with seed 7 of 600 training samples \
(--train-limit); this run holds out --val-split 0.2 with seed 1 of 600 training \
samples (--train-limit): its validation split would hold samples the checkpoint was trained on" \
    "the same fraction drawn with another seed (the model file's) is another split"
run "$TRAINER" train models/mlp.model --device cpu --train-limit 500 --test-limit 100 \
    --epochs 2 --val-split 0.2 --seed 7 --resume "$work/split"
expect_error 2 "this run holds out --val-split 0.2 with seed 7 of 500" \
    "another --train-limit is another split"

run "${train[@]}" --epochs 2 --val-split 0.2 --seed 7 --resume "$work/split"
expect_rc 0 "the run's own options resume"
expect_in out "epoch 2/2" "and train the second epoch"

# A --train-limit at or past the training set's size cuts nothing: the same split as none.
make_dataset "$work/small" 100 10
small=("$TRAINER" train models/mlp.model --data "idx:$work/small" --device cpu --batch 16
    --val-split 0.2)
run "${small[@]}" --epochs 1 --checkpoint "$work/small-ck"
expect_rc 0 "a run of 100 samples holding out a fifth, no --train-limit"
run "${small[@]}" --epochs 2 --resume "$work/small-ck" --train-limit 5000
expect_rc 0 "resumed with --train-limit 5000, which cuts nothing: the same split"
run "$TRAINER" eval models/mlp.model --data "idx:$work/small" --device cpu --val-split 0.2 \
    --train-limit 100 --weights "$(ls "$work"/small-ck/step-*.safetensors | tail -n 1)"
expect_rc 0 "eval with --train-limit 100 of 100"
expect_no_match err "another split" "draws the run's split, with no notice"
# The same options on other training data (here 90 samples for 100; a bad image fixed, a
# CSV file cut) draw another split: the checkpoint records how many samples it was drawn
# from (val_split_of).
make_dataset "$work/fewer" 90 10
run "${small[@]}" --epochs 2 --resume "$work/small-ck" --data "idx:$work/fewer"
expect_error 2 "the checkpoint's run drew its validation split from 100 training samples, this \
run from 90: the same options draw another split" "a resume on other training data is refused"
run "$TRAINER" eval models/mlp.model --data "idx:$work/fewer" --device cpu --val-split 0.2 \
    --weights "$(ls "$work"/small-ck/step-*.safetensors | tail -n 1)"
expect_rc 0 "eval on other training data measures as asked"
expect_in err "was trained holding out its validation split of 100 training samples; the same \
options draw another split of the 90 here" "with a notice"

# A run without a split records that too: adding one at the resume is refused.
run "${train[@]}" --epochs 1 --checkpoint "$work/whole"
expect_rc 0 "one epoch without a validation split"
run "${train[@]}" --epochs 2 --val-split 0.1 --resume "$work/whole"
expect_error 2 "the checkpoint's run held out no validation split; this run holds out \
--val-split 0.1 with seed 1 of 600 training samples (--train-limit): its validation \
split would hold samples the checkpoint was trained on" "a split added at the resume"
expect_in err "hint: resume with the run's data options (without --val-split)" \
    "the hint says to leave it out"

# Normalization: another one is refused; auto on other data takes the recorded values.
run "${train[@]}" --epochs 1 --normalize auto --checkpoint "$work/auto"
expect_rc 0 "one epoch with --normalize auto"
recorded=$(sed -n 's/^normalize: \(mean [0-9.]* std [0-9.]*\) .*/\1/p' <<<"$out")
checkpoint=$(ls "$work"/auto/step-*.safetensors | tail -n 1)
run "${train[@]}" --epochs 2 --resume "$work/auto"
expect_error 2 "$checkpoint: the checkpoint's run normalized its inputs with $recorded; this run \
with none: the weights would see other inputs than they were trained on" \
    "--normalize auto forgotten at the resume"
expect_in err "hint: resume with the run's normalize statement or --normalize option \
(--normalize auto, if the run computed it)" "the hint names --normalize auto"
run "${train[@]}" --epochs 2 --resume "$work/auto" --normalize "mean=0.5 std=0.5"
expect_error 2 "this run with mean 0.5 std 0.5" "other values given are refused"
run "${train[@]}" --epochs 2 --resume "$work/auto" --normalize auto
expect_rc 0 "--normalize auto on the same data resumes"
expect_no_match err "normalize auto: resuming" "with no notice: the values are the same"
run "$TRAINER" train models/mlp.model --device cpu --train-limit 700 --test-limit 100 \
    --epochs 2 --resume "$work/auto" --normalize auto
expect_rc 0 "--normalize auto on more data resumes"
expect_in err "trainer: notice: normalize auto: resuming with the checkpoint's $recorded, which \
its weights were trained with (this run's training data gives mean" \
    "with the recorded values, and a notice"
expect_in out "normalize: $recorded (1 value, as recorded in the checkpoint resumed)" \
    "the run's header says which values it uses"

run "${train[@]}" --epochs 1 --checkpoint "$work/plain"
expect_rc 0 "one epoch without normalization"
run "${train[@]}" --epochs 2 --resume "$work/plain" --normalize auto
expect_error 2 "normalized its inputs with none; this run with mean" \
    "normalization added at the resume is refused"
expect_in err "(--normalize none)" "the hint names --normalize none"

# The learning rate, schedule and clipping may change on resume (the options are the
# user's), but not silently: the checkpoint records its run's (optimizer_settings,
# schedule) and the resume names what differs.
run "${train[@]}" --epochs 3 --resume "$work/plain" --checkpoint "$work/plain" --lr 0.01 \
    --schedule cosine
expect_rc 0 "a resume with another --lr and --schedule trains"
expect_in err "trainer: notice: resuming with optimizer adam lr=0.01 beta1=0.9 beta2=0.999 \
eps=1e-08 weight_decay=0; the checkpoint's run had adam lr=0.001 beta1=0.9" "names the new lr"
expect_in err "trainer: notice: resuming with schedule cosine min_lr=0; the checkpoint's run \
had constant" "and the new schedule"
run "${train[@]}" --epochs 4 --resume "$work/plain" --lr 0.01 --schedule cosine
expect_rc 0 "resumed again with those settings"
expect_no_match err "resuming with optimizer" "which its checkpoint records: no notice"
expect_no_match err "resuming with schedule" "for the schedule either"

finish

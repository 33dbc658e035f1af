#!/usr/bin/env bash
# `trainer eval --val-split F` evaluates the validation split `train --val-split F` held
# out: the same samples (same seed, same --train-limit, which the weights record), so it
# prints the loss and accuracy the run's last epoch printed; a spec without a test split
# (a png: folder of classes, a CSV file) is evaluated that way, and without --val-split it
# is refused with a hint that eval can follow.
source "$(dirname "${BASH_SOURCE[0]}")/common.bash"
require_fashion_mnist
require_python3 "write the CSV file"

# A png: folder of classes, no train/ or test/: all training data.
run "$TRAINER" data export fashion-mnist "png:$work/ex" --train-limit 300 --test-limit 1
mv "$work/ex/train" "$work/classes"

# The val figures of the run's last epoch, "val loss L acc A", against eval's line.
val_of_run() { sed -n 's/^epoch .*  val loss \([0-9.]*\) acc \([0-9.]*\) .*/\1 \2/p' <<<"$out"; }
val_of_eval() { sed -n 's/^val loss \([0-9.]*\)  accuracy \([0-9.]*\) .*/\1 \2/p' <<<"$out"; }

# check_same_split SPEC WHAT OPTIONS...: trains with OPTIONS, then evaluates the saved
# weights with the same OPTIONS; the two val figures must be equal.
check_same_split() {
    local spec=$1 what=$2
    shift 2
    run "$TRAINER" train models/mlp.model --data "$spec" --device cpu --epochs 1 \
        --save "$work/w.safetensors" "$@"
    local trained
    trained=$(val_of_run)
    [ "$rc" -eq 0 ] || { fail "$what: training failed"; return; }
    run "$TRAINER" eval models/mlp.model --weights "$work/w.safetensors" --data "$spec" \
        --device cpu "$@"
    if [ "$rc" -eq 0 ] && [ -n "$trained" ] && [ "$(val_of_eval)" = "$trained" ]; then
        pass "$what: eval measures the run's validation split ($trained)"
    else fail "$what: eval's validation figures differ from the run's" "run: '$trained'"; fi
}

check_same_split "png:$work/classes" "png: folder of classes" --val-split 0.2
expect_in out "(60 samples of $work/classes, held out by --val-split 0.2 with seed 1)" \
    "eval says which samples it measured"
check_same_split "png:$work/classes" "another seed and --train-limit" --val-split 0.25 \
    --seed 9 --train-limit 200
expect_in out "(50 samples of $work/classes, held out of 200 by --val-split 0.25 \
with seed 9)" "a quarter of 200 samples"
recorded=$(val_of_eval)

# The weights record the split (val_split, val_split_seed, train_limit): eval draws it again
# without the run's --seed and --train-limit. Before, it drew another split with the model
# file's seed and measured mostly samples the weights were trained on, without a word.
eval_classes=("$TRAINER" eval models/mlp.model --weights "$work/w.safetensors"
    --data "png:$work/classes" --device cpu)
run "${eval_classes[@]}" --val-split 0.25
if [ "$rc" -eq 0 ] && [ "$(val_of_eval)" = "$recorded" ]; then
    pass "--val-split alone takes the seed and limit the weights record ($recorded)"
else fail "--val-split alone takes the seed and limit the weights record" "$(val_of_eval)"; fi
expect_no_match err "notice" "the recorded split draws no notice"
run "${eval_classes[@]}"
if [ "$rc" -eq 0 ] && [ "$(val_of_eval)" = "$recorded" ]; then
    pass "a spec without a test split evaluates the split the weights record"
else fail "a spec without a test split evaluates the split the weights record" "$err"; fi
# Another split is measured as asked, with a notice that its samples are others.
run "${eval_classes[@]}" --val-split 0.25 --seed 4
expect_rc 0 "another seed than the run's is evaluated"
expect_in err "trainer: notice: $work/w.safetensors was trained holding out --val-split 0.25 \
with seed 9 of 200 training samples (--train-limit); this eval draws --val-split 0.25 \
with seed 4 of 200 training samples (--train-limit), another split, which holds \
samples the weights were trained on" "with a notice"
expect_in out "with seed 4)" "and says which split it measured"

# --limit-order first kept the first N samples before the split: the weights record it
# (train_limit_order) and eval draws the split from the same N. Before, eval cut the data
# to a seeded sample with each class's share, and measured another split without a word.
run "$TRAINER" train models/mlp.model --data "png:$work/classes" --device cpu --epochs 1 \
    --save "$work/first.safetensors" --val-split 0.25 --train-limit 200 --limit-order first
trained=$(val_of_run)
eval_first=("$TRAINER" eval models/mlp.model --weights "$work/first.safetensors"
    --data "png:$work/classes" --device cpu)
run "${eval_first[@]}"
if [ "$rc" -eq 0 ] && [ -n "$trained" ] && [ "$(val_of_eval)" = "$trained" ]; then
    pass "eval draws the split of the first 200 samples, as the run did ($trained)"
else fail "eval draws the split of the first 200 samples, as the run did" "run: '$trained'"; fi
expect_in out "(50 samples of $work/classes, held out of the first 200 by --val-split 0.25 \
with seed 1)" "and says so"
run "${eval_first[@]}" --limit-order stratified
expect_in err "trainer: notice: $work/first.safetensors was trained holding out --val-split \
0.25 with seed 1 of 200 training samples (--train-limit, --limit-order first); this eval \
draws --val-split 0.25 with seed 1 of 200 training samples (--train-limit), another split" \
    "--limit-order stratified draws another split, with a notice"

# The classes are the folders' names in sorted order: without the first folder every label
# shifts. The weights record the names: eval says so (it measured 0.0000 without a word), a
# resume is refused (it trained on the shifted labels).
mkdir "$work/fewer"
for folder in "$work"/classes/*/; do
    case "$(basename "$folder")" in 0_*) ;; *) cp -r "$folder" "$work/fewer/" ;; esac
done
run "$TRAINER" eval models/mlp.model --weights "$work/w.safetensors" --data "png:$work/fewer" \
    --device cpu --val-split 0.25
expect_rc 0 "eval on a folder of classes without the first one still measures"
expect_in err "trainer: notice: $work/w.safetensors: label 0 was class '0_T-shirt_top' when \
these weights were trained, but png:$work/fewer names it '1_Trouser' (10 classes there, 9 \
here)" "with a notice that the labels shifted"
run "$TRAINER" train models/mlp.model --data "png:$work/classes" --device cpu --epochs 1 \
    --val-split 0.2 --checkpoint "$work/classes-ck"
expect_rc 0 "a run on the folder of classes with checkpoints"
run "$TRAINER" train models/mlp.model --data "png:$work/fewer" --device cpu --epochs 2 \
    --val-split 0.2 --resume "$work/classes-ck"
expect_error 2 "label 0 was class '0_T-shirt_top' when these weights were trained, but \
png:$work/fewer names it '1_Trouser'" "a resume on the shifted classes is refused"
# Fashion-MNIST's own names and the folders `data export` writes are one set of classes.
run "$TRAINER" eval models/mlp.model --weights "$work/w.safetensors" --device cpu \
    --test-limit 100
expect_rc 0 "the exported folders' weights evaluate on fashion-mnist"
expect_no_match err "label 0 was class" "without a notice: 0_T-shirt_top is T-shirt/top"
# Fashion-MNIST has a test split; --val-split still picks the run's validation split.
check_same_split fashion-mnist "a spec with a test split" --val-split 0.1 --train-limit 400

python3 - "$work/t.csv" <<'PY'
import random, sys
random.seed(3)
with open(sys.argv[1], "w") as f:
    f.write(",".join(["label"] + ["f%d" % i for i in range(784)]) + "\n")
    for i in range(120):
        f.write(",".join([str(i % 10)] + ["%.3f" % random.random() for _ in range(784)]) + "\n")
PY
check_same_split "csv:$work/t.csv" "csv: file" --val-split 0.25
# The split the weights record wins over the model file's `data val_split=`: it is the one
# their run held out (--val-split overrode the file's there).
cp models/mlp.model "$work/split.model"
echo "data val_split=0.5" >>"$work/split.model"
run "$TRAINER" train "$work/split.model" --data "csv:$work/t.csv" --device cpu --epochs 1 \
    --save "$work/split.safetensors" --val-split 0.25
trained=$(val_of_run)
run "$TRAINER" eval "$work/split.model" --weights "$work/split.safetensors" \
    --data "csv:$work/t.csv" --device cpu
if [ "$rc" -eq 0 ] && [ -n "$trained" ] && [ "$(val_of_eval)" = "$trained" ]; then
    pass "eval takes the weights' split over the model file's val_split= ($trained)"
else fail "eval takes the weights' split over the model file's val_split=" "$out $err"; fi
expect_in out "held out by --val-split 0.25 with seed 1)" "and says so"

# Without --val-split, a spec with no test split is refused, with a hint eval can follow,
# when the weights record no split either (trained on a dataset with a test split).
run "$TRAINER" train models/mlp.model --device cpu --epochs 1 --train-limit 100 \
    --test-limit 10 --save "$work/plain.safetensors"
expect_rc 0 "weights trained without a validation split"
run "$TRAINER" eval models/mlp.model --weights "$work/plain.safetensors" \
    --data "png:$work/classes" --device cpu
expect_error 2 "dataset png:$work/classes has no test split to evaluate on" \
    "eval of a folder of classes without --val-split is refused"
expect_in err "give eval the same --val-split F" "the hint names eval's own option"
run "$TRAINER" eval models/mlp.model --weights "$work/plain.safetensors" \
    --data "csv:$work/t.csv" --device cpu
expect_error 2 "has no test split to evaluate on" "so is a CSV file's"

# Options that would be ignored are refused rather than silently measure something else.
run "$TRAINER" eval models/mlp.model --weights "$work/w.safetensors" --data "csv:$work/t.csv" \
    --device cpu --val-split 0.25 --test-limit 10
expect_error 2 "--test-limit 10 limits the test split, but --val-split 0.25" \
    "--test-limit with --val-split is refused"
run "$TRAINER" eval models/mlp.model --weights "$work/w.safetensors" --device cpu --seed 4
expect_error 2 "--seed 4 chooses the validation split with --val-split" \
    "--seed without --val-split is refused"

finish

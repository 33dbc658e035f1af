#!/usr/bin/env bash
# png:DIR from the command line: class folders train, class names are printed once, a
# broken image stops the run naming its file, or with --on-bad-sample skip is left out and
# counted at the end; one folder of classes trains with --val-split.
source "$(dirname "${BASH_SOURCE[0]}")/common.bash"

require_python3 "write the test PNGs"

# DIR/{train,test}/{cat,dog}/N.png: 28x28 gray, cats dark and dogs bright.
for split in train test; do
    count=20
    [ "$split" = test ] && count=6
    write_class_pngs "$work/pets/$split/cat" 10 "$count"
    write_class_pngs "$work/pets/$split/dog" 200 "$count"
done

train=("$TRAINER" train models/mlp.model --epochs 1 --batch 8 --device cpu)
sed 's/units=10$/units=2/' models/mlp.model >"$work/two.model"
two=("$TRAINER" train "$work/two.model" --epochs 1 --batch 8 --device cpu)

run "${two[@]}" --data "png:$work/pets"
expect_rc 0 "png:DIR of class folders trains"
expect_in out "data $work/pets: 40 train, 12 test samples" \
    "it reads both splits, and the header names the spec's folder (not its train/)"
expect_in out "classes: 0=cat 1=dog" "the class names are printed, sorted"
if [ "$(grep -c '^classes:' <<<"$out")" -eq 1 ]; then pass "once"
else fail "the class names are printed more than once"; fi
run "$TRAINER" check "$work/two.model" --data "png:$work/pets"
expect_in out "data $work/pets: valid, 40 train, 12 test samples" "so does check's verdict"

printf 'not a png' >"$work/pets/train/dog/zz.png"
run "${two[@]}" --data "png:$work/pets"
expect_error 2 "$work/pets/train/dog/zz.png: not a PNG file" "a broken image is named"
run "${two[@]}" --data "png:$work/pets" --on-bad-sample skip
expect_rc 0 "--on-bad-sample skip trains past it"
expect_in out "skipped 1 unreadable sample (--on-bad-sample skip)" "and counts it at the end"
run "${two[@]}" --data "png:$work/pets" --on-bad-sample ignore
expect_error 2 "--on-bad-sample ignore: expected fail or skip" "an unknown choice is refused"

rm "$work/pets/train/dog/zz.png"
mkfifo "$work/pets/train/dog/zz.png"
run timeout 10 "${two[@]}" --data "png:$work/pets"
expect_error 2 "$work/pets/train/dog/zz.png: cannot read: not a regular file" \
    "a FIFO named like a PNG is refused, not read forever"

run "$TRAINER" check "$work/two.model" --data "png:$work/pets/train" --on-bad-sample skip
expect_error 2 "has no test split" "one folder of classes without --val-split asks for one"
run "${two[@]}" --data "png:$work/pets/train" --val-split 0.25 --on-bad-sample skip
expect_rc 0 "one folder of classes trains with --val-split"
expect_in out "30 train, 10 val samples" "a quarter is held out, no test split"

# A mistyped folder is named as missing. It was "has no test split to evaluate on", with a
# hint to add --val-split, and only that run named the path.
for command in train check; do
    run "$TRAINER" "$command" models/mlp.model --device cpu --data "png:$work/no-such-folder"
    expect_error 2 "$work/no-such-folder: cannot open the dataset folder: No such file or \
directory" "$command with a missing png: folder names the folder"
    expect_no_match err "no test split" "$command does not blame a missing test split"
done

finish

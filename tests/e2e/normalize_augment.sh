#!/usr/bin/env bash
# Normalization and augmentation (`normalize`, `augment`, --normalize, --augment):
# - normalize auto reports the training split's mean and std, the weights record them, and
#   eval and predict normalize by them: eval gives the last epoch's test figures exactly;
# - augmentation is seeded: two runs with one seed end with the same weights, byte for
#   byte, another seed or no augmentation with others; a run resumed from its epoch-1
#   checkpoint ends as the run that never stopped (each epoch's crops follow (seed, epoch));
# - what does not fit is refused at the statement: values for 2 channels of a gray model, a
#   crop as wide as the image, augmenting CSV features, normalize auto evaluated with
#   weights that record none;
# - predict prints the class names a png:DIR run recorded.
source "$(dirname "${BASH_SOURCE[0]}")/common.bash"

make_random_dataset "$work/data" 300 60
data=(--data "idx:$work/data" --device cpu)

# ---- normalize auto: reported, recorded, used by eval ----
run "$TRAINER" train models/mlp.model "${data[@]}" --epochs 1 --normalize auto \
    --save "$work/auto.safetensors"
expect_rc 0 "normalize auto trains"
# %g drops trailing zeros: a mean of 0.5000 prints as "0.5" (seen in CI on /dev/urandom data).
auto_pattern='^normalize: mean 0\.(49[0-9]*|5|50[0-9]*) std 0\.(28|29)[0-9]* '
auto_pattern+='\(1 value, computed on 300 training samples\)$'
expect_match out "$auto_pattern" \
    "the mean and std of uniform random bytes / 255 (0.5 and 0.29) are reported"
trained=$(grep '^epoch 1/1' <<<"$out" | sed -E 's/.*test loss ([0-9.]+) acc ([0-9.]+).*/\1 \2/')
run "$TRAINER" eval models/mlp.model "${data[@]}" --weights "$work/auto.safetensors"
expect_rc 0 "eval reads the recorded normalization"
expect_in out "(1 value, as recorded in $work/auto.safetensors)" "eval says where it came from"
evaluated=$(sed -nE 's/^test loss ([0-9.]+)  accuracy ([0-9.]+).*/\1 \2/p' <<<"$out")
if [ -n "$trained" ] && [ "$trained" = "$evaluated" ]; then
    pass "eval gives the training run's test loss and accuracy ($evaluated)"
else
    fail "eval gives the training run's test figures" "train: '$trained', eval: '$evaluated'"
fi
# Without the recorded values eval would see other inputs: a weights file without them and
# a model that says auto is refused rather than evaluated wrongly.
run "$TRAINER" train models/mlp.model "${data[@]}" --epochs 1 --save "$work/plain.safetensors"
cp models/mlp.model "$work/auto.model"
echo "normalize auto" >>"$work/auto.model"
run "$TRAINER" eval "$work/auto.model" "${data[@]}" --weights "$work/plain.safetensors"
expect_error 2 "normalize auto, but $work/plain.safetensors records no normalization" \
    "normalize auto with weights that record none is refused"
expect_in err "$work/auto.model:$(wc -l <"$work/auto.model"):1:" "the error points at the statement"

# ---- augmentation: seeded, reproducible, resumable ----
write_tiny_model "$work/aug.model"
cat >>"$work/aug.model" <<'MODEL'
normalize mean=0.5 std=0.25
augment   crop=3 flip=true
MODEL
aug=("$TRAINER" train "$work/aug.model" "${data[@]}" --epochs 2)
run "${aug[@]}" --save "$work/a1.safetensors" --checkpoint "$work/ck"
expect_rc 0 "an augmented run trains"
expect_in out "normalize: mean 0.5 std 0.25 (1 value, given)" "given values are reported"
expect_in out "augment: crop=3 flip=true (training samples only, seeded by the run's seed)" \
    "the augmentation is reported"
run "${aug[@]}" --save "$work/a2.safetensors"
if cmp -s "$work/a1.safetensors" "$work/a2.safetensors"; then
    pass "the same seed gives the same weights, byte for byte"
else
    fail "the same seed gives the same weights" "a1 and a2 differ"
fi
run "${aug[@]}" --seed 9 --save "$work/a3.safetensors"
run "${aug[@]}" --augment none --save "$work/a4.safetensors"
if ! cmp -s "$work/a1.safetensors" "$work/a3.safetensors" &&
    ! cmp -s "$work/a1.safetensors" "$work/a4.safetensors"; then
    pass "another seed, or --augment none, trains other weights"
else
    fail "another seed, or --augment none, trains other weights" "the files are equal"
fi
# Epoch 1's checkpoint resumed for epoch 2 ends where the uninterrupted run ended.
first=$(ls "$work/ck"/step-*.safetensors | sort | head -n 1)
run "${aug[@]}" --resume "$first" --save "$work/resumed.safetensors"
expect_rc 0 "the augmented run resumes from epoch 1"
if cmp -s "$work/a1.safetensors" "$work/resumed.safetensors"; then
    pass "resumed at epoch 1, it ends with the uninterrupted run's weights"
else
    fail "resumed at epoch 1, it ends with the uninterrupted run's weights" "files differ"
fi

# ---- what does not fit ----
cp models/lenet.model "$work/rgb.model"
echo "normalize mean=0.5,0.4 std=0.2,0.2" >>"$work/rgb.model"
run "$TRAINER" train "$work/rgb.model" "${data[@]}" --epochs 1
expect_error 2 "normalization gives 2 values, but the data has 1 channel" \
    "two values for a gray dataset are refused"
expect_in err "$work/rgb.model:$(wc -l <"$work/rgb.model"):1:" "at the statement's line"
# The option's error names the option, not line 1 of the model file (a comment there).
run "$TRAINER" train models/mlp.model "${data[@]}" --epochs 1 --augment 'crop=28'
expect_error 2 "error: --augment 'crop=28': augment crop=28 shifts" \
    "a crop as wide as the image is refused, naming the option"
expect_no_match err "mlp\.model:" "the --augment error points at no model-file line"
run "$TRAINER" check models/mlp.model "${data[@]}" --augment 'crop=28'
expect_error 2 "error: --augment 'crop=28': augment crop=28 shifts" "check --data refuses it too"
run "$TRAINER" train models/mlp.model "${data[@]}" --epochs 1 --normalize 'mean=0.5,0.4 std=0.2,0.2'
expect_error 2 "error: --normalize: normalization gives 2 values, but the data has 1 channel" \
    "two --normalize values for a gray dataset name the option"
expect_no_match err "mlp\.model:" "the --normalize error points at no model-file line"
run "$TRAINER" train models/mlp.model "${data[@]}" --normalize bogus
expect_error 2 "--normalize 'bogus': unknown normalization 'bogus'" "an unknown --normalize"
run "$TRAINER" train models/mlp.model "${data[@]}" --normalize 'mean=0.5 std=0'
expect_error 2 "every std must be above 0" "a std of 0 is refused"
printf 'label,a,b\n0,1,2\n1,3,4\n0,5,6\n1,7,8\n' >"$work/t.csv"
cat >"$work/csv.model" <<'MODEL'
input shape=2
dense units=2
loss softmax_cross_entropy
MODEL
run "$TRAINER" train "$work/csv.model" --data "csv:$work/t.csv" --val-split 0.25 --device cpu \
    --augment 'flip=true'
expect_error 2 "augmentation (crop, flip) needs images" "augmenting CSV features is refused"
run "$TRAINER" train "$work/csv.model" --data "csv:$work/t.csv" --val-split 0.25 --device cpu \
    --normalize auto
expect_rc 0 "CSV features are normalized one feature at a time"
# Column b is column a + 1: the same std, a mean 1 higher, whichever row is held out.
csv_pattern='^normalize: mean ([0-9.]+),([0-9.]+) std ([0-9.]+),([0-9.]+) '
csv_pattern+='\(2 values, computed on 3 training samples\)$'
expect_match out "$csv_pattern" "a mean and std per feature over the 3 training rows"
read -r mean_a mean_b std_a std_b < <(grep -E "$csv_pattern" <<<"$out" |
    sed -E "s/$csv_pattern/\1 \2 \3 \4/")
if [ -n "${mean_a:-}" ] && [ "$std_a" = "$std_b" ] &&
    awk -v a="$mean_a" -v b="$mean_b" 'BEGIN { exit !(b - a > 0.999 && b - a < 1.001) }'; then
    pass "feature b's mean is a's + 1 and their std the same"
else
    fail "feature b's mean is a's + 1 and their std the same" \
        "${mean_a:-?} ${mean_b:-?} ${std_a:-?} ${std_b:-?}"
fi

# ---- predict prints the class names a png:DIR run recorded ----
mkdir -p "$work/png"
run "$TRAINER" data export "idx:$work/data" "png:$work/png" --limit 40
expect_rc 0 "a small png:DIR exported"
rm -rf "$work/png/test"
mv "$work/png/train" "$work/png/all"
run "$TRAINER" train models/mlp.model --data "png:$work/png/all" --val-split 0.25 --epochs 1 \
    --device cpu --save "$work/png.safetensors"
expect_rc 0 "trains on the png:DIR"
image=$(ls "$work/png/all/3"/*.png | head -n 1)
run "$TRAINER" predict models/mlp.model --weights "$work/png.safetensors" --top 10 "$image"
expect_rc 0 "predict runs"
expect_match out '^  3 +[0-9.e-]+$' "class 3's recorded name (its folder, '3') is printed"
expect_no_match out 'T-shirt' "not Fashion-MNIST's names for 10 classes"

finish

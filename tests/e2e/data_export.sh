#!/usr/bin/env bash
# `trainer data export SPEC images:DIR` (png:DIR, its alias, too): Fashion-MNIST written as
# PNG class folders trains from images:DIR to what the IDX files give (issue 14), CIFAR-10
# comes out as RGB, labels round-trip through the folder names, and a folder that is not
# empty is refused, as is an export into its own source.
source "$(dirname "${BASH_SOURCE[0]}")/common.bash"
require_fashion_mnist
require_python3 "write the class-sorted IDX copy"

train_limit=3000 test_limit=1000
png="$work/fashion-png"
# The first N of each split (--limit-order first), which the IDX copy below holds too.
run "$TRAINER" data export fashion-mnist "images:$png" --train-limit $train_limit \
    --test-limit $test_limit --limit-order first
expect_rc 0 "a Fashion-MNIST subset is exported to images:DIR, the documented spelling"
expect_in out "train: $train_limit images of 1x28x28 in 10 class folders under $png/train" \
    "the training split is written"
expect_in out "test: $test_limit images of 1x28x28 in 10 class folders" "and the test split"
expect_in out "read it with --data images:$png" "the way back is the documented spec, images:DIR"
if [ -f "$png/train/0_T-shirt_top/00001.png" ] && [ -d "$png/test/9_Ankle_boot" ]; then
    pass "folders are named LABEL_CLASS, files by the sample's index"
else fail "the class folders are not 0_T-shirt_top ... 9_Ankle_boot" "$(ls "$png/train")"; fi

run "$TRAINER" data export fashion-mnist "images:$png" --limit 5
expect_error 2 "$png: the folder is not empty" "a folder that is not empty is refused"
run "$TRAINER" data export fashion-mnist "$work/plain"
expect_error 2 "writes images:DIR, not '$work/plain'" "a folder without images: is refused"
run "$TRAINER" data export fashion-mnist "images:"
expect_error 2 "writes images:DIR, not 'images:'" "and so is images: without a folder"

# An export into its own source (the same folder, by any path or link; one inside it; one
# holding it) is refused before anything is written: --force once rewrote 65 images as 123.
cp -r "$png/test" "$work/src"
ln -s src "$work/src-link"
count_pngs() { find "$1" -name '*.png' | wc -l; }
before=$(count_pngs "$work/src")
run "$TRAINER" data export "png:$work/src" "png:$work/src" --force
expect_error 2 "the destination $work/src is $work/src, which png:$work/src reads from" \
    "an export into its own source folder is refused"
run "$TRAINER" data export "png:$work/src-link" "png:$work/./src/" --force
expect_error 2 "is $work/src, which png:$work/src-link reads" "so is one through a link"
run "$TRAINER" data export "png:$work/src" "png:$work/src/new/more"
expect_error 2 "the destination $work/src/new/more lies inside $work/src" \
    "and one into a new folder inside it"
run "$TRAINER" data export "png:$work/src/0_T-shirt_top/.." "png:$work" --force
expect_error 2 "the destination $work holds $work/src" "and one into a folder holding it"
if [ "$(count_pngs "$work/src")" = "$before" ] && [ ! -e "$work/src/new" ]; then
    pass "the source is left as it was ($before images)"
else fail "the source changed" "$(count_pngs "$work/src") images, $before before"; fi

# A destination of ~1900 folders yet to be made: finding its real path to be once took a
# recursion per missing folder, two 4 KB buffers a frame, and overflowed the stack.
deep="$work/deep$(printf '/a%.0s' $(seq 1900))"
run "$TRAINER" data export "png:$work/src" "png:$deep" --limit 2
if [ "$rc" -eq 0 ] || { [ "$rc" -eq 2 ] && grep -q '^trainer: error: ' <<<"$err"; }; then
    pass "a destination 1900 new folders deep is checked without a crash (exit $rc)"
else fail "a deep new destination crashed the check" "exit $rc"; fi

# The same samples as IDX files, each split sorted by label (stably), which is the order
# png:DIR reads them in: class folders in label order, files in index order.
python3 - "$FASHION_DIR" "$work/sorted" $train_limit $test_limit <<'PY'
import gzip, os, struct, sys
src, dst, limits = sys.argv[1], sys.argv[2], {"train": int(sys.argv[3]), "t10k": int(sys.argv[4])}
os.makedirs(dst)
def read(name):
    path = os.path.join(src, name)
    opener = gzip.open if not os.path.exists(path) else open
    with opener(path if os.path.exists(path) else path + ".gz", "rb") as f:
        return f.read()
for split, n in limits.items():
    images = read(split + "-images-idx3-ubyte")[16:]
    labels = read(split + "-labels-idx1-ubyte")[8:]
    order = sorted(range(n), key=lambda i: labels[i])
    with open(os.path.join(dst, split + "-images-idx3-ubyte"), "wb") as f:
        f.write(struct.pack(">IIII", 0x803, n, 28, 28))
        f.write(b"".join(images[i * 784:(i + 1) * 784] for i in order))
    with open(os.path.join(dst, split + "-labels-idx1-ubyte"), "wb") as f:
        f.write(struct.pack(">II", 0x801, n) + bytes(labels[i] for i in order))
PY

train=("$TRAINER" train models/mlp.model --epochs 2 --seed 7 --device cpu)
run "${train[@]}" --data "images:$png"
expect_rc 0 "models/mlp.model trains from the exported images:DIR"
expect_in out "$train_limit train, $test_limit test samples" "on every exported image"
from_png=$(last_epoch_result)
png_acc=$(sed -n 's/.* test loss [0-9.]* acc \([0-9.]*\).*/\1/p' <<<"$from_png")

# Same pixels, same labels, same order: the runs must agree to the last digit.
run "${train[@]}" --data "idx:$work/sorted"
from_sorted=$(last_epoch_result)
if [ "$rc" -eq 0 ] && [ "$from_png" = "$from_sorted" ]; then
    pass "png:DIR trains exactly as the same samples in IDX files ($from_png)"
else fail "png:DIR and the class-sorted IDX copy differ" "png: $from_png / idx: $from_sorted"; fi

# The original IDX order mixes the classes, so the same seed shuffles other samples into
# each batch: on 3000 to 10000 samples and 2 or 3 epochs that alone moved the accuracy by
# 1.2 to 2.5 points (measured). The 0.5-point comparison is the full 60000/10000 run in
# docs/data.md; here a gap beyond 3 points would mean more than the order differs.
run "${train[@]}" --train-limit $train_limit --test-limit $test_limit --limit-order first
idx_acc=$(last_epoch_result | sed -n 's/.* test loss [0-9.]* acc \([0-9.]*\).*/\1/p')
if [ "$rc" -eq 0 ] && [ -n "$png_acc" ] && [ -n "$idx_acc" ] &&
    awk -v a="$png_acc" -v b="$idx_acc" 'BEGIN { d = a - b; exit !(d < 0.03 && d > -0.03) }'
then pass "png:DIR's test accuracy $png_acc is within 3 points of the IDX run's $idx_acc"
else fail "png:DIR's test accuracy is far from the IDX run's" "png $png_acc, idx $idx_acc"; fi

# ---- CIFAR-10: RGB images, named classes ----
# Random pixels, records sorted by label so that png:DIR reads them in the same order.
mkdir -p "$work/cifar"
python3 - "$work/cifar" <<'PY'
import os, random, sys
rng = random.Random(14)
for name, count in (("data_batch_1.bin", 40), ("test_batch.bin", 20)):
    with open(os.path.join(sys.argv[1], name), "wb") as f:
        for i in range(count):
            f.write(bytes([i * 10 // count]) + bytes(rng.randrange(256) for _ in range(3072)))
PY
run "$TRAINER" data export "cifar10:$work/cifar" "png:$work/cifar-png"
expect_rc 0 "a cifar10:DIR is exported to png:DIR, the alias"
expect_in out "read it with --data images:$work/cifar-png" "which reads back as images:DIR"
expect_in out "train: 40 images of 3x32x32 in 10 class folders" "as 3-channel images"
if [ -f "$work/cifar-png/train/9_truck/00039.png" ]; then pass "CIFAR-10's class names"
else fail "no 9_truck/00039.png" "$(ls "$work/cifar-png/train")"; fi
# A model that sees every value of every channel where it is: swapped planes or a wrong
# pixel would change the result.
cat >"$work/rgb.model" <<'MODEL'
input     shape=3x32x32 dtype=f32
flatten
dense     units=10
loss      softmax_cross_entropy
train     batch=8 epochs=2 seed=3
MODEL
run "$TRAINER" train "$work/rgb.model" --device cpu --data "cifar10:$work/cifar"
from_cifar=$(last_epoch_result)
run "$TRAINER" train "$work/rgb.model" --device cpu --data "png:$work/cifar-png"
if [ "$rc" -eq 0 ] && [ -n "$from_cifar" ] && [ "$(last_epoch_result)" = "$from_cifar" ]; then
    pass "the RGB PNGs train exactly as the CIFAR-10 records ($from_cifar)"
else fail "the exported CIFAR-10 trains differently" "cifar10: $from_cifar"; fi

# ---- a dataset without class names: zero-padded labels ----
make_dataset "$work/tiny" 12 4
run "$TRAINER" data export "idx:$work/tiny" "png:$work/tiny-png"
expect_rc 0 "an idx:DIR is exported"
if [ -d "$work/tiny-png/train/0" ] && [ -d "$work/tiny-png/test/9" ]; then
    pass "classes without names are folders named by label"
else fail "no train/0 and test/9 folders" "$(ls "$work/tiny-png/train")"; fi
mkdir -p "$work/tiny-png/train/extra"
run "$TRAINER" data export "idx:$work/tiny" "png:$work/tiny-png" --force
expect_rc 0 "--force writes into a folder that is not empty"

finish

#!/usr/bin/env bash
# Broken datasets: each must stop `trainer train` with exit 2, an error that names the
# file at fault, and a hint, before any training. Works on tiny IDX files made here, so it
# needs no installed dataset.
source "$(dirname "${BASH_SOURCE[0]}")/common.bash"

train=("$TRAINER" train models/mlp.model --epochs 1 --batch 25 --device cpu)

# The valid folder trains, so every failure below is down to the one thing broken.
make_dataset "$work/good" 100 50
run "${train[@]}" --data "idx:$work/good"
expect_rc 0 "a valid tiny idx:DIR dataset trains"
expect_in out "100 train, 50 test samples" "it reads all 100 + 50 samples"
run "${train[@]}" --data "idx:$work/good" --train-limit 101 --test-limit 50
expect_rc 0 "a --train-limit past the split trains on all of it"
expect_in err "notice: --train-limit 101 is more than the 100 training samples: all 100 are used" \
    "... and says so (the user may have meant another count)"
expect_no_match err "test-limit" "a --test-limit of the split's size is no news"

# Also gzip-compressed, as the IDX distribution ships.
make_dataset "$work/gz" 100 50
gzip "$work/gz"/*
run "${train[@]}" --data "idx:$work/gz"
expect_rc 0 "the same dataset as .gz files trains"

# Truncated images file: the header promises 100 images, the file holds fewer.
make_dataset "$work/truncated" 100 50
file="$work/truncated/train-images-idx3-ubyte"
head -c 40000 "$file" >"$file.cut" && mv "$file.cut" "$file"
run "${train[@]}" --data "idx:$work/truncated"
expect_error 2 "$file: truncated" "a truncated images file is named and called truncated"
expect_in err "100 images of 28x28" "that error quotes the header's claim"

# Truncated gzip stream (a download cut short).
make_dataset "$work/truncated_gz" 100 50
gzip "$work/truncated_gz"/*
file="$work/truncated_gz/train-images-idx3-ubyte.gz"
head -c $(($(wc -c <"$file") / 2)) "$file" >"$file.cut" && mv "$file.cut" "$file"
run "${train[@]}" --data "idx:$work/truncated_gz"
expect_error 2 "$file: " "a truncated .gz images file is named"
expect_in err "truncated" "that error calls it truncated"

# Wrong magic: a labels file where the images file should be.
make_dataset "$work/magic" 100 50
cp "$work/magic/train-labels-idx1-ubyte" "$work/magic/train-images-idx3-ubyte"
run "${train[@]}" --data "idx:$work/magic"
expect_error 2 "$work/magic/train-images-idx3-ubyte: not an IDX image file: magic 0x00000801" \
    "a labels file in place of images is refused by its magic number"
expect_in err "label file" "the hint says it looks like a label file"

# Garbage magic.
make_dataset "$work/garbage" 100 50
printf 'GIF89a garbage' >"$work/garbage/t10k-images-idx3-ubyte"
run "${train[@]}" --data "idx:$work/garbage"
expect_error 2 "$work/garbage/t10k-images-idx3-ubyte: not an IDX image file" \
    "a file that is not IDX at all is refused"

# Image and label counts that disagree.
make_dataset "$work/counts" 100 50
write_labels "$work/counts/train-labels-idx1-ubyte" 99
run "${train[@]}" --data "idx:$work/counts"
expect_error 2 "100 images but" "images and labels of different counts are refused"
expect_in err "$work/counts/train-labels-idx1-ubyte" "that error names the labels file"

# Missing file.
make_dataset "$work/missing" 100 50
rm "$work/missing/t10k-labels-idx1-ubyte"
run "${train[@]}" --data "idx:$work/missing"
expect_error 2 "$work/missing/t10k-labels-idx1-ubyte" "a missing labels file is named"
expect_in err "missing" "that error says it is missing"

# Labels 0-9 for a model with 5 class scores: refused at the model's last dense layer.
sed 's/units=10$/units=5/' models/mlp.model >"$work/five.model"
last_dense=$(grep -n '^dense .*units=5$' "$work/five.model" | cut -d: -f1)
run "$TRAINER" train "$work/five.model" --epochs 1 --batch 25 --device cpu --data "idx:$work/good"
expect_error 2 "$work/five.model:$last_dense:" "labels beyond the model's classes name the model line"
expect_in err "labels up to 9" "that error quotes the largest label"
expect_in err "gives 5 class scores" "that error quotes the model's classes"
# On the CPU nothing about CUDA follows: what a GPU framework would have said is news only
# where a GPU ran.
expect_no_match err "device-side|CUDA|likely causes" "a CPU run says nothing about CUDA"
expect_no_match err "context is now unusable" "and does not say the context is lost"
expect_in err "units=10" "the hint gives the units= that would fit"

# Folders and specs that are wrong as a whole.
run "${train[@]}" --data "idx:$work/absent"
expect_error 2 "$work/absent" "a missing idx:DIR folder is named"
run "${train[@]}" --data "idx:$work/good/train-labels-idx1-ubyte"
expect_error 2 "expects a folder" "idx: naming a file is refused"
run "${train[@]}" --data "idx:"
expect_error 2 "idx:" "idx: without a folder is refused"
run "${train[@]}" --data nonsense
expect_error 2 "unknown dataset 'nonsense'" "--data nonsense is refused"
run "${train[@]}" --data fashion-mnst
expect_error 2 "fashion-mnst" "a misspelt --data is refused"
expect_in err "did you mean 'fashion-mnist'?" "with a suggestion"
run "${train[@]}" --data "$work/good"
expect_error 2 "idx:$work/good" "a bare folder gets the idx: spelling as a hint"

run env TRAINER_FASHION_MNIST_DIR=/nonexistent "${train[@]}" --data fashion-mnist
expect_error 2 "/nonexistent" "fashion-mnist in a missing folder is refused, naming it"
expect_in err "apt-get install dataset-fashion-mnist" "the hint gives the apt-get command"

finish

#!/usr/bin/env bash
# Dataset specs beyond the installed Fashion-MNIST, on files made here: idx: by other names
# and by four named files, cifar10:DIR, csv:FILE, --val-split; and the three IDX faults of
# issue 14: a FIFO named like an IDX file, a small .gz whose header claims gigabytes, and
# `check --data` passing a test split that `train` refuses.
source "$(dirname "${BASH_SOURCE[0]}")/common.bash"

train=("$TRAINER" train models/mlp.model --epochs 1 --batch 25 --device cpu)
check=("$TRAINER" check models/mlp.model --device cpu)

# ---- idx: other names, named files ----
make_dataset "$work/renamed" 100 50
for f in "$work/renamed"/*; do mv "$f" "${f/t10k/test}-mine"; done
run "${train[@]}" --data "idx:$work/renamed"
expect_rc 0 "idx:DIR finds files named *test*images* and the like"
expect_in out "100 train, 50 test samples" "it reads both splits"

d="$work/renamed"
run "${train[@]}" --data "idx:$d/train-images-idx3-ubyte-mine,$d/train-labels-idx1-ubyte-mine,$d/test-images-idx3-ubyte-mine,$d/test-labels-idx1-ubyte-mine"
expect_rc 0 "idx:A,B,C,D reads the four named files"
run "${train[@]}" --data "idx:$d/train-images-idx3-ubyte-mine,$d/train-labels-idx1-ubyte-mine"
expect_error 2 "expected four files" "two named files are refused with the form expected"
# Six paths with ~: the spec's ~ expansion is sized by the parts there are, not by idx:'s
# four (it overflowed its buffer), and the reader then refuses the list.
HOME="$work/home" run "${train[@]}" --data "idx:~/a,~/b,~/c,~/d,~/e,~/f"
expect_error 2 "expected four files" "six ~ paths are expanded, then refused as not four"
expect_in err "idx:$work/home/a,$work/home/b,$work/home/c,$work/home/d,$work/home/e," \
    "each ~ of the six is expanded"

make_dataset "$work/twice" 100 50
write_images "$work/twice/old-train-images" 100
run "${train[@]}" --data "idx:$work/twice"
expect_error 2 "two files could be the training images" "an ambiguous folder names both files"

# ---- fault 1: a FIFO named like an IDX file is refused at once ----
make_dataset "$work/fifo" 100 50
rm "$work/fifo/t10k-images-idx3-ubyte"
mkfifo "$work/fifo/t10k-images-idx3-ubyte"
run timeout 10 "${check[@]}" --data "idx:$work/fifo"
expect_error 2 "$work/fifo/t10k-images-idx3-ubyte: cannot read: is a FIFO" \
    "a FIFO in place of an IDX file is refused, not read forever"

# ---- fault 2: a 1 MB .gz whose header claims 64 images of 4096x4096 ----
# Made as 1024 gzip members of 1 MiB of zeros each (zlib reads concatenated members as one
# stream): a ~1 MB file that really inflates to the 1 GiB it claims, made in a blink.
make_dataset "$work/bomb" 100 50
head -c $((1024 * 1024)) /dev/zero | gzip -9 >"$work/zeros.gz"
{
    printf '%b' "\\x00\\x00\\x08\\x03$(be32 64)$(be32 4096)$(be32 4096)" | gzip
    for ((i = 0; i < 1024; i++)); do cat "$work/zeros.gz"; done
} >"$work/bomb/train-images-idx3-ubyte.gz"
rm "$work/bomb/train-images-idx3-ubyte"
ls -l "$work/bomb/train-images-idx3-ubyte.gz" | awk '{print "# the bomb is " $5 " bytes"}'
start=$(date +%s%N)
run timeout 20 "${check[@]}" --data "idx:$work/bomb"
elapsed_ms=$((($(date +%s%N) - start) / 1000000))
expect_error 2 "refused before inflating it" "a .gz claiming 1 GiB from ~1 MB is refused"
expect_in err "64 images of 4096x4096" "the error quotes the header's claim"
if [ "$elapsed_ms" -lt 2000 ]; then pass "it is refused in ${elapsed_ms} ms, not after inflating"
else fail "the bomb took ${elapsed_ms} ms to refuse"; fi

# The same zeros after an honest header of 100 images: counting the trailing data stops
# after a megabyte instead of inflating the whole gigabyte.
make_dataset "$work/tail" 100 50
{
    printf '%b' "\\x00\\x00\\x08\\x03$(be32 100)$(be32 28)$(be32 28)" | gzip
    for ((i = 0; i < 1024; i++)); do cat "$work/zeros.gz"; done
} >"$work/tail/train-images-idx3-ubyte.gz"
rm "$work/tail/train-images-idx3-ubyte"
start=$(date +%s%N)
run timeout 20 "${check[@]}" --data "idx:$work/tail"
elapsed_ms=$((($(date +%s%N) - start) / 1000000))
expect_error 2 "trailing data: header says 100 images of 28x28 (78400 bytes) but the file holds over 1048576 more bytes" \
    "trailing data is counted up to a megabyte"
if [ "$elapsed_ms" -lt 2000 ]; then pass "it is refused in ${elapsed_ms} ms"
else fail "the trailing gigabyte took ${elapsed_ms} ms to refuse"; fi

# ---- fault 3: check --data validates the test split as train does ----
make_dataset "$work/label255" 100 50
printf '\xff' | dd of="$work/label255/t10k-labels-idx1-ubyte" bs=1 seek=10 conv=notrunc 2>/dev/null
run "${check[@]}" --data "idx:$work/label255"
expect_error 2 "the test set has labels up to 255" "check refuses a test label of 255"
run "${train[@]}" --data "idx:$work/label255"
expect_error 2 "the test set has labels up to 255" "train refuses it the same way"

make_dataset "$work/narrow" 100 50
{
    printf '%b' "\\x00\\x00\\x08\\x03$(be32 50)$(be32 27)$(be32 28)"
    head -c $((50 * 27 * 28)) /dev/zero
} >"$work/narrow/t10k-images-idx3-ubyte"
run "${check[@]}" --data "idx:$work/narrow"
expect_error 2 "does not fit the test set, whose samples are 1x27x28" \
    "check refuses 27x28 test images"

run "${check[@]}" --data "idx:$work/renamed"
expect_rc 0 "check passes a valid dataset"
expect_in out "100 train, 50 test samples" "and says what it validated"

# ---- --val-split ----
run "${train[@]}" --data "idx:$work/renamed" --val-split 0.2
expect_rc 0 "--val-split 0.2 trains"
expect_in out "80 train, 20 val, 50 test samples" "the data line shows the split"
expect_match out "^epoch 1/1 .* val loss [0-9.]+ acc" "each epoch is evaluated on val"
expect_match out "^test loss [0-9.]+ acc [0-9.]+  \\(50 samples\\)" "and test once at the end"
run "${train[@]}" --data "idx:$work/renamed" --val-split 1.5
expect_error 2 "--val-split" "a fraction outside (0, 1) is refused"

# ---- the model file's data statement ----
{ cat models/mlp.model; echo "data spec=idx:$work/renamed val_split=0.1"; } >"$work/with_data.model"
run "$TRAINER" train "$work/with_data.model" --epochs 1 --batch 25 --device cpu
expect_rc 0 "a model's data statement names its dataset and split"
expect_in out "90 train, 10 val, 50 test samples" "both are used without --data"
run "$TRAINER" check "$work/with_data.model" --device cpu
expect_in out "data $work/renamed: valid, 90 train, 10 val, 50 test samples" \
    "check validates the model's dataset without --data"
run "$TRAINER" train "$work/with_data.model" --epochs 1 --batch 25 --device cpu \
    --data "idx:$work/label255"
expect_error 2 "labels up to 255" "--data overrides the model's spec"
{ cat models/mlp.model; echo "data spec=idx:$work/renamed split=0.1"; } >"$work/bad_data.model"
run "$TRAINER" check "$work/bad_data.model"
expect_error 2 "unknown key 'split' for data" "an unknown data key is refused at its place"

# ---- cifar10:DIR ----
# cifar_batch FILE COUNT [LABEL]: COUNT records, labels 0..9 (or all LABEL), pixels 0x40.
cifar_batch() {
    local i label
    for ((i = 0; i < $2; i++)); do
        label=${3:-$((i % 10))}
        printf '%b' "\\x$(printf %02x "$label")"
        head -c 3072 /dev/zero | tr '\0' '\100'
    done >"$1"
}
cifar_model="$work/cifar.model"
sed 's/shape=784/shape=3072/' models/mlp.model >"$cifar_model"
mkdir -p "$work/cifar"
cifar_batch "$work/cifar/data_batch_1.bin" 30
cifar_batch "$work/cifar/data_batch_2.bin" 20
cifar_batch "$work/cifar/test_batch.bin" 10
run "$TRAINER" train "$cifar_model" --data "cifar10:$work/cifar" --epochs 1 --batch 10 --device cpu
expect_rc 0 "a small cifar10:DIR trains"
expect_in out "50 train, 10 test samples" "it reads data_batch_1..2 and test_batch"
run "$TRAINER" data info "cifar10:$work/cifar"
expect_match out "^  class   9 truck +5$" "data info names CIFAR-10's classes (it showed none)"

cp -r "$work/cifar" "$work/cifar_cut"
head -c $((3073 * 5 + 100)) "$work/cifar/data_batch_2.bin" >"$work/cifar_cut/data_batch_2.bin"
run "$TRAINER" check "$cifar_model" --data "cifar10:$work/cifar_cut"
expect_error 2 "$work/cifar_cut/data_batch_2.bin: truncated" "a cut record is named"
expect_in err "100 bytes of record 6" "with the record it cut"

cp -r "$work/cifar" "$work/cifar_label"
cifar_batch "$work/cifar_label/test_batch.bin" 3 12
run "$TRAINER" check "$cifar_model" --data "cifar10:$work/cifar_label"
expect_error 2 "$work/cifar_label/test_batch.bin: record 1 (byte offset 0) has label 12" \
    "a label of 10 or more is refused with its record"

# Batches 1 and 3 without 2: batch 3 was left out without a word.
mkdir -p "$work/cifar_gap"
cp "$work/cifar/data_batch_1.bin" "$work/cifar/test_batch.bin" "$work/cifar_gap/"
cp "$work/cifar/data_batch_2.bin" "$work/cifar_gap/data_batch_3.bin"
run "$TRAINER" data info "cifar10:$work/cifar_gap"
expect_error 2 "$work/cifar_gap/data_batch_2.bin: missing data_batch_2.bin in $work/cifar_gap, \
but data_batch_3.bin is there" "a batch missing before another is refused, naming both"

run "$TRAINER" data info "cifar10:$work/cifar,channels=3"
expect_error 2 "$work/cifar: unknown option 'channels=3' after the folder name: cifar10:DIR \
takes none" "an option after a folder is named as one, not as a missing folder"

# A batch file larger than the format's 10,000 records was read whole (3 million records:
# 48 s, 9 GB, then a bare "out of host memory"): refused by its size, before reading.
mkdir -p "$work/cifar_big"
cp "$work/cifar/test_batch.bin" "$work/cifar_big/"
head -c $((3073 * 10001)) /dev/zero >"$work/cifar_big/data_batch_1.bin"
run "$TRAINER" check "$cifar_model" --data "cifar10:$work/cifar_big"
expect_error 2 "$work/cifar_big/data_batch_1.bin: 30733073 bytes is 10001 records; a CIFAR-10 \
batch file holds at most 10000 (30730000 bytes)" "a batch file over 10,000 records is refused by its size"
rm -rf "$work/cifar_big"

mkdir -p "$work/cifar_none"
run "$TRAINER" check "$cifar_model" --data "cifar10:$work/cifar_none"
expect_error 2 "missing data_batch_1.bin" "an empty folder says what it lacks"

# ---- csv:FILE ----
csv_model="$work/csv.model"
cat >"$csv_model" <<'MODEL'
input shape=4
dense units=8 act=relu
dense units=3
loss softmax_cross_entropy
optimizer sgd lr=0.1
train batch=4 epochs=1 seed=1
MODEL
{
    echo "a,b,label,c,d"
    for i in $(seq 1 40); do echo "$((i % 7)).5,-1e-2,$((i % 3)),3,$i"; done
} >"$work/good.csv"
run "$TRAINER" train "$csv_model" --data "csv:$work/good.csv" --val-split 0.25 --device cpu
expect_rc 0 "a CSV with a label column trains (with --val-split: CSV has no test split)"
expect_in out "30 train, 10 val samples" "it holds out a quarter"
# CSV features are always staged through the host: no notice that they do not fit.
expect_no_match err "does not fit" "no notice that the features do not fit the device"
run "$TRAINER" train "$csv_model" --data "csv:$work/good.csv" --device cpu
expect_error 2 "has no test split" "CSV without --val-split asks for one"

# A `~` after `csv:` (or `png:`, `idx:`) is not the shell's to expand: the trainer reads it
# as $HOME, as torchvision's dataset roots do; an export destination too.
mkdir -p "$work/home/tables"
cp "$work/good.csv" "$work/home/tables/good.csv"
HOME="$work/home" run "$TRAINER" train "$csv_model" --data "csv:~/tables/good.csv,label=label" \
    --val-split 0.25 --device cpu
expect_rc 0 "csv:~/FILE reads \$HOME/FILE"
HOME="$work/home" run "$TRAINER" data info "png:~/shirts"
expect_error 2 "$work/home/shirts: cannot open the dataset folder" \
    "png:~/DIR's error names the folder under \$HOME"
HOME="$work/home" run "$TRAINER" data export "idx:~/nothing" "png:~/out"
expect_error 2 "$work/home/nothing" "idx:~/DIR is read under \$HOME"
make_dataset "$work/home/idx" 20 10
HOME="$work/home" run "$TRAINER" data export "idx:~/idx" "png:~/exported"
if [ "$rc" -eq 0 ] && [ -d "$work/home/exported/train" ] && [ ! -e "$work/home/~" ] &&
    [ ! -e "$TRAINER_SOURCE_DIR/~" ]; then pass "data export png:~/DIR writes under \$HOME"
else fail "data export png:~/DIR writes under \$HOME"; fi

{ echo "x,a,b,c,d"; echo "1,2,3,4,5"; } >"$work/first.csv"
run "$TRAINER" check "$csv_model" --data "csv:$work/first.csv,label=x" --val-split 0.5
expect_error 2 "--val-split 0.5 of 1 training sample leaves" "one row cannot be split"
expect_in err "a validation split needs at least 2 samples" "... which the hint says"
{ echo "x,a,b,c,d"; echo "1,2,3,4,5"; echo "0,2,3,4,5"; echo "1,2,3,4,5"; } >"$work/three.csv"
run "$TRAINER" check "$csv_model" --data "csv:$work/three.csv,label=x" --val-split 0.1
expect_error 2 "--val-split 0.1 of 3 training samples leaves 0 for validation" \
    "0.1 of three rows holds out none"
expect_in err "hint: e.g. --val-split 0.333333 holds out 1 of the 3" \
    "the hint gives a fraction these 3 rows can take (it said 0.1, which had just failed)"
run "$TRAINER" check "$csv_model" --data "csv:$work/three.csv,label=x" --val-split 0.333333
expect_rc 0 "... and that fraction works"

run "$TRAINER" check "$csv_model" --data "csv:$work/good.csv,label=kind" --val-split 0.25
expect_error 2 "$work/good.csv:1:1: no column 'kind'" "a missing label column is named"
# A mistyped option read as part of a file name said "cannot open", as if the file were not
# there; a second option after label= was read as part of the column's name.
run "$TRAINER" check "$csv_model" --data "csv:$work/good.csv,labl=label" --val-split 0.25
expect_error 2 "dataset 'csv:$work/good.csv': unknown option 'labl=label' after the file name" \
    "a mistyped label= is named as an option"
expect_in err "csv:FILE takes one option, label=COLUMN" "... with the one there is"
run "$TRAINER" check "$csv_model" --data "csv:$work/good.csv,label=label,skip=1" --val-split 0.25
expect_error 2 "unknown option 'skip=1' after label=" "an option after label= is refused"

# The model file's `data spec=` takes csv's label= (the '=' was refused there) and a `~`;
# an error of the dataset it names points at the statement (it had no place at all).
printf 'data spec=csv:%s,label=kind val_split=0.25\n' "$work/good.csv" | cat "$csv_model" - \
    >"$work/spec.model"
run "$TRAINER" check "$work/spec.model"
expect_error 2 "$work/good.csv:1:1: no column 'kind'" "spec=csv:FILE,label=COLUMN is read"
expect_in err "(the dataset is $work/spec.model:" "... and the hint names the statement"
{ cat "$csv_model"; echo "data spec=nope:x"; } >"$work/nope.model"
run "$TRAINER" check "$work/nope.model"
expect_error 2 "$work/nope.model:$(($(wc -l <"$csv_model") + 1)):11: unknown dataset 'nope:x'" \
    "an unknown spec in the model file is placed at its value"
{ cat "$csv_model"; echo "data spec=csv:~/tables/good.csv,label=label val_split=0.25"; } \
    >"$work/home.model"
HOME="$work/home" run "$TRAINER" check "$work/home.model"
expect_rc 0 "spec=csv:~/FILE,label=NAME in a model file reads \$HOME/FILE"

# Found by tests/libfuzzer/fuzz_csv.c: the name comes from the spec (or a model file's
# `data` statement) and was printed raw, terminal escape codes and all.
run "$TRAINER" check "$csv_model" --data "csv:$work/good.csv,label=k$(printf '\033')[2J" \
    --val-split 0.25
expect_error 2 "no column 'k\\x1b[2J'" "a missing label column's name is printed escaped"

{ echo "a,b,label,c,d"; echo "1,2,0,3,4"; printf '1,2,1,x\xff,4\n'; } >"$work/word.csv"
run "$TRAINER" check "$csv_model" --data "csv:$work/word.csv" --val-split 0.5
expect_error 2 "$work/word.csv:3:7: 'x\\xff' is not a number" \
    "a non-numeric cell is named by line:column, its bytes escaped"

# A file with no header row lost its first sample, read as the header, without a word. A
# first line of numbers only is refused; label= naming one of them reads it as a header.
printf '0,1,2,3,4\n0,1,2,3,4\n1,3,4,5,6\n' >"$work/no_header.csv"
run "$TRAINER" data info "csv:$work/no_header.csv"
expect_error 2 "$work/no_header.csv:1:1: the first line '0,1,2,3,4' holds only numbers, where a" \
    "a CSV with no header row is refused, not read with its first sample as the header"
expect_in err "where a header row of column names is expected" "... saying what was expected"
expect_in err "hint: add a header line such as 'label,x1,x2,...,x4'" "... and what to add"
run "$TRAINER" data info "csv:$work/no_header.csv,label=0"
expect_rc 0 "a header of numbered columns reads when label= names one of them"
expect_in out "train: 2 samples" "... and its first line is the header"
run "$TRAINER" data info "csv:$work/no_header.csv,label=7"
expect_error 2 "holds only numbers, where a header row of column names is expected (and no \
column is '7')" "a label= naming none of the numbers says that column is not there either"
expect_no_match err "label=0" "... and the hint does not propose the label= just tried"

# A NUL byte ended the text for the line finder: this 60-row file trained on the 30 rows
# before it, exit 0. It is refused where it is.
{
    echo "a,b,label,c,d"
    for i in $(seq 1 60); do
        [ "$i" = 31 ] && printf '1,2,\0,3,4\n' || echo "1,2,$((i % 3)),3,$i"
    done
} >"$work/nul.csv"
run "$TRAINER" check "$csv_model" --data "csv:$work/nul.csv" --val-split 0.5
expect_error 2 "$work/nul.csv:32:5: a NUL byte (0x00): a CSV file is text, and holds none" \
    "a NUL byte in a row is refused at its line and column, not read as the file's end"

# strtof says ERANGE on underflow too, and numbers too small for a float were refused as if
# too large: they read as the float nearest them (a denormal, or 0). Overflow is refused.
{ echo "label,a,b,c,d"; echo "0,1e-38,1e-40,1e-50,-1e-45"; echo "1,2,3,4,5"; } >"$work/tiny.csv"
run "$TRAINER" check "$csv_model" --data "csv:$work/tiny.csv" --val-split 0.5
expect_rc 0 "numbers too small for a float (1e-38 to 1e-50) read as floats"
{ echo "label,a,b,c,d"; echo "0,1,2,3,4"; echo "1,2,3,-1e39,5"; } >"$work/huge.csv"
run "$TRAINER" check "$csv_model" --data "csv:$work/huge.csv" --val-split 0.5
expect_error 2 "$work/huge.csv:3:7: '-1e39' is not a finite number a float holds" \
    "a number too large for a float is refused where it is"

{ echo "a,b,label,c,d"; echo "1,2,0,3,4"; echo "1,2,0,3"; } >"$work/ragged.csv"
run "$TRAINER" check "$csv_model" --data "csv:$work/ragged.csv" --val-split 0.5
expect_error 2 "$work/ragged.csv:3:8: row has 4 fields, but the header has 5 columns" \
    "a short row is named by its line, at its end"
{ echo "a,b,label,c,d"; echo "1,2,0,3,4"; echo "1,2,0,3,4,5"; } >"$work/long.csv"
run "$TRAINER" check "$csv_model" --data "csv:$work/long.csv" --val-split 0.5
expect_error 2 "$work/long.csv:3:10: row has 6 fields, but the header has 5 columns" \
    "a long row is named at the comma of its first extra field"

# Old Mac line endings (CR alone) made the file one long header line: "no rows after the
# header". The lone carriage return is named where it is; CRLF ends lines as LF does.
printf 'label,a,b,c,d\r0,1,2,3,4\r1,2,3,4,5\r' >"$work/mac.csv"
run "$TRAINER" check "$csv_model" --data "csv:$work/mac.csv" --val-split 0.5
expect_error 2 "$work/mac.csv:1:14: a lone carriage return '\\r' (byte 0x0d) is not a line break" \
    "a CSV with old Mac line endings names its first lone carriage return"
expect_in err "hint: convert the line endings" "... and says to convert them"
expect_in err "tr '\\r' '\\n' < $work/mac.csv > $work/mac-lf.csv" "... with a command that does"
tr '\r' '\n' <"$work/mac.csv" >"$work/mac-lf.csv"
run "$TRAINER" check "$csv_model" --data "csv:$work/mac-lf.csv" --val-split 0.5
expect_rc 0 "... which gives a file that reads"
printf 'label,a,b,c,d\r\n0,1,2,3,4\r\n\r\n1,2,3,4,5\r\n' >"$work/crlf.csv"
run "$TRAINER" check "$csv_model" --data "csv:$work/crlf.csv" --val-split 0.5
expect_rc 0 "a CSV with CRLF line endings reads"
printf 'label,a,b,c,d\r\n0,1,2,3,4\r\n1,2,3,4,5\r0,1,2,3,4\r\n' >"$work/mixed.csv"
run "$TRAINER" check "$csv_model" --data "csv:$work/mixed.csv" --val-split 0.5
expect_error 2 "$work/mixed.csv:3:10: a lone carriage return" \
    "a lone carriage return among CRLFs is named at its line and column"

: >"$work/empty.csv"
run "$TRAINER" check "$csv_model" --data "csv:$work/empty.csv" --val-split 0.5
expect_error 2 "$work/empty.csv:1:1: empty file" "an empty CSV is refused"

mkfifo "$work/pipe.csv"
run timeout 10 "$TRAINER" check "$csv_model" --data "csv:$work/pipe.csv" --val-split 0.5
expect_error 2 "$work/pipe.csv: cannot read: is a FIFO" "a FIFO is not read as a CSV"

finish

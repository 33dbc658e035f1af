#!/usr/bin/env bash
# trainer predict: a model trained briefly on Fashion-MNIST classifies a real test image
# written as a PNG (top classes by name, probabilities descending in (0, 1]); a gray image
# stored as RGB predicts the same; a wrong-size, damaged or non-PNG image is refused
# (exit 2) naming the file, and then no prediction is printed at all.
source "$(dirname "${BASH_SOURCE[0]}")/common.bash"
require_fashion_mnist
require_python3 "write the test PNGs"

# The first test image as 28x28 gray and as RGB, a 32x32 image, a PNG damaged in its
# IDAT, and its true label (printed on stdout). Plain python3: zlib and struct write PNGs.
label=$(python3 - "$FASHION_DIR" "$work" <<'EOF'
import gzip, os, struct, sys, zlib

fashion, out = sys.argv[1], sys.argv[2]

def read(name, count):
    path = os.path.join(fashion, name)
    opener = open if os.path.exists(path) else gzip.open
    with opener(path if os.path.exists(path) else path + ".gz", "rb") as f:
        return f.read(count)

def chunk(kind, data):
    return (struct.pack(">I", len(data)) + kind + data
            + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF))

def png(width, height, color_type, rows):
    raw = b"".join(b"\0" + row for row in rows)  # filter type 0 on every row
    header = struct.pack(">IIBBBBB", width, height, 8, color_type, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header)
            + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))

pixels = read("t10k-images-idx3-ubyte", 16 + 784)[16:]
rows = [pixels[28 * y:28 * (y + 1)] for y in range(28)]
with open(os.path.join(out, "boot.png"), "wb") as f:
    f.write(png(28, 28, 0, rows))
with open(os.path.join(out, "boot_rgb.png"), "wb") as f:
    f.write(png(28, 28, 2, [bytes(v for v in row for _ in range(3)) for row in rows]))
# Gray + alpha 128 over black falls between bytes; a dataset keeps the nearest byte, which
# boot_dim.png holds as plain gray.
with open(os.path.join(out, "boot_alpha.png"), "wb") as f:
    f.write(png(28, 28, 4, [bytes(b for v in row for b in (v, 128)) for row in rows]))
with open(os.path.join(out, "boot_dim.png"), "wb") as f:
    f.write(png(28, 28, 0, [bytes(round(v * 128 / 255) for v in row) for row in rows]))
with open(os.path.join(out, "big.png"), "wb") as f:
    f.write(png(32, 32, 0, [bytes(32)] * 32))
good = png(28, 28, 0, rows)
idat = good.index(b"IDAT")
damaged = bytearray(good)
damaged[idat + 4 + 10] ^= 0xFF  # inside the compressed pixels
with open(os.path.join(out, "damaged.png"), "wb") as f:
    f.write(bytes(damaged))
print(read("t10k-labels-idx1-ubyte", 9)[8])
EOF
) || { echo "FAIL: could not write the test PNGs"; exit 1; }
names=("T-shirt/top" "Trouser" "Pullover" "Dress" "Coat" "Sandal" "Shirt" "Sneaker" "Bag"
    "Ankle boot")
true_name=${names[$label]}
printf 'not a PNG\n' >"$work/text.png"

weights="$work/mlp.safetensors"
run "$TRAINER" train models/mlp.model --epochs 1 --train-limit 5000 --test-limit 500 \
    --device cpu --save "$weights"
expect_rc 0 "a 1-epoch mlp trains and saves its weights"
[ -f "$weights" ] || { fail "the weights file exists"; finish; }

# checks the prediction lines in $out for one image: K lines `  NAME  P`, names known,
# P in (0, 1] and descending.
check_top() {
    local image=$1 k=$2 what=$3
    local lines
    lines=$(awk -v img="$image" '$0 == img {on = 1; next} /^[^ ]/ {on = 0} on' <<<"$out")
    local problems
    problems=$(awk -v k="$k" -v names="$(printf '%s|' "${names[@]}")" '
        BEGIN { n = split(names, list, "|"); for (i = 1; i < n; i++) known[list[i]] = 1 }
        {
            count++
            p = $NF
            name = $0
            sub(/^  /, "", name)
            sub(/ +[^ ]+$/, "", name)
            if (!(name in known)) print "unknown class name: " name
            if (!(p + 0 > 0 && p + 0 <= 1)) print "probability not in (0,1]: " p
            if (count > 1 && p + 0 > prev + 0) print "not descending: " prev " then " p
            prev = p
        }
        END { if (count != k) print count " lines, expected " k }' <<<"$lines")
    if [ -z "$problems" ]; then pass "$what"; else fail "$what" "$(tr '\n' ';' <<<"$problems")"; fi
}

run "$TRAINER" predict models/mlp.model --weights "$weights" "$work/boot.png" --top 3 --device cpu
expect_rc 0 "predict classifies a 28x28 gray PNG"
expect_match out "^$work/boot.png$" "the image's name comes first"
check_top "$work/boot.png" 3 "three class names with probabilities in (0,1], descending"
first=$(sed -n 2p <<<"$out" | sed 's/^  //; s/  *[^ ]*$//')
if [ "$first" = "$true_name" ]; then pass "the top class is the true one ($true_name)"
else fail "the top class is the true one" "top class '$first', true label '$true_name'"; fi
gray_lines=$(tail -n +2 <<<"$out")

run "$TRAINER" predict models/mlp.model --weights "$weights" "$work/boot_rgb.png" --device cpu
expect_rc 0 "predict takes an RGB PNG for a gray model"
if [ "$(tail -n +2 <<<"$out")" = "$gray_lines" ]; then
    pass "a gray image stored as RGB predicts exactly as the gray one"
else fail "a gray image stored as RGB predicts exactly as the gray one" "gray gave: $gray_lines"; fi

# Pixels between bytes are rounded to the byte a dataset keeps (they went in unrounded,
# and the probabilities differed from the same image's in training).
run "$TRAINER" predict models/mlp.model --weights "$weights" "$work/boot_dim.png" --top 10 \
    --device cpu
dim_lines=$(tail -n +2 <<<"$out")
run "$TRAINER" predict models/mlp.model --weights "$weights" "$work/boot_alpha.png" --top 10 \
    --device cpu
if [ "$(tail -n +2 <<<"$out")" = "$dim_lines" ]; then
    pass "gray + alpha predicts exactly as its composite's bytes, as training reads it"
else fail "gray + alpha predicts exactly as its composite's bytes" "$out
bytes gave: $dim_lines"; fi

run "$TRAINER" predict models/mlp.model --weights "$weights" "$work/boot.png" \
    "$work/boot_rgb.png" --top 20 --device cpu
expect_rc 0 "predict takes several images"
check_top "$work/boot.png" 10 "--top above the class count lists every class once"
check_top "$work/boot_rgb.png" 10 "the second image gets its own list"

printf '%s\n' zero one two three four five six seven eight nine >"$work/classes.txt"
run "$TRAINER" predict models/mlp.model --weights "$weights" "$work/boot.png" --top 1 \
    --classes "$work/classes.txt" --device cpu
expect_rc 0 "--classes FILE names the classes"
expect_match out "^  (zero|one|two|three|four|five|six|seven|eight|nine) +[0-9.e-]+$" \
    "the class name comes from the file"
printf 'a\nb\n' >"$work/classes.txt"
run "$TRAINER" predict models/mlp.model --weights "$weights" "$work/boot.png" \
    --classes "$work/classes.txt" --device cpu
expect_error 2 "has 2 class names, but the model gives 10" "a names file of the wrong length"
printf 'a\n\nb\n' >"$work/classes.txt"
run "$TRAINER" predict models/mlp.model --weights "$weights" "$work/boot.png" \
    --classes "$work/classes.txt" --device cpu
expect_error 2 "$work/classes.txt:2:1: empty class name" \
    "an empty line in a names file is placed at its line and column"

# Weights trained on idx: data record no class names: classes by index, with a notice (they
# were shown with Fashion-MNIST's names, an MNIST digit model answering "Dress").
make_dataset "$work/digits" 40 10
run "$TRAINER" train models/mlp.model --data "idx:$work/digits" --epochs 1 --device cpu \
    --save "$work/digits.safetensors"
expect_rc 0 "a model trained on idx: data"
run "$TRAINER" predict models/mlp.model --weights "$work/digits.safetensors" "$work/boot.png" \
    --top 2 --device cpu
expect_rc 0 "predict with weights that record no class names"
expect_match out "^  class [0-9] +[0-9.]+$" "classes are shown by index"
expect_no_match out "^  (Dress|Trouser|Bag|Sneaker|Shirt|Coat|Sandal|Ankle boot|Pullover|T-shirt)" \
    "... not by Fashion-MNIST's names"
expect_in err "records no class names" "a notice says why"
run "$TRAINER" predict models/mlp.model --weights "$work/digits.safetensors" "$work/boot.png" \
    --top 10 --classes fashion-mnist --device cpu
check_top "$work/boot.png" 10 "--classes fashion-mnist still names them"

# An image's name and a --classes file's names are bytes anyone chose: printed escaped (an
# ESC drove the terminal, a newline split one result into two).
odd="$work/odd$(printf '\033')[31m
name.png"
cp "$work/boot.png" "$odd"
printf 'zero\033[2J\none\ntwo\nthree\nfour\nfive\nsix\nseven\neight\nnine\n' \
    >"$work/odd_classes.txt"
run "$TRAINER" predict models/mlp.model --weights "$weights" "$odd" --top 10 \
    --classes "$work/odd_classes.txt" --device cpu
expect_rc 0 "predict an image with an ESC and a newline in its name"
expect_match out "^$work/odd\\\\x1b\\[31m\\\\x0aname\\.png$" \
    "its name is printed escaped, on one line"
expect_in out "zero\\x1b[2J" "a class name from --classes is printed escaped"
run "$TRAINER" predict models/mlp.model --weights "$weights" "$odd.missing" --device cpu
expect_error 2 "$work/odd\\x1b[31m\\x0aname.png.missing: cannot open" \
    "an error names the image escaped"

printf 'a\nb\000c\n' >"$work/nul_classes.txt"
run "$TRAINER" predict models/mlp.model --weights "$weights" "$work/boot.png" \
    --classes "$work/nul_classes.txt" --device cpu
expect_error 2 "$work/nul_classes.txt:2:2: a NUL byte (0x00) in the class names" \
    "a NUL byte in --classes is placed (it cut the list short: 'has 2 class names')"

# A FIFO blocked the open for good, a directory asked malloc for 2^63 bytes (ftell).
mkfifo "$work/fifo"
run timeout 20 "$TRAINER" predict models/mlp.model --weights "$work/fifo" "$work/boot.png" \
    --device cpu
expect_error 2 "$work/fifo: cannot read: is a FIFO (named pipe), expected a safetensors" \
    "--weights naming a FIFO is refused, not waited on"
run timeout 20 "$TRAINER" predict models/mlp.model --weights "$weights" "$work/boot.png" \
    --classes "$work/fifo" --device cpu
expect_error 2 "$work/fifo: cannot read: is a FIFO (named pipe), expected a file of class" \
    "--classes naming a FIFO is refused"
run "$TRAINER" predict models/mlp.model --weights "$work" "$work/boot.png" --device cpu
expect_error 2 "$work: is a folder, not a weights file" "--weights naming a folder says so"

run "$TRAINER" predict models/mlp.model --weights "$weights" "$work/big.png" --device cpu
expect_error 2 "$work/big.png" "a 32x32 image is refused, naming the file"
expect_in err "32x32" "the message gives the image's size"
expect_in err "28x28" "the message gives the size the model takes"

run "$TRAINER" predict models/mlp.model --weights "$weights" "$work/damaged.png" --device cpu
expect_error 2 "$work/damaged.png" "a damaged PNG is refused, naming the file"
expect_in err "libpng" "the damage is explained in libpng's words"

run "$TRAINER" predict models/mlp.model --weights "$weights" "$work/text.png" --device cpu
expect_error 2 "not a PNG file" "a file that is not a PNG is refused"

run "$TRAINER" predict models/mlp.model --weights "$weights" "$work/boot.png" \
    "$work/no-such.png" "$work/big.png" --device cpu
expect_rc 2 "one bad image among good ones fails the run"
expect_in err "$work/no-such.png" "the missing image is named"
expect_in err "$work/big.png" "every bad image is reported, not only the first"
if [ -z "$out" ]; then pass "no predictions are printed when an image is bad"
else fail "no predictions are printed when an image is bad"; fi

# No cap on how many images one command takes (`dir/*/*.png`): 300 used to be refused as
# 'more than 64 arguments'.
mkdir -p "$work/many"
for ((i = 0; i < 300; i++)); do cp "$work/boot.png" "$work/many/$i.png"; done
run "$TRAINER" predict models/mlp.model --weights "$weights" --top 1 --device cpu \
    "$work"/many/*.png
expect_rc 0 "predict takes 300 images"
count=$(grep -c "^$work/many/[0-9]*\.png$" <<<"$out")
[ "$count" = 300 ] && pass "... and prints a prediction for each" ||
    fail "... and prints a prediction for each" "$count images named on stdout"

run "$TRAINER" predict models/mlp.model "$work/boot.png"
expect_error 2 "needs --weights FILE" "predict without --weights"
run "$TRAINER" predict models/mlp.model --weights "$weights"
expect_error 2 "one or more PNG images" "predict without images"

# Weights trained on a png:DIR record its folders' names, used even when the model has
# more outputs than folders (mlp.model's 10 on 2 folders): those outputs are `class N`, with
# a notice, never Fashion-MNIST's names (they were printed, silently, when the counts differed).
mkdir -p "$work/two/alpha" "$work/two/beta"
for i in 1 2 3 4; do
    cp "$work/boot.png" "$work/two/alpha/$i.png"
    cp "$work/boot_rgb.png" "$work/two/beta/$i.png"
done
two_weights="$work/two.safetensors"
run "$TRAINER" train models/mlp.model --data "png:$work/two" --val-split 0.25 --epochs 1 \
    --device cpu --save "$two_weights"
expect_rc 0 "mlp.model (10 outputs) trains on 2 class folders"
run "$TRAINER" predict models/mlp.model --weights "$two_weights" "$work/boot.png" --top 10 \
    --device cpu
expect_rc 0 "predict with weights that name 2 of 10 classes"
expect_match out "^  alpha +[0-9.e-]+$" "the recorded folder names are used"
expect_match out "^  class 9 +[0-9.e-]+$" "outputs past them are class N"
expect_no_match out "T-shirt|Trouser|Dress|Coat|Ankle boot" "no Fashion-MNIST name is printed"
expect_match err "^trainer: notice: the model has 10 outputs, but .* names 2 classes" \
    "a notice tells the counts apart"
sed 's/units=10$/units=2/' models/mlp.model >"$work/two.model"
run "$TRAINER" train "$work/two.model" --data "png:$work/two" --val-split 0.25 --epochs 1 \
    --device cpu --save "$two_weights"
run "$TRAINER" predict "$work/two.model" --weights "$two_weights" "$work/boot.png" --device cpu
expect_match out "^  beta +[0-9.e-]+$" "a 2-output model gets both names"
expect_no_match err "notice: the model has" "and no notice"

finish

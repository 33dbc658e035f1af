#!/usr/bin/env bash
# images:DIR with JPEG and PNG files mixed, some not at the model's size: refused without
# --resize (the hint names it), trained with --resize model (the header says so; a
# --resume reads them so without being told, and refuses another --resize), and
# `predict --resize model` gives the same output for a JPEG and for the PNG of that JPEG's
# own pixels (decoded by Debian's djpeg, whose settings data/jpeg.c uses): same pixels, same
# resize, same prediction, exactly. The weights record the resize: predict and eval without
# --resize read images so. A damaged JPEG is named, or skipped and counted.
source "$(dirname "${BASH_SOURCE[0]}")/common.bash"

require_python3 "write the test images"
for tool in cjpeg djpeg; do
    if ! command -v "$tool" >/dev/null; then
        echo "SKIP: $tool is needed to write and decode the test JPEGs (apt-get install libjpeg-turbo-progs)"
        exit 77
    fi
done

# DIR/{dark,bright}/N.ppm: colour images of three sizes (28x28, 36x30, 20x24); the even ones
# become JPEG (cjpeg), the odd ones PNG.
python3 - "$work/pets" <<'PY'
import os, struct, sys, zlib

def chunk(kind, data):
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

root = sys.argv[1]
sizes = [(28, 28), (36, 30), (20, 24)]
for name, base in (("dark", 30), ("bright", 190)):
    os.makedirs(os.path.join(root, name), exist_ok=True)
    for i in range(18):
        w, h = sizes[i % 3]
        rgb = bytes((base + (x * 3 + y * 5 + i * 7 + c * 40) % 60) % 256
                    for y in range(h) for x in range(w) for c in range(3))
        stem = os.path.join(root, name, "%02d" % i)
        if i % 2 == 0:
            with open(stem + ".ppm", "wb") as f:
                f.write(b"P6\n%d %d\n255\n" % (w, h) + rgb)
        else:
            rows = b"".join(b"\x00" + rgb[y * w * 3:(y + 1) * w * 3] for y in range(h))
            with open(stem + ".png", "wb") as f:
                f.write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0)) +
                        chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b""))
PY
for ppm in "$work"/pets/*/*.ppm; do
    cjpeg -quality 85 "$ppm" >"${ppm%.ppm}.jpg" && rm "$ppm"
done

sed 's/units=10$/units=2/' models/mlp.model >"$work/two.model"
# with_resize FROM TO [VALUE]: FROM's safetensors with metadata resize=VALUE (none given:
# without the key, as files written before it was recorded) as TO.
with_resize() {
    python3 - "$@" <<'PY'
import json, struct, sys
data = open(sys.argv[1], "rb").read()
size = struct.unpack("<Q", data[:8])[0]
header = json.loads(data[8:8 + size])
header["__metadata__"].pop("resize", None)
if len(sys.argv) > 3: header["__metadata__"]["resize"] = sys.argv[3]
text = json.dumps(header).encode()
open(sys.argv[2], "wb").write(struct.pack("<Q", len(text)) + text + data[8 + size:])
PY
}
train=("$TRAINER" train "$work/two.model" --epochs 2 --batch 8 --device cpu --val-split 0.25)

run "${train[@]}" --data "images:$work/pets"
expect_error 2 "image is 36x30 pixels (WxH), but the split's images are 28x28" \
    "an image of another size than most is refused"
expect_in err "or train with --resize HxW" "the hint names --resize"

run "${train[@]}" --data "images:$work/pets" --resize model --save "$work/w.safetensors" \
    --checkpoint "$work/ck"
expect_rc 0 "a folder of JPEG and PNG images of three sizes trains with --resize model"
expect_in out "images: resized to 28x28 (HxW) where another size, bilinear" \
    "the header says the size and the filter"
expect_in out "27 train, 9 val samples" "every file is read, JPEG and PNG alike"
# The weights record the run's resize (resize=28x28). eval of the folder (no test split)
# without --resize measures the validation split the weights record, resized as in the
# run: the figures of its last epoch.
trained=$(sed -n 's/^epoch 2\/2 .*  val loss \([0-9.]*\) acc \([0-9.]*\) .*/\1 \2/p' <<<"$out")
run "$TRAINER" eval "$work/two.model" --weights "$work/w.safetensors" --device cpu \
    --data "images:$work/pets"
evaluated=$(sed -n 's/^val loss \([0-9.]*\)  accuracy \([0-9.]*\) .*/\1 \2/p' <<<"$out")
if [ "$rc" -eq 0 ] && [ -n "$trained" ] && [ "$evaluated" = "$trained" ]; then
    pass "eval without --resize measures the run's validation images as it did ($trained)"
else fail "eval without --resize measures as the run did" "run: '$trained', eval: '$evaluated'"; fi
expect_in err "trainer: notice: images of another size are resized to 28x28" "with the notice"
run "${train[@]}" --data "images:$work/pets" --resize model --decode stream \
    --save "$work/streamed.safetensors"
expect_rc 0 "streamed (--decode stream), the images are resized as their batches are made"
if cmp -s "$work/w.safetensors" "$work/streamed.safetensors"; then
    pass "into the same weights, byte for byte, the validation split's images included"
else fail "streamed and up-front runs with --resize end with other weights"; fi
run "${train[@]}" --data "png:$work/pets" --resize 28x28
expect_rc 0 "png:DIR is the same reader, and --resize HxW the same as model"
run "${train[@]}" --data "images:$work/pets" --resize 32x32
expect_error 2 "--resize 32x32 does not fit the model's input shape=784" "another size is refused"

# A resume reads the images as the checkpoint's run did: without --resize at the size it
# records, with predict's notice; another --resize is refused.
step=$(ls "$work"/ck/step-*.safetensors | tail -n 1)
run "${train[@]}" --data "images:$work/pets" --epochs 3 --resume "$work/ck"
expect_rc 0 "a resume without --resize trains"
expect_in err "trainer: notice: images of another size are resized to 28x28 (HxW), as \
$step records its run did (--resize 28x28)" "at the size the checkpoint records, and says so"
expect_in out "images: resized to 28x28 (HxW)" "the header says so too"
run "${train[@]}" --data "images:$work/pets" --epochs 3 --resume "$work/ck" --resize none
expect_error 2 "$step: the checkpoint's run resized its images to 28x28 (HxW) where another \
size; this run (--resize none) reads them at their own size: the weights would see other \
inputs than they were trained on" "a resume with --resize none is refused"
expect_in err "hint: resume with --resize 28x28, or without --resize, which takes it" \
    "the hint names the recorded size"
# A checkpoint that records none refuses a --resize; one without the key, as before.
with_resize "$step" "$work/ck-none.safetensors" none
with_resize "$step" "$work/ck-old.safetensors"
run "${train[@]}" --data "images:$work/pets" --epochs 3 --resume "$work/ck-none.safetensors" \
    --resize model
expect_error 2 "the checkpoint's run read its images at their own size; this run (--resize \
model) resizes them to 28x28" "a resize added to a run that read images as they are is refused"
expect_in err "hint: resume without --resize" "the hint says to leave it out"
run "${train[@]}" --data "images:$work/pets" --epochs 3 --resume "$work/ck-old.safetensors" \
    --resize model
expect_rc 0 "a checkpoint without the key resumes with --resize, as before"
# One that records a size the model does not take: no --resize mends a resume, and the hint
# names what does, which then trains.
with_resize "$step" "$work/ck-other.safetensors" 32x32
for given in "" "--resize model"; do
    run "${train[@]}" --data "images:$work/pets" --epochs 3 \
        --resume "$work/ck-other.safetensors" $given
    expect_error 2 "$work/ck-other.safetensors: checkpoint metadata 'resize' is '32x32', which \
does not fit the model's input shape=784" "a resume of a size the model does not take is \
refused${given:+ ($given given)}"
    expect_in err "hint: a resume reads images at the size its checkpoint records, and no \
--resize changes that: start from its weights with \`trainer train $work/two.model --init-from \
$work/ck-other.safetensors\` (and --resize model, none or HxW)" "the hint says what works"
done
run "${train[@]}" --data "images:$work/pets" --init-from "$work/ck-other.safetensors" \
    --resize model
expect_rc 0 "which trains: --init-from with --resize model"

# The PNG of each JPEG's own pixels, as djpeg decodes them.
jpegs=() pngs=()
for jpg in "$work"/pets/*/0[0-8].jpg; do
    djpeg -pnm "$jpg" >"${jpg%.jpg}.pnm"
    python3 - "${jpg%.jpg}.pnm" "${jpg%.jpg}_djpeg.png" <<'PY'
import struct, sys, zlib
def chunk(kind, data):
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
data = open(sys.argv[1], "rb").read()
magic, w, h, top, pixels = data.split(maxsplit=4)
w, h = int(w), int(h)
rows = b"".join(b"\x00" + pixels[y * w * 3:(y + 1) * w * 3] for y in range(h))
open(sys.argv[2], "wb").write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0)) +
                              chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b""))
PY
    jpegs+=("$jpg")
    pngs+=("${jpg%.jpg}_djpeg.png")
done
predict=("$TRAINER" predict "$work/two.model" --weights "$work/w.safetensors" --device cpu --top 2)
run "${predict[@]}" --resize model "${jpegs[@]}"
expect_rc 0 "predict --resize model reads JPEGs of other sizes"
from_jpeg=$(grep -v '^[^ ]' <<<"$out")
resized=$out
run "${predict[@]}" --resize model "${pngs[@]}"
expect_rc 0 "and the PNGs of their pixels"
from_png=$(grep -v '^[^ ]' <<<"$out")
if [ -n "$from_jpeg" ] && [ "$from_jpeg" = "$from_png" ]; then
    pass "the predictions of the ${#jpegs[@]} JPEGs equal those of their pixels as PNG, exactly"
else
    fail "JPEG and PNG of the same pixels predict differently" "$(diff <(echo "$from_jpeg") <(echo "$from_png"))"
fi

# predict without --resize reads images as the run did, with a notice; --resize still wins.
if [ "$(metadata "$work/w.safetensors" resize)" = 28x28 ]; then
    pass "the weights record resize=28x28"
else fail "the weights record resize=28x28" "got '$(metadata "$work/w.safetensors" resize)'"; fi
run "${predict[@]}" "${jpegs[@]}"
if [ "$rc" -eq 0 ] && [ -n "$resized" ] && [ "$out" = "$resized" ]; then
    pass "predict without --resize resizes as the weights record: the same output"
else fail "predict without --resize predicts as with --resize model" "$(diff <(echo "$resized") <(echo "$out"))"; fi
expect_in err "trainer: notice: images of another size are resized to 28x28 (HxW), as \
$work/w.safetensors records its run did (--resize 28x28); --resize none reads them as they are" \
    "and says so"
run "${predict[@]}" --resize none "${jpegs[1]}"
expect_error 2 "but the model takes 28x28" "predict --resize none refuses another size"

# Weights written before the resize was recorded (no key) read images as they are; a
# resize that is not HxW, or that the model's input does not take, is refused, naming the
# file and key.
with_resize "$work/w.safetensors" "$work/old.safetensors"
with_resize "$work/w.safetensors" "$work/bad.safetensors" 28x
with_resize "$work/w.safetensors" "$work/other.safetensors" 32x32
predict_old=("$TRAINER" predict "$work/two.model" --weights "$work/old.safetensors" --device cpu --top 2)
run "${predict_old[@]}" "${jpegs[1]}"
expect_error 2 "but the model takes 28x28" "weights without the key: another size is refused"
run "${predict_old[@]}" --resize model "${jpegs[@]}"
if [ "$rc" -eq 0 ] && [ "$out" = "$resized" ]; then pass "and --resize model predicts as before"
else fail "weights without the key predict with --resize model"; fi
run "$TRAINER" predict "$work/two.model" --weights "$work/bad.safetensors" --device cpu \
    "${jpegs[1]}"
expect_error 2 "$work/bad.safetensors: checkpoint metadata 'resize' is '28x'; expected none or \
HxW" "a malformed resize is refused, naming the file and key"
run "$TRAINER" predict "$work/two.model" --weights "$work/other.safetensors" --device cpu \
    "${jpegs[1]}"
expect_error 2 "$work/other.safetensors: checkpoint metadata 'resize' is '32x32', which does \
not fit the model's input shape=784" "a recorded resize the input does not take is refused"
expect_in err "give --resize model (or none)" "the hint says how to choose"

# A JPEG cut short: named, or skipped and counted.
head -c 300 "${jpegs[0]}" >"$work/pets/dark/zz.jpg"
rm "$work"/pets/*/*_djpeg.png "$work"/pets/*/*.pnm
run "${train[@]}" --data "images:$work/pets" --resize model
expect_error 2 "$work/pets/dark/zz.jpg: cannot decode JPEG" "a damaged JPEG is named"
run "${train[@]}" --data "images:$work/pets" --resize model --on-bad-sample skip
expect_rc 0 "--on-bad-sample skip trains past it"
expect_in out "skipped 1 unreadable sample" "and counts it"

finish

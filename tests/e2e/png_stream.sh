#!/usr/bin/env bash
# --decode stream: a png:DIR read as training goes. Before training only each file's
# header is read; the loader thread decodes each image when its batch is made (training,
# validation and test), into the same bytes as decoding everything up front, so a run
# streamed and one decoded up front end with the same weights, byte for byte (also with a
# validation split, normalization and augmentation). A file damaged past its header stops
# a streamed run when its batch comes, naming it; a wrong size is found before training.
source "$(dirname "${BASH_SOURCE[0]}")/common.bash"
require_fashion_mnist
require_python3 "write a PNG of the wrong size"

run "$TRAINER" data export fashion-mnist "png:$work/png" --limit 300
expect_rc 0 "300 + 300 Fashion-MNIST images exported as PNG folders"
common=(--data "png:$work/png" --device cpu --epochs 2 --batch 32)

run "$TRAINER" train models/mlp.model "${common[@]}" --decode upfront \
    --save "$work/up.safetensors"
expect_rc 0 "decoded up front"
expect_no_match out '^images: decoded as each batch' "up front: no streaming line"
upfront_result=$(last_epoch_result)
run "$TRAINER" train models/mlp.model "${common[@]}" --decode stream \
    --save "$work/st.safetensors"
expect_rc 0 "streamed"
streaming='images: decoded as each batch is made, on the loader thread (--decode stream)'
expect_in out "$streaming; 600 files" \
    "the header says the images are streamed"
if [ "$(last_epoch_result)" = "$upfront_result" ] &&
    cmp -s "$work/up.safetensors" "$work/st.safetensors"; then
    pass "streamed and up-front runs end with the same figures and weights, byte for byte"
else
    fail "streamed and up-front runs end alike" \
        "up front: $upfront_result; streamed: $(last_epoch_result)"
fi

extra=(--val-split 0.2 --normalize auto --augment 'crop=2 flip=true')
run "$TRAINER" train models/lenet.model "${common[@]}" "${extra[@]}" --epochs 1 --decode upfront \
    --save "$work/up2.safetensors"
expect_rc 0 "lenet, validation split, normalization, augmentation: up front"
run "$TRAINER" train models/lenet.model "${common[@]}" "${extra[@]}" --epochs 1 --decode stream \
    --save "$work/st2.safetensors"
expect_rc 0 "the same, streamed"
expect_match out \
    '^normalize: mean 0\.[0-9]+ std 0\.[0-9]+ \(1 value, computed on 240 training samples\)$' \
    "auto normalization decodes the streamed training split once for its mean and std"
if cmp -s "$work/up2.safetensors" "$work/st2.safetensors"; then
    pass "the same weights, byte for byte"
else
    fail "the same weights, byte for byte" "up2 and st2 differ"
fi

# Damage past the header: the header check passes, the decode does not.
victim=$(ls "$work/png/train/3_Dress"/*.png | head -n 1)
size=$(stat -c %s "$victim")
head -c $((size - 40)) "$victim" >"$work/cut.png" && mv "$work/cut.png" "$victim"
run "$TRAINER" train models/mlp.model "${common[@]}" --decode stream
expect_error 2 "$victim" "a damaged file stops the streamed run, naming it"
expect_in err "cannot decode PNG" "what was wrong with it"
expect_in err "--decode upfront reads every image first" "the hint says how to find them all first"
own_hint="  hint: the file is damaged or cut short; export or download it again"
expect_in err "$own_hint; with --decode stream" "after the file's own hint"
run "$TRAINER" train models/mlp.model "${common[@]}" --decode upfront --on-bad-sample skip
expect_rc 0 "decoded up front, the damaged file is skipped"
expect_in out "skipped 1 unreadable sample" "and counted"

# A wrong size is in the header: found before training.
python3 - "$work/png/train/4_Coat/wide.png" <<'PY'
import struct, sys, zlib
def chunk(kind, data):
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
rows = b"".join(b"\x00" + bytes(30) for _ in range(28))
png = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 30, 28, 8, 0, 0, 0, 0))
png += chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b"")
open(sys.argv[1], "wb").write(png)
PY
rm -f "$victim"
run "$TRAINER" train models/mlp.model "${common[@]}" --decode stream
# mlp.model's input is flat (784): the size to match is the one most images have.
expect_error 2 "image is 30x28 pixels (WxH), but the split's images are 28x28 (the most" \
    "a wrong size is refused before training"
expect_no_match out '^epoch ' "no epoch ran"

run "$TRAINER" train models/mlp.model --data fashion-mnist --decode stream --epochs 1
expect_error 2 \
    "--decode stream decodes PNG folders as batches are made, but fashion-mnist is read whole" \
    "streaming an IDX dataset is refused"
run "$TRAINER" train models/mlp.model "${common[@]}" --decode later
expect_error 2 "--decode later: expected auto, upfront or stream" "an unknown --decode"

finish

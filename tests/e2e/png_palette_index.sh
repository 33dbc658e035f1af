#!/usr/bin/env bash
# A palette PNG whose pixels hold an index at or past the PLTE's entry count is a bad
# sample naming the file, the largest index and the entry count (libpng reads such pixels
# as black, and they trained as black without a word); --on-bad-sample skip leaves it out,
# and a palette image with every index in range trains.
source "$(dirname "${BASH_SOURCE[0]}")/common.bash"

require_python3 "write the test PNGs"

for split in train test; do
    count=8
    [ "$split" = test ] && count=4
    write_class_pngs "$work/pets/$split/cat" 10 "$count"
    write_class_pngs "$work/pets/$split/dog" 200 "$count"
done
sed 's/units=10$/units=2/' models/mlp.model >"$work/two.model"
two=("$TRAINER" train "$work/two.model" --epochs 1 --batch 8 --device cpu)

# write_palette_png FILE LARGEST: a 28x28 8-bit palette PNG with 16 PLTE entries whose
# pixels cycle through 0..15, but for the last pixel of the first row, LARGEST: where
# libpng's own index check (which skips each row's last byte) does not look.
write_palette_png() {
    python3 - "$1" "$2" <<'PY'
import struct, sys, zlib

def chunk(kind, data):
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

path, largest = sys.argv[1], int(sys.argv[2])
rows = [bytearray((x + y) % 16 for x in range(28)) for y in range(28)]
rows[0][27] = largest
palette = b"".join(bytes([16 * i, 255 - 16 * i, 8 * i]) for i in range(16))
with open(path, "wb") as f:
    f.write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 28, 28, 8, 3, 0, 0, 0))
            + chunk(b"PLTE", palette)
            + chunk(b"IDAT", zlib.compress(b"".join(b"\x00" + bytes(r) for r in rows)))
            + chunk(b"IEND", b""))
PY
}

bad="$work/pets/train/dog/zz.png"
write_palette_png "$bad" 17
run "${two[@]}" --data "png:$work/pets"
expect_error 2 "$bad: cannot decode PNG: pixel index 17 is past the palette's 16 entries \
(indices 0 to 15)" "an index past the palette is a bad sample naming the file and the values"
expect_match err '^  hint: .*damaged' "its hint says the file is damaged"
run "${two[@]}" --data "png:$work/pets" --on-bad-sample skip
expect_rc 0 "--on-bad-sample skip trains past it"
expect_in out "skipped 1 unreadable sample (--on-bad-sample skip)" "and counts it at the end"
run "${two[@]}" --data "png:$work/pets" --decode stream
expect_error 2 "cannot decode PNG: pixel index 17 is past the palette's 16 entries" \
    "streamed, it stops the run when its batch comes"
expect_in err "trainer: error: $bad: " "naming the file"

write_palette_png "$bad" 16
run "${two[@]}" --data "png:$work/pets"
expect_error 2 "pixel index 16 is past the palette's 16 entries" \
    "an index equal to the entry count is past the palette too"

write_palette_png "$bad" 15
run "${two[@]}" --data "png:$work/pets"
expect_rc 0 "a palette image with every index in range trains"
expect_in out "data $work/pets: 17 train, 8 test samples" "and is kept"

finish

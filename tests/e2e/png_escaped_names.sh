#!/usr/bin/env bash
# Folder and file names of a png:DIR are bytes anyone chose: a class folder or an image
# named with an escape sequence reaches train's `classes:` line, `data info` and the error
# naming a bad image escaped (\x1b), never as a raw ESC byte that drives the terminal.
source "$(dirname "${BASH_SOURCE[0]}")/common.bash"
require_python3 "write the test PNGs"

esc=$'\x1b'
# DIR/{b,cl ESC[1mA}/N.png: 28x28 gray.
write_class_pngs "$work/pe/b" 10 8
write_class_pngs "$work/pe/cl${esc}[1mA" 200 8

# expect_no_raw_esc WHAT: neither stream of the last run holds an ESC byte.
expect_no_raw_esc() {
    local count
    count=$(printf '%s\n%s\n' "$out" "$err" | grep -c "$esc")
    if [ "$count" -eq 0 ]; then pass "$1: no raw ESC byte"
    else fail "$1: no raw ESC byte" "$count line(s) hold one"; fi
}

train=("$TRAINER" train models/mlp.model --epochs 1 --batch 4 --device cpu --val-split 0.25)
run "${train[@]}" --data "png:$work/pe"
expect_rc 0 "a class folder named with an escape sequence trains"
expect_in out 'classes: 0=b 1=cl\x1b[1mA' "train's classes: line shows the name escaped"
expect_no_raw_esc "train"

run "$TRAINER" data info "png:$work/pe"
expect_rc 0 "data info reads it"
expect_in out 'cl\x1b[1mA' "data info shows the class name escaped"
expect_no_raw_esc "data info"

printf 'not a png' >"$work/pe/b/x${esc}[7m.png"
run "${train[@]}" --data "png:$work/pe"
expect_error 2 'pe/b/x\x1b[7m.png: not a PNG file' "a bad image's name is escaped in the error"
expect_no_raw_esc "the error naming a bad image"
run "${train[@]}" --data "png:$work/pe" --decode stream
expect_error 2 'pe/b/x\x1b[7m.png: not a PNG file' "... when streamed, checked at the start"
expect_no_raw_esc "the streamed check's error"

# A sound header and damaged pixels: streamed, it fails only when its batch is decoded.
python3 - "$work/pe/b/00.png" "$work/pe/b/x${esc}[7m.png" <<'PY'
import sys
data = bytearray(open(sys.argv[1], "rb").read())
data[data.index(b"IDAT") + 4 + 10] ^= 0xFF
open(sys.argv[2], "wb").write(bytes(data))
PY
run "${train[@]}" --data "png:$work/pe" --decode stream
expect_error 2 'pe/b/x\x1b[7m.png: epoch 1, step' "a damaged image found mid-training is named"
expect_in err "cannot decode PNG" "... as damaged"
expect_no_raw_esc "the error from a streamed batch"
finish

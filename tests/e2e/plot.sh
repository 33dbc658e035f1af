#!/usr/bin/env bash
# `trainer plot` draws a run logged with --logdir into a PNG that reads back as a valid
# 1000x800 RGB image (its header and every row's pixels, through zlib); a missing log, an
# empty one and a malformed line are errors in the project's format.
source "$(dirname "${BASH_SOURCE[0]}")/common.bash"

make_dataset "$work/data" 640 64
run "$TRAINER" train models/mlp.model --data "idx:$work/data" --device cpu --epochs 2 \
    --batch 16 --logdir "$work/logs"
expect_rc 0 "a small run with --logdir trains"

run "$TRAINER" plot "$work/logs" -o "$work/curves.png"
expect_rc 0 "trainer plot writes the curves"
expect_in out "wrote $work/curves.png (1000 x 800)" "it says what it wrote"

# The PNG's IHDR, then its IDAT stream inflated: one filter byte and width * 3 bytes a row.
check=$(python3 - "$work/curves.png" 2>&1 <<'PYTHON'
import struct, sys, zlib
data = open(sys.argv[1], "rb").read()
assert data[:8] == b"\x89PNG\r\n\x1a\n", "no PNG signature"
pos, idat, header = 8, b"", None
while pos < len(data):
    length, kind = struct.unpack(">I4s", data[pos:pos + 8])
    body = data[pos + 8:pos + 8 + length]
    stored = struct.unpack(">I", data[pos + 8 + length:pos + 12 + length])[0]
    assert zlib.crc32(kind + body) == stored, f"bad CRC in {kind}"
    if kind == b"IHDR": header = struct.unpack(">IIBBBBB", body)
    if kind == b"IDAT": idat += body
    pos += 12 + length
width, height, depth, color = header[:4]
pixels = zlib.decompress(idat)
assert len(pixels) == height * (1 + width * 3), f"{len(pixels)} bytes of pixels"
print(f"ok {width}x{height} depth {depth} color type {color}")
PYTHON
)
if [ "$check" = "ok 1000x800 depth 8 color type 2" ]; then pass "the PNG reads back: $check"
else fail "the PNG reads back as 1000x800 RGB" "$check"; fi

run "$TRAINER" plot "$work/logs"
expect_rc 0 "without -o it writes DIR/curves.png"
[ -s "$work/logs/curves.png" ] && pass "DIR/curves.png exists" || fail "DIR/curves.png exists"

run "$TRAINER" plot "$work/nowhere" -o "$work/x.png"
expect_error 2 "$work/nowhere: cannot read the metrics log" "a missing log is an error"

mkdir -p "$work/empty" && : >"$work/empty/metrics.jsonl"
run "$TRAINER" plot "$work/empty" -o "$work/x.png"
expect_error 2 "no loss to plot" "a log without rows is an error"

mkdir -p "$work/bad" && { head -n 2 "$work/logs/metrics.jsonl"; echo '{"kind": "step", '; } \
    >"$work/bad/metrics.jsonl"
run "$TRAINER" plot "$work/bad" -o "$work/x.png"
expect_error 2 "$work/bad/metrics.jsonl:3:1: not valid JSON" "a malformed line is named by file:line"

# With --val-split the epochs are evaluated on the validation split, and the log says so.
run "$TRAINER" train models/mlp.model --data "idx:$work/data" --device cpu --epochs 2 \
    --batch 16 --val-split 0.25 --logdir "$work/val-logs"
expect_rc 0 "a run with --val-split and --logdir trains"
if grep -q '"kind":"epoch".*"val_loss".*"val_accuracy"' "$work/val-logs/metrics.jsonl" &&
    ! grep -q '"test_accuracy"' "$work/val-logs/metrics.jsonl"; then
    pass "its epoch rows carry val_loss and val_accuracy, not test figures"
else fail "its epoch rows carry val_loss and val_accuracy, not test figures"; fi
run "$TRAINER" plot "$work/val-logs" -o "$work/val.png"
expect_rc 0 "trainer plot draws the validation curve"

run "$TRAINER" plot --help
expect_rc 0 "plot --help"
expect_in out "usage: trainer plot DIR" "the help shows the usage"

finish

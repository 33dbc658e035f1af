#!/usr/bin/env bash
# `trainer plot` draws a run logged with --logdir into a PNG that reads back as a valid
# 1000x800 RGB image (its header and every row's pixels, through zlib); tiny losses keep
# their tick labels inside the image and the legend stays off the curves; a missing log,
# an empty one and a malformed line are errors in the project's format, an unfinished
# last line is passed over, and what is not a regular file is refused before it is read.
# The default image goes beside the log; -o never replaces the log or a file that is not
# a PNG, and `-o=FILE` says to write `-o FILE`. The legend names only the curves drawn, a
# value that is not finite or over 1e300 in size is left out with a notice (a step there is
# refused) while the panels keep one step axis, and --val-split's final test row is drawn
# beside the val curve.
source "$(dirname "${BASH_SOURCE[0]}")/common.bash"

make_dataset "$work/data" 640 64

# python3 that imports tests/e2e/png_rows.py (and writes no __pycache__ into the sources).
png_python=(env PYTHONDONTWRITEBYTECODE=1 PYTHONPATH="$(dirname "${BASH_SOURCE[0]}")" python3)

# color_spans PNG FROM TO R,G,B...: for each colour, in rows FROM to TO-1 of the image, how
# many pixels have it and the leftmost and rightmost column holding one ("0 -1 -1": none).
color_spans() {
    "${png_python[@]}" - "$@" <<'PYTHON'
import sys
from png_rows import rgb_rows
width, height, rows = rgb_rows(sys.argv[1])
first, last = int(sys.argv[2]), int(sys.argv[3])
colors = [bytes(int(v) for v in rgb.split(",")) for rgb in sys.argv[4:]]
spans = {c: [0, -1, -1] for c in colors}
for y in range(first, min(last, height)):
    line = rows[y]
    for x in range(width):
        span = spans.get(bytes(line[3 * x:3 * x + 3]))
        if span is None: continue
        span[0] += 1
        span[1] = x if span[1] < 0 else min(span[1], x)
        span[2] = max(span[2], x)
print(" ".join(" ".join(map(str, spans[c])) for c in colors))
PYTHON
}
TRAIN_RGB=31,119,180 EVALUATED_RGB=230,85,13 FINAL_TEST_RGB=44,160,44
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

# A log written by hand: losses of 1.2e-4 (their tick labels once ran off the image's left
# edge) and an accuracy that jumps across the whole panel (the legend, drawn inside the
# plot, covered it). The image's leftmost columns must be blank, and no text (black ink)
# may lie inside a plot's frame: only grid, curves and white.
mkdir -p "$work/small"
python3 - "$work/small/metrics.jsonl" <<'PYTHON'
import json, math, sys
with open(sys.argv[1], "w") as log:
    for step in range(1, 201):
        row = {"kind": "step", "step": step, "epoch": 1 + (step - 1) // 20,
               "loss": 0.00012 + 0.0002 * math.exp(-step / 50),
               "accuracy": 1.0 if step % 2 else 0.98}
        log.write(json.dumps(row) + "\n")
        if step % 20 == 0:
            row.update(kind="epoch", test_loss=row["loss"] * 1.1, test_accuracy=0.99)
            log.write(json.dumps(row) + "\n")
PYTHON
run "$TRAINER" plot "$work/small" -o "$work/small.png"
expect_rc 0 "trainer plot draws losses of 1.2e-4"
layout=$("${png_python[@]}" - "$work/small.png" 2>&1 <<'PYTHON'
import sys
from png_rows import rgb_rows
width, height, rows = rgb_rows(sys.argv[1])
black = lambda x, y: rows[y][3 * x:3 * x + 3] == b"\0\0\0"
white = lambda x, y: rows[y][3 * x:3 * x + 3] == b"\xff\xff\xff"
problems = []
if not all(white(x, y) for y in range(height) for x in range(4)):
    problems.append("ink in the 4 leftmost columns: a tick label runs off the image")
for top in (0, height // 2):  # the two panels: the frame is their long black lines
    span = range(top, top + height // 2)
    columns = [x for x in range(width) if sum(black(x, y) for y in span) > 200]
    lines = [y for y in span if sum(black(x, y) for x in range(width)) > 600]
    if not columns or not lines:
        problems.append(f"no frame found in the panel at row {top}")
        continue
    inside = sum(black(x, y) for y in range(lines[0] + 2, lines[-1] - 1)
                 for x in range(columns[0] + 2, columns[-1] - 1))
    if inside: problems.append(f"{inside} black pixels inside the frame at row {top}")
print("; ".join(problems) or "ok")
PYTHON
)
if [ "$layout" = ok ]; then pass "labels stay in the image and the legend off the curves"
else fail "labels stay in the image and the legend off the curves" "$layout"; fi

# A log of step rows only (a run stopped in its first epoch): the legend listed `test`, a
# curve it did not draw. Nothing orange now, the training curve's blue still there.
mkdir -p "$work/steps" && grep '"kind":"step"' "$work/logs/metrics.jsonl" | head -n 5 \
    >"$work/steps/metrics.jsonl"
run "$TRAINER" plot "$work/steps" -o "$work/steps.png"
expect_rc 0 "a log of step rows only plots"
read -r train_pixels _ _ evaluated_pixels _ < <(color_spans "$work/steps.png" 0 800 \
    "$TRAIN_RGB" "$EVALUATED_RGB")
if [ "$evaluated_pixels" = 0 ] && [ "$train_pixels" -gt 0 ]; then
    pass "... its legend names only the training curve"
else fail "... its legend names only the training curve" \
    "$train_pixels train pixels, $evaluated_pixels of the evaluated split's colour"; fi

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

# A NUL byte in a row is named where it is (it read as "not valid JSON" at column 1).
mkdir -p "$work/nul" && { head -n 1 "$work/logs/metrics.jsonl"; printf '{"kind":\0"step"}\n'; } \
    >"$work/nul/metrics.jsonl"
run "$TRAINER" plot "$work/nul" -o "$work/x.png"
expect_error 2 "$work/nul/metrics.jsonl:2:9: a NUL byte (0x00): JSON text holds none" \
    "a NUL byte in the metrics log is named at its line and column"

# Two rows run together on one line (a row appended to a last row without its newline)
# read as the first alone, the second lost without a word: now the line is not valid JSON.
mkdir -p "$work/joined" && { head -n 1 "$work/logs/metrics.jsonl" | tr -d '\n'
    tail -n +2 "$work/logs/metrics.jsonl"; } >"$work/joined/metrics.jsonl"
run "$TRAINER" plot "$work/joined" -o "$work/x.png"
expect_error 2 "$work/joined/metrics.jsonl:1:1: not valid JSON" "two rows on one line are refused"

# A log whose last line is cut short (a run killed mid-write, or still writing it) plots
# the rows before it, with a notice; it was refused as "not valid JSON" (exit 2).
mkdir -p "$work/cut" && { cat "$work/logs/metrics.jsonl"; printf '{"kind":"step","st'; } \
    >"$work/cut/metrics.jsonl"
lines=$(($(wc -l <"$work/logs/metrics.jsonl") + 1))
run "$TRAINER" plot "$work/cut" -o "$work/cut.png"
expect_rc 0 "a log ending in an unfinished line plots"
expect_in err "notice: $work/cut/metrics.jsonl:$lines: the last line is unfinished" \
    "... saying which line it passed over"
{ cat "$work/cut/metrics.jsonl"; echo; cat "$work/logs/metrics.jsonl"; } >"$work/cut/middle"
run "$TRAINER" plot "$work/cut/middle" -o "$work/cut.png"
expect_error 2 "$work/cut/middle:$lines:1: not valid JSON" "a cut line in the middle is an error"

# A line of 2 MiB is no row trainer wrote: refused by its number, not read into memory.
python3 -c 'import sys; sys.stdout.write("{\"kind\":\"step\",\"step\":1,\"loss\":1,\"pad\":\"" +
    "x" * (2 << 20) + "\"}\n")' >"$work/long.jsonl"
run "$TRAINER" plot "$work/long.jsonl" -o "$work/x.png"
expect_error 2 "$work/long.jsonl:1:1: a line longer than 1048576 bytes" "an endless line is refused"

# Not a regular file: a FIFO (given, or as DIR/metrics.jsonl) blocked the open forever and
# /dev/zero is read forever; all are refused before they are read.
mkfifo "$work/fifo" && mkdir "$work/fifo-dir" && mkfifo "$work/fifo-dir/metrics.jsonl"
for log in "$work/fifo" "$work/fifo-dir"; do
    run timeout 20 "$TRAINER" plot "$log" -o "$work/x.png"
    expect_error 2 "the metrics log is a FIFO (named pipe), not a regular file" \
        "plot $(basename "$log") (a FIFO) is refused, not waited on"
done
run timeout 20 "$TRAINER" plot /dev/zero -o "$work/x.png"
expect_error 2 "/dev/zero: the metrics log is a character device" "plot /dev/zero is refused"

# The log's own path without -o: the image goes beside it (it went to metrics.jsonl/curves.png).
rm -f "$work/logs/curves.png"
run "$TRAINER" plot "$work/logs/metrics.jsonl"
expect_rc 0 "plot DIR/metrics.jsonl without -o"
expect_in out "wrote $work/logs/curves.png" "... writes DIR/curves.png, beside the log"
rm -f "$work/logs/curves.png"
(cd "$work/logs" && "$TRAINER" plot metrics.jsonl >/dev/null 2>&1) &&
    [ -s "$work/logs/curves.png" ] && pass "plot metrics.jsonl in its folder writes ./curves.png" ||
    fail "plot metrics.jsonl in its folder writes ./curves.png"

# -o one slip away from the log or a model file: refused, the file untouched. An earlier
# image is replaced, by a whole new one (written beside it, then renamed).
sum=$(md5sum <"$work/logs/metrics.jsonl")
run "$TRAINER" plot "$work/logs" -o "$work/logs/metrics.jsonl"
expect_error 2 "-o names the metrics log being plotted" "-o the log itself is refused"
[ "$(md5sum <"$work/logs/metrics.jsonl")" = "$sum" ] && pass "... the log is untouched" ||
    fail "... the log is untouched"
cp models/mlp.model "$work/mlp.model"
run "$TRAINER" plot "$work/logs" -o "$work/mlp.model"
expect_error 2 "$work/mlp.model: the file exists and is not a PNG image" \
    "-o an existing file that is not a PNG is refused"
cmp -s models/mlp.model "$work/mlp.model" && pass "... the file is untouched" ||
    fail "... the file is untouched"
run "$TRAINER" plot "$work/logs" -o "$work/logs/curves.png"
expect_rc 0 "-o an earlier PNG replaces it"
run "$TRAINER" plot "$work/logs" -o "$work/no-such-folder/curves.png"
expect_error 2 "the folder $work/no-such-folder does not exist" "-o in a missing folder: exit 2"
ls "$work/logs"/*.tmp >/dev/null 2>&1 && fail "no temporary file is left" ||
    pass "no temporary file is left"

# With --val-split the epochs are evaluated on the validation split, and the log says so.
# The test split, evaluated once after the last epoch, is the log's last row (it was
# printed and logged nowhere).
val_run=("$TRAINER" train models/mlp.model --data "idx:$work/data" --device cpu --epochs 2
    --batch 16 --val-split 0.25 --logdir "$work/val-logs" --checkpoint "$work/val-ck")
run "${val_run[@]}"
expect_rc 0 "a run with --val-split and --logdir trains"
val_log="$work/val-logs/metrics.jsonl"
if grep -q '"kind":"epoch".*"val_loss".*"val_accuracy"' "$val_log" &&
    ! grep '"kind":"epoch"' "$val_log" | grep -q '"test_accuracy"'; then
    pass "its epoch rows carry val_loss and val_accuracy, not test figures"
else fail "its epoch rows carry val_loss and val_accuracy, not test figures"; fi
test_line=$(grep '^test loss ' <<<"$out")
last_step=$(grep '"kind":"epoch"' "$val_log" | tail -n 1 | sed 's/.*"step":\([0-9]*\),.*/\1/')
test_accuracy=$(sed -n 's/^test loss [0-9.]* acc \([0-9.]*\) .*/\1/p' <<<"$test_line")
test_row="^{\"kind\":\"test\",\"step\":$last_step,\"epoch\":2,\"test_loss\":"
if tail -n 1 "$val_log" | grep -q "$test_row" &&
    [ "$(tail -n 1 "$val_log" | sed 's/.*"test_accuracy":\([0-9.e-]*\),.*/\1/' |
        xargs printf '%.4f')" = "$test_accuracy" ] &&
    [ "$(grep -c '"kind":"test"' "$val_log")" -eq 1 ]; then
    pass "the final test evaluation is the log's last row, at the last step ($test_line)"
else fail "the final test evaluation is the log's last row" "$(tail -n 2 "$val_log")"; fi
# Resumed at its last step, the run has nothing to train but evaluates the test split
# again: its row replaces the earlier one, which is not logged twice.
run "${val_run[@]}" --resume "$work/val-ck"
expect_rc 0 "the run resumed with nothing left to train"
if [ "$(grep -c '"kind":"test"' "$val_log")" -eq 1 ] &&
    tail -n 1 "$val_log" | grep -q "^{\"kind\":\"test\",\"step\":$last_step,"; then
    pass "a resume at the last step keeps one test row"
else fail "a resume at the last step keeps one test row" "$(grep -c . "$val_log") rows"; fi
run "$TRAINER" plot "$work/val-logs" -o "$work/val.png"
expect_rc 0 "trainer plot draws the validation curve"
# The test row was never drawn: it is a green diamond at the last step in both panels,
# beside the orange val curve, and the legend names it (rows 0 to 33: the loss legend).
spans=$(for rows in "0 34" "34 400" "434 800"; do
    color_spans "$work/val.png" $rows "$EVALUATED_RGB" "$FINAL_TEST_RGB"; done)
problems=$(awk 'NR == 1 && $4 == 0 { print "no test entry in the legend" }
    NR > 1 && $1 == 0 { print "no val curve in panel " NR - 1 }
    NR > 1 && ($4 == 0 || $6 < 900) { print "no test point at the last step in panel " NR - 1 }
    ' <<<"$spans")
if [ -z "$problems" ]; then pass "... and the test row as a point of its own, in both panels"
else fail "... and the test row as a point of its own, in both panels" "$problems"; fi

# Numbers too large for a double read as infinity: a step there is refused, a loss there is
# left out like a diverged run's null (it was drawn at infinity).
mkdir -p "$work/huge"
printf '{"kind":"step","step":1e999,"loss":1}\n' >"$work/huge/metrics.jsonl"
run "$TRAINER" plot "$work/huge" -o "$work/huge.png"
expect_error 2 "metrics.jsonl:1:1: a row whose \"step\" is not finite" "an infinite step"
printf '{"kind":"step","step":1,"loss":1e999}\n' >"$work/huge/metrics.jsonl"
run "$TRAINER" plot "$work/huge" -o "$work/huge.png"
expect_error 2 "metrics.jsonl:1: no loss to plot: 1 row, none with a finite loss (1 value not" \
    "an infinite loss is left out"

# Steps of -1e308 and 1e308 are finite, but no axis holds them: the span overflowed into a
# NaN axis and the tick labels into undefined behaviour (UBSan: negation of INT_MIN). A
# step over 1e300 in size is refused; a loss or accuracy over it is left out with the
# notice, and the rest is drawn.
printf '%s\n' '{"kind":"step","step":-1e308,"loss":1}' '{"kind":"step","step":1e308,"loss":2}' \
    >"$work/huge/metrics.jsonl"
run "$TRAINER" plot "$work/huge" -o "$work/huge.png"
expect_error 2 "metrics.jsonl:1:1: a row whose \"step\" is over 1e+300 in size" \
    "a step of -1e308 is refused"
printf '%s\n' '{"kind":"step","step":1,"loss":1e308,"accuracy":0.5}' \
    '{"kind":"step","step":2,"loss":-1e308,"accuracy":1e301}' \
    '{"kind":"step","step":3,"loss":0.7,"accuracy":0.7}' >"$work/huge/metrics.jsonl"
run "$TRAINER" plot "$work/huge" -o "$work/huge.png"
expect_rc 0 "a log with losses of 1e308 plots"
expect_in err "metrics.jsonl:1: 3 values are not finite (null or beyond a double's range, as \
a diverging run logs it) or over 1e+300 in size, left out of the plot" \
    "... leaving them out with a notice"
[ -s "$work/huge.png" ] && pass "... and writes the image" || fail "... and writes the image"

# A diverged run's log is one to plot: a loss of 1e999 (or null) at step 16 was dropped
# without a word, and the loss panel's step axis (31 to 33, around its one point) no longer
# lined up with the accuracy's (16 to 32). The value is left out with a notice, and both
# panels run over every row's steps: the loss at step 32 sits above the accuracy's.
mkdir -p "$work/inf"
printf '%s\n' '{"kind":"step","step":16,"epoch":1,"loss":1e999,"accuracy":0.5}' \
    '{"kind":"step","step":32,"epoch":1,"loss":0.7,"accuracy":0.6}' >"$work/inf/metrics.jsonl"
run "$TRAINER" plot "$work/inf" -o "$work/inf.png"
expect_rc 0 "a log with an infinite loss plots"
expect_in err "trainer: notice: $work/inf/metrics.jsonl:1: 1 value is not finite" \
    "... saying how many values it left out and the first one's line"
# Rows 34 to 399 and 434 to 799: each panel below its legend.
read -r loss_pixels loss_left loss_right < <(color_spans "$work/inf.png" 34 400 "$TRAIN_RGB")
read -r accuracy_pixels accuracy_left accuracy_right < <(color_spans "$work/inf.png" 434 800 \
    "$TRAIN_RGB")
if [ "$loss_pixels" -gt 0 ] && [ "$accuracy_pixels" -gt 0 ] &&
    [ $((loss_right - accuracy_right)) -le 4 ] && [ $((accuracy_right - loss_right)) -le 4 ] &&
    [ $((accuracy_right - accuracy_left)) -gt 800 ]; then
    pass "... on one step axis: step 32 is column $loss_right above, $accuracy_right below"
else fail "... on one step axis" \
    "loss columns $loss_left..$loss_right, accuracy $accuracy_left..$accuracy_right"; fi

# `-o=FILE` said "unknown option '-o' for plot; did you mean '-o'?". The long option takes
# `--output=FILE`; the short one takes its value after a space, and says so.
run "$TRAINER" plot "$work/logs" -o="$work/eq.png"
expect_error 2 "-o=$work/eq.png: a short option takes its value after a space, not '='" \
    "-o=FILE is refused, saying why"
expect_in err "hint: write -o $work/eq.png" "... and how to write it"
expect_no_match err "did you mean" "... without suggesting the option it names"
[ -e "$work/eq.png" ] && fail "... and writes nothing" || pass "... and writes nothing"
run "$TRAINER" plot "$work/logs" --output="$work/eq.png"
expect_rc 0 "--output=FILE is accepted"

run "$TRAINER" plot --help
expect_rc 0 "plot --help"
expect_in out "usage: trainer plot DIR" "the help shows the usage"

finish

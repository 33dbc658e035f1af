#!/usr/bin/env bash
# Class folders named in UTF-8 ("Größe", "猫") read as their owner wrote them in `data info`,
# train's `classes:` line and predict's results, whose columns stay lined up; a folder
# name with an ESC or a right-to-left override is still escaped (\x1b, \xe2\x80\xae), so
# neither reaches the terminal raw.
source "$(dirname "${BASH_SOURCE[0]}")/common.bash"
require_python3 "write the test PNGs and measure columns"

esc=$'\x1b'
override=$'\xe2\x80\xae'  # U+202E: what follows it reads right to left
# DIR/{Größe,ab<U+202E>cd,e ESC[2Jsc,猫}/N.png: 28x28 gray, in that (byte) order.
write_class_pngs "$work/u8/Größe" 10 8
write_class_pngs "$work/u8/ab${override}cd" 70 8
write_class_pngs "$work/u8/e${esc}[2Jsc" 130 8
write_class_pngs "$work/u8/猫" 200 8

# expect_no_raw BYTES WHAT: neither stream of the last run holds BYTES.
expect_no_raw() {
    if printf '%s\n%s\n' "$out" "$err" | grep -qF -- "$1"; then
        fail "$2" "a line holds the raw bytes"
    else pass "$2"; fi
}

# expect_aligned PATTERN WHAT: in stdout's lines that match PATTERN (a Python regular
# expression with one group: the text before the column that must line up), that text
# takes the same number of terminal columns in each, CJK characters counting two.
expect_aligned() {
    local widths
    widths=$(printf '%s\n' "$out" | python3 -c '
import re, sys, unicodedata
pattern = re.compile(sys.argv[1])
def columns(text):
    return sum(0 if unicodedata.combining(c) else
               2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)
for line in sys.stdin.buffer.read().decode("utf-8").splitlines():
    m = pattern.match(line)
    if m: print(columns(m.group(1)))
' "$1" 2>&1)
    if [ "$(sort -u <<<"$widths" | wc -l)" -eq 1 ] && [ "$(wc -l <<<"$widths")" -ge 4 ]; then
        pass "$2"
    else fail "$2" "columns before it: $(tr '\n' ' ' <<<"$widths")"; fi
}

run "$TRAINER" data info "png:$work/u8"
expect_rc 0 "data info reads class folders named in UTF-8"
expect_in out "class   0 Größe " "data info shows 'Größe' as it is"
expect_in out "class   3 猫 " "data info shows '猫' as it is"
expect_in out 'class   1 ab\xe2\x80\xaecd ' "a right-to-left override is escaped"
expect_in out 'class   2 e\x1b[2Jsc ' "an ESC is escaped"
expect_aligned '^(  class .*)$' "data info's counts line up"
expect_no_raw "$esc" "data info: no raw ESC byte"
expect_no_raw "$override" "data info: no raw U+202E"

weights="$work/u8.safetensors"
run "$TRAINER" train models/mlp.model --epochs 1 --batch 4 --device cpu --val-split 0.25 \
    --data "png:$work/u8" --save "$weights"
expect_rc 0 "a dataset with UTF-8 class folders trains"
expect_in out 'classes: 0=Größe 1=ab\xe2\x80\xaecd 2=e\x1b[2Jsc 3=猫' \
    "train's classes: line shows UTF-8 names as they are, controls escaped"
expect_no_raw "$esc" "train: no raw ESC byte"
expect_no_raw "$override" "train: no raw U+202E"

run "$TRAINER" predict models/mlp.model --weights "$weights" "$work/u8/猫/00.png" --top 10 \
    --device cpu
expect_rc 0 "predict an image in a folder named in UTF-8"
expect_match out "^$work/u8/猫/00\\.png$" "the image's path is shown as it is"
expect_match out "^  Größe +[0-9]" "the class 'Größe' is shown as it is"
expect_match out "^  猫 +[0-9]" "the class '猫' is shown as it is"
expect_in out '  e\x1b[2Jsc ' "a class name with an ESC is escaped"
expect_aligned '^(  .* )[0-9.e-]+$' "predict's probabilities line up"
expect_no_raw "$esc" "predict: no raw ESC byte"
expect_no_raw "$override" "predict: no raw U+202E"
finish

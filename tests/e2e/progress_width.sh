#!/usr/bin/env bash
# The progress bar fits the terminal it is drawn on. It is redrawn with `\r\033[K`, which
# clears only the cursor's line: a bar wider than the terminal (86 columns on an 80-column
# one) wrapped, and every redraw left its first part behind. Each drawn line must be
# shorter than the terminal, read from the terminal itself (stty), not from $COLUMNS.
source "$(dirname "${BASH_SOURCE[0]}")/common.bash"
require_fashion_mnist
require_python3 "split the terminal's output into the bar's redraws"
if ! command -v script >/dev/null; then
    echo "SKIP: util-linux script is needed to give the trainer a terminal"
    exit 77
fi

# bar_lines COLUMNS: trains on a terminal COLUMNS wide; $out holds each redraw of the bar,
# one a line, as the terminal received it: the text between two `\r\033[K`. What follows the
# last one, the clear before the epoch's line, is ended by a newline and is no redraw.
bar_lines() {
    local command="stty cols $1; unset COLUMNS; exec $TRAINER train models/mlp.model \
--data fashion-mnist --train-limit 2048 --test-limit 256 --epochs 1 --batch 16 --device cpu"
    run script -qec "$command" /dev/null
    out=$(python3 -c 'import re, sys
text = sys.stdin.buffer.read().decode("utf-8", "replace")
for part in text.split("\r\x1b[K")[1:]:
    if part and not re.search(r"[\r\n\x1b]", part): print(part)' <<<"$out")
}

# Each width once: every redraw fits it, and the widest show what fits.
for columns in 80 60 50 40; do
    bar_lines "$columns"
    expect_rc 0 "training on a $columns-column terminal"
    expect_match out '^epoch 1/1 ' "the bar is drawn on a $columns-column terminal"
    longest=$(awk '{ if (length($0) > n) n = length($0) } END { print n + 0 }' <<<"$out")
    if [ "$longest" -lt "$columns" ]; then
        pass "every redraw fits $columns columns (longest $longest)"
    else fail "every redraw fits $columns columns" "a redraw is $longest columns long"; fi
    case $columns in
    80) expect_match out \
        '^epoch 1/1 \[#+\.*\] 128/128  loss [0-9.]+  [0-9]+ samples/s  ETA 0:00$' \
        "80 columns show the bar, the loss, the rate and the ETA" ;;
    50) expect_match out '^epoch 1/1 \[#+\.*\] 128/128  loss [0-9.]+$' \
        "50 columns keep the bar and the loss, without the rate and the ETA" ;;
    40) expect_match out '^epoch 1/1 128/128  loss [0-9.]+$' \
        "40 columns keep the loss, without the bar" ;;
    esac
done

finish

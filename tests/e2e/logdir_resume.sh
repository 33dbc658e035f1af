#!/usr/bin/env bash
# A --logdir across resumes and crashes. A run resumed with its own --logdir (the resume
# command repeats it) keeps the log's rows up to the checkpoint's step and appends: the
# rows once read 7 where the run had written 9, as the log was opened with "w". Rows after
# the checkpoint are dropped (those steps are trained again), so the log reads like an
# uninterrupted run's. A fresh run into a --logdir whose metrics.jsonl holds rows is
# refused (exit 2), the rows untouched. Rows are flushed one by one: a run killed with
# SIGKILL mid-epoch leaves whole rows only (a 4096-byte stdio buffer once cut one in two).
# A metrics.jsonl that is a FIFO is refused instead of blocking the run.
source "$(dirname "${BASH_SOURCE[0]}")/common.bash"
require_python3 "read metrics.jsonl"

make_dataset "$work/data" 640 64
train=("$TRAINER" train models/mlp.model --data "idx:$work/data" --device cpu --epochs 2
    --batch 16)

# kind, step and epoch of each row: what an uninterrupted run and a resumed one share
# (the running means restart at the resume, so the losses of the epoch resumed differ).
rows_of() {
    python3 -c 'import json, sys
for line in open(sys.argv[1]):
    row = json.loads(line)
    print(row["kind"], row["step"], row["epoch"])' "$1"
}

run "${train[@]}" --logdir "$work/whole"
expect_rc 0 "an uninterrupted run of 2 epochs (80 steps) with --logdir"
whole=$(rows_of "$work/whole/metrics.jsonl")

# The same run with step checkpoints, resumed from step 20 into the same --logdir: its
# rows after step 20 (32, 40, ... 80) are trained, and logged, again.
run "${train[@]}" --logdir "$work/resumed" --checkpoint "$work/ck" --checkpoint-every 20 \
    --keep-last 10
expect_rc 0 "the run with a checkpoint every 20 steps"
before=$(wc -l <"$work/resumed/metrics.jsonl")
run "${train[@]}" --logdir "$work/resumed" --resume "$work/ck/step-0000000020.safetensors"
expect_rc 0 "resumed from step 20 with the same --logdir"
expect_in err "metrics.jsonl: kept 1 row up to step 20; dropped $((before - 1)), of steps \
trained or evaluations done again" \
    "a notice says which rows were kept and which dropped"
got=$(rows_of "$work/resumed/metrics.jsonl")
if [ "$got" = "$whole" ]; then
    pass "the log reads like the uninterrupted run's ($(wc -l <<<"$got") rows)"
else fail "the log reads like the uninterrupted run's" "got: $(tr '\n' ',' <<<"$got") want: \
$(tr '\n' ',' <<<"$whole")"; fi
if [ "$(ls "$work/resumed"/events.out.tfevents.* | wc -l)" -eq 2 ]; then
    pass "each part of the run has its TensorBoard event file"
else fail "each part of the run has its TensorBoard event file" "$(ls "$work/resumed")"; fi

# The resumed part's event file starts with a SessionLog START at step 20, the checkpoint's:
# TensorBoard drops the first part's events from there on, which it drew twice (steps 32 to
# 80 from both files), with those of step 20 the resumed run evaluates again.
starts=$(python3 - "$(ls "$work/resumed"/events.out.tfevents.* | tail -n 1)" <<'PYTHON'
import struct, sys

def fields(data):
    at = 0
    while at < len(data):
        key, at = varint(data, at)
        kind = key & 7
        if kind == 0:
            value, at = varint(data, at)
        elif kind == 1:
            value, at = data[at:at + 8], at + 8
        elif kind == 5:
            value, at = data[at:at + 4], at + 4
        else:
            size, at = varint(data, at)
            value, at = data[at:at + size], at + size
        yield key >> 3, value

def varint(data, at):
    value = shift = 0
    while True:
        byte = data[at]
        at += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if byte < 0x80:
            return value, at

data = open(sys.argv[1], "rb").read()
at = 0
while at < len(data):
    size = struct.unpack_from("<Q", data, at)[0]
    event = dict(fields(data[at + 12:at + 12 + size]))
    at += 12 + size + 4
    if 7 in event:
        print(event.get(2), dict(fields(event[7])))
PYTHON
)
[ "$starts" = "20 {1: 1}" ] && pass "the resumed part's event file starts at step 20" ||
    fail "the resumed part's event file starts at step 20" "SessionLog events: $starts"

# A log whose last row lost its newline (an editor, a copy cut short at a row's end): the
# row is kept and the newline added, where the next row once went on the same line, read
# by plot and later resumes as that one row alone.
mkdir -p "$work/nonl"
head -c -1 "$work/resumed/metrics.jsonl" >"$work/nonl/metrics.jsonl"
rows=$(wc -l <"$work/resumed/metrics.jsonl")
third=("$TRAINER" train models/mlp.model --data "idx:$work/data" --device cpu --epochs 3
    --batch 16)
run "${third[@]}" --logdir "$work/nonl" --resume "$work/ck/step-0000000080.safetensors"
expect_rc 0 "resumed from step 80 into a log whose last row lacks its newline"
if python3 -c 'import json, sys
lines = open(sys.argv[1]).read().split("\n")
assert lines[-1] == "", "no final newline"
for line in lines[:-1]:
    assert isinstance(json.loads(line), dict), line
assert len(lines) - 1 == int(sys.argv[2]), "%d rows" % (len(lines) - 1)' \
    "$work/nonl/metrics.jsonl" "$((rows + 4))" 2>"$work/nonl.err"; then
    pass "... each row on its own line, epoch 3's 4 appended"
else fail "... each row on its own line, epoch 3's 4 appended" "$(tail -n 1 "$work/nonl.err")"; fi

# Two rows on one line read as the first alone: now the line is no row.
mkdir -p "$work/joined"
{ head -n 1 "$work/resumed/metrics.jsonl" | tr -d '\n'
    tail -n +2 "$work/resumed/metrics.jsonl"; } >"$work/joined/metrics.jsonl"
run "${third[@]}" --logdir "$work/joined" --resume "$work/ck/step-0000000080.safetensors"
expect_error 2 "$work/joined/metrics.jsonl:1:1: not a row" "two rows on one line are refused"

# A last line cut mid-row is dropped whatever its step; the notice counts it apart from
# the rows after the resumed step (it once counted it among them).
mkdir -p "$work/cut"
{ cat "$work/resumed/metrics.jsonl"; printf '{"kind":"step","st'; } >"$work/cut/metrics.jsonl"
run "${third[@]}" --logdir "$work/cut" --resume "$work/ck/step-0000000080.safetensors"
expect_rc 0 "resumed from step 80 into a log ending in a cut line"
expect_in err "kept $rows rows up to step 80; dropped 0, of steps trained or evaluations done \
again, and an unfinished last line" "... the notice names the cut line apart"

# A --logdir of 1000 bytes leaves metrics.jsonl room but not the event file's name, which
# was cut (events.out.tfeve...): refused before any step, and a resume there refused
# before metrics.jsonl is cut back (it once failed "File exists" after the cut).
long="$work/"
long+=$(printf './%.0s' $(seq 1 $(((1000 - ${#long} - 3) / 2))))log
run "${train[@]}" --logdir "$long"
expect_error 2 "--logdir: the path is too long" "a --logdir too long for the event file's name"
expect_no_match out "^epoch " "... is refused before the first step"
mkdir -p "$long" && cp "$work/resumed/metrics.jsonl" "$long/metrics.jsonl"
sum=$(md5sum <"$long/metrics.jsonl")
run "${train[@]}" --logdir "$long" --resume "$work/ck/step-0000000020.safetensors"
expect_error 2 "--logdir: the path is too long" "... also for a resumed run"
[ "$(md5sum <"$long/metrics.jsonl")" = "$sum" ] && pass "... its metrics.jsonl untouched" ||
    fail "... its metrics.jsonl untouched"

# Resumed from the end (step 80) with one more epoch: all rows stay, epoch 3's are added.
run "$TRAINER" train models/mlp.model --data "idx:$work/data" --device cpu --epochs 3 \
    --batch 16 --logdir "$work/resumed" --resume "$work/ck"
expect_rc 0 "resumed from the newest checkpoint for a third epoch"
expect_no_match err "dropped" "... without dropping a row"
if [ "$(rows_of "$work/resumed/metrics.jsonl" | head -n "$(wc -l <<<"$whole")")" = "$whole" ] &&
    rows_of "$work/resumed/metrics.jsonl" | tail -n 1 | grep -qx "epoch 120 3"; then
    pass "the first two epochs' rows are kept and the third's appended"
else fail "the first two epochs' rows are kept and the third's appended" \
    "$(rows_of "$work/resumed/metrics.jsonl" | tr '\n' ',')"; fi

# A fresh run would mix two runs into one curve: refused, the earlier rows left as they are.
sum=$(md5sum <"$work/whole/metrics.jsonl")
run "${train[@]}" --logdir "$work/whole"
expect_error 2 "$work/whole/metrics.jsonl: already holds 8 rows of an earlier run, the last at \
step 80" "a fresh run into a --logdir that holds rows is refused"
expect_no_match out "^epoch " "... before the first step"
[ "$(md5sum <"$work/whole/metrics.jsonl")" = "$sum" ] && pass "... and its rows are untouched" ||
    fail "... and its rows are untouched"
: >"$work/whole/metrics.jsonl"
run "${train[@]}" --epochs 1 --logdir "$work/whole"
expect_rc 0 "an empty metrics.jsonl is no earlier run: the fresh run writes it"

# SIGKILL mid-epoch: 320 steps in one epoch, killed once the first rows are in the file.
make_dataset "$work/long" 5120 16
"$TRAINER" train models/mlp.model --data "idx:$work/long" --device cpu --epochs 1 --batch 16 \
    --logdir "$work/killed" </dev/null >/dev/null 2>&1 &
pid=$!
for _ in $(seq 1 1000); do
    [ -s "$work/killed/metrics.jsonl" ] || ! kill -0 "$pid" 2>/dev/null && break
    sleep 0.01
done
kill -KILL "$pid" 2>/dev/null
wait "$pid" 2>/dev/null
ran="trainer train ... --logdir $work/killed (killed with SIGKILL once rows appeared)"
if [ -s "$work/killed/metrics.jsonl" ] && [ "$(tail -c 1 "$work/killed/metrics.jsonl")" = "" ] &&
    ! grep -q '"kind":"epoch"' "$work/killed/metrics.jsonl"; then
    pass "rows reach the file one by one, mid-epoch, each whole"
else fail "rows reach the file one by one, mid-epoch, each whole" \
    "$(wc -c <"$work/killed/metrics.jsonl") bytes, ending: \
$(tail -c 60 "$work/killed/metrics.jsonl")"
fi

# A FIFO in place of metrics.jsonl blocked the open forever.
mkdir -p "$work/fifo" && mkfifo "$work/fifo/metrics.jsonl"
run timeout 60 "${train[@]}" --logdir "$work/fifo"
expect_error 2 "$work/fifo/metrics.jsonl: the metrics log is a FIFO (named pipe), not a \
regular file" "a metrics.jsonl that is a FIFO is refused, not waited on"
expect_no_match out "^epoch " "... before the first step"
finish

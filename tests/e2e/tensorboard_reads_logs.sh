#!/usr/bin/env bash
# TensorBoard itself reads the event file `trainer train --logdir` writes: its
# EventAccumulator finds the scalars train/loss, train/accuracy, lr, test/loss and
# test/accuracy at the steps metrics.jsonl records, with the same values (as float32), also
# after a resume, whose retrained steps it reads once.
# TensorBoard comes from PyPI into a virtual environment kept in the build directory, so
# later runs reuse it; without python3-venv, pip or the network the test is skipped (77).
source "$(dirname "${BASH_SOURCE[0]}")/common.bash"

require_venv python-venv "import tensorboard" tensorboard

make_dataset "$work/data" 640 64
logdir="$work/logs"
run "$TRAINER" train models/mlp.model --data "idx:$work/data" --device cpu --epochs 2 \
    --batch 16 --schedule cosine --warmup 10 --logdir "$logdir"
expect_rc 0 "a small run with --logdir trains"
if ls "$logdir"/events.out.tfevents.* >/dev/null 2>&1; then pass "an event file is written"
else fail "an event file is written" "$(ls -la "$logdir" 2>&1)"; fi

# What EventAccumulator reads of a logdir against its metrics.jsonl: "ok: ..." or the
# differences.
cat >"$work/check.py" <<'PYTHON'
import json, math, sys
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

logdir = sys.argv[1]
rows = [json.loads(line) for line in open(logdir + "/metrics.jsonl")]
steps = [r for r in rows if r["kind"] == "step"]
epochs = [r for r in rows if r["kind"] == "epoch"]
def points(kinds, key):
    return [(r["step"], r[key]) for r in rows if r["kind"] in kinds and key in r]
want = {
    "train/loss": points(["step"], "loss"),
    "train/accuracy": points(["step"], "accuracy"),
    "lr": points(["step"], "lr"),
    "epoch/train_loss": points(["epoch"], "loss"),
    "epoch/train_accuracy": points(["epoch"], "accuracy"),
    "test/loss": points(["epoch", "test"], "test_loss"),
    "test/accuracy": points(["epoch", "test"], "test_accuracy"),
    "val/loss": points(["epoch"], "val_loss"),
    "val/accuracy": points(["epoch"], "val_accuracy"),
}
events = EventAccumulator(logdir)
events.Reload()
tags = events.Tags()["scalars"]
problems = []
for tag, expected in want.items():
    if not expected:
        if tag in tags:
            problems.append(f"{tag}: {len(events.Scalars(tag))} points, none in metrics.jsonl")
        continue
    if tag not in tags:
        problems.append(f"tag {tag} missing (tags: {tags})")
        continue
    got = [(e.step, e.value) for e in events.Scalars(tag)]
    if [s for s, _ in got] != [s for s, _ in expected]:
        problems.append(f"{tag}: steps {[s for s, _ in got]}, metrics.jsonl has "
                        f"{[s for s, _ in expected]}")
    for (step, value), (_, expected_value) in zip(got, expected):
        if not math.isclose(value, expected_value, rel_tol=1e-6, abs_tol=1e-12):
            problems.append(f"{tag} at step {step}: {value} vs {expected_value}")
if not steps or not epochs:
    problems.append(f"metrics.jsonl has {len(steps)} step and {len(epochs)} epoch rows")
print("\n".join(problems) if problems else
      f"ok: {len(tags)} tags, {len(steps)} step rows, {len(epochs)} epoch rows")
PYTHON
check=$("$python" "$work/check.py" "$logdir" 2>&1)
if [[ $check == ok:* ]]; then pass "EventAccumulator reads the scalars of metrics.jsonl ($check)"
else fail "EventAccumulator reads the scalars of metrics.jsonl" "$check"; fi

# The step rows are every 16th step and each epoch's last: 40 steps per epoch here.
expect_rows=$(grep -c '"kind":"step"' "$logdir/metrics.jsonl")
if [ "$expect_rows" -eq 6 ]; then pass "metrics.jsonl has the 6 logged steps"
else fail "metrics.jsonl has the 6 logged steps" "found $expect_rows"; fi

# Resumed from step 20 into the same logdir: the second event file repeats steps 32 to 80,
# which TensorBoard drew twice until that file began with a SessionLog START (it drops the
# earlier files' events from that step on, as after a restart).
resumed=("$TRAINER" train models/mlp.model --data "idx:$work/data" --device cpu --epochs 2
    --batch 16 --schedule cosine --warmup 10 --logdir "$work/resumed")
run "${resumed[@]}" --checkpoint "$work/ck" --checkpoint-every 20 --keep-last 10
expect_rc 0 "a run with a checkpoint every 20 steps"
run "${resumed[@]}" --resume "$work/ck/step-0000000020.safetensors"
expect_rc 0 "... resumed from step 20 into its --logdir"
# expect_read_once LOGDIR WHAT: EventAccumulator reads LOGDIR's scalars as its metrics.jsonl
# holds them, each once.
expect_read_once() {
    local check
    # (A purge is logged on stderr as "Detected out of order event.step ...".)
    check=$("$python" "$work/check.py" "$1" 2>"$work/check.err")
    if [[ $check == ok:* ]]; then pass "$2"
    else fail "$2" "$check
$(tail -n 5 "$work/check.err")"; fi
}
expect_read_once "$work/resumed" "EventAccumulator reads each step of the resumed run once"

# Resumed at its last step with nothing left to train, a --val-split run evaluates the test
# split again: TensorBoard drew the test/ scalars twice at that step (the START event came
# one step later), where metrics.jsonl holds one row; the step's kept rows are drawn once.
held=("$TRAINER" train models/mlp.model --data "idx:$work/data" --device cpu --epochs 1
    --batch 16 --val-split 0.25 --logdir "$work/held" --checkpoint "$work/held-ck")
run "${held[@]}"
expect_rc 0 "a --val-split run with a checkpoint"
run "${held[@]}" --resume "$work/held-ck"
expect_rc 0 "... resumed at its last step, evaluating the test split again"
expect_read_once "$work/held" "EventAccumulator reads the test split's figures once"

run "$TRAINER" train models/mlp.model --data "idx:$work/data" --device cpu --epochs 1 \
    --logdir "$work/data/train-images-idx3-ubyte"
expect_error 2 "cannot use it as the log directory" "a --logdir that is a file is refused"
expect_no_match out "^epoch " "... before the first step"

finish

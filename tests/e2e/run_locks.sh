#!/usr/bin/env bash
# One run per --checkpoint folder and per --logdir at a time. A second run started into
# either while the first trains (the same command twice, a scheduler's retry) is refused
# (exit 2) before it trains: it would have pruned and resumed the other's step files,
# swept its files in the writing as a killed run's *.tmp, and interleaved log rows. The
# lock is the kernel's (flock), so a run killed with SIGKILL leaves none behind. These
# refusals, and those of a folder holding another run's checkpoints or rows, come before
# the data is read.
source "$(dirname "${BASH_SOURCE[0]}")/common.bash"
require_fashion_mnist

# Far more epochs than the test waits for, so that the first run is still training.
mkdir "$work/saves"
first=("$TRAINER" train models/mlp.model --device cpu --epochs 1000 --checkpoint "$work/ck"
    --logdir "$work/logs" --save "$work/saves/first.safetensors")
"${first[@]}" </dev/null >"$work/first.out" 2>"$work/first.err" &
pid=$!
if ! wait_for_output "$work/first.out" '^optimizer ' "$pid"; then
    kill -KILL "$pid" 2>/dev/null
    fail "the first run started within 60 s" "$(cat "$work/first.err")"
    finish
fi
pass "the first run trains"

run "$TRAINER" train models/mlp.model --device cpu --epochs 1 --train-limit 100 \
    --test-limit 10 --checkpoint "$work/ck"
expect_error 2 "$work/ck: another trainer process holds this folder's lock (it trains into it, \
as its --checkpoint folder or --logdir, or saves into it with --save), so it cannot be this \
run's --checkpoint folder" "a second run into the same --checkpoint folder is refused"
expect_in err "hint: wait for that run (process $pid) to end" "... naming the process holding it"
expect_no_match out '^epoch ' "it trains nothing"
run "$TRAINER" train models/mlp.model --device cpu --epochs 1 --train-limit 100 \
    --test-limit 10 --logdir "$work/logs"
expect_error 2 "$work/logs: another trainer process holds this folder's lock (it trains into \
it, as its --checkpoint folder or --logdir, or saves into it with --save), so it cannot be \
this run's --logdir" "a second run into the same --logdir is refused"
# --save into the other run's --checkpoint folder: that run's --keep-last would count the
# file among its step files and prune its own. Refused before the data is read.
run "$TRAINER" train models/mlp.model --device cpu --epochs 1 --checkpoint-every 1 \
    --save "$work/ck/step-9999999999.safetensors" --data "png:$work/no-such-folder"
expect_error 2 "$work/ck: another trainer process holds this folder's lock" \
    "--save into another run's --checkpoint folder is refused"
expect_in err "so it cannot be this run's --save folder" "... as this run's --save folder"
expect_in err "hint: wait for that run (process $pid) to end, or --save into another folder" \
    "... naming the process holding it"
[ ! -e "$work/ck/step-9999999999.safetensors" ] && pass "... writing nothing there" ||
    fail "... writing nothing there"
# A folder the other run --saves into: other runs may --save there too, not train into it.
run "$TRAINER" train models/mlp.model --device cpu --epochs 1 --train-limit 100 \
    --test-limit 10 --save "$work/saves/second.safetensors"
expect_rc 0 "a second run may --save into the same folder"
run "$TRAINER" train models/mlp.model --device cpu --epochs 1 --train-limit 100 \
    --test-limit 10 --checkpoint "$work/saves"
expect_error 2 "so it cannot be this run's --checkpoint folder" \
    "another run's --save folder as a --checkpoint folder is refused"
# The other run's --checkpoint folder as this run's --logdir: the message does not say
# what the other run uses it for.
run "$TRAINER" train models/mlp.model --device cpu --epochs 1 --train-limit 100 \
    --test-limit 10 --logdir "$work/ck"
expect_error 2 "so it cannot be this run's --logdir" "its checkpoint folder as a --logdir"
# Before its data is read: a folder of images can take minutes to load.
run "$TRAINER" train models/mlp.model --device cpu --epochs 1 --checkpoint "$work/ck" \
    --data "png:$work/no-such-folder"
expect_error 2 "so it cannot be this run's --checkpoint folder" \
    "the busy folder is refused before the data is read (here a missing one)"

# flock(1) is util-linux's, which every Debian system has.
if flock -n "$work/ck" true; then fail "flock(1) sees the folder locked"
else pass "flock(1) sees the folder locked"; fi
kill -KILL "$pid"
wait "$pid" 2>/dev/null
if flock -n "$work/ck" true && flock -n "$work/logs" true; then
    pass "the run killed with SIGKILL left no lock behind"
else fail "the run killed with SIGKILL left no lock behind"; fi
run "$TRAINER" train models/mlp.model --device cpu --epochs 1 --train-limit 100 \
    --test-limit 10 --logdir "$work/logs-2" --checkpoint "$work/ck-2"
expect_rc 0 "runs into other folders train"

# The other refusals of a used folder come before the data is read too: a fresh run into a
# --checkpoint folder holding another run's step files, or a --logdir holding its rows.
run "$TRAINER" train models/mlp.model --device cpu --epochs 1 --checkpoint "$work/ck-2" \
    --data "png:$work/no-such-folder"
expect_error 2 "$work/ck-2: the checkpoint folder already holds checkpoints" \
    "another run's checkpoints are refused before the data is read"
run "$TRAINER" train models/mlp.model --device cpu --epochs 1 --logdir "$work/logs-2" \
    --data "png:$work/no-such-folder"
expect_error 2 "$work/logs-2/metrics.jsonl: already holds" \
    "another run's log rows are refused before the data is read"

finish

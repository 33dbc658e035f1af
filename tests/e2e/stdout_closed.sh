#!/usr/bin/env bash
# `trainer train ... | head -1`: once the reader is gone, the run stops as SIGTERM stops it
# (the epoch in hand saved, a checkpoint where it stopped, the resume command and an error
# on stderr), with exit 141, 128 + SIGPIPE, whether SIGPIPE is ignored or not. It used to die
# by SIGPIPE before its first save, or, SIGPIPE ignored, train every epoch for no reader and
# end with exit 1 and nothing said. A stdout closed before training starts trains nothing.
source "$(dirname "${BASH_SOURCE[0]}")/common.bash"

make_random_dataset "$work/data" 208 64
write_tiny_model "$work/tiny.model"
data=(--data "idx:$work/data" --device cpu)

# pipe_to_head IGNORE ARGS...: `trainer ARGS | head -1`, SIGPIPE ignored when IGNORE is 1
# (as `trap '' PIPE` leaves it for the commands a shell starts), into $rc, $out, $err.
pipe_to_head() {
    local ignore=$1
    shift
    ran="trainer $* | head -1 (SIGPIPE $([ "$ignore" = 1 ] && echo ignored || echo default))"
    if [ "$ignore" = 1 ]; then
        (trap '' PIPE; exec "$TRAINER" "$@" </dev/null 2>"$work/.stderr") | head -1 \
            >"$work/.stdout"
    else
        (trap - PIPE; exec "$TRAINER" "$@" </dev/null 2>"$work/.stderr") | head -1 \
            >"$work/.stdout"
    fi
    rc=${PIPESTATUS[0]}
    out=$(cat "$work/.stdout")
    err=$(cat "$work/.stderr")
}

for ignore in 0 1; do
    how=$([ "$ignore" = 1 ] && echo "SIGPIPE ignored" || echo "SIGPIPE default")
    ck="$work/ck-$ignore" weights="$work/w-$ignore.safetensors"
    # Far more epochs than it takes head to go (some milliseconds): the run stops for it.
    pipe_to_head "$ignore" train "$work/tiny.model" "${data[@]}" --epochs 300 \
        --checkpoint "$ck" --save "$weights"
    expect_error 141 "SIGPIPE: standard output was closed (its reader went away): interrupted \
at epoch" "$how: a closed stdout stops the run with exit 141"
    expect_match out '^model ' "$how: head got its line"
    expect_match err "^trainer: notice: saved a checkpoint at epoch [0-9]+, step [0-9]+ of 13 to $ck" \
        "$how: a checkpoint where it stopped"
    expect_in err "trainer: to resume: $TRAINER train $work/tiny.model --resume $ck" \
        "$how: the resume command"
    if [ -s "$weights" ]; then pass "$how: --save holds the last epoch"
    else fail "$how: --save holds the last epoch" "$weights is missing"; fi
    run "$TRAINER" train "$work/tiny.model" "${data[@]}" --epochs 2 --resume "$ck"
    expect_rc 0 "$how: the run resumes from that checkpoint"
done

# Closed before the header is written (the pipe's read end closed before the run starts):
# nothing trained, nothing written, --save's file untouched.
require_python3 "start a run on a pipe whose reader is gone"
ran="trainer train ... --save w-early (stdout's reader gone before the run starts)"
echo "an earlier run's weights" >"$work/w-early"
python3 -c 'import os, subprocess, sys
r, w = os.pipe()
os.close(r)
code = subprocess.call(sys.argv[1:], stdin=subprocess.DEVNULL, stdout=w)
sys.exit(128 - code if code < 0 else code)' "$TRAINER" train "$work/tiny.model" "${data[@]}" \
    --epochs 1 --save "$work/w-early" 2>"$work/.stderr"
rc=$?
out=""
err=$(cat "$work/.stderr")
expect_error 141 "standard output was closed (its reader went away): stopped before the \
first step; nothing was trained or written" "a stdout closed before training stops it there"
if [ "$(cat "$work/w-early")" = "an earlier run's weights" ]; then
    pass "... leaving --save's file as it was"
else fail "... leaving --save's file as it was"; fi

finish

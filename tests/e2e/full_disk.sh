#!/usr/bin/env bash
# A full disk never costs the weights (issue 32). A --logdir whose disk fills up (here the
# TensorBoard event file, flushed at the epoch's end) stops the run with exit 1 and the
# write's error, but the epoch's --save and checkpoint are written before the log rows,
# and the command that resumes is printed; a checkpoint that no longer fits names the last
# good one and resumes from it. The run used to stop on the log's error with an empty
# --checkpoint folder, no --save file and no resume command. The full disk is a tmpfs of a
# few pages, mounted in a mount namespace of the test's own (unshare), so no root needed
# where user namespaces are allowed.
source "$(dirname "${BASH_SOURCE[0]}")/common.bash"

ns=()
for try in "unshare -rm" "unshare -m"; do
    read -ra candidate <<<"$try"
    if "${candidate[@]}" sh -c "mount -t tmpfs -o size=64k tmpfs '$work' && umount '$work'" \
        2>/dev/null; then
        ns=("${candidate[@]}")
        break
    fi
done
if [ ${#ns[@]} -eq 0 ]; then
    echo "SKIP: cannot mount a small tmpfs to fill: neither \`unshare -rm\` (user namespaces)" \
        "nor \`unshare -m\` (root) may mount here"
    exit 77
fi

make_random_dataset "$work/data" 208 64
write_tiny_model "$work/tiny.model"
train=("$TRAINER" train "$work/tiny.model" --data "idx:$work/data" --device cpu --epochs 3)

# on_full_disk SIZE DIR FREE CMD...: `run CMD` with DIR a new tmpfs of SIZE, all of it but
# FREE bytes taken by a file (tmpfs counts whole pages of 4096 bytes).
on_full_disk() {
    local size=$1 dir=$2 free=$3
    shift 3
    mkdir -p "$dir"
    run "${ns[@]}" sh -c 'mount -t tmpfs -o "size=$1" tmpfs "$2" || exit 99
head -c $(($(df -B1 --output=avail "$2" | tail -n 1) - $3)) /dev/zero >"$2/filler"
shift 3
exec "$@"' sh "$size" "$dir" "$free" "$@"
    ran="$* (with $dir a tmpfs of $size, $free bytes free)"
}

# The log's disk: one page free, which metrics.jsonl takes with epoch 1's first row; the
# event file, buffered until the epoch's end, finds none then.
on_full_disk 64k "$work/logs" 4096 "${train[@]}" --logdir "$work/logs" \
    --checkpoint "$work/ck" --save "$work/w.safetensors"
expect_error 1 "cannot write the TensorBoard event file: No space left on device" \
    "a full --logdir disk stops the run at epoch 1's end"
expect_match out '^epoch 1/3 ' "... after epoch 1"
if [ -f "$work/ck/step-0000000013.safetensors" ] && [ -s "$work/w.safetensors" ]; then
    pass "epoch 1's checkpoint and --save were written first"
else fail "epoch 1's checkpoint and --save were written first" "$(ls -R "$work/ck" "$work")"; fi
expect_in err "trainer: notice: the newest checkpoint: $work/ck/step-0000000013.safetensors" \
    "... and named"
resume=$(sed -n 's/^trainer: to resume: //p' <<<"$err")
expect_in err "trainer: to resume: $TRAINER train $work/tiny.model --resume $work/ck" \
    "the command that resumes is printed"
# Outside the namespace the log folder is an empty one again: space to go on.
if [ -n "$resume" ]; then
    run eval "$resume"
    expect_rc 0 "the printed command resumes the run"
    expect_match out '^epoch 3/3 ' "... to its last epoch"
fi

# With --save alone there is nothing to resume from: the file and its epoch are named.
on_full_disk 64k "$work/logs-2" 4096 "${train[@]}" --logdir "$work/logs-2" \
    --save "$work/w2.safetensors"
expect_error 1 "No space left on device" "--save alone: the run stops at epoch 1's end"
expect_in err "trainer: notice: $work/w2.safetensors holds epoch 1's weights" \
    "... naming the --save file that holds epoch 1"

# The checkpoint's own disk: room for epoch 1's two files (its step file and
# best.safetensors, 75 pages each), not for epoch 2's step file.
on_full_disk 800k "$work/ck-3" 819200 "${train[@]}" --checkpoint "$work/ck-3"
expect_error 1 "step-0000000026.safetensors: after step 26: writing failed: No space left on device" \
    "a full --checkpoint disk stops the run at epoch 2's end"
expect_in err "the newest checkpoint: $work/ck-3/step-0000000013.safetensors" \
    "... naming the last good checkpoint"
expect_in err "trainer: to resume: $TRAINER train $work/tiny.model --resume $work/ck-3" \
    "... and the command that resumes from it"
finish

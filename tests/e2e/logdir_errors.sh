#!/usr/bin/env bash
# A --logdir that cannot be made is refused before training with mkdir's own reason: the
# check after the failed mkdir used to overwrite it, so a read-only parent (EACCES) or a
# file system that takes no new folders (EPERM) read "No such file or directory".
source "$(dirname "${BASH_SOURCE[0]}")/common.bash"

make_dataset "$work/data" 32 16
train=("$TRAINER" train models/mlp.model --data "idx:$work/data" --device cpu --epochs 1)

touch "$work/file"
run "${train[@]}" --logdir "$work/file/sub"
expect_error 2 "$work/file/sub: cannot create the log directory: Not a directory" \
    "a --logdir under a file says so"

# sysfs refuses new folders with EPERM, even to root; stat then says ENOENT. What mkdir(1)
# says is the reason to expect, wherever this runs.
target=/sys/trainer-e2e-logdir
if reason=$(mkdir "$target" 2>&1); then
    rmdir "$target"
    echo "note: $target could be made here; its check is left out"
else
    reason=${reason##*: }
    run "${train[@]}" --logdir "$target"
    expect_error 2 "$target: cannot create the log directory: $reason" \
        "a --logdir the file system refuses names mkdir's reason ($reason)"
    expect_no_match out "^epoch " "... before the first step"
fi

# Root writes into read-only folders; anyone else is refused with EACCES.
if [ "$(id -u)" -ne 0 ]; then
    mkdir "$work/read-only"
    chmod 555 "$work/read-only"
    run "${train[@]}" --logdir "$work/read-only/sub"
    expect_error 2 "cannot create the log directory: Permission denied" \
        "a --logdir in a read-only folder says Permission denied"
    chmod 755 "$work/read-only"
fi
finish

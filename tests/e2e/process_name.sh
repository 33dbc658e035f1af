#!/usr/bin/env bash
# The process is named after the binary (`trainer`), not `exe`: main() starts itself again
# to give OpenBLAS its settings, and pgrep -x, killall, ps -C and the OOM killer's log name
# a process after the file it executed last.
source "$(dirname "${BASH_SOURCE[0]}")/common.bash"
require_fashion_mnist

# Without these set the trainer sets them and starts again: the case under test.
unset OPENBLAS_THREAD_TIMEOUT OPENBLAS_CORETYPE
# More epochs than the test waits for, so the process is alive when it is looked at.
"$TRAINER" train models/mlp.model --data fashion-mnist --train-limit 2000 --epochs 1000 \
    --device cpu </dev/null >"$work/train.out" 2>"$work/train.err" &
pid=$!
ran="trainer train models/mlp.model --data fashion-mnist --train-limit 2000 --epochs 1000"

# The restarted process's environment holds OPENBLAS_THREAD_TIMEOUT; before the restart
# its comm is the one bash gave it, which proves nothing.
restarted=0
for ((i = 0; i < 1000; i++)); do
    if tr '\0' '\n' <"/proc/$pid/environ" 2>/dev/null | grep -q '^OPENBLAS_THREAD_TIMEOUT='
    then
        restarted=1
        break
    fi
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.01
done
name=$(cat "/proc/$pid/comm" 2>/dev/null)
kill -TERM "$pid" 2>/dev/null
wait "$pid"
rc=$?
out=$(cat "$work/train.out")
err=$(cat "$work/train.err")

want=$(basename "$TRAINER" | cut -c1-15)  # the kernel keeps 15 bytes of the name
if [ "$restarted" -ne 1 ]; then
    fail "the trainer started again with its OpenBLAS settings within 10 s"
elif [ "$name" = "$want" ]; then
    pass "the running process is named '$name'"
else
    fail "the running process is named '$want'" "/proc/$pid/comm reads '$name'"
fi
finish

#!/usr/bin/env bash
# A SIGTERM that lands after the last step (while the final epoch's line, --save and
# checkpoint are being written) finds nothing left to stop: the run finishes its writes and
# exits 143, with an error saying the run had finished, where it used to exit 0 as if no
# signal had come. Made deterministic with a pipe for stdout that is one page (4096 bytes)
# and filled but for the header's bytes: the final epoch's line then blocks in write(2),
# after the last step's check for a stop and before the saves, until the test drains it.
source "$(dirname "${BASH_SOURCE[0]}")/common.bash"
require_python3 "hold the run's stdout in a pipe of one page"
sleep 5 &
sleeper=$!
sleep 0.2
wchan=$(cat "/proc/$sleeper/wchan" 2>/dev/null)
kill "$sleeper"
if [ -z "$wchan" ] || [ "$wchan" = 0 ]; then
    echo "SKIP: /proc/PID/wchan does not say where a process sleeps here; it tells when the" \
        "run blocks in write(2)"
    exit 77
fi

make_random_dataset "$work/data" 208 64
write_tiny_model "$work/tiny.model"
args=(train "$work/tiny.model" --data "idx:$work/data" --device cpu --epochs 1)

# The header's size: what a run with the same options writes before its first epoch line.
run "$TRAINER" "${args[@]}"
expect_rc 0 "a run without a signal"
header=$(sed '/^epoch /,$d' "$work/.stdout" | wc -c)

ran="trainer ${args[*]} --save w --checkpoint ck (SIGTERM while the final epoch line waits)"
python3 - "$header" "$TRAINER" "${args[@]}" --save "$work/w" --checkpoint "$work/ck" \
    >"$work/.stdout" 2>"$work/.stderr" <<'PY'
import fcntl, os, signal, subprocess, sys, time

header, command = int(sys.argv[1]), sys.argv[2:]
read_end, write_end = os.pipe()
F_SETPIPE_SZ = 1031
fcntl.fcntl(write_end, F_SETPIPE_SZ, 4096)
os.write(write_end, b"#" * (4096 - header))  # room for the header, none for the epoch line
run = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=write_end)
os.close(write_end)
blocked = False
for _ in range(1200):  # 60 s
    if run.poll() is not None:
        break
    with open("/proc/%d/wchan" % run.pid) as f:
        if "pipe_write" in f.read():
            blocked = True
            break
    time.sleep(0.05)
if blocked:
    run.send_signal(signal.SIGTERM)
    time.sleep(0.2)  # the handler runs, and write(2) blocks again
out = b""
while True:
    chunk = os.read(read_end, 65536)
    if not chunk:
        break
    out += chunk
code = run.wait()
sys.stdout.buffer.write(out.lstrip(b"#"))
sys.stderr.write("harness: %s\n" % ("blocked in write" if blocked else "never blocked"))
sys.exit(128 - code if code < 0 else code)
PY
rc=$?
out=$(cat "$work/.stdout")
err=$(cat "$work/.stderr")
expect_in err "harness: blocked in write" "the run blocked writing its final epoch line"
expect_error 143 "SIGTERM after the last step: the run had finished" \
    "a SIGTERM after the last step exits 143"
expect_match out '^epoch 1/1 ' "the final epoch's line was written"
if [ -s "$work/w" ] && [ -f "$work/ck/step-0000000013.safetensors" ]; then
    pass "... and so were --save and the final checkpoint"
else fail "... and so were --save and the final checkpoint" "$(ls "$work" "$work/ck")"; fi
finish

#!/usr/bin/env bash
# --resume FILE or DIR is looked up once per run, by stat(), and taken by every step that
# needs it (the --checkpoint folder's early check, an image folder's resize, the resume
# itself). Each step once opened the path and read a byte to tell a file from a folder:
# a checkpoint file was opened 5 times, and a folder was opened and read (EISDIR) 3 times.
# Watched with strace, which the test needs.
source "$(dirname "${BASH_SOURCE[0]}")/common.bash"
if ! command -v strace >/dev/null || ! strace -f -o /dev/null true 2>/dev/null; then
    echo "SKIP: strace is needed (and allowed to trace) to count the system calls"
    exit 77
fi

make_random_dataset "$work/data" 64 16
run "$TRAINER" data export "idx:$work/data" "images:$work/img"
expect_rc 0 "an image folder to train on (its resize is read from the checkpoint)"
train=("$TRAINER" train models/mlp.model --data "images:$work/img" --device cpu
       --checkpoint "$work/ck")
run "${train[@]}" --epochs 1
expect_rc 0 "a first epoch leaves a checkpoint"

# traced RESUME EPOCHS: the run, its system calls in $work/trace. LeakSanitizer (a
# TRAINER_SANITIZE build) cannot run under ptrace and would fail the run at exit.
traced() {
    run env ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
        strace -f -e trace=openat,read -o "$work/trace" "${train[@]}" --resume "$1" --epochs "$2"
}

traced "$work/ck" 2
expect_rc 0 "--resume DIR resumes"
expect_in err "resuming from $work/ck/step-" "from the folder's newest step file"
# It must be listed (opened O_DIRECTORY): a trace without it watched nothing of the lookup.
if ! grep -q EISDIR "$work/trace" &&
    grep "openat(AT_FDCWD, \"$work/ck\"," "$work/trace" | grep -q O_DIRECTORY &&
    ! grep "openat(AT_FDCWD, \"$work/ck\"," "$work/trace" | grep -vq O_DIRECTORY; then
    pass "the folder is only listed, never opened and read as a file"
else fail "the folder was read as a file" "$(grep -B2 EISDIR "$work/trace" | head -6)"; fi

newest=$(ls "$work/ck"/step-*.safetensors | tail -1)
traced "$newest" 3
expect_rc 0 "--resume FILE resumes"
expect_in err "resuming from $newest" "from that file"
opened=$(grep -c "openat(AT_FDCWD, \"$newest\"," "$work/trace")
if [ "$opened" -ge 1 ] && [ "$opened" -le 2 ]; then  # 0: the trace missed the read
    pass "the file is opened only to be read ($opened times: its header, then all of it)"
else fail "the file is opened more often than it is read" "$opened opens"; fi

finish

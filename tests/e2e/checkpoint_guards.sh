#!/usr/bin/env bash
# Guards around --save, --checkpoint, --keep-last and --resume (docs/checkpoints.md,
# docs/cli.md), each checked before or as a run stops, so no training is lost:
# --keep-last without --checkpoint is refused like --checkpoint-every; 'already has 1 epoch'
# is singular. A --save target that is a FIFO, a directory, in a missing folder or the model
# file itself is refused before the first step (and the FIFO left alone); a --save that
# fails at an epoch's end still leaves that epoch's checkpoint. A --checkpoint folder
# holding another run's checkpoints is refused, unless this run resumes from its newest
# (--resume DIR --checkpoint DIR). A mid-epoch checkpoint resumed where this run's epoch is
# shorter is refused. SIGINT during the evaluation after an epoch stops at its next batch.
# The printed resume command repeats the run's options, quoted, and works as printed, also
# run as ./trainer-link (not on PATH) and for a model named -m.model; --resume DIR/ prints
# no doubled slash.
source "$(dirname "${BASH_SOURCE[0]}")/common.bash"

make_random_dataset "$work/my data" 200 50
write_tiny_model "$work/tiny.model"
data=(--data "idx:$work/my data" --device cpu)

# ---- --save ----
mkfifo "$work/pipe"
run "$TRAINER" train "$work/tiny.model" "${data[@]}" --epochs 1 --save "$work/pipe"
expect_error 2 "$work/pipe: the path is a FIFO (named pipe), not a regular file" \
    "--save naming a FIFO is refused"
expect_no_match out '^epoch ' "... before the first step"
[ -p "$work/pipe" ] && pass "... and the FIFO is still a FIFO" || fail "the FIFO is still a FIFO"
run "$TRAINER" train "$work/tiny.model" "${data[@]}" --epochs 1 --save "$work"
expect_error 2 "$work: the path is a directory, not a regular file" "--save naming a folder"
expect_no_match out '^epoch ' "... is refused before the first step"
run "$TRAINER" train "$work/tiny.model" "${data[@]}" --epochs 1 \
    --save "$work/nodir/w.safetensors" --checkpoint "$work/ck-nodir"
expect_error 2 "the folder $work/nodir does not exist" "--save into a missing folder"
expect_no_match out '^epoch ' "... is refused before the first step"
cp "$work/tiny.model" "$work/self.model"
run "$TRAINER" train "$work/self.model" "${data[@]}" --epochs 1 \
    --save "$work/../${work##*/}/self.model"
expect_error 2 "--save names the model file itself" "--save naming the model file is refused"
mkdir -p "$work/locked" && chmod 500 "$work/locked"
if [ -w "$work/locked" ]; then pass "(running as root: unwritable-folder check skipped)"
else
    run "$TRAINER" train "$work/tiny.model" "${data[@]}" --epochs 1 \
        --save "$work/locked/w.safetensors"
    expect_error 2 "the folder $work/locked is not writable" "--save into a read-only folder"
fi

# A --save that fails at an epoch's end (here its target turned into a FIFO during the run)
# stops the run, but that epoch's checkpoint is written first.
"$TRAINER" train "$work/tiny.model" "${data[@]}" --epochs 100000 --save "$work/late" \
    --checkpoint "$work/ck-late" </dev/null >"$work/late.out" 2>"$work/late.err" &
pid=$!
ran="trainer train tiny.model --epochs 100000 --save late --checkpoint ck-late (late -> FIFO)"
for ((i = 0; i < 300; i++)); do
    [ -f "$work/late" ] && break
    sleep 0.05
done
# The run renames each epoch's --save onto the path, which can land between the rm and the
# mkfifo, or replace a FIFO made before that epoch's check: on a loaded machine the swap
# missed every try and the run trained on until killed. So the FIFO is made again whenever
# it is gone, until the run stops.
for ((i = 0; i < 400; i++)); do
    kill -0 "$pid" 2>/dev/null || break
    if [ ! -p "$work/late" ]; then
        rm -f "$work/late"
        mkfifo "$work/late" 2>/dev/null
    fi
    sleep 0.05
done
kill -KILL "$pid" 2>/dev/null
wait "$pid"
rc=$?
out=$(cat "$work/late.out")
err=$(cat "$work/late.err")
expect_error 2 "$work/late: the path is a FIFO" "a --save that fails at an epoch's end stops"
epoch=$(sed -n "s/.*--save failed, but epoch \([0-9]*\)'s checkpoint was written.*/\1/p" <<<"$err")
if [ -n "$epoch" ] && [ -f "$work/ck-late/step-$(printf '%010d' $((epoch * 13))).safetensors" ]
then pass "... after writing that epoch's checkpoint (epoch $epoch)"
else fail "... after writing that epoch's checkpoint" "folder: $(ls "$work/ck-late" | tr '\n' ' ')"
fi

# ---- --keep-last ----
run "$TRAINER" train "$work/tiny.model" "${data[@]}" --epochs 1 --keep-last 2
expect_error 2 "--keep-last needs --checkpoint DIR" "--keep-last without --checkpoint"

# ---- a folder holding another run's checkpoints ----
run "$TRAINER" train "$work/tiny.model" "${data[@]}" --epochs 2 --checkpoint "$work/ck"
expect_rc 0 "2 epochs into ck"
before=$(ls "$work/ck" | tr '\n' ' ')
run "$TRAINER" train "$work/tiny.model" "${data[@]}" --epochs 1 --checkpoint "$work/ck"
expect_error 2 "$work/ck: the checkpoint folder already holds checkpoints (the newest: \
step-0000000026.safetensors)" "a fresh run into a folder with checkpoints is refused"
expect_in err "resume it with --resume $work/ck" "... with a hint to resume"
expect_no_match out '^epoch ' "... before the first step"
[ "$(ls "$work/ck" | tr '\n' ' ')" = "$before" ] && pass "... leaving the folder as it was" ||
    fail "... leaving the folder as it was" "folder: $(ls "$work/ck" | tr '\n' ' ')"
write_tiny_model "$work/wide.model" 48
run "$TRAINER" train "$work/wide.model" "${data[@]}" --epochs 1 --checkpoint "$work/ck" \
    --keep-last 1
expect_error 2 "already holds checkpoints" "another model's run into the folder is refused"
run "$TRAINER" train "$work/tiny.model" "${data[@]}" --epochs 3 --resume "$work/ck" \
    --checkpoint "$work/ck"
expect_rc 0 "resuming the folder into itself goes on"
run "$TRAINER" train "$work/tiny.model" "${data[@]}" --epochs 4 \
    --resume "$work/ck/step-0000000026.safetensors" --checkpoint "$work/ck"
expect_error 2 "and this run resumes from $work/ck/step-0000000026.safetensors, not from that" \
    "resuming an older file of the folder into it is refused"
run "$TRAINER" train "$work/tiny.model" "${data[@]}" --epochs 1 --checkpoint "$work/ck-other"
expect_rc 0 "1 epoch into ck-other"
run "$TRAINER" train "$work/tiny.model" "${data[@]}" --epochs 4 --resume "$work/ck-other" \
    --checkpoint "$work/ck"
expect_error 2 "already holds checkpoints (the newest: step-0000000039.safetensors), and \
this run resumes from $work/ck-other, not from that newest one" \
    "--resume A --checkpoint B is refused when B holds other checkpoints"
run "$TRAINER" train "$work/tiny.model" "${data[@]}" --epochs 4 --resume "$work/ck-other" \
    --checkpoint "$work/ck-fresh"
expect_rc 0 "--resume A --checkpoint B goes on when B is empty"

# A folder holding only best.safetensors (a run stopped before its first step file): the
# hints name that file, which resumes, rather than --resume DIR, which finds no step file.
run "$TRAINER" train "$work/tiny.model" "${data[@]}" --epochs 1 --checkpoint "$work/ck-src"
expect_rc 0 "1 epoch into ck-src"
mkdir -p "$work/ck-best" && cp "$work/ck-src/best.safetensors" "$work/ck-best/"
run "$TRAINER" train "$work/tiny.model" "${data[@]}" --epochs 2 --checkpoint "$work/ck-best"
expect_error 2 "already holds checkpoints (the newest: best.safetensors)" \
    "a fresh run into a folder holding only best.safetensors is refused"
expect_in err "hint: to continue that run from its best epoch, --resume \
$work/ck-best/best.safetensors (with --checkpoint $work/ck-best)" "... hinting at the file"
run "$TRAINER" train "$work/tiny.model" "${data[@]}" --epochs 2 --resume "$work/ck-best"
expect_error 2 "no step checkpoint (step-*.safetensors) in the folder, only best.safetensors" \
    "--resume of a folder holding only best.safetensors says so"
expect_in err "hint: to continue from that best epoch, --resume $work/ck-best/best.safetensors" \
    "... hinting at the file"
run "$TRAINER" train "$work/tiny.model" "${data[@]}" --epochs 2 \
    --resume "$work/ck-best/best.safetensors" --checkpoint "$work/ck-best"
expect_rc 0 "the hinted command resumes"
expect_in err "1 epoch and 0 steps done" "... from the best epoch"

# ---- --resume with nothing left to train ----
run "$TRAINER" train "$work/tiny.model" "${data[@]}" --epochs 1 --checkpoint "$work/ck-one"
expect_rc 0 "1 epoch into ck-one"
run "$TRAINER" train "$work/tiny.model" "${data[@]}" --epochs 1 --resume "$work/ck-one"
expect_in err "the checkpoint already has 1 epoch; nothing" "1 epoch, singular"

# ---- a mid-epoch checkpoint on fewer samples ----
run "$TRAINER" train "$work/tiny.model" "${data[@]}" --epochs 1 --checkpoint "$work/ck-mid" \
    --checkpoint-every 10
expect_rc 0 "a checkpoint 10 steps into an epoch of 13"
run "$TRAINER" train "$work/tiny.model" "${data[@]}" --epochs 1 --train-limit 100 \
    --resume "$work/ck-mid/step-0000000010.safetensors"
expect_error 2 "the checkpoint is 10 steps into epoch 1, but an epoch of this run has 7 steps \
(100 training samples, batch 16)" "a mid-epoch checkpoint past this run's epoch is refused"
expect_in err "hint: resume with the same data options" "... with a hint"

# ---- signals ----
# interrupt_when FOLDER DELAY ARGS...: trains with --checkpoint FOLDER (given first, so that
# ARGS may end with `-- MODEL`), sends SIGINT DELAY seconds after its first checkpoint,
# leaves its exit code and output as `run` does. $trainer_as, when set, is run in place of
# $TRAINER.
interrupt_when() {
    local folder=$1 delay=$2 i
    shift 2
    rm -rf "$folder"
    "${trainer_as:-$TRAINER}" train --checkpoint "$folder" "$@" </dev/null >"$work/sig.out" \
        2>"$work/sig.err" &
    local pid=$!
    ran="trainer train $* --checkpoint $folder (then SIGINT)"
    for ((i = 0; i < 600; i++)); do
        ls "$folder" 2>/dev/null | grep -q '^step-' && break
        sleep 0.05
    done
    sleep "$delay"
    kill -INT "$pid"
    wait "$pid"
    rc=$?
    out=$(cat "$work/sig.out")
    err=$(cat "$work/sig.err")
}

# The resume command repeats the run's options, quoted for the shell where needed.
interrupt_when "$work/sig" 0.3 "$work/tiny.model" "${data[@]}" --epochs 100000 \
    --train-limit 150 --lr 0.002
expect_rc 130 "SIGINT exits 130"
expect_in err "to resume: $TRAINER train $work/tiny.model --resume $work/sig --data \
'idx:$work/my data' --epochs 100000 --lr 0.002 --train-limit 150" \
    "the resume command repeats the options, quoted"
expect_in err "--checkpoint $work/sig" "... --checkpoint included"
resume_command=$(sed -n 's/^trainer: to resume: //p' <<<"$err")
epoch=$(sed -n 's/.*saved a checkpoint at epoch \([0-9]*\),.*/\1/p' <<<"$err")
eval "run $resume_command --epochs $((epoch + 1))"
expect_rc 0 "the printed command resumes"
expect_in out ": 150 train" "... on the run's --train-limit"
expect_match out "^epoch $((epoch + 1))/$((epoch + 1)) " "... and trains on to the next epoch"

# Options too long to repeat in the line (the model file, idx:'s four files, --save and
# --logdir through runs of ./ segments: about 10,000 bytes) get a sentence instead of a
# command cut short (it was cut silently at 8,192 bytes).
long="$work/$(printf './%.0s' {1..470})my data"
long_data="idx:$long/train-images-idx3-ubyte,$long/train-labels-idx1-ubyte"
long_data+=",$long/t10k-images-idx3-ubyte,$long/t10k-labels-idx1-ubyte"
interrupt_when "$work/sig-long" 0.3 "$work/$(printf './%.0s' {1..1500})tiny.model" \
    --data "$long_data" --device cpu --epochs 100000 --train-limit 150 \
    --logdir "$work/$(printf './%.0s' {1..400})log" \
    --save "$work/$(printf './%.0s' {1..480})long.safetensors"
expect_rc 130 "SIGINT of a run with 8 KB of options exits 130"
expect_in err "to resume: run the same command with --resume $work/sig-long in place of any \
--resume or --init-from (its options are too long to repeat here)" \
    "... and says how to resume rather than print a cut command"
run "$TRAINER" train "$work/tiny.model" "${data[@]}" \
    --checkpoint "$work/$(printf './%.0s' {1..495})ck"
expect_error 2 "--checkpoint: the path is too long" \
    "a --checkpoint too long for its step files' names, before training (it failed after it)"
expect_no_match out '^epoch ' "... no epoch trained"
run "$TRAINER" train "$work/tiny.model" "${data[@]}" --logdir "$work/$(printf './%.0s' {1..600})"
expect_error 2 "--logdir: the path is too long" "a --logdir too long to hold metrics.jsonl"

# The printed command works as printed where it used to break: the trainer is named as it
# was run (./trainer-link, not on PATH; it always said `trainer`), and a model path that
# starts with - (given after --) gets ./ (it was read as an unknown option -m.model).
mkdir -p "$work/dash" && cp "$work/tiny.model" "$work/dash/-m.model"
ln -s "$TRAINER" "$work/dash/trainer-link"
cd "$work/dash" || exit 1
trainer_as=./trainer-link interrupt_when ck 0.3 "${data[@]}" --epochs 100000 \
    --train-limit 150 -- -m.model
expect_rc 130 "SIGINT of ./trainer-link train -- -m.model exits 130"
expect_in err "to resume: ./trainer-link train ./-m.model --resume ck " \
    "the resume command names the trainer as run, and the model as ./-m.model"
resume_command=$(sed -n 's/^trainer: to resume: //p' <<<"$err")
epoch=$(sed -n 's/.*saved a checkpoint at epoch \([0-9]*\),.*/\1/p' <<<"$err")
eval "run $resume_command --epochs $((epoch + 1))"
expect_rc 0 "... and resumes as printed"
expect_match out "^epoch $((epoch + 1))/$((epoch + 1)) " "... training on to the next epoch"
# --resume DIR/ names the file without a doubled slash (it said ck//step-...).
run ./trainer-link train ./-m.model "${data[@]}" --epochs 1 --resume ck/
expect_match err "resuming from ck/step-[0-9]+\.safetensors" "--resume ck/ joins one slash"
cd "$TRAINER_SOURCE_DIR" || exit 1

# A signal during the evaluation after an epoch stops it at the next batch: the run ends at
# that epoch's last step (before the fix it evaluated on and took the next epoch's first
# step). 2 steps an epoch, and an evaluation of 20,000 samples that takes most of the time.
make_random_dataset "$work/eval" 32 20000
write_tiny_model "$work/eval.model" 512
for ((attempt = 1; attempt <= 3; attempt++)); do
    interrupt_when "$work/sig-eval" 0.5 "$work/eval.model" --data "idx:$work/eval" \
        --device cpu --epochs 100000 --save "$work/sig-eval.safetensors"
    # A signal in the epoch's first step (a small window) stops there; try again.
    grep -q 'step 1 of 2' <<<"$err" || break
done
expect_rc 130 "SIGINT during the evaluation exits 130"
expect_match err "saved a checkpoint at epoch [0-9]+, step 2 of 2" \
    "... stopping at the epoch's last step, not after the next epoch's first"
stopped=$(sed -n 's/.*saved a checkpoint at epoch \([0-9]*\),.*/\1/p' <<<"$err")
expect_no_match out "^epoch ${stopped:-x}/" "... without finishing that epoch's evaluation"
# --save holds that epoch's weights all the same (it held the epoch before's, or nothing).
expect_in err "saved epoch ${stopped:-x}'s weights to $work/sig-eval.safetensors" \
    "... and --save gets the stopped epoch's weights"
step_file=$(ls "$work/sig-eval"/step-*.safetensors | tail -1)
if python3 - "$work/sig-eval.safetensors" "$step_file" <<'PY'
import sys
sys.path.insert(0, "tests/e2e")
from compare_weights import tensors
a, b = tensors(sys.argv[1]), tensors(sys.argv[2])
b = {k: v for k, v in b.items() if not k.startswith("optimizer.")}
sys.exit(0 if a == b else 1)
PY
then pass "... the parameters of the checkpoint it stopped at"
else fail "... the parameters of the checkpoint it stopped at" "--save differs from $step_file"
fi
# Resumed with nothing left to train, a run still writes --save.
run "$TRAINER" train "$work/eval.model" --data "idx:$work/eval" --device cpu \
    --epochs "${stopped:-1}" --resume "$work/sig-eval" --save "$work/resumed.safetensors"
expect_rc 0 "a resume with nothing left to train succeeds"
expect_in err "nothing left to train: wrote the checkpoint's weights to $work/resumed.safetensors" \
    "... and writes --save"
[ -s "$work/resumed.safetensors" ] && pass "... which exists" || fail "... which exists" "no file"

finish

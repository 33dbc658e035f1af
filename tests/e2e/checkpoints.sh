#!/usr/bin/env bash
# Checkpoints (docs/checkpoints.md): resuming is bit-exact on the CPU (2 + 2 epochs give
# the 4-epoch weights byte for byte, from an epoch boundary and from mid-epoch), another
# model's checkpoint is refused naming the tensors, --init-from loads what matches, an
# unwritable folder fails before training, stray *.tmp files are swept, SIGINT and SIGTERM
# leave a checkpoint that resumes (exit 130 / 143), the old TRNWEIGH format is refused by
# name, names from files are printed escaped, NaN weights warn, then fail (eval), or are
# refused (resume).
source "$(dirname "${BASH_SOURCE[0]}")/common.bash"

make_random_dataset "$work/data" 200 50
write_tiny_model "$work/tiny.model"
data=(--data "idx:$work/data" --device cpu)

# ---- bit-exact resume ----
run "$TRAINER" train "$work/tiny.model" "${data[@]}" --epochs 4 --save "$work/straight.safetensors"
expect_rc 0 "4 epochs straight"
run "$TRAINER" train "$work/tiny.model" "${data[@]}" --epochs 2 --checkpoint "$work/ck"
expect_rc 0 "2 epochs with --checkpoint"
run "$TRAINER" train "$work/tiny.model" "${data[@]}" --epochs 4 --resume "$work/ck" \
    --save "$work/resumed.safetensors"
expect_rc 0 "resume for 2 more"
expect_in err "resuming from $work/ck/step-0000000026.safetensors" \
    "resume takes the newest checkpoint"
if cmp -s "$work/straight.safetensors" "$work/resumed.safetensors"; then
    pass "2 epochs + resume for 2 = 4 epochs, byte for byte"
else fail "2 epochs + resume for 2 = 4 epochs, byte for byte"; fi

# --replicas: the file is read once and every replica takes its parameters and optimizer
# state from it (a replica left as initialised would move the summed gradients).
run "$TRAINER" train "$work/tiny.model" "${data[@]}" --replicas 2 --epochs 4 \
    --save "$work/straight2.safetensors"
expect_rc 0 "4 epochs straight on 2 replicas"
run "$TRAINER" train "$work/tiny.model" "${data[@]}" --replicas 2 --epochs 2 \
    --checkpoint "$work/ck2"
run "$TRAINER" train "$work/tiny.model" "${data[@]}" --replicas 2 --epochs 4 \
    --resume "$work/ck2" --save "$work/resumed2.safetensors"
expect_rc 0 "2 replicas resume for 2 more"
if cmp -s "$work/straight2.safetensors" "$work/resumed2.safetensors"; then
    pass "on 2 replicas, 2 epochs + resume for 2 = 4 epochs, byte for byte"
else fail "on 2 replicas, 2 epochs + resume for 2 = 4 epochs, byte for byte"; fi

run "$TRAINER" train "$work/tiny.model" "${data[@]}" --epochs 2 --checkpoint "$work/steps" \
    --checkpoint-every 5 --keep-last 3
expect_rc 0 "--checkpoint-every 5 --keep-last 3"
# 26 steps: 5, 10, ... 25, and the run's last step, 26, which no multiple of 5 covers.
listing=$(ls "$work/steps" | tr '\n' ' ')
if [ "$listing" = "best.safetensors step-0000000020.safetensors step-0000000025.safetensors \
step-0000000026.safetensors " ]
then pass "the 3 newest step checkpoints (the run's last step among them) and best are kept"
else fail "the 3 newest step checkpoints (the run's last step among them) and best are kept" \
    "folder: $listing"; fi
run "$TRAINER" train "$work/tiny.model" "${data[@]}" --epochs 4 --resume "$work/steps" \
    --save "$work/end.safetensors"
expect_in err "resuming from $work/steps/step-0000000026.safetensors: 2 epochs and 0 steps" \
    "--resume DIR takes the run's last step, not the last multiple of --checkpoint-every"
if cmp -s "$work/straight.safetensors" "$work/end.safetensors"; then
    pass "... and gives the 4-epoch weights byte for byte (no step trained twice)"
else fail "... and gives the 4-epoch weights byte for byte (no step trained twice)"; fi
run "$TRAINER" train "$work/tiny.model" "${data[@]}" --epochs 1 --checkpoint "$work/long" \
    --checkpoint-every 1000
expect_rc 0 "--checkpoint-every longer than the run"
[ -f "$work/long/step-0000000013.safetensors" ] &&
    pass "... still leaves a step checkpoint at the run's end" ||
    fail "... still leaves a step checkpoint at the run's end" "folder: $(ls "$work/long")"
run "$TRAINER" train "$work/tiny.model" "${data[@]}" --epochs 4 \
    --resume "$work/steps/step-0000000020.safetensors" --save "$work/mid.safetensors"
expect_in err "1 epoch and 7 steps done" "a step checkpoint resumes mid-epoch"
if cmp -s "$work/straight.safetensors" "$work/mid.safetensors"; then
    pass "resuming from mid-epoch gives the 4-epoch weights byte for byte"
else fail "resuming from mid-epoch gives the 4-epoch weights byte for byte"; fi

# A schedule's length is the run's --epochs, so a scheduled run resumes exactly from a
# checkpoint it wrote before its end (with clipping too: its norm is recomputed per step).
scheduled=(--schedule cosine --warmup 5 --clip-norm 0.5 --epochs 4)
run "$TRAINER" train "$work/tiny.model" "${data[@]}" "${scheduled[@]}" \
    --checkpoint "$work/sched" --keep-last 4 --save "$work/sched-straight.safetensors"
expect_rc 0 "4 epochs with a cosine schedule and clipping"
run "$TRAINER" train "$work/tiny.model" "${data[@]}" "${scheduled[@]}" \
    --resume "$work/sched/step-0000000013.safetensors" --save "$work/sched-resumed.safetensors"
expect_rc 0 "resume the scheduled run from its epoch-1 checkpoint"
if cmp -s "$work/sched-straight.safetensors" "$work/sched-resumed.safetensors"; then
    pass "a scheduled, clipped run resumes byte for byte"
else fail "a scheduled, clipped run resumes byte for byte"; fi

# ---- another model ----
write_tiny_model "$work/wide.model" 48
run "$TRAINER" train "$work/wide.model" "${data[@]}" --epochs 3 --resume "$work/ck"
expect_error 2 "dense1.weight (32x784 in the file, 48x784 in the model)" \
    "another model's checkpoint is refused naming the tensor and both shapes"
run "$TRAINER" train "$work/wide.model" "${data[@]}" --epochs 1 \
    --init-from "$work/ck/best.safetensors"
expect_rc 0 "--init-from another model's checkpoint"
expect_in err "initialised 1 parameter tensor from" "--init-from counts what matched"
expect_in err "kept fresh (new or reshaped): dense1.weight, dense1.bias, dense2.weight" \
    "--init-from lists the tensors it left fresh"
# A list of tensor names too long for the message ends in "and N more", where it was cut
# in the middle of a name ("dense2..." read as another tensor).
{ echo "input shape=784 dtype=f32"
    for ((i = 0; i < 40; i++)); do echo "dense units=2 act=relu"; done
    echo "dense units=10"; echo "loss softmax_cross_entropy"; } >"$work/deep.model"
run "$TRAINER" train "$work/deep.model" "${data[@]}" --epochs 1 --save "$work/deep.safetensors"
expect_rc 0 "a 41-layer MLP trains"
run "$TRAINER" eval "$work/tiny.model" "${data[@]}" --weights "$work/deep.safetensors"
expect_error 2 "the file does not match the model" "another model's 82 tensors are refused"
expect_match err "unexpected dense[0-9]+\\.(weight|bias)(, dense[0-9]+\\.(weight|bias))* and [0-9]+ \
more" "the unexpected list holds whole names, then says how many more"
run "$TRAINER" train "$work/wide.model" "${data[@]}" --epochs 1 --init-from "$work/ck"
expect_error 2 "$work/ck: is a folder, not a weights file" \
    "--init-from a checkpoint folder says so (it said: cannot read the file)"
expect_in err "a --checkpoint folder holds best.safetensors" "... and names the files in one"
run "$TRAINER" train "$work/tiny.model" "${data[@]}" --epochs 3 \
    --resume "$work/straight.safetensors"
expect_error 2 "'epoch' is (absent)" "a weights-only file (--save) does not resume"

# The run's last step file, written at its end when the last step is no multiple of N, is
# an epoch's end: it records that epoch's accuracy, as every file after an epoch does (it
# had none).
run "$TRAINER" train "$work/tiny.model" "${data[@]}" --epochs 2 --checkpoint "$work/every7" \
    --checkpoint-every 7 --keep-last 20
expect_rc 0 "a run with a checkpoint every 7 steps"
last=$(ls "$work/every7"/step-*.safetensors | tail -n 1)
if [ -n "$(metadata "$last" test_accuracy)" ] && [ "$(metadata "$last" epoch_evaluated)" = 1 ]
then pass "the last step file records the last epoch's test_accuracy"
else fail "the last step file records the last epoch's test_accuracy" "$(basename "$last"): \
'$(metadata "$last" test_accuracy)'"; fi

# ---- the folder ----
echo "a file, not a folder" >"$work/plain"
run "$TRAINER" train "$work/tiny.model" "${data[@]}" --epochs 1 --checkpoint "$work/plain/ck"
expect_error 2 "cannot use the checkpoint folder" "a folder that cannot be made fails"
expect_no_match out '^epoch ' "... before the first step"
run "$TRAINER" train "$work/tiny.model" "${data[@]}" --epochs 1 \
    --checkpoint "$work/runs/tiny/ck" --logdir "$work/runs/tiny/logs"
expect_rc 0 "--checkpoint and --logdir create their missing parents"
if [ -f "$work/runs/tiny/ck/step-0000000013.safetensors" ] &&
    [ -f "$work/runs/tiny/logs/metrics.jsonl" ]; then pass "... and write into them"
else fail "... and write into them"; fi
mkdir -p "$work/locked" && chmod 500 "$work/locked"
if [ -w "$work/locked" ]; then pass "(running as root: unwritable-folder check skipped)"
else
    run "$TRAINER" train "$work/tiny.model" "${data[@]}" --epochs 1 --checkpoint "$work/locked/ck"
    expect_error 2 "cannot use the checkpoint folder" "an unwritable folder fails"
    expect_no_match out '^epoch ' "... before the first step"
fi
echo garbage >"$work/ck/step-0000000999.safetensors.tmp"
run "$TRAINER" train "$work/tiny.model" "${data[@]}" --epochs 3 --resume "$work/ck" \
    --checkpoint "$work/ck"
expect_rc 0 "a stray .tmp does not trip a resume"
expect_in err "removed 1 unfinished checkpoint file" "the stray .tmp is removed and reported"
[ ! -e "$work/ck/step-0000000999.safetensors.tmp" ] && pass ".tmp is gone" || fail ".tmp is gone"

# ---- files that are not ours ----
printf 'TRNWEIGH\001\000\000\000' >"$work/old.weights"
run "$TRAINER" eval "$work/tiny.model" "${data[@]}" --weights "$work/old.weights"
expect_error 2 "old TRNWEIGH format" "the old weights format is refused by name"
python3 - "$work/evil.safetensors" <<'PY'
import json, struct, sys
header = json.dumps({"dense1.weight\u001b[31mRED": {"dtype": "F32", "shape": [1],
                                                    "data_offsets": [0, 4]}}).encode()
open(sys.argv[1], "wb").write(struct.pack("<Q", len(header)) + header + b"\0\0\0\0")
PY
run "$TRAINER" eval "$work/tiny.model" "${data[@]}" --weights "$work/evil.safetensors"
expect_error 2 'unexpected dense1.weight\x1b[31mRED' "a name from the file is printed escaped"
if grep -q $'\e' <<<"$err"; then fail "no raw escape byte reaches the terminal"
else pass "no raw escape byte reaches the terminal"; fi

# ---- NaN in the weights: eval warns, then fails on its NaN loss; resume refuses ----
python3 - "$work/ck/best.safetensors" "$work/nan.safetensors" <<'PY'
import json, struct, sys
data = bytearray(open(sys.argv[1], "rb").read())
n = struct.unpack("<Q", data[:8])[0]
begin = json.loads(data[8:8 + n])["dense2.bias"]["data_offsets"][0]
data[8 + n + begin:8 + n + begin + 4] = struct.pack("<f", float("nan"))
open(sys.argv[2], "wb").write(data)
PY
run "$TRAINER" eval "$work/tiny.model" "${data[@]}" --weights "$work/nan.safetensors"
expect_error 1 "the test loss is NaN over" "eval of weights holding NaN runs, and fails on its loss"
expect_in err "warning: $work/nan.safetensors: 1 tensor holds NaN or infinite values: dense2.bias" \
    "eval warns naming the tensor"
run "$TRAINER" train "$work/tiny.model" "${data[@]}" --epochs 9 --resume "$work/nan.safetensors"
expect_error 2 "NaN or infinite values in 1 tensor: dense2.bias" "resume refuses NaN weights"

# ---- signals ----
# interrupt_run SIGNAL: trains (long) with --checkpoint, sends SIGNAL once it has
# checkpoints, leaves its exit code in $rc and its output in $out / $err.
interrupt_run() {
    rm -rf "$work/sig"
    "$TRAINER" train "$work/tiny.model" "${data[@]}" --epochs 100000 --checkpoint "$work/sig" \
        </dev/null >"$work/sig.out" 2>"$work/sig.err" &
    local pid=$! i
    ran="trainer train tiny.model --epochs 100000 --checkpoint sig (then SIG$1)"
    for ((i = 0; i < 300; i++)); do
        ls "$work/sig" 2>/dev/null | grep -q '^step-' && break
        sleep 0.05
    done
    sleep 0.3
    kill -"$1" "$pid"
    wait "$pid"
    rc=$?
    out=$(cat "$work/sig.out")
    err=$(cat "$work/sig.err")
}
for signal in INT:130 TERM:143; do
    interrupt_run "${signal%:*}"
    expect_rc "${signal#*:}" "SIG${signal%:*} exits ${signal#*:}"
    expect_in err "saved a checkpoint at epoch" "SIG${signal%:*} writes a checkpoint"
    expect_in err "to resume: $TRAINER train $work/tiny.model --resume $work/sig" \
        "SIG${signal%:*} prints the command that resumes"
    epoch=$(sed -n 's/.*saved a checkpoint at epoch \([0-9]*\),.*/\1/p' <<<"$err")
    run "$TRAINER" train "$work/tiny.model" "${data[@]}" --epochs $((epoch + 1)) \
        --resume "$work/sig"
    expect_rc 0 "the checkpoint SIG${signal%:*} left resumes"
    expect_match out "^epoch $((epoch + 1))/$((epoch + 1)) " "... and trains on to the next epoch"
done

finish

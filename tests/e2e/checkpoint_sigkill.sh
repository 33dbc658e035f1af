#!/usr/bin/env bash
# A crash mid-write never costs the previous checkpoint: 20 times, a run that writes a
# checkpoint after every step (--checkpoint-every 1) is SIGKILLed at a random moment, and
# every time a resume from the folder works (the newest complete checkpoint loads; a
# half-written *.tmp, if the kill left one, trips nothing) and the next run goes on from it.
source "$(dirname "${BASH_SOURCE[0]}")/common.bash"

make_random_dataset "$work/data" 400 20
write_tiny_model "$work/tiny.model" 64
data=(--data "idx:$work/data" --device cpu)
folder="$work/ck"
tmp_left=0
resume=()

for ((round = 1; round <= 20; round++)); do
    "$TRAINER" train "$work/tiny.model" "${data[@]}" --epochs 100000 --checkpoint "$folder" \
        --checkpoint-every 1 "${resume[@]}" </dev/null >"$work/run.out" 2>"$work/run.err" &
    pid=$!
    # Once a first checkpoint is complete (not only its .tmp: under ASan the first write
    # can still be going on), a random moment in the next 0.3 s.
    for ((i = 0; i < 400; i++)); do
        ls "$folder" 2>/dev/null | grep -q '^step-[0-9]*\.safetensors$' && break
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.02
    done
    sleep "0.$(printf '%03d' $((RANDOM % 300)))"
    kill -KILL "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
    ls "$folder" | grep -q '\.tmp$' && tmp_left=$((tmp_left + 1))
    run "$TRAINER" train "$work/tiny.model" "${data[@]}" --epochs 1 --resume "$folder"
    if [ "$rc" -ne 0 ]; then
        fail "round $round: a resume after SIGKILL works" "folder: $(ls "$folder" | tr '\n' ' ')"
        cat "$work/run.err"
        break
    fi
    resume=(--resume "$folder")
done
[ "$failures" -eq 0 ] && pass "20 SIGKILLs during checkpoint writes, each followed by a resume \
that works ($tmp_left left a .tmp behind)"
finish

#!/usr/bin/env bash
# train, eval and predict --json: stdout holds only JSON lines, each parsed alone by
# `python3 -m json.tool`: the run, each epoch (train), each prediction (predict), and the
# result, with the fields docs/cli.md lists; the text goes to stderr. --json --quiet: the
# JSON lines and nothing else. --quiet: nothing on stdout, nothing on stderr but errors. A
# JSON line that cannot be written is an error (exit 1).
source "$(dirname "${BASH_SOURCE[0]}")/common.bash"
require_python3 "parse the JSON lines"

write_class_pngs "$work/imgs/alpha" 10 6
write_class_pngs "$work/imgs/beta" 200 6
sed 's/units=10$/units=2/' models/mlp.model >"$work/two.model"
common=(--device cpu --threads 1)

# lines_parse WHAT: every line of $out is a JSON document by itself (python3 -m json.tool).
lines_parse() {
    local line n=0 bad=""
    while IFS= read -r line; do
        n=$((n + 1))
        printf '%s' "$line" | python3 -m json.tool >/dev/null 2>&1 || bad+="line $n: $line; "
    done <<<"$out"
    if [ -z "$bad" ] && [ "$n" -gt 0 ]; then pass "$1: $n lines, each parsed by json.tool"
    else fail "$1" "${bad:-no lines}"; fi
}
# events_are WHAT EXPR: EXPR (python) holds of `e`, the list of parsed lines.
events_are() {
    local why
    if why=$(python3 -c 'import json, sys
e = [json.loads(l) for l in sys.stdin.read().splitlines()]
if not eval("(" + sys.argv[1] + ")"): sys.exit("false: %s\n%r" % (sys.argv[1], e))' "$2" <<<"$out" 2>&1)
    then pass "$1"; else fail "$1" "$why"; fi
}

run "$TRAINER" train "$work/two.model" --data "png:$work/imgs" --val-split 0.25 --epochs 2 \
    "${common[@]}" --save "$work/two.safetensors" --json
expect_rc 0 "train --json"
lines_parse "train --json"
events_are "train: run, an epoch line each epoch, then the result" \
    '[x["event"] for x in e] == ["run", "epoch", "epoch", "result"]'
events_are "train's run line has its fields" \
    'set(e[0]) == {"event", "command", "model", "parameters", "data", "train_samples",
     "val_samples", "test_samples", "device", "replicas", "processes", "optimizer", "batch",
     "epochs", "seed", "evaluated"} and e[0]["val_samples"] == 3 and e[0]["test_samples"] is None'
events_are "train's epoch lines have their fields" \
    'all(set(x) == {"event", "epoch", "epochs", "evaluation_only", "train_loss",
     "train_accuracy", "split", "loss", "accuracy", "samples", "lr", "samples_per_second",
     "seconds", "global_step"} and x["split"] == "val" for x in e[1:3])
     and [x["epoch"] for x in e[1:3]] == [1, 2]'
events_are "train's result is the last evaluation" \
    'e[3]["split"] == "val" and e[3]["accuracy"] == e[2]["accuracy"] and e[3]["epochs"] == 2'
expect_match err "^epoch 2/2  train loss" "the text goes to stderr"

run "$TRAINER" eval "$work/two.model" --weights "$work/two.safetensors" \
    --data "png:$work/imgs" "${common[@]}" --json --per-class
expect_rc 0 "eval --json --per-class"
lines_parse "eval --json"
events_are "eval: run, then the result with the per-class figures" \
    '[x["event"] for x in e] == ["run", "result"] and e[1]["split"] == "val"
     and len(e[1]["confusion"]) == 2 and [c["name"] for c in e[1]["classes"]] == ["alpha", "beta"]'
expect_match err "^val loss [0-9.]+  accuracy" "the text goes to stderr"

run "$TRAINER" predict "$work/two.model" --weights "$work/two.safetensors" "$work/imgs" \
    "${common[@]}" --json --quiet
expect_rc 0 "predict --json --quiet"
lines_parse "predict --json"
events_are "predict: run, a prediction line per image, the result" \
    '[x["event"] for x in e] == ["run"] + ["prediction"] * 12 + ["result"]
     and e[-1]["samples"] == 12 and all(len(x["top"]) == 2 for x in e[1:-1])'
[ -z "$err" ] && pass "--json --quiet: nothing on stderr" || fail "--json --quiet: nothing on stderr"

if [ -w /dev/full ]; then
    "$TRAINER" eval "$work/two.model" --weights "$work/two.safetensors" \
        --data "png:$work/imgs" "${common[@]}" --json >/dev/full 2>"$work/full.err"
    rc=$? err=$(cat "$work/full.err") out=""
    expect_error 1 "cannot write the JSON lines to stdout: No space left on device" \
        "JSON lines that cannot be written (stdout on /dev/full) are an error"
fi

run "$TRAINER" train "$work/two.model" --data "png:$work/imgs" --val-split 0.25 --epochs 1 \
    "${common[@]}" --quiet
expect_rc 0 "train --quiet"
[ -z "$out$err" ] && pass "train --quiet prints nothing" || fail "train --quiet prints nothing"
run "$TRAINER" eval "$work/two.model" --weights "$work/missing.safetensors" \
    --data "png:$work/imgs" "${common[@]}" --quiet
expect_error 2 "missing.safetensors" "--quiet still prints errors"

finish

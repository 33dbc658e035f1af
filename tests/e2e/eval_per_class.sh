#!/usr/bin/env bash
# trainer eval --per-class: a table of each class (by name) and the confusion matrix (rows:
# true class, columns: predicted) whose cells add up to the samples and whose diagonal is
# the accuracy eval prints; --output FILE.csv (a row per class) and FILE.json (the result
# with the matrix) hold the same counts; another ending is refused before any work; --quiet
# prints nothing and still writes the file; without the options the output is as before.
# predict --data's top classes against its labels count the same matrix.
source "$(dirname "${BASH_SOURCE[0]}")/common.bash"
require_python3 "write the test PNGs and read the outputs"

write_class_pngs "$work/imgs/alpha" 10 10
write_class_pngs "$work/imgs/beta" 200 10
write_class_pngs "$work/imgs/gamma" 100 10
sed 's/units=10$/units=3/' models/mlp.model >"$work/three.model"
run "$TRAINER" train "$work/three.model" --data "png:$work/imgs" --val-split 0.3 --epochs 2 \
    --device cpu --threads 1 --save "$work/three.safetensors"
expect_rc 0 "a 3-class mlp trains on 3 class folders"
eval_args=("$work/three.model" --weights "$work/three.safetensors" --data "png:$work/imgs"
    --device cpu --threads 1)

run "$TRAINER" eval "${eval_args[@]}"
expect_rc 0 "eval without --per-class"
plain=$out
expect_no_match out "per class|confusion" "... prints no per-class figures"

run "$TRAINER" eval "${eval_args[@]}" --per-class
expect_rc 0 "eval --per-class"
[ "$(head -n 1 <<<"$out")" = "$plain" ] && pass "the result line is the same as without it" ||
    fail "the result line is the same as without it" "without: $plain"
for name in alpha beta gamma; do
    expect_match out "^ +[0-9] $name +[0-9]+ +([01]\.[0-9]{4}|-) +([01]\.[0-9]{4}|-)$" \
        "a table row names class $name, with its samples, accuracy and precision"
done
expect_in out "confusion matrix (rows: true class, columns: predicted class):" \
    "the confusion matrix says which way it reads"
# The matrix: its rows after the heading; cells add to the samples, the diagonal to the
# accuracy printed.
problems=$(python3 - <<PY
import re
out = """$out"""
samples = int(re.search(r"accuracy ([0-9.]+)  \((\d+) samples", out).group(2))
accuracy = float(re.search(r"accuracy ([0-9.]+)", out).group(1))
lines = out.split("confusion matrix")[1].splitlines()[2:]
m = [[int(x) for x in l.split()[1:]] for l in lines if l.strip()]
problems = []
if len(m) != 3 or any(len(r) != 3 for r in m): problems.append("not 3x3: %r" % m)
elif sum(map(sum, m)) != samples: problems.append("cells add to %d, not %d" % (sum(map(sum, m)), samples))
elif abs(sum(m[i][i] for i in range(3)) / samples - accuracy) > 1e-4: problems.append("diagonal %r vs accuracy %s" % (m, accuracy))
print("; ".join(problems))
PY
)
[ -z "$problems" ] && pass "the matrix adds up to the samples, its diagonal to the accuracy" ||
    fail "the matrix adds up to the samples, its diagonal to the accuracy" "$problems"
matrix=$(sed -n '/^confusion matrix/,$p' <<<"$out" | tail -n +3)

run "$TRAINER" eval "${eval_args[@]}" --output "$work/pc.csv"
expect_rc 0 "eval --output FILE.csv"
why=$(python3 - "$work/pc.csv" "$matrix" <<'PY'
import csv, sys
rows = list(csv.reader(open(sys.argv[1], newline="")))
assert rows[0] == ["index", "class", "samples", "correct", "accuracy", "precision",
                   "predicted_0", "predicted_1", "predicted_2"], rows[0]
assert [r[1] for r in rows[1:]] == ["alpha", "beta", "gamma"], rows
text = [[int(x) for x in l.split()[1:]] for l in sys.argv[2].splitlines()]
cells = [[int(x) for x in r[6:]] for r in rows[1:]]
assert cells == text, "CSV %r, text %r" % (cells, text)
for i, r in enumerate(rows[1:]):
    assert int(r[2]) == sum(cells[i]) and int(r[3]) == cells[i][i], r
PY
) && pass "... a row per class, its cells the text's matrix" ||
    fail "... a row per class, its cells the text's matrix" "$why"

run "$TRAINER" eval "${eval_args[@]}" --output "$work/pc.json" --quiet
expect_rc 0 "eval --output FILE.json --quiet"
[ -z "$out" ] && pass "--quiet prints nothing on stdout" || fail "--quiet prints nothing on stdout"
why=$(python3 - "$work/pc.json" "$matrix" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
text = [[int(x) for x in l.split()[1:]] for l in sys.argv[2].splitlines()]
assert d["confusion"] == text, "JSON %r, text %r" % (d["confusion"], text)
assert [c["name"] for c in d["classes"]] == ["alpha", "beta", "gamma"], d["classes"]
assert d["samples"] == sum(map(sum, text)) and d["split"] == "val", d
PY
) && pass "... the JSON holds the result and the same matrix" ||
    fail "... the JSON holds the result and the same matrix" "$why"

run "$TRAINER" eval "${eval_args[@]}" --output "$work/pc.txt"
expect_error 2 "eval writes FILE.csv or FILE.json" "--output with another ending is refused"
[ ! -e "$work/pc.txt" ] && pass "... and nothing is written" || fail "... and nothing is written"

# Two ways to the same counts: eval's confusion matrix and predict --data's top classes
# against the labels it reports, on an idx: dataset's test split (random pixels).
make_random_dataset "$work/idx" 200 60
run "$TRAINER" train models/mlp.model --data "idx:$work/idx" --epochs 1 --device cpu \
    --threads 1 --save "$work/idx.safetensors"
expect_rc 0 "an mlp trains on an idx: dataset"
run "$TRAINER" eval models/mlp.model --weights "$work/idx.safetensors" --data "idx:$work/idx" \
    --device cpu --threads 1 --output "$work/idx.json"
run "$TRAINER" predict models/mlp.model --weights "$work/idx.safetensors" \
    --data "idx:$work/idx" --top 1 --device cpu --threads 1 --output "$work/idx.csv"
expect_rc 0 "predict --data idx:DIR"
why=$(python3 - "$work/idx.json" "$work/idx.csv" <<'PY'
import csv, json, sys
matrix = json.load(open(sys.argv[1]))["confusion"]
counted = [[0] * len(matrix) for _ in matrix]
for row in csv.DictReader(open(sys.argv[2], newline="")):
    counted[int(row["label"])][int(row["index"])] += 1
assert counted == matrix, "predict %r, eval %r" % (counted, matrix)
PY
) && pass "eval's confusion matrix is predict's top classes against the labels" ||
    fail "eval's confusion matrix is predict's top classes against the labels" "$why"

finish

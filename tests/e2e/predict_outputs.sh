#!/usr/bin/env bash
# trainer predict on folders and on a dataset's samples, with --output: a folder of class
# folders gives every image once (in name order), a plain folder its images, --data csv:FILE
# each row (its label reported); --output FILE.csv has a header and a row per sample and rank
# (RFC 4180 quoting for a comma in a path), FILE.jsonl an object per sample; another ending,
# an empty folder, or images with --data are refused; --quiet prints nothing on stdout and
# still writes the file.
source "$(dirname "${BASH_SOURCE[0]}")/common.bash"
require_python3 "write the test PNGs and read the outputs"

write_class_pngs "$work/imgs/alpha" 10 5
write_class_pngs "$work/imgs/beta" 200 5
sed 's/units=10$/units=2/' models/mlp.model >"$work/two.model"
run "$TRAINER" train "$work/two.model" --data "png:$work/imgs" --val-split 0.2 --epochs 1 \
    --device cpu --threads 1 --save "$work/two.safetensors"
expect_rc 0 "a 2-class mlp trains on 2 class folders"

# check_csv FILE SAMPLES TOP [LABELS]: FILE is predict's CSV: the header, TOP rows a sample
# ranked 1..TOP with probabilities in [0, 1] descending, SAMPLES samples; LABELS "yes": the
# label column is filled.
check_csv() {
    python3 - "$@" <<'PY'
import csv, sys
path, samples, top, labels = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4:]
rows = list(csv.reader(open(path, newline="")))
assert rows[0] == ["path", "label", "rank", "index", "class", "probability"], rows[0]
body = rows[1:]
assert len(body) == samples * top, "%d rows, expected %d" % (len(body), samples * top)
for s in range(samples):
    group = body[s * top:(s + 1) * top]
    assert len({r[0] for r in group}) == 1, group
    assert [int(r[2]) for r in group] == list(range(1, top + 1)), group
    p = [float(r[5]) for r in group]
    assert all(0 <= x <= 1 for x in p) and p == sorted(p, reverse=True), p
    if labels: assert group[0][1].isdigit(), group
    else: assert group[0][1] == "", group
PY
}
# check_jsonl FILE SAMPLES TOP: one JSON object per line, with path, label and TOP classes.
check_jsonl() {
    python3 - "$@" <<'PY'
import json, sys
path, samples, top = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
lines = open(path, encoding="utf-8").read().splitlines()
assert len(lines) == samples, "%d lines, expected %d" % (len(lines), samples)
for line in lines:
    d = json.loads(line)
    assert set(d) == {"path", "label", "top"}, d
    assert [t["rank"] for t in d["top"]] == list(range(1, top + 1)), d
    assert all(set(t) == {"rank", "index", "class", "probability"} for t in d["top"]), d
PY
}
check() {  # check WHAT COMMAND...: the command (a check_* above) succeeds
    local what=$1 why
    shift
    if why=$("$@" 2>&1); then pass "$what"; else fail "$what" "$why"; fi
}

run "$TRAINER" predict "$work/two.model" --weights "$work/two.safetensors" "$work/imgs" \
    --top 2 --device cpu --threads 1 --output "$work/p.csv"
expect_rc 0 "predict on a folder of class folders"
count=$(grep -c "^$work/imgs/\(alpha\|beta\)/0[0-4]\.png$" <<<"$out")
[ "$count" = 10 ] && pass "... predicts each of its 10 images" ||
    fail "... predicts each of its 10 images" "$count image names on stdout"
first=$(head -n 1 <<<"$out")
[ "$first" = "$work/imgs/alpha/00.png" ] && pass "... in name order" ||
    fail "... in name order" "first: $first"
check "--output FILE.csv: a header, a row per sample and rank" check_csv "$work/p.csv" 10 2

run "$TRAINER" predict "$work/two.model" --weights "$work/two.safetensors" "$work/imgs/beta" \
    --top 1 --device cpu --threads 1 --output "$work/p.jsonl"
expect_rc 0 "predict on a plain folder of images"
check "--output FILE.jsonl: an object per sample" check_jsonl "$work/p.jsonl" 5 1

cp "$work/imgs/alpha/00.png" "$work/a,b \"c\".png"
run "$TRAINER" predict "$work/two.model" --weights "$work/two.safetensors" \
    "$work/a,b \"c\".png" --top 1 --device cpu --threads 1 --output "$work/q.csv"
got=$(python3 -c 'import csv, sys; print(list(csv.reader(open(sys.argv[1])))[1][0])' \
    "$work/q.csv")
[ "$got" = "$work/a,b \"c\".png" ] && pass "a path with a comma and quotes reads back from the CSV" ||
    fail "a path with a comma and quotes reads back from the CSV" "read: $got"

run "$TRAINER" predict "$work/two.model" --weights "$work/two.safetensors" "$work/imgs" \
    --device cpu --threads 1 --output "$work/p.txt"
expect_error 2 "predict writes FILE.csv or FILE.jsonl" "--output with another ending is refused"
[ ! -e "$work/p.txt" ] && pass "... and nothing is written" || fail "... and nothing is written"
mkdir -p "$work/empty/sub"
run "$TRAINER" predict "$work/two.model" --weights "$work/two.safetensors" "$work/empty" \
    --device cpu --threads 1
expect_error 2 "the folder holds no .png or .jpg image" "a folder without images is refused"

run "$TRAINER" predict "$work/two.model" --weights "$work/two.safetensors" "$work/imgs" \
    --device cpu --threads 1 --quiet --output "$work/quiet.jsonl"
expect_rc 0 "predict --quiet"
[ -z "$out" ] && pass "--quiet prints nothing on stdout" || fail "--quiet prints nothing on stdout"
check "--quiet still writes --output (--top 3 of 2 classes: 2)" check_jsonl "$work/quiet.jsonl" 10 2

# CSV rows: a 3-feature, 3-class table, each row a sample (its label read and reported).
python3 - "$work/rows.csv" <<'PY'
import random, sys
random.seed(1)
with open(sys.argv[1], "w") as f:
    f.write("a,b,c,label\n")
    for i in range(30):
        k = i % 3
        f.write("%.3f,%.3f,%.3f,%d\n" % (k + random.random() * 0.3, -k + random.random() * 0.3,
                                         random.random(), k))
PY
cat >"$work/rows.model" <<'MODEL'
input     shape=3 dtype=f32
dense     units=8 act=relu
dense     units=3
loss      softmax_cross_entropy
optimizer adam lr=0.05
train     batch=8 epochs=3 seed=1
MODEL
run "$TRAINER" train "$work/rows.model" --data "csv:$work/rows.csv" --val-split 0.2 \
    --device cpu --threads 1 --save "$work/rows.safetensors"
expect_rc 0 "a model trains on CSV rows"
run "$TRAINER" predict "$work/rows.model" --weights "$work/rows.safetensors" \
    --data "csv:$work/rows.csv" --top 2 --device cpu --threads 1 --output "$work/rows_p.csv"
expect_rc 0 "predict --data csv:FILE"
expect_match out "^csv:$work/rows.csv#30$" "each row is a sample, named csv:FILE#N"
check "--data csv:FILE with --output FILE.csv: 30 samples, labels filled" \
    check_csv "$work/rows_p.csv" 30 2 yes
labels=$(python3 -c 'import csv, sys
rows = list(csv.reader(open(sys.argv[1])))[1::2]
print(",".join(r[1] for r in rows))' "$work/rows_p.csv")
want=$(tail -n +2 "$work/rows.csv" | cut -d, -f4 | paste -sd,)
[ "$labels" = "$want" ] && pass "... each row's label is its CSV label, in file order" ||
    fail "... each row's label is its CSV label, in file order" "got $labels, want $want"
run "$TRAINER" predict "$work/rows.model" --weights "$work/rows.safetensors" \
    --data "csv:$work/rows.csv" --top 1 --device cpu --threads 1 --output "$work/rows.jsonl"
check "--data csv:FILE with --output FILE.jsonl" check_jsonl "$work/rows.jsonl" 30 1
run "$TRAINER" predict "$work/rows.model" --weights "$work/rows.safetensors" \
    --data "csv:$work/rows.csv" "$work/imgs" --device cpu --threads 1
expect_error 2 "not both" "images and --data together are refused"

finish

#!/usr/bin/env bash
# `trainer check` on the bundled MLP: valid, with the parameter count its header comment
# promises (784*256+256 + 256*128+128 + 128*10+10 = 235,146), one table row per layer,
# and a memory estimate that follows --batch.
source "$(dirname "${BASH_SOURCE[0]}")/common.bash"

run "$TRAINER" check models/mlp.model
expect_rc 0 "trainer check models/mlp.model succeeds"
expect_in out "model models/mlp.model: valid, 235,146 parameters, 10 classes" \
    "check reports 235,146 parameters and 10 classes"
expect_match out "^total +235,146 " "the table's total row says 235,146"
# One row per layer: its name first, then (in whichever columns) its output size and its
# parameter count.
for row in "input1 784 0" "dense1 256 200,960" "dense2 128 32,896" "dense3 10 1,290" \
    "loss1 10 0"; do
    read -r name size params <<<"$row"
    if awk -v n="$name" -v s="$size" -v p="$params" '
        $1 == n { size = 0; count = 0
                  for (i = 2; i <= NF; i++) { if ($i == s) size = 1; if ($i == p) count = 1 }
                  if (size && count) found = 1 }
        END { exit !found }' <<<"$out"; then
        pass "the table's row $name has output $size and $params parameters"
    else
        fail "the table's row $name has output $size and $params parameters"
    fi
done
expect_match out "^loss1 +loss softmax_cross_entropy " "the loss row names the loss"
expect_in out "optimizer adam lr=0.001" "check shows the optimizer from the file"
expect_in out "train batch=128 epochs=10 seed=1" "check shows the train settings from the file"
expect_match out "^memory at batch 128: " "check estimates memory at the file's batch"
if [ -z "$err" ]; then pass "check prints nothing on stderr"; else fail "check prints nothing on stderr"; fi

run "$TRAINER" check models/mlp.model --batch 256
expect_rc 0 "check --batch 256 succeeds"
expect_match out "^memory at batch 256: " "check --batch 256 estimates memory at batch 256"

# A copy elsewhere: the report names the path it was given.
cp models/mlp.model "$work/copy.model"
run "$TRAINER" check "$work/copy.model"
expect_rc 0 "check of a copy of the model succeeds"
expect_in out "model $work/copy.model: valid, 235,146 parameters" "check names the path it was given"

finish

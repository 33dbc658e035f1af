#!/usr/bin/env bash
# expect_model_error.sh TRAINER MODEL
# MODEL's own `# expect: TEXT` line says what `trainer check MODEL` must print; it must
# also exit 2 (bad model) and print an error of the project's format, naming the file.
set -u
trainer=$1 model=$2
expected=$(sed -n 's/^# expect: //p' "$model" | head -n 1)
if [ -z "$expected" ]; then echo "FAIL: $model has no '# expect:' line"; exit 1; fi
out=$("$trainer" check "$model" 2>&1); rc=$?
echo "$out"
fail=0
[ "$rc" -eq 2 ] || { echo "FAIL: exit code $rc, expected 2"; fail=1; }
grep -qF -- "$expected" <<<"$out" || { echo "FAIL: output lacks: $expected"; fail=1; }
grep -q "^trainer: error: $model:[0-9]" <<<"$out" || { echo "FAIL: error does not start with 'trainer: error: $model:LINE'"; fail=1; }
grep -q '^  hint: ' <<<"$out" || { echo "FAIL: no '  hint:' line"; fail=1; }
exit $fail

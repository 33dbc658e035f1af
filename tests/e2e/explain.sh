#!/usr/bin/env bash
# `trainer explain` (issue 5): every entry of `explain --list` explains by its name and by
# its code with exit 0; a framework message pasted whole finds its entry; a typo gets a
# "did you mean"; an ambiguous number lists the candidates; no argument is a usage error.
# Needs no GPU and no dataset.
source "$(dirname "${BASH_SOURCE[0]}")/common.bash"

run "$TRAINER" explain --list
expect_rc 0 "explain --list"
for family in "CUDA runtime" "CUDA driver" "cuBLAS" "cuDNN" "NCCL" "framework messages"; do
    expect_match out "^$family " "--list has the $family family"
done
list=$out

# Entry lines are "  CODE  NAME  [STRING]".
entries=$(awk '/^  [a-z]+:[0-9]+ /{print $1, $2}' <<<"$list")
total=$(wc -l <<<"$entries")
if [ "$total" -ge 150 ]; then pass "--list has $total entries"
else fail "--list has at least 150 entries" "found $total"; fi

# Every name; every fourth code (tests/unit/test_error_catalog.c looks up all codes, and
# each run of the binary costs a start-up). The facts of this machine that close each
# explanation load the CUDA backend (0.15 s a run, 30 s for this loop); the loop checks the
# explanations, so it points TRAINER_CUDA_MODULE nowhere and the facts say it did not load.
# The checks after it ask the real machine.
no_backend="$work/no-backend/trainer_cuda.so"
bad_name=0 bad_code=0 index=0
while read -r code name; do
    index=$((index + 1))
    TRAINER_CUDA_MODULE="$no_backend" "$TRAINER" explain "$name" </dev/null >"$work/name.out" \
        2>"$work/name.err"
    rc=$?
    if [ "$rc" -ne 0 ] || ! head -n 1 "$work/name.out" | grep -qF -- "$name " ||
        ! grep -q '^What it means$' "$work/name.out" ||
        ! grep -q '^How PyTorch words it$' "$work/name.out" ||
        ! grep -q '^How TensorFlow words it$' "$work/name.out"; then
        echo "    explain $name: exit $rc"; sed 's/^/      | /' "$work/name.err" | head -n 5
        bad_name=$((bad_name + 1))
    fi
    [ $((index % 4)) -eq 1 ] || continue
    TRAINER_CUDA_MODULE="$no_backend" "$TRAINER" explain "$code" </dev/null >"$work/code.out" \
        2>/dev/null
    if [ $? -ne 0 ] || ! head -n 1 "$work/code.out" | grep -qF -- "$name "; then
        echo "    explain $code does not explain $name"
        bad_code=$((bad_code + 1))
    fi
done <<<"$entries"
ran="trainer explain NAME, for each of the $total entries"
if [ "$bad_name" -eq 0 ]; then pass "every listed name explains with exit 0"
else rc=1 out="" err=""; fail "every listed name explains with exit 0" "$bad_name failed"; fi
ran="trainer explain CODE, for every fourth of the $total entries"
if [ "$bad_code" -eq 0 ]; then pass "listed codes explain the same entries"
else rc=1 out="" err=""; fail "listed codes explain the same entries" "$bad_code failed"; fi

# A PyTorch out-of-memory traceback, pasted whole.
oom='Traceback (most recent call last):
  File "train.py", line 88, in <module>
    loss.backward()
torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 15.77 GiB of which 1.05 GiB is free.'
run "$TRAINER" explain "$oom"
expect_rc 0 "a pasted PyTorch OOM traceback is explained"
expect_match out '^cuda-out-of-memory ' "it finds the out-of-memory entry"
expect_in out "cudaErrorMemoryAllocation" "it names the CUDA error behind it"
expect_in out "On this machine" "it lists facts from this machine"

# Unquoted words are joined, as a person types them.
run "$TRAINER" explain CUDA error: device-side assert triggered
expect_rc 0 "an unquoted message is explained"
expect_match out '^device-side-assert ' "it finds the device-side assert entry"
expect_in out "process must restart" "it says the context is lost"

# A 2048-thread block: CUDA 12 and PyTorch say "invalid configuration argument", CUDA 13
# says "invalid argument" (seen on an H100); both are explained as a launch problem.
run "$TRAINER" explain "RuntimeError: CUDA error: invalid configuration argument"
expect_match out '^invalid-configuration-argument ' "PyTorch's invalid configuration argument is explained"
run "$TRAINER" explain "RuntimeError: CUDA error: invalid argument"
expect_match out '^cudaErrorInvalidValue ' "CUDA 13's 'invalid argument' finds cudaErrorInvalidValue"
expect_in out "At a kernel launch, from CUDA 13 on: a block past the device's limits" \
    "which names the oversized block among its causes"
run "$TRAINER" explain cudaErrorInvalidConfiguration
expect_in out "reported as cudaErrorInvalidValue" "and invalid configuration points at CUDA 13's code"

run "$TRAINER" explain "failed call to cuInit: CUDA_ERROR_NO_DEVICE: no CUDA-capable device is detected"
expect_match out '^CUDA_ERROR_NO_DEVICE ' "a TensorFlow driver error finds the driver entry"

run "$TRAINER" explain cudnn:9
expect_match out '^CUDNN_STATUS_NOT_SUPPORTED ' "cudnn:9 (cuDNN 8 numbering) finds CUDNN_STATUS_NOT_SUPPORTED"

run "$TRAINER" explain cudaErrorMemoryAlocation
expect_error 2 "did you mean 'cudaErrorMemoryAllocation'?" "a typo gets a suggestion"

run "$TRAINER" explain 2
expect_error 2 "cuda:2 cudaErrorMemoryAllocation" "an ambiguous number lists the candidates"
expect_in err "nccl:2 ncclSystemError" "the NCCL candidate is listed too"

run "$TRAINER" explain "nothing like an error here"
expect_error 2 "no catalog entry matches" "an unknown message exits 2"

run "$TRAINER" explain
expect_error 2 "explain needs an ERROR" "no argument is a usage error"

run "$TRAINER" explain --list cudaErrorAssert
expect_error 2 "--list takes no ERROR" "--list with an ERROR is a usage error"

run "$TRAINER" explain --json cudaErrorIllegalAddress
expect_rc 0 "explain --json"
expect_in out '"poisons_context": true' "--json says an illegal address poisons the context"
if command -v python3 >/dev/null; then
    if python3 -c 'import json, sys; json.load(sys.stdin)' <<<"$out"; then pass "--json is valid JSON"
    else fail "--json is valid JSON"; fi
    run "$TRAINER" explain --list --json
    if python3 -c 'import json, sys; assert len(json.load(sys.stdin)) >= 150' <<<"$out"; then
        pass "--list --json is valid JSON with every entry"
    else fail "--list --json is valid JSON with every entry"; fi
fi

# The machine's facts hold CUDA_VISIBLE_DEVICES, anyone's bytes: escaped on the terminal.
CUDA_VISIBLE_DEVICES="0$(printf '\033')[2J" run "$TRAINER" explain cudaErrorInvalidDevice
expect_in out 'CUDA_VISIBLE_DEVICES="0\x1b[2J"' "CUDA_VISIBLE_DEVICES is shown escaped"
# A pasted message with the terminal's colour codes: echoed escaped in the error.
run "$TRAINER" explain "no such $(printf '\033')[31merror"
expect_error 2 "no catalog entry matches 'no such \x1b[31merror'" "the text is shown escaped"

finish

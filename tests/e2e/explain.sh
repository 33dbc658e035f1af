#!/usr/bin/env bash
# `trainer explain` (issues 5 and 37): every entry of `explain --list` explains by its name
# and by its code with exit 0, and in at most 8 lines with --short; a framework message
# pasted whole finds its entry, and the entries that were close are named; on a machine
# without a driver the verdict comes first with the commands to run next; the wordings
# table in docs/cuda-errors.md is the catalog's; a typo gets a "did you mean"; an
# ambiguous number lists the candidates; no argument is a usage error. Needs no GPU and no
# dataset (the verdict transcript needs a machine without an NVIDIA driver).
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
# explained ARGS...: `trainer explain ARGS` with the backend pointed nowhere; sets $erc, $text
# (its stdout between newlines: $'\nLINE\n' matches a whole line), $first (its first line)
# and $lines (its line count, as wc -l counts). The loop runs it some 230 times, so its
# checks are bash's own matches, not a grep, head or wc each (five processes an entry).
explained() {
    TRAINER_CUDA_MODULE="$no_backend" "$TRAINER" explain "$@" </dev/null >"$work/explained.out" \
        2>"$work/explained.err"
    erc=$?
    text=""
    IFS= read -r -d '' text <"$work/explained.out"
    first=${text%%$'\n'*}
    local newlines=${text//[!$'\n']/}
    lines=${#newlines}
    text=$'\n'$text$'\n'
}
bad_name=0 bad_code=0 bad_short=0 index=0
while read -r code name; do
    index=$((index + 1))
    explained "$name"
    if [ "$erc" -ne 0 ] || [[ $first != *"$name "* ]] || [[ $text != *$'\nWhat it means\n'* ]] ||
        [[ $text != *$'\n  PyTorch: '* ]] || [[ $text != *$'\n  TensorFlow: '* ]]; then
        echo "    explain $name: exit $erc"; sed 's/^/      | /' "$work/explained.err" | head -n 5
        bad_name=$((bad_name + 1))
    fi
    if [ $((index % 4)) -eq 1 ] || [[ $code == framework:* ]]; then
        explained --short "$name"
        if [ "$erc" -ne 0 ] || [ "$lines" -gt 8 ] || [ "$lines" -lt 3 ] ||
            [[ $first != *"$name ("* ]] || [[ $text != *$'\n  Next: '* ]]; then
            echo "    explain --short $name: $lines lines"; sed 's/^/      | /' "$work/explained.out"
            bad_short=$((bad_short + 1))
        fi
    fi
    [ $((index % 4)) -eq 1 ] || continue
    explained "$code"
    if [ "$erc" -ne 0 ] || [[ $first != *"$name "* ]]; then
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
ran="trainer explain --short NAME, for every framework entry and every fourth other"
if [ "$bad_short" -eq 0 ]; then pass "--short is 3 to 8 lines, ending with the next command"
else rc=1 out="" err=""; fail "--short is 3 to 8 lines, ending with the next command" "$bad_short failed"; fi

# The verdict, on a machine without an NVIDIA driver (as CI's): the missing driver, not the
# ordinal, is the cause here, and it says so first, then what to run next.
if [ -e /proc/driver/nvidia/version ] || [ -e /dev/dxg ]; then
    echo "skip - the no-driver transcripts need a machine without an NVIDIA driver"
    # With a driver, CUDA_VISIBLE_DEVICES=-1 hiding every GPU is what decides.
    CUDA_VISIBLE_DEVICES=-1 run "$TRAINER" explain --short "RuntimeError: No CUDA GPUs are available"
    expect_in out 'Cause here: CUDA_VISIBLE_DEVICES="-1" hides every GPU' \
        "an empty GPU list is the verdict where a driver is loaded"
    expect_in out 'Next: `unset CUDA_VISIBLE_DEVICES`, then `nvidia-smi -L`, then `trainer doctor`' \
        "with the commands to run next"
else
    run env -u CUDA_VISIBLE_DEVICES "$TRAINER" explain --short "CUDA error: invalid device ordinal"
    expect_rc 0 "explain --short on a machine without a driver"
    want='invalid-device-ordinal (framework:11): The framework was asked for a GPU number this
process cannot see.
  Cause here: No NVIDIA driver is loaded on this machine (/proc/driver/nvidia/version does
              not exist), so no program here can use a GPU: if the error came from this
              machine, the missing driver is the cause, whatever device the message names.
  Next: `nvidia-smi`, then `trainer doctor`'
    if [ "$out" = "$want" ]; then pass "the --short transcript: meaning, verdict, next commands"
    else fail "the --short transcript: meaning, verdict, next commands" \
        "$(diff <(echo "$want") <(echo "$out") | head -n 20)"; fi

    run "$TRAINER" explain "RuntimeError: CUDA error: invalid device ordinal"
    sections=$(grep -E '^[A-Z][A-Za-z ]+$' <<<"$out" | head -n 2 | tr '\n' '|')
    if [ "$sections" = "Verdict for this machine|What it means|" ]; then
        pass "the full explanation starts with the verdict"
    else fail "the full explanation starts with the verdict" "sections: $sections"; fi
    expect_in out '  Next: `nvidia-smi`, then `trainer doctor`' "it names the commands to run next"
    run "$TRAINER" explain --json "No CUDA GPUs are available"
    expect_in out '"next": ["nvidia-smi", "trainer doctor"]' "--json carries the verdict"
    # An error about something else than finding a GPU gets no verdict.
    run "$TRAINER" explain "RuntimeError: CUDA error: device-side assert triggered"
    expect_no_match out '^Verdict for this machine$' "a device-side assert gets no verdict"
fi

# PyTorch's NCCL paste starts with the catch-all "NCCL error in:"; the "Last error:" line
# names the cause, and the entry the rest of the paste matched is named as close.
run "$TRAINER" explain "torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/NCCLUtils.hpp:219, internal error - please report this issue to the NCCL developers, NCCL version 2.18.1
ncclInternalError: Internal check failed.
Last error:
Error while creating shared memory segment /dev/shm/nccl-Qmt3Ls (size 9637888)"
expect_match out '^nccl-unhandled-system-error ' "the Last error: line decides the entry"
expect_in out '  recognised by: "Error while creating shared memory segment"' \
    "it says which wording decided"
expect_in out '  also matched: ncclInternalError (by "internal error - please report' \
    "the entry that was close is named"

# Advice for everyone, then trainer's own steps under their own heading.
run "$TRAINER" explain cudaErrorIllegalAddress
expect_match out '^With trainer$' "trainer's steps have their own heading"
expect_in out '`trainer train MODEL --resume DIR`' "the resume step is there"
if sed -n '/^With trainer$/q;p' <<<"$out" | grep -q -- '--resume'; then
    fail "no trainer step above its heading"; else pass "no trainer step above its heading"; fi

# docs/cuda-errors.md's table of wordings is the catalog's, as --list-wordings prints it.
run "$TRAINER" explain --list-wordings
expect_rc 0 "explain --list-wordings"
doc="$(dirname "${BASH_SOURCE[0]}")/../../docs/cuda-errors.md"
table=$(sed -n '/^<!-- wordings: generated by `trainer explain --list-wordings` -->$/,/^<!-- end of wordings -->$/p' "$doc" |
    sed '1d;$d')
if [ -n "$table" ] && [ "$table" = "$out" ]; then pass "docs/cuda-errors.md's wordings table matches the catalog"
else fail "docs/cuda-errors.md's wordings table matches the catalog" \
    "regenerate it with trainer explain --list-wordings; diff: $(diff <(echo "$table") <(echo "$out") | head -n 10)"; fi

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

#!/usr/bin/env bash
# `trainer doctor` (DESIGN.md §1, §4): the driver, the libraries built against and
# loaded, every device with a smoke test, a verdict and numbered fixes; exit 0 all well,
# 3 no usable device, 1 something broken. `--json` says the same as one JSON object.
# Written to pass on machines without a GPU (exit 3, training on the CPU) and with one.
source "$(dirname "${BASH_SOURCE[0]}")/common.bash"

require_python3 "parse the JSON"

# json_get KEY...: the value at that path in $out (parsed), printed by Python; exits
# nonzero when the path is missing.
json_get() {
    python3 -c 'import json, sys
value = json.loads(sys.stdin.read())
for key in sys.argv[1:]:
    value = value[int(key)] if isinstance(value, list) else value[key]
print(json.dumps(value) if isinstance(value, (dict, list, bool)) or value is None else value)' \
        "$@" <<<"$out"
}

run "$TRAINER" doctor --json
json_rc=$rc
if python3 -m json.tool <<<"$out" >/dev/null 2>&1; then pass "doctor --json parses"
else fail "doctor --json parses" "python3 -m json.tool rejected it"; fi
missing=""
for key in trainer_version built_with_cuda architectures driver libraries environment \
    device_count device_error devices usable_devices notes problems verdict exit_code; do
    json_get "$key" >/dev/null 2>&1 || missing+=" $key"
done
for key in cudart cublas cudnn nccl; do
    for field in name built loaded path; do
        json_get libraries "$key" "$field" >/dev/null 2>&1 || missing+=" libraries.$key.$field"
    done
done
for key in CUDA_VISIBLE_DEVICES LD_LIBRARY_PATH; do
    json_get environment "$key" >/dev/null 2>&1 || missing+=" environment.$key"
done
if [ -z "$missing" ]; then pass "doctor --json has every key"
else fail "doctor --json has every key" "missing:$missing"; fi
if [ "$(json_get exit_code 2>/dev/null)" = "$json_rc" ]; then
    pass "the JSON's exit_code is the exit code ($json_rc)"
else fail "the JSON's exit_code is the exit code" "exit_code $(json_get exit_code), rc $json_rc"; fi
usable=$(json_get usable_devices 2>/dev/null)

if [ "$usable" = "0" ]; then
    if [ "$json_rc" -eq 3 ]; then pass "no usable device: doctor --json exits 3"
    else fail "no usable device: doctor --json exits 3" "exit $json_rc"; fi
    expect_match out '"verdict": "no usable GPU: training will run on the CPU"' \
        "the JSON verdict says training runs on the CPU"
    expect_match out '"severity": "no-device"' "the JSON lists why there is no device"
    expect_match out '"fix": ".+"' "each problem comes with a fix"
    if [ "$(json_get built_with_cuda)" = "true" ]; then
        expect_match out '"cudnn": \{"name": "cuDNN", "built": "[0-9]+\.[0-9]+\.[0-9]+", "loaded": "[0-9]+\.[0-9]+\.[0-9]+", "path": "/' \
            "cuDNN's built and loaded versions and its path are reported"
        expect_match out '"cudart": \{"name": "CUDA runtime", "built": "[0-9]+\.[0-9]+", "loaded": "[0-9]+\.[0-9]+"' \
            "the CUDA runtime's versions are reported"
        expect_match out '"architectures": \["[0-9]' "the compiled-in architectures are listed"
    else
        expect_in out 'built without CUDA' "a CPU-only build says it was built without CUDA"
    fi

    run "$TRAINER" doctor
    expect_rc 3 "plain doctor exits 3 without a usable device"
    expect_match out '^verdict: no usable GPU: training will run on the CPU$' \
        "plain doctor prints the verdict"
    expect_match out '^fixes:$' "plain doctor numbers its fixes"
    expect_match out '^  1\. .+' "fix 1 is there"
    expect_match out '^     fix: .+' "with what to do"
    expect_match out '^libraries +built with +loaded +loaded from$' \
        "plain doctor shows the library table"
    expect_match out '^  CUDA_VISIBLE_DEVICES +\(not set\)$|^  CUDA_VISIBLE_DEVICES +"' \
        "plain doctor reports CUDA_VISIBLE_DEVICES"
    expect_match out '^  LD_LIBRARY_PATH ' "plain doctor reports LD_LIBRARY_PATH"
    expect_match out 'driver|built without CUDA' "plain doctor says why there is no GPU"
else
    # A machine with a GPU: the smoke test decides; tests/gpu/labs.sh asks for exit 0.
    if [ "$json_rc" -eq 0 ] || [ "$json_rc" -eq 1 ]; then
        pass "with $usable usable GPU(s) doctor exits 0 or 1 ($json_rc)"
    else fail "with usable GPUs doctor exits 0 or 1" "exit $json_rc"; fi
    expect_match out '"smoke_test": \{"ran": true' "each device ran the smoke test"
    run "$TRAINER" doctor
    expect_match out '^verdict: ' "plain doctor prints a verdict"
    expect_match out 'smoke test: ' "plain doctor reports the smoke test"
fi

# Strings are JSON-escaped: quotes, backslashes, control characters and bytes that are
# not UTF-8 in the environment still give a document that parses, with the value kept.
run env LD_LIBRARY_PATH=$'/odd "dir"\\with\ttab\x01and\xe9latin1' CUDA_VISIBLE_DEVICES='0,"1"' \
    "$TRAINER" doctor --json
if python3 -m json.tool <<<"$out" >/dev/null 2>&1; then
    pass "doctor --json escapes odd environment strings"
else fail "doctor --json escapes odd environment strings" "python3 -m json.tool rejected it"; fi
if [ "$(json_get environment CUDA_VISIBLE_DEVICES 2>/dev/null)" = '0,"1"' ]; then
    pass "CUDA_VISIBLE_DEVICES is reported as set"
else fail "CUDA_VISIBLE_DEVICES is reported as set" "got $(json_get environment CUDA_VISIBLE_DEVICES)"; fi

run env CUDA_VISIBLE_DEVICES= "$TRAINER" doctor
expect_rc 3 "CUDA_VISIBLE_DEVICES empty: no usable device, exit 3"
expect_match out '^  CUDA_VISIBLE_DEVICES +""$' "the empty CUDA_VISIBLE_DEVICES is shown"

run "$TRAINER" doctor extra
expect_error 2 "takes no arguments" "doctor with an argument is a usage error"
run "$TRAINER" doctor --jsn
expect_error 2 "did you mean '--json'" "a misspelt option gets a suggestion"

# Environment values are anyone's bytes: an ESC in them is printed escaped, not sent to the
# terminal.
CUDA_VISIBLE_DEVICES="0$(printf '\033')[2J" LD_LIBRARY_PATH="/x$(printf '\033')[31m" \
    run "$TRAINER" doctor
expect_in out 'CUDA_VISIBLE_DEVICES   "0\x1b[2J"' "CUDA_VISIBLE_DEVICES is shown escaped"
expect_in out 'LD_LIBRARY_PATH        /x\x1b[31m' "LD_LIBRARY_PATH too"
if [[ $out == *$'\033'* ]]; then fail "no ESC byte reaches stdout"
else pass "no ESC byte reaches stdout"; fi

finish

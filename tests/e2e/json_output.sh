#!/usr/bin/env bash
# Every --json output (doctor, explain ERROR, explain --list) is valid UTF-8 JSON, whatever
# bytes the environment holds: CUDA_VISIBLE_DEVICES is bytes, not text, and reaches both
# doctor's report and explain's facts about this machine. A byte that starts no
# well-formed UTF-8 sequence (stray, overlong, surrogate) comes out as U+FFFD.
source "$(dirname "${BASH_SOURCE[0]}")/common.bash"

require_python3 "parse the JSON"

# json_check PYTHON_EXPR: $out decoded as strict UTF-8 (no surrogateescape, which would
# hide the bytes), parsed, and EXPR evaluated on it as `doc`; prints what failed.
json_check() {
    python3 -c 'import json, sys
raw = sys.stdin.buffer.read()
try:
    text = raw.decode("utf-8")
except UnicodeDecodeError as e:
    sys.exit("not UTF-8: %s near %r" % (e, raw[max(0, e.start - 20):e.end + 20]))
doc = json.loads(text)
if not eval(sys.argv[1]):
    sys.exit("false: %s" % sys.argv[1])' "$1" <<<"$out"
}

# check NAME PYTHON_EXPR
check() {
    local why
    if why=$(json_check "$2" 2>&1); then pass "$1"
    else fail "$1" "$why"; fi
}

not_utf8=$'\xff\xfe0'
run env CUDA_VISIBLE_DEVICES="$not_utf8" "$TRAINER" doctor --json
check "doctor --json is UTF-8 JSON with CUDA_VISIBLE_DEVICES=\\xff\\xfe0" \
    'doc["environment"]["CUDA_VISIBLE_DEVICES"] == "\ufffd\ufffd0"'

# Overlong forms and surrogates look like UTF-8 to a lax check, but strict decoders
# refuse them; a valid two-byte character passes through unchanged.
run env CUDA_VISIBLE_DEVICES=$'0\xed\xa0\x80,\xc0\xaf1,\xc3\xa9' "$TRAINER" doctor --json
check "doctor --json replaces surrogates and overlong forms, keeps valid UTF-8" \
    'doc["environment"]["CUDA_VISIBLE_DEVICES"] == "0\ufffd\ufffd\ufffd,\ufffd\ufffd1,\u00e9"'

run env CUDA_VISIBLE_DEVICES="$not_utf8" "$TRAINER" explain --json cudaErrorInvalidDevice
expect_rc 0 "explain --json cudaErrorInvalidDevice"
check "explain --json is UTF-8 JSON with CUDA_VISIBLE_DEVICES=\\xff\\xfe0" \
    'doc["name"] == "cudaErrorInvalidDevice"'
check "explain --json reports CUDA_VISIBLE_DEVICES with U+FFFD for the bad bytes" \
    'any("\ufffd\ufffd0" in line for line in doc["machine"])'

run env CUDA_VISIBLE_DEVICES="$not_utf8" "$TRAINER" explain --list --json
check "explain --list --json is UTF-8 JSON with every entry" \
    'len(doc) >= 150 and all("name" in e for e in doc)'

finish

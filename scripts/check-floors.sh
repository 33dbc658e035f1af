#!/usr/bin/env bash
# scripts/check-floors.sh: every #include "DIR/..." of our sources stays on its own floor
# or goes down (DESIGN §2). Exit 1, listing each include that runs back up.
#
#   floor 0  base/                              includes nothing of ours but base/
#   floor 1  models/  data/  kernels/           base/ and their own folder; data/ also
#                                               kernels/backend.h's op table (its batch
#                                               sources move samples to a device), never
#                                               the reverse
#   floor 2  core/  diagnostics/                the floors below and their own folder;
#                                               diagnostics/ also core/ (it trains and
#                                               checks through it), never the reverse
#   floor 3  tools/                             everything below but kernels/cuda/: only
#                                               core/ and diagnostics/ reach the CUDA backend
# tests/ and bench/ drive every floor and are not checked.
#
# Then scripts/check-floors.py follows includes transitively (no tools/ file and no core/
# or diagnostics/ header reaches a kernels/cuda/ header through any chain: plain-C facts
# shared with the CUDA side live in kernels/device_facts.h) and lists call loops between
# files (A names a function B defines, and B, through any files, one of A's).
set -euo pipefail
cd "$(dirname "$0")/.."

floor_of() {
  case "$1" in
  base) echo 0 ;;
  models | data | kernels | kernels/cuda) echo 1 ;;
  core | diagnostics) echo 2 ;;
  tools) echo 3 ;;
  *) echo "" ;;
  esac
}

may_include() { # FROM_DIR TO_DIR
  local from=$1 to=$2 from_floor to_floor
  [ "$from" = "$to" ] && return 0
  [ "$from" = tools ] && [ "$to" = kernels/cuda ] && return 1
  [ "$from" = diagnostics ] && [ "$to" = core ] && return 0
  [ "$from" = data ] && [ "$to" = kernels ] && return 0
  from_floor=$(floor_of "$from")
  to_floor=$(floor_of "$to")
  [ -n "$to_floor" ] && [ "$to_floor" -lt "$from_floor" ]
}

violations=0 checked=0
while IFS= read -r file; do
  from=${file%%/*}
  [ -n "$(floor_of "$from")" ] || continue
  checked=$((checked + 1))
  while IFS=: read -r line target; do
    to=${target%%/*}
    # Seen from outside kernels/, the CUDA backend is a folder of its own.
    [ "$from" != kernels ] && [[ $target == kernels/cuda/* ]] && to=kernels/cuda
    if ! may_include "$from" "$to"; then
      echo "$file:$line: includes \"$target\": $from/ (floor $(floor_of "$from")) may not include $to/"
      violations=$((violations + 1))
    fi
  done < <(grep -n '^[[:space:]]*#[[:space:]]*include[[:space:]]*"[a-z_]*/' "$file" |
           sed -E 's/^([0-9]+):[^"]*"([^"]+)".*/\1:\2/')
done < <(git ls-files '*.c' '*.h' '*.cu')
echo "check-floors: $checked files, $violations include(s) running back up"
graphs=0
python3 scripts/check-floors.py || graphs=1
[ "$violations" -eq 0 ] && [ "$graphs" -eq 0 ]

#!/usr/bin/env bash
# scripts/function-lengths.sh [LINES]: the functions outside tests/ longer than LINES (default
# 80), longest first, as "LENGTH FILE:LINE NAME"; nothing when there are none. Reads the
# sources with universal-ctags (Debian's universal-ctags), which finds where each ends.
set -euo pipefail
cd "$(dirname "$0")/.."
limit=${1:-80}
git ls-files '*.c' '*.cu' '*.h' | grep -v '^tests/' |
  ctags --languages=+C,C++ --langmap=C++:+.cu --kinds-C=f --kinds-C++=f --fields=+ne -f - -L - |
  awk -F'\t' -v limit="$limit" '{
      line = ""; end = ""
      for (i = 3; i <= NF; i++) {
        if ($i ~ /^line:/) line = substr($i, 6)
        if ($i ~ /^end:/) end = substr($i, 5)
      }
      if (end - line + 1 > limit) print end - line + 1, $2 ":" line, $1
    }' | sort -rn

#!/usr/bin/env bash
# scripts/ptx-diff.sh REV [ARCH]: which CUDA kernels compile differently now than at REV.
#
# Without a GPU, a session still has to say what device code has not run on a card. Give
# REV the commit whose tree last ran there (docs/benchmarks.md names them): every
# kernels/cuda/*.cu of REV and of the working tree is compiled to PTX for one virtual
# architecture (ARCH, default compute_90), and each kernel (.entry) is compared by its
# PTX text. A kernel whose PTX is the same at both ran on that card as it is now; a
# refactor that changed no instruction shows as none changed, one that lost a store shows
# as changed. Host code is not compared: the module, the op table and the libraries' calls
# are read, not diffed.
#
# Prints one line per file: the number of kernels the same, changed, new and gone, then
# the changed, new and gone kernels by name. PTX_DIFF_FILES="a.cu b.cu" compares only
# those. Exit 0 (a report, not a test); 2 bad usage.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ $# -lt 1 ] || [ "$1" = -h ] || [ "$1" = --help ]; then
  sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'
  [ $# -ge 1 ] && exit 0 || exit 2
fi
rev=$1 arch=${2:-compute_90}
nvcc=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
[ -x "$nvcc" ] || { echo "ptx-diff.sh: nvcc not found (set NVCC)" >&2; exit 2; }
git rev-parse --verify -q "$rev^{commit}" >/dev/null ||
  { echo "ptx-diff.sh: '$rev' is not a commit here" >&2; exit 2; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/old" "$work/ptx"
git archive "$rev" | tar -x -C "$work/old"

# The build's definition that reaches device code (no .cu includes MPI's headers).
flags=(-O3 -ptx "-arch=$arch" -DTRAINER_HAVE_CUDA=1)
compile() { # ROOT FILE OUT
  "$nvcc" "${flags[@]}" -I"$1" "$1/kernels/cuda/$2" -o "$3" 2>"$3.log" || echo failed >"$3.log.rc"
}
if [ -n "${PTX_DIFF_FILES:-}" ]; then
  files=$PTX_DIFF_FILES old_files=""
else
  files=$(cd kernels/cuda && ls ./*.cu | sed 's|^\./||')
  old_files=$(cd "$work/old/kernels/cuda" && ls ./*.cu 2>/dev/null | sed 's|^\./||')
fi
jobs=0
for f in $(printf '%s\n' $files $old_files | sort -u); do
  [ -e "kernels/cuda/$f" ] && compile "$PWD" "$f" "$work/ptx/$f.new" &
  [ -e "$work/old/kernels/cuda/$f" ] && compile "$work/old" "$f" "$work/ptx/$f.old" &
  jobs=$((jobs + 2))
  [ "$jobs" -ge "$(nproc)" ] && { wait; jobs=0; }
done
wait

python3 - "$work/ptx" "$rev" <<'EOF'
import os, re, subprocess, sys

folder, rev = sys.argv[1], sys.argv[2]

def kernels(path):
    """Each .entry's name and its PTX text without comments, or None if it did not build."""
    if not os.path.exists(path) or os.path.exists(path + ".log.rc"):
        return None
    text = "\n".join(l for l in open(path).read().splitlines() if not l.lstrip().startswith("//"))
    found = list(re.finditer(r"\.entry\s+([\w$]+)\(", text))
    return {m.group(1): text[m.end():found[i + 1].start() if i + 1 < len(found) else len(text)]
            for i, m in enumerate(found)}

def readable(names):
    if not names:
        return []
    out = subprocess.run(["c++filt"], input="\n".join(names), capture_output=True, text=True)
    return out.stdout.splitlines() if out.returncode == 0 else names

for f in sorted({n.rsplit(".", 1)[0] for n in os.listdir(folder) if n.endswith((".new", ".old"))}):
    old, new = kernels(os.path.join(folder, f + ".old")), kernels(os.path.join(folder, f + ".new"))
    if new is None and os.path.exists(os.path.join(folder, f + ".new.log.rc")):
        print(f"{f}: does not compile now:")
        print(open(os.path.join(folder, f + ".new.log")).read().rstrip())
        continue
    old, new = old or {}, new or {}
    same = [k for k in new if k in old and old[k] == new[k]]
    changed = [k for k in new if k in old and old[k] != new[k]]
    added = [k for k in new if k not in old]
    gone = [k for k in old if k not in new]
    print(f"{f}: {len(same)} kernels as at {rev}, {len(changed)} changed, {len(added)} new, "
          f"{len(gone)} gone")
    for label, names in (("changed", changed), ("new", added), ("gone", gone)):
        for name in readable(sorted(names)):
            print(f"  {label}: {name}")
EOF

#!/usr/bin/env bash
# scripts/ptx-diff.sh: its usage mistakes, and one file compared with HEAD (a few seconds of
# nvcc; skipped without nvcc or without the repository's history).
source "$(dirname "${BASH_SOURCE[0]}")/common.bash"

script=scripts/ptx-diff.sh
run bash "$script"
expect_rc 2 "no commit given"
expect_in out "scripts/ptx-diff.sh REV [ARCH]" "the usage is printed"
run bash "$script" -h
expect_rc 0 "-h"
expect_in out "which CUDA kernels compile differently now than at REV" "-h says what it does"
run bash "$script" no-such-commit-anywhere
expect_rc 2 "a commit that is not there"
expect_in err "'no-such-commit-anywhere' is not a commit here" "the commit is named"

nvcc=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
if [ ! -x "$nvcc" ] || ! git rev-parse --verify -q HEAD >/dev/null 2>&1; then
    echo "note: no nvcc or no git history; the comparison itself is left out"
    finish
fi
run env PTX_DIFF_FILES=cuda_layout.cu bash "$script" HEAD
expect_rc 0 "cuda_layout.cu against HEAD"
expect_match out '^cuda_layout\.cu: [0-9]+ kernels as at HEAD, [0-9]+ changed, 0 new, 0 gone$' \
    "one line for the file, its kernels counted"
finish

#!/usr/bin/env bash
# The trainer binary loads the CUDA libraries it was built against (issue 11): on an H100
# machine a build against the pip package's cuDNN 9.19 loaded the system's 9.14 from
# /lib/x86_64-linux-gnu, because nothing told the loader where the build's cuDNN lives.
# The binary's RUNPATH must name the directories CMake found cuDNN, NCCL and the toolkit
# in, and with no LD_LIBRARY_PATH the loader must resolve libcudnn and libnccl there.
# Skipped (77) in a build without CUDA. Needs no GPU.
source "$(dirname "${BASH_SOURCE[0]}")/common.bash"

if [ -z "${TRAINER_CUDA_LIBRARY_DIRS:-}" ]; then
    echo "SKIP: built without the CUDA backend"
    exit 77
fi

ran="readelf -d $TRAINER"
runpath=$(readelf -d "$TRAINER" | sed -n 's/.*(RUNPATH).*\[\(.*\)\]$/\1/p')
IFS=: read -r -a wanted <<<"$TRAINER_CUDA_LIBRARY_DIRS"
for dir in "${wanted[@]}"; do
    if [[ ":$runpath:" == *":$dir:"* ]]; then pass "RUNPATH names $dir"
    else rc=1 out="$runpath" err=""; fail "RUNPATH names $dir" "RUNPATH is '$runpath'"; fi
done

ran="ldd $TRAINER (no LD_LIBRARY_PATH)"
resolved=$(env -u LD_LIBRARY_PATH ldd "$TRAINER")
for lib in libcudnn.so libnccl.so; do
    path=$(awk -v lib="$lib" 'index($1, lib) == 1 {print $3; exit}' <<<"$resolved")
    dir=$(dirname "${path:-/nowhere/x}")
    found=0
    for want in "${wanted[@]}"; do
        [ "$(cd "$dir" 2>/dev/null && pwd -P)" = "$(cd "$want" 2>/dev/null && pwd -P)" ] && found=1
    done
    if [ "$found" -eq 1 ]; then pass "$lib resolves in the build's directory ($path)"
    else rc=1 out="$resolved" err=""; fail "$lib resolves in the build's directory" "it resolves to '${path:-nothing}'"; fi
done
finish

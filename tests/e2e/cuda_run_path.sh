#!/usr/bin/env bash
# The CUDA backend loads the CUDA libraries it was built against (issue 11): on an H100
# machine a build against the pip package's cuDNN 9.19 loaded the system's 9.14 from
# /lib/x86_64-linux-gnu, because nothing told the loader where the build's cuDNN lives.
# The backend is trainer_cuda.so, beside the binary (kernels/cuda/cuda_entries.h): its
# RUNPATH must name the directories CMake found cuDNN, NCCL and the toolkit in, and with no
# LD_LIBRARY_PATH the loader must resolve libcudnn and libnccl there. The trainer binary
# itself links none of them, so a command that needs no GPU starts without them.
# Skipped (77) in a build without CUDA. Needs no GPU.
source "$(dirname "${BASH_SOURCE[0]}")/common.bash"

if [ -z "${TRAINER_CUDA_LIBRARY_DIRS:-}" ]; then
    echo "SKIP: built without the CUDA backend"
    exit 77
fi

module="$(dirname "$TRAINER")/trainer_cuda.so"
if [ -f "$module" ]; then pass "the build writes trainer_cuda.so beside the trainer"
else rc=1 out="" err=""; ran="ls $module"; fail "the build writes trainer_cuda.so beside the trainer"; finish; fi

# in_build_dirs PATH: PATH's folder is one of the build's CUDA library folders.
in_build_dirs() {
    local dir want
    dir=$(cd "$(dirname "${1:-/nowhere/x}")" 2>/dev/null && pwd -P) || return 1
    for want in "${wanted[@]}"; do
        [ "$dir" = "$(cd "$want" 2>/dev/null && pwd -P)" ] && return 0
    done
    return 1
}

ran="readelf -d $module"
runpath=$(readelf -d "$module" | sed -n 's/.*(RUNPATH).*\[\(.*\)\]$/\1/p')
IFS=: read -r -a wanted <<<"$TRAINER_CUDA_LIBRARY_DIRS"
for dir in "${wanted[@]}"; do
    if [[ ":$runpath:" == *":$dir:"* ]]; then pass "the module's RUNPATH names $dir"
    else rc=1 out="$runpath" err=""; fail "the module's RUNPATH names $dir" "RUNPATH is '$runpath'"; fi
done

ran="ldd $module (no LD_LIBRARY_PATH)"
resolved=$(env -u LD_LIBRARY_PATH ldd "$module")
for lib in libcudnn.so libnccl.so; do
    path=$(awk -v lib="$lib" 'index($1, lib) == 1 {print $3; exit}' <<<"$resolved")
    if in_build_dirs "$path"; then pass "$lib resolves in the build's directory ($path)"
    else rc=1 out="$resolved" err=""; fail "$lib resolves in the build's directory" "it resolves to '${path:-nothing}'"; fi
done

ran="ldd $TRAINER"
linked=$(env -u LD_LIBRARY_PATH ldd "$TRAINER" | grep -E 'lib(cudart|cublas|cublasLt|cudnn|nccl)\.so' || true)
if [ -z "$linked" ]; then pass "the trainer binary links no CUDA library"
else rc=1 out="$linked" err=""; fail "the trainer binary links no CUDA library" "it links: $linked"; fi

# The module it opens resolves the same libraries: `trainer doctor` reports where each
# loaded from.
run env -u LD_LIBRARY_PATH "$TRAINER" doctor --json
for key in cudnn nccl; do
    path=$(python3 -c 'import json,sys; print(json.load(sys.stdin)["libraries"][sys.argv[1]]["path"])' \
        "$key" <<<"$out" 2>/dev/null)
    if in_build_dirs "$path"; then pass "doctor: the loaded $key is the build's ($path)"
    else fail "doctor: the loaded $key is the build's" "doctor reports '${path:-nothing}'"; fi
done
finish

#!/usr/bin/env bash
# The CUDA backend is a module, trainer_cuda.so, that the trainer opens the first time it
# needs a GPU (kernels/cuda/cuda_entries.h): a command that needs none loads no CUDA
# library, and when the module cannot be opened every GPU request says why and what to do
# (exit 3), `--device auto` trains on the CPU, and `trainer doctor` reports it broken.
# TRAINER_CUDA_MODULE points the trainer at a module that is missing, is not an ELF file,
# or is a library of another kind. Skipped (77) in a build without CUDA. Needs no GPU.
source "$(dirname "${BASH_SOURCE[0]}")/common.bash"
require_fashion_mnist

if [ -z "${TRAINER_CUDA_LIBRARY_DIRS:-}" ]; then
    echo "SKIP: built without the CUDA backend"
    exit 77
fi

tiny=(--data fashion-mnist --train-limit 256 --test-limit 128 --epochs 1)

# The glibc loader lists every library it opens under LD_DEBUG=files.
run env LD_DEBUG=files "$TRAINER" check models/mlp.model
expect_rc 0 "trainer check runs"
expect_no_match err 'file=lib(cudart|cublas|cublasLt|cudnn|nccl)\.so' \
    "trainer check loads no CUDA library"
run env LD_DEBUG=files "$TRAINER" --version
expect_match err 'file=libcublasLt\.so' "trainer --version loads the backend (it reports versions)"
expect_match out '^CUDA runtime [0-9]' "and prints the CUDA versions"

missing="$work/nowhere/trainer_cuda.so"
printf 'not a shared object\n' >"$work/garbage.so"
other=$(ldd "$TRAINER" | awk '$1 ~ /^libz\.so/ {print $3; exit}')

run env TRAINER_CUDA_MODULE="$missing" "$TRAINER" train models/mlp.model "${tiny[@]}" --device cpu
expect_rc 0 "--device cpu trains without the module"

run env TRAINER_CUDA_MODULE="$missing" "$TRAINER" train models/mlp.model "${tiny[@]}" --device cuda
expect_error 3 "TRAINER_CUDA_MODULE names, $missing, does not exist" \
    "a missing module: --device cuda exits 3 and names the path"

run env TRAINER_CUDA_MODULE="$work/garbage.so" "$TRAINER" train models/mlp.model "${tiny[@]}" \
    --device cuda
expect_error 3 "the CUDA backend did not load: $work/garbage.so:" \
    "a module that does not load: exit 3 with the loader's words"
expect_in err "hint: $work/garbage.so is not a shared library (no ELF header): point \
TRAINER_CUDA_MODULE at the trainer_cuda.so built beside the trainer binary, or unset it" \
    "its hint says it is no library, and what to point at instead"
expect_no_match err "ldd" "no ldd advice for a file that is not a library"

run env TRAINER_CUDA_MODULE="$work" "$TRAINER" train models/mlp.model "${tiny[@]}" --device cuda
expect_error 3 "the CUDA backend did not load: $work: " "a folder as the module: exit 3"
expect_in err "hint: point TRAINER_CUDA_MODULE at the trainer_cuda.so file itself" \
    "its hint asks for the file, not for an ELF header the folder cannot have"
expect_no_match err "no ELF header" "... and does not call the folder a non-library file"

if [ -n "$other" ]; then
    run env TRAINER_CUDA_MODULE="$other" "$TRAINER" train models/mlp.model "${tiny[@]}" --device cuda
    expect_error 3 "is not a trainer CUDA backend: it has no trainer_cuda_module" \
        "another library as the module is refused"
fi

run env TRAINER_CUDA_MODULE="$work/garbage.so" "$TRAINER" train models/mlp.model "${tiny[@]}" \
    --device auto
expect_rc 0 "--device auto trains on the CPU when the module does not load"
expect_match out '; device cpu$' "on the CPU"
expect_match err '^trainer: notice: .*did not load' "its notice says the backend did not load"

run env TRAINER_CUDA_MODULE="$work/garbage.so" "$TRAINER" --version
expect_match out '^CUDA: built in, but the CUDA backend did not load' "--version says so"

run env TRAINER_CUDA_MODULE="$work/garbage.so" "$TRAINER" doctor
expect_rc 1 "doctor calls a module that does not load broken"
expect_match out 'CUDA backend +built in, did not load' "doctor's build line says so"
expect_in out "fix: $work/garbage.so is not a shared library" "doctor's fix is the loader's hint"
run env TRAINER_CUDA_MODULE="$work/garbage.so" "$TRAINER" doctor --json
if python3 -c 'import json,sys; d=json.load(sys.stdin); sys.exit(0 if "did not load" in (d["backend_error"] or "") else 1)' <<<"$out"; then
    pass "doctor --json has backend_error"
else fail "doctor --json has backend_error"; fi

run env TRAINER_CUDA_MODULE="$work/garbage.so" "$TRAINER" explain cudaErrorNoDevice
expect_rc 0 "explain runs without the backend"
expect_in out "the CUDA backend did not load" "its facts say the backend did not load"

# A trainer copied away from the build still finds the module where the build wrote it.
mkdir -p "$work/bin" && cp "$TRAINER" "$work/bin/trainer"
run "$work/bin/trainer" --version
expect_match out '^CUDA runtime [0-9]' "a copied trainer opens the build's module"
finish

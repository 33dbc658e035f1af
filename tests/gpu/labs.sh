#!/usr/bin/env bash
# On a real GPU: `trainer doctor` passes its smoke test and exits 0, and every `trainer
# lab` scenario triggers its CUDA error for real, shows it as the API returns it, and
# diagnoses it naming the kernel or the layer. Without a usable GPU (as `trainer doctor
# --json` reports it) the test is skipped with exit 77.
source "$(dirname "${BASH_SOURCE[0]}")/../e2e/common.bash"

require_usable_gpu

# ---- doctor ----
expect_rc 0 "doctor --json exits 0 on a working GPU"
smoke=$(python3 -c 'import json, sys
d = json.load(sys.stdin)
print(" ".join("cuda:%d=%s" % (x["ordinal"], x["smoke_test"]["passed"]) for x in d["devices"]))' \
    <<<"$out")
if grep -q 'False' <<<"$smoke" || [ -z "$smoke" ]; then
    fail "every device passes the smoke test" "$smoke"
else
    pass "every device passes the smoke test ($smoke)"
fi
expect_match out '"kernel_image": "(sass|ptx)"' "doctor finds a kernel image for the device"
run "$TRAINER" doctor
expect_rc 0 "plain doctor exits 0"
expect_match out '^verdict: all well: [0-9]+ usable GPU' "plain doctor's verdict is all well"
expect_match out '^    smoke test: passed \(GEMM ' "plain doctor reports the smoke test passed"
expect_match out '^  cuda:0 .+, compute [0-9]+\.[0-9]+, [0-9]+ SMs, ' "doctor describes cuda:0"
expect_match out '^    clocks: SM [1-9][0-9]* MHz, memory [0-9]+ MHz, [1-9][0-9]*-bit bus' \
    "doctor reports the clocks and bus width"
expect_match out '^  newest CUDA supported  [0-9]+\.[0-9]+$' "doctor reports the driver's CUDA version"

# ---- labs: each triggers its error for real ----
run "$TRAINER" lab
expect_rc 0 "lab lists the scenarios"
if grep -q 'needs a GPU\]' <<<"$out"; then fail "every scenario runs here"; else pass "every scenario runs here"; fi

run "$TRAINER" lab invalid-device
expect_rc 0 "lab invalid-device"
expect_match out '^  cudaSetDevice\([0-9]+\) -> cudaErrorInvalidDevice \(101\): invalid device ordinal$' \
    "cudaSetDevice(count) fails with cudaErrorInvalidDevice"
expect_match out "^trainer: error: --device cuda:[0-9]+: cuda:[0-9]+ is out of range" \
    "trainer's diagnosis says the ordinal is out of range"

run "$TRAINER" lab oom
expect_rc 0 "lab oom"
expect_match out '^  cudaMalloc\(&p, [0-9]+\) .* -> cudaErrorMemoryAllocation \(2\): out of memory$' \
    "cudaMalloc of twice the card fails with cudaErrorMemoryAllocation"
expect_match out '^trainer: error: asked cuda:0 \(.+\) for [0-9.]+ GiB; it has [0-9.]+ GiB, [0-9.]+ GiB free' \
    "the raw failure's diagnosis names the request and the card's memory"
expect_match out "^trainer: error: lab-oom.model:2:1: .*layer 'conv2d1'" \
    "trainer's out-of-memory error names the layer"

run "$TRAINER" lab bad-launch
expect_rc 0 "lab bad-launch"
# CUDA 12 and earlier: cudaErrorInvalidConfiguration (9); CUDA 13 (seen on an H100):
# cudaErrorInvalidValue (1). Either is the launch refusing the block.
expect_match out '^  lab_empty_kernel<<<\(1,1,1\), \(2048,1,1\), 0>>> -> (cudaErrorInvalidConfiguration \(9\): invalid configuration argument|cudaErrorInvalidValue \(1\): invalid argument)$' \
    "a 2048-thread block fails with cudaErrorInvalidConfiguration or (CUDA 13) cudaErrorInvalidValue"
expect_no_match out '^lab: a launch of 2048 threads' "the lab accepts the error it got"
expect_match out '^trainer: error: launch of lab_empty_kernel on cuda:0: block.x is 2048, above the device.s limit of 1024' \
    "launch_check refuses it with the device's own limits, naming the kernel"

run "$TRAINER" lab bad-label
expect_rc 0 "lab bad-label"
expect_match out "labels up to 12 .*but the model's last layer 'dense1' gives 10 class scores" \
    "bad-label names the label, the layer and the class count"
expect_match out 'index 6 has label 12; the model has 10 classes' \
    "and the first offending sample"

run "$TRAINER" lab dtype-mismatch
expect_rc 0 "lab dtype-mismatch"
expect_match out "dtype mismatch: dense computes in f32, but its input 'input1' \(line 1\) is f16" \
    "dtype-mismatch names the layer and the dtypes"

run "$TRAINER" lab illegal-address
expect_rc 0 "lab illegal-address"
expect_match out '^  cudaDeviceSynchronize\(\) -> cudaErrorIllegalAddress \(700\): an illegal memory access was encountered$' \
    "the out-of-bounds write surfaces as cudaErrorIllegalAddress at the next sync"
expect_match out '^  cudaMalloc\(&more, 256\) .* -> cudaErrorIllegalAddress \(700\)' \
    "an unrelated call afterwards fails the same way (sticky)"
expect_match out '^trainer: error: kernel lab_out_of_bounds_kernel on cuda:0 .*poisoned' \
    "the diagnosis names the kernel and says the context is poisoned"
expect_match out 'must exit and restart' "and that the process must restart"

run "$TRAINER" lab no-kernel-image
expect_rc 0 "lab no-kernel-image"
expect_match out '^  lab_kernel_sm[0-9]+<<<1, 32>>> on cuda:0 \(sm_[0-9]+\) -> cudaErrorNoKernelImageForDevice \(209\)' \
    "a kernel for another architecture fails with cudaErrorNoKernelImageForDevice"
expect_match out '^trainer: error: kernel lab_kernel_sm[0-9]+ has code for sm_[0-9]+ only \(SASS, no PTX\), but cuda:0 \(.+\) has compute capability [0-9]+\.[0-9]+' \
    "the diagnosis names the kernel, its architecture and the device's"

run "$TRAINER" lab duplicate-gpu
expect_rc 0 "lab duplicate-gpu"
expect_match out '^  ncclCommInitAll\(comms, 2, \{0, 0\}\) -> ncclInvalidUsage \(5\)' \
    "two NCCL ranks on cuda:0 fail with ncclInvalidUsage"
expect_match out '^  ncclGetLastError\(\): .*Duplicate GPU' "NCCL's own words say Duplicate GPU"
expect_match out '^trainer: error: --collective nccl: ranks 0 and 1 of 2 share the GPU at PCI [0-9a-f:.]+ on .+ \(cuda:0 in rank 0, cuda:0 in rank 1\)' \
    "the diagnosis names the ranks and the GPU they share"
expect_match out 'CUDA_VISIBLE_DEVICES=\$OMPI_COMM_WORLD_LOCAL_RANK' "and the local-rank mapping"

run "$TRAINER" lab version-report
expect_rc 0 "lab version-report"
expect_match out '^The driver supports CUDA up to [0-9]+\.[0-9]+ and the runtime is [0-9]+\.[0-9]+: ' \
    "version-report compares the runtime with the driver"

run "$TRAINER" lab all
expect_rc 0 "lab all"
shown=$(grep -cE '^  [a-z-]+ +shown$' <<<"$out")
if [ "$shown" -eq 9 ]; then pass "lab all shows all 9 scenarios"
else fail "lab all shows all 9 scenarios" "$shown shown"; fi

finish

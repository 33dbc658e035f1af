#!/usr/bin/env bash
# `trainer lab` (DESIGN.md §1): each scenario triggers its failure, shows the raw error as
# the CUDA API or a framework words it, then trainer's diagnosis with the values. On a
# machine without a GPU the GPU-only scenarios say why they cannot run and exit 3; the
# rest run on the CPU. Passes both with and without a GPU (tests/gpu/labs.sh asks more of
# a GPU).
source "$(dirname "${BASH_SOURCE[0]}")/common.bash"

scenarios=(invalid-device oom bad-launch bad-label dtype-mismatch illegal-address
    no-kernel-image duplicate-gpu version-report)

run "$TRAINER" lab
expect_rc 0 "trainer lab lists the scenarios"
for s in "${scenarios[@]}"; do
    expect_match out "^  $s +.+ \[(runs here|needs a GPU)" "the list has $s and where it runs"
done
expect_match out '^  all +' "the list offers all"
count=$(grep -cE '^  [a-z-]+ +.+ \[(runs here|needs a GPU)' <<<"$out")
if [ "$count" -eq 9 ]; then pass "the list has 9 scenarios"
else fail "the list has 9 scenarios" "found $count"; fi
gpu=1
grep -q '^no GPU here: ' <<<"$out" && gpu=0

# diagnosis WANT_EXIT TEXT WHAT: the last run printed trainer's diagnosis, with the exit
# code trainer would give and an error in the project's format containing TEXT.
diagnosis() {
    expect_match out "^trainer's diagnosis \\(exit code $1 in trainer terms\\):$" \
        "$3: the diagnosis is labelled with exit code $1"
    expect_match out "^trainer: error: .*$2" "$3: the diagnosis names $2"
}

run "$TRAINER" lab invalid-device
expect_rc 0 "lab invalid-device runs"
expect_match out '^== lab invalid-device: ' "it starts with its title"
expect_match out '^  RuntimeError: CUDA error: invalid device ordinal$' "it shows PyTorch's words"
if grep -q 'built without CUDA' <<<"$out"; then
    expect_match out '^cannot run the raw cudaSetDevice call here: .*built without CUDA' \
        "a CPU-only build cannot make the raw call, and says so"
else
    expect_match out '^  cudaSetDevice\([0-9]+\) -> cudaError[A-Za-z]+ \([0-9]+\): .+' \
        "the raw cudaSetDevice error is shown as the API returns it"
fi
diagnosis 3 "--device cuda:[0-9]+: " "invalid-device"

run "$TRAINER" lab oom
expect_rc 0 "lab oom runs"
expect_match out '^  torch.OutOfMemoryError: CUDA out of memory\.' "it shows PyTorch's words"
if [ "$gpu" -eq 0 ]; then
    expect_match out "^cannot run the raw cudaMalloc of more than the card's memory here: " \
        "without a GPU the raw cudaMalloc is skipped, and says why"
else
    expect_match out '^  cudaMalloc\(&p, [0-9]+\) .* -> cudaErrorMemoryAllocation \(2\): out of memory$' \
        "the raw cudaMalloc error is shown"
fi
expect_match out '^trainer: notice: out of memory at batch 32 on cpu \(layer conv2d1' \
    "trainer first splits the batch, naming the layer"
diagnosis 1 "out of memory" "oom"
expect_match out "^trainer: error: lab-oom.model:2:1: .*limit 256.0 KiB.*layer 'conv2d1'.*even one sample" \
    "the out-of-memory error names the limit, the tensor's layer and its model line"

run "$TRAINER" lab bad-launch
expect_rc 0 "lab bad-launch runs (the launch check needs no GPU)"
expect_match out '^  RuntimeError: CUDA error: invalid configuration argument$' \
    "it shows PyTorch's words"
if [ "$gpu" -eq 0 ]; then
    expect_match out '^cannot run the raw launch of 2048 threads per block here: ' \
        "without a GPU the raw launch is skipped, and says why"
else
    expect_match out '-> (cudaErrorInvalidConfiguration \(9\): invalid configuration argument|cudaErrorInvalidValue \(1\): invalid argument)$' \
        "the raw launch error is shown (CUDA 13 says invalid argument)"
fi
diagnosis 1 "launch of lab_empty_kernel" "bad-launch"
expect_match out 'block.x is 2048, above the device.s limit of 1024' \
    "the launch check names the dimension and the limit"
expect_match out 'block \(2048,1,1\)' "and the whole configuration"

run "$TRAINER" lab bad-label
expect_rc 0 "lab bad-label runs"
expect_match out '^  RuntimeError: CUDA error: device-side assert triggered$' \
    "it shows PyTorch's device-side assert"
diagnosis 2 "labels up to 12" "bad-label"
expect_match out "^trainer: error: lab-bad-label.model:2:1: .*gives 10 class scores" \
    "the diagnosis names the class count and the layer's line"
expect_match out 'index 6 has label 12; the model has 10 classes' \
    "the offending sample index, its label and the class count are named"
# One stray 12 among labels 1 to 9 is a wrong label, not three more classes: the hint says
# to fix the data first, and widening the layer comes second.
expect_match out '^  hint: fix the data first: 1 of 8 samples have labels outside 0 to 9' \
    "the hint puts fixing the data first"

run "$TRAINER" lab dtype-mismatch
expect_rc 0 "lab dtype-mismatch runs"
expect_match out '^  RuntimeError: Expected object of scalar type Float but got scalar type Half' \
    "it shows PyTorch's words"
diagnosis 2 "dtype mismatch" "dtype-mismatch"
expect_match out "lab-dtype-mismatch.model:2:1: dtype mismatch: dense computes in f32, but its input 'input1' \(line 1\) is f16" \
    "the diagnosis names the layer, the input and both dtypes"

run "$TRAINER" lab illegal-address
expect_match out '^  RuntimeError: CUDA error: an illegal memory access was encountered$' \
    "illegal-address shows PyTorch's words"
if [ "$gpu" -eq 0 ]; then
    expect_rc 3 "without a GPU lab illegal-address cannot run"
    expect_match out '^cannot run the out-of-bounds kernel here: .+' "and says why"
else
    expect_rc 0 "lab illegal-address runs on the GPU"
fi

run "$TRAINER" lab no-kernel-image
expect_match out '^  RuntimeError: CUDA error: no kernel image is available for execution on the device$' \
    "no-kernel-image shows PyTorch's words"
if [ "$gpu" -eq 0 ]; then
    expect_rc 3 "without a GPU lab no-kernel-image cannot run"
    expect_match out '^cannot run a kernel built for another GPU here: .+' "and says why"
else
    expect_rc 0 "lab no-kernel-image runs on the GPU"
fi

run "$TRAINER" lab duplicate-gpu
expect_match out '^  Duplicate GPU detected : rank 1 and rank 0 both on CUDA device' \
    "duplicate-gpu shows NCCL's words as PyTorch passes them on"
if [ "$gpu" -eq 0 ]; then
    expect_rc 3 "without a GPU lab duplicate-gpu cannot run"
    expect_match out '^cannot run two NCCL ranks on one GPU here: .+' "and says why"
else
    expect_rc 0 "lab duplicate-gpu runs on the GPU"
fi

run "$TRAINER" lab version-report
expect_rc 0 "lab version-report runs"
if grep -q 'built without CUDA' <<<"$out"; then
    pass "a CPU-only build says there are no CUDA versions to compare"
else
    expect_match out '^  cuDNN +[0-9]+\.[0-9]+\.[0-9]+ +[0-9]+\.[0-9]+\.[0-9]+ +/' \
        "cuDNN built-with and loaded versions and path are listed"
    expect_match out '^  Loaded runtime CuDNN library: [0-9.]+ but source was compiled with: [0-9.]+\.' \
        "the TensorFlow message is explained with this machine's numbers"
    if [ "$gpu" -eq 0 ]; then
        expect_match out 'The driver: none is loaded' "it says no driver is loaded and what that means"
    fi
fi

run "$TRAINER" lab all
expect_rc 0 "lab all: every scenario ran or could not run here"
for s in "${scenarios[@]}"; do
    expect_match out "^== lab $s: " "lab all ran $s"
done
expect_match out '^== summary$' "lab all ends with a summary"
if [ "$gpu" -eq 0 ]; then
    expect_match out '^  illegal-address +skipped: needs a GPU$' "the summary lists skipped scenarios"
fi
expect_match out '^  bad-label +shown$' "the summary lists shown scenarios"

run "$TRAINER" lab bad-lable
expect_error 2 "did you mean 'bad-label'" "an unknown scenario gets a suggestion"
run "$TRAINER" lab oom bad-label
expect_error 2 "one scenario" "two scenarios are a usage error"

finish

#!/usr/bin/env bash
# --precision fp32|tf32|bf16|fp16 on the CPU (docs/cli.md): the CPU computes in fp32, so
# bf16 and fp16 are refused before the first kernel (exit 3, naming the first layer that
# would compute in them, with a hint), tf32 runs as fp32 with one notice, --no-tf32 is
# --precision fp32, and `trainer check` prints the precision and a memory plan that saves
# nothing (activations stay f32). The model file's `train precision=` is read, and a typo
# there or in --precision is a usage error with a did-you-mean. No dataset needed.
source "$(dirname "${BASH_SOURCE[0]}")/common.bash"

make_dataset "$work/data" 64 32
data=(--data "idx:$work/data" --epochs 1 --batch 32)

# ---- refusals on the CPU ----
for p in bf16 fp16; do
    run "$TRAINER" train models/mlp.model "${data[@]}" --device cpu --precision "$p"
    expect_error 3 "models/mlp.model:4:1: --precision $p: layer 'dense1' (dense) would compute \
in $p, but the CPU backend computes in fp32 only" "--precision $p on the CPU is refused at dense1"
    expect_in err "hint: on the CPU use --precision fp32 (or leave it out), or use a GPU \
with --device cuda" \
        "the $p refusal's hint says what to do"
    [ -z "$out" ] && pass "nothing is trained or printed on stdout ($p)" ||
        fail "nothing is trained or printed on stdout ($p)"
done
# Under bf16 a convolution stores bf16 activations and computes in bf16: LeNet's first.
run "$TRAINER" train models/lenet.model "${data[@]}" --device cpu --precision bf16
expect_error 3 "models/lenet.model:3:1: --precision bf16: layer 'conv2d1' (conv2d)" \
    "lenet in bf16 is refused at its first convolution"
run "$TRAINER" train models/lenet.model "${data[@]}" --device cpu --precision fp16
expect_error 3 "models/lenet.model:3:1: --precision fp16: layer 'conv2d1' (conv2d)" \
    "lenet in fp16 is refused at its first convolution"
# eval and predict take --precision too (not the model file's train precision=).
"$TRAINER" data export "idx:$work/data" "png:$work/png" --limit 1 >/dev/null 2>&1
image=$(ls "$work"/png/test/*/*.png 2>/dev/null | head -n 1)
run "$TRAINER" eval models/mlp.model --weights none.safetensors --data "idx:$work/data" \
    --device cpu --precision bf16
expect_error 3 "--precision bf16: layer 'dense1'" "trainer eval refuses bf16 on the CPU"
run "$TRAINER" predict models/mlp.model --weights none.safetensors --device cpu \
    --precision fp16 "$image"
expect_error 3 "--precision fp16: layer 'dense1'" "trainer predict refuses fp16 on the CPU"

# ---- tf32 is fp32 on the CPU; --no-tf32 is --precision fp32 ----
run "$TRAINER" train models/mlp.model "${data[@]}" --device cpu --precision tf32
expect_rc 0 "--precision tf32 trains on the CPU"
expect_in err "trainer: notice: --precision tf32 on the CPU computes in fp32" \
    "tf32 on the CPU says once that it computes in fp32"
notices=$(grep -c '^trainer: notice: ' <<<"$err")
[ "$notices" -eq 1 ] && pass "exactly one notice" || fail "exactly one notice" "found $notices"
expect_match out '^precision fp32 on cpu \(--precision tf32\): GEMMs and convolutions in full fp32' \
    "the header says the run computes in fp32"
tf32_result=$(last_epoch_result)

run "$TRAINER" train models/mlp.model "${data[@]}" --device cpu
expect_rc 0 "the default trains on the CPU"
expect_match out '^precision fp32 on cpu \(the default; --precision to choose\)' \
    "the default is fp32 on the CPU"
if grep -q '^trainer: notice' <<<"$err"; then fail "the default prints no notice"
else pass "the default prints no notice"; fi
[ "$(last_epoch_result)" = "$tf32_result" ] && pass "tf32 on the CPU learns what fp32 does" ||
    fail "tf32 on the CPU learns what fp32 does" "$tf32_result vs $(last_epoch_result)"

run "$TRAINER" train models/mlp.model "${data[@]}" --device cpu --no-tf32
expect_rc 0 "--no-tf32 still trains"
expect_match out '^precision fp32 on cpu \(--no-tf32\)' "--no-tf32 is precision fp32"
run "$TRAINER" train models/mlp.model "${data[@]}" --device cpu --no-tf32 --precision fp32
expect_rc 0 "--no-tf32 with --precision fp32 agree"
run "$TRAINER" train models/mlp.model "${data[@]}" --device cpu --no-tf32 --precision bf16
expect_error 2 "--no-tf32 means --precision fp32, which contradicts --precision bf16" \
    "--no-tf32 and --precision bf16 contradict each other"

# ---- bad values ----
run "$TRAINER" train models/mlp.model "${data[@]}" --device cpu --precision bf61
expect_error 2 "--precision bf61: unknown precision; did you mean 'bf16'?" \
    "an unknown --precision is a usage error with a suggestion"
sed 's/^train .*/train     batch=32 epochs=1 seed=1 precision=fp61/' models/mlp.model \
    >"$work/typo.model"
run "$TRAINER" check "$work/typo.model"
expect_error 2 "typo.model:10:46: precision=fp61 is not a valid choice; did you mean 'fp16'?" \
    "an unknown train precision= is a model-file error at its value"

# ---- the model file's train precision= ----
sed 's/^train .*/train     batch=32 epochs=1 seed=1 precision=bf16/' models/mlp.model \
    >"$work/bf16.model"
run "$TRAINER" train "$work/bf16.model" --data "idx:$work/data" --device cpu
expect_error 3 "train precision=bf16 (line 10): layer 'dense1' (dense)" \
    "train precision=bf16 is refused on the CPU, naming the statement"
run "$TRAINER" train "$work/bf16.model" --data "idx:$work/data" --device cpu --precision fp32
expect_rc 0 "--precision fp32 overrides train precision=bf16"

# ---- trainer check prints the precision; bf16 stores the dense layers in 16 bits ----
run "$TRAINER" check models/mlp.model
expect_rc 0 "check with the default precision"
expect_match out '^precision fp32 on cpu \(the default; --precision to choose\): ' \
    "check prints the default precision"
expect_match out '^  \(precision fp32: every tensor in f32\)' \
    "the memory plan says what activations are stored in"
run "$TRAINER" check "$work/bf16.model" --precision fp32
expect_rc 0 "check of the bf16 model in fp32"
fp32_total=$(grep -E '^  total ' <<<"$out")

run "$TRAINER" check "$work/bf16.model"
expect_rc 0 "check plans a bf16 model without a GPU"
expect_match out '^precision bf16 on a GPU \(train precision=bf16, line 10\): GEMM and convolution inputs rounded to bf16' \
    "check describes bf16 as a GPU computes it"
expect_match out '^  not on cpu: train precision=bf16 \(line 10\): layer .dense1. \(dense\) would compute in bf16' \
    "check says the CPU would refuse it"
expect_in out "(precision bf16: activations and their gradients in bf16 from the first layer to the last, with a 16-bit copy of the weights" \
    "the plan says which activations are 16-bit"
expect_match out '^input1:bf16 +cast +[0-9]+ +784 +bf16 ' \
    "the table shows the cast into the first dense layer"
expect_match out '^dense1 +dense\+relu +[0-9]+ +[0-9]+ +bf16 ' "dense1 stores bf16"
[ "$(grep -E '^  total ' <<<"$out")" != "$fp32_total" ] &&
    pass "the bf16 plan's total is not the fp32 plan's" ||
    fail "the bf16 plan's total is not the fp32 plan's" "$fp32_total"

run "$TRAINER" check models/mlp.model --precision fp16 --device cpu
expect_error 3 "--precision fp16: layer 'dense1' (dense) would compute in fp16, but the CPU" \
    "check with an explicit --device cpu refuses as train does"

finish

#!/usr/bin/env bash
# What a newcomer meets in their first ten minutes (issue 36's friction list), each as the
# command and the key line of its message: README's commands run as printed, errors name
# the file and row or the near miss, a CPU-only run says nothing of CUDA, a saved run says
# what to do next, and evaluation shows progress.
source "$(dirname "${BASH_SOURCE[0]}")/common.bash"

require_fashion_mnist
quick=(--epochs 1 --train-limit 256 --test-limit 256)

# ---- 1. README's mpirun line runs as printed (as root with the flag it names) ----
line=$(grep -m1 '^mpirun ' README.md | sed 's/ *#.*//')
if [ -z "$line" ]; then fail "README has an mpirun line"
elif ! command -v mpirun >/dev/null; then echo "skip - mpirun is not installed"
else
    read -ra words <<<"$line"
    for i in "${!words[@]}"; do [ "${words[$i]}" = trainer ] && words[$i]=$TRAINER; done
    root_flag=()
    grep -q -- '--allow-run-as-root' README.md && [ "$(id -u)" -eq 0 ] &&
        root_flag=(--allow-run-as-root)
    # Open MPI's plugins leave allocations LeakSanitizer cannot attribute (common.bash's
    # require_mpirun says more); the line itself runs as printed.
    run env OMPI_MCA_btl=self,vader \
        ASAN_OPTIONS="${ASAN_OPTIONS:-}${ASAN_OPTIONS:+:}detect_leaks=0" "${words[0]}" "${root_flag[@]}" "${words[@]:1}" "${quick[@]}"
    if grep -q "built without MPI" <<<"$err"; then echo "skip - this trainer has no MPI"
    else expect_rc 0 "README's mpirun line runs: ${line}"; fi
fi

# ---- 2. --data without its kind: the error names the spec the path's contents call for ----
mkdir -p "$work/photos/cat" "$work/photos/dog" "$work/loose" "$work/idxdir" "$work/cifar" \
    "$work/empty"
run "$TRAINER" data export fashion-mnist "png:$work/fm" --limit 2 --force
expect_rc 0 "a few images to put in folders"
first=$(find "$work/fm" -name '*.png' | sort | head -1)
cp "$first" "$work/photos/cat/a.png"; cp "$first" "$work/photos/dog/b.png"
cp "$first" "$work/loose/a.png"
: >"$work/idxdir/train-images-idx3-ubyte"; : >"$work/cifar/data_batch_1.bin"
printf 'label,a\n0,1\n' >"$work/iris.csv"
for case in "photos:images:$work/photos" "loose:sort them into $work/loose/CLASS/" \
    "idxdir:idx:$work/idxdir" "cifar:cifar10:$work/cifar" "iris.csv:csv:$work/iris.csv" \
    "empty:the folder is empty"; do
    path=$work/${case%%:*} want=${case#*:}
    run "$TRAINER" train mlp --device cpu --data "$path"
    expect_error 2 "$want" "--data ${case%%:*} without its kind: the hint says '$want'"
done

# ---- 3. a bad label in a CSV is named at FILE:ROW:COLUMN; no CUDA text on the CPU ----
printf 'label,a,b\n0,1,2\n1,2,3\n12,3,4\n1,1,1\n0,0,0\n1,1,1\n0,2,2\n1,1,1\n' >"$work/d.csv"
cat >"$work/two.model" <<'MODEL'
input shape=2 dtype=f32
dense units=2
loss softmax_cross_entropy
optimizer sgd lr=0.1
train batch=2 epochs=1
MODEL
run "$TRAINER" train "$work/two.model" --data "csv:$work/d.csv" --val-split 0.5 --device cpu
expect_error 2 "$work/d.csv:4:1: label 12, but the model has 2 classes" \
    "a CSV label past the classes is named at FILE:ROW:COLUMN"
expect_no_match err "CUDA|device-side|likely causes" "a CPU run says nothing about CUDA asserts"
sed -i 's/^12,/1,/' "$work/d.csv"
run "$TRAINER" train "$work/two.model" --data "csv:$work/d.csv" --val-split 0.25 --device cpu \
    --save "$work/two.safetensors"
expect_rc 0 "the fixed CSV trains"
python3 -c 'import struct, zlib, sys
def chunk(k, d): return struct.pack(">I", len(d)) + k + d + struct.pack(">I", zlib.crc32(k + d))
rows = b"".join(b"\0" + bytes(28) for _ in range(28))
open(sys.argv[1], "wb").write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 28, 28,
    8, 0, 0, 0, 0)) + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b""))' "$work/x.png"
run "$TRAINER" predict "$work/two.model" --weights "$work/two.safetensors" "$work/x.png" --device cpu
expect_error 2 "not an image: it was trained on a table (csv:)" \
    "predict with a table-trained model says so, not 'resize to 2x2'"

# ---- 4. did you mean ----
run "$TRAINER" train mlp --learning-rate 0.1
expect_error 2 "unknown option '--learning-rate' for train; did you mean '--lr'?" \
    "--learning-rate suggests --lr"
run "$TRAINER" train models/mpl.model
expect_error 2 "did you mean 'models/mlp.model'?" "models/mpl.model suggests models/mlp.model"
run "$TRAINER" eval models/mlp.model "$work/two.safetensors"
expect_error 2 "did you mean --weights $work/two.safetensors?" "eval MODEL WEIGHTS suggests --weights"

# ---- 5. the CPU notice, quickstart's next commands, README's commands ----
run "$TRAINER" train mlp "${quick[@]}" --device cpu --save "$work/mlp.safetensors"
expect_no_match err "notice: using the CPU" "--device cpu: no notice about the CPU"
expect_in out "eval mlp --weights $work/mlp.safetensors" "--save prints the eval command"
expect_in out "predict mlp --weights $work/mlp.safetensors IMAGE.png" "and the predict command"
run "$TRAINER" doctor
if [ "$rc" -ne 0 ]; then  # no usable GPU: auto falls back to the CPU
    run "$TRAINER" eval mlp --weights "$work/mlp.safetensors" --test-limit 256
    notices=$(grep -c "notice: using the CPU" <<<"$err")
    longest=$(grep "notice: using the CPU" <<<"$err" | awk '{ print length }' | sort -n | tail -1)
    if [ "$notices" -eq 1 ] && [ "${longest:-999}" -le 120 ]; then
        pass "without --device: one short notice about the CPU ($longest characters)"
    else fail "one short notice about the CPU" "$notices notices, the longest $longest"; fi
fi
grep -q 'quickstart.sh' README.md && grep -q -- '--save mlp.safetensors' scripts/quickstart.sh &&
    pass "quickstart saves mlp.safetensors" || fail "quickstart saves mlp.safetensors"
run "$TRAINER" lab bad-label
expect_in out "trainer's diagnosis" "README's 'trainer lab bad-label' shows a failure"
if grep -q 'lenet-mnist.safetensors' README.md; then
    fail "README names no file that nothing makes"
else pass "README names no file that nothing makes"; fi

# ---- 6. progress during evaluation; plot -o by extension ----
if command -v script >/dev/null; then
    run script -qec "COLUMNS=100 '$TRAINER' eval mlp --weights '$work/mlp.safetensors' \
--device cpu --test-limit 2000" /dev/null
    expect_in out "evaluating test [" "eval on a terminal shows its progress"
    expect_in out "2000/2000" "up to the last sample"
else
    echo "skip - script(1) is not installed: no terminal for the progress line"
fi
run "$TRAINER" train mlp "${quick[@]}" --device cpu --logdir "$work/logs"
run "$TRAINER" plot "$work/logs" -o "$work/curves.jpg"
expect_error 2 "trainer plot writes PNG images only, not '.jpg'" "plot -o curves.jpg is refused"
if [ ! -e "$work/curves.jpg" ]; then pass "and writes nothing"; else fail "and writes nothing"; fi

finish

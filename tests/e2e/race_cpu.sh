#!/usr/bin/env bash
# bench/time_to_accuracy.sh on the CPU, at a test's size: mlp on 2,000 training and 500 test
# images to a low test accuracy (0.55, which one epoch of either side reaches), two seeds,
# trainer against bench/torch_train.py's columns. It stamps each side's epoch lines and
# stops each run at the target, writes one race record per side and seed (seconds, the epoch
# that reached it, its accuracy), and bench/gpu_table.py makes the table from them: each
# side's median and trainer's against PyTorch's best column. The columns this machine cannot
# run (the CUDA graph here; torch.compile before torch 2.0) are recorded as skipped, with
# torch_train.py's reason, and fail nothing. No time is judged: benchmarks are not tests.
# Skips (77) without a python3 that has torch (Debian's python3-torch) or Fashion-MNIST.
source "$(dirname "${BASH_SOURCE[0]}")/common.bash"
require_fashion_mnist
python=""
for candidate in ${PYTHON:-} python3 /usr/bin/python3; do
    if command -v "$candidate" >/dev/null 2>&1 &&
        python_has "$candidate" torch numpy; then
        python=$candidate
        break
    fi
done
if [ -z "$python" ]; then
    echo "SKIP: no python3 here has torch and numpy (apt-get install python3-torch)"
    exit 77
fi

script=bench/time_to_accuracy.sh
run env TRAINER="$TRAINER" PYTHON="$python" TRAINER_FASHION_MNIST_DIR="$FASHION_DIR" OUT= \
    bash "$script" -d cpu -m mlp -t 0.55 -s "1 2" -E 3 -n 2000 -N 500 -b 600 \
    -o "$work/race.tsv"
expect_rc 0 "a race on the CPU"
for side in trainer eager; do
    for seed in 1 2; do
        if grep -qE "^race	mlp	0.55	$side	$seed	[0-9.]+	[1-3]	0\.[0-9]+	$" "$work/race.tsv"
        then pass "$side, seed $seed: seconds, the epoch that reached 0.55, its accuracy"
        else fail "$side, seed $seed: seconds, the epoch that reached 0.55, its accuracy" \
            "$(cat "$work/race.tsv")"; fi
    done
done
if grep -qE "^race	mlp	0.55	graphs	1	-	-	-	skipped: graphs: CUDA graphs need a CUDA device" \
    "$work/race.tsv"; then pass "the CUDA graph column is skipped on the CPU, saying why"
else fail "the CUDA graph column is skipped on the CPU, saying why" "$(cat "$work/race.tsv")"; fi
expect_match out '^race mlp to 0\.5500: trainer: [0-9.]+ \(epoch [1-3]\); [0-9.]+ \(epoch [1-3]\); median [0-9.]+, x best [0-9.]+' \
    "the table: trainer's seeds, median and ratio to PyTorch's best"
expect_match out '^race mlp to 0\.5500: PyTorch eager \(best\): ' "eager is PyTorch's best here"
expect_in out "median skipped" "a skipped column has no median"
if grep -q '^\[ *[0-9.]*s\] epoch 1/3 ' "$work/race.log"; then
    pass "the log has every line, stamped from its process's start"
else
    fail "the log has every line, stamped from its process's start" "$(head "$work/race.log")"
fi

# A target nobody reaches is a figure, not a failure.
run env TRAINER="$TRAINER" PYTHON="$python" TRAINER_FASHION_MNIST_DIR="$FASHION_DIR" OUT= \
    bash "$script" -d cpu -m mlp -t 0.99 -s 1 -E 1 -n 500 -N 200 -c eager -o "$work/never.tsv"
expect_rc 0 "an unreachable target"
if grep -qE "^race	mlp	0.99	trainer	1	-	1	0\.[0-9]+	not reached in 1 epochs" "$work/never.tsv"
then pass "trainer: not reached in 1 epochs, with its last accuracy"
else fail "trainer: not reached in 1 epochs, with its last accuracy" "$(cat "$work/never.tsv")"; fi
expect_in out "trainer: not reached in 1 epochs" "the table says it was not reached"
finish

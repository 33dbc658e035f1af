#!/usr/bin/env bash
# --cuda-graph off|auto|on (issue 15), where no GPU is needed: `on` is refused on the CPU
# with exit 3 before any data is read, an unknown word is a usage error (exit 2), and
# `auto` on the CPU trains exactly what a run without the option trains, without a word
# about graphs; the same for `trainer bench train`. Replays against plain launches on a
# GPU: tests/gpu/test_cuda_graph_step.c.
source "$(dirname "${BASH_SOURCE[0]}")/common.bash"
make_dataset "$work/data" 300 100

small=(train models/mlp.model --data "idx:$work/data" --device cpu --epochs 1 --batch 64)
run "$TRAINER" "${small[@]}"
expect_rc 0 "mlp trains without --cuda-graph"
plain=$(last_epoch_result)
run "$TRAINER" "${small[@]}" --cuda-graph auto
expect_rc 0 "mlp trains with --cuda-graph auto on the CPU"
if [ -n "$plain" ] && [ "$plain" = "$(last_epoch_result)" ]; then
    pass "--cuda-graph auto on the CPU changes nothing that is computed ($plain)"
else
    fail "--cuda-graph auto on the CPU changes nothing that is computed" "without: '$plain'"
fi
expect_no_match all "CUDA Graph|cuda-graph" "auto on the CPU says nothing about graphs"

run "$TRAINER" "${small[@]}" --cuda-graph on
expect_error 3 "--cuda-graph on: cpu has no CUDA Graphs" "--cuda-graph on is refused on the CPU"
expect_in err "--device cuda" "the hint names a GPU device"
expect_no_match out "^data " "refused before the data is read"

run "$TRAINER" "${small[@]}" --cuda-graph always
expect_error 2 "--cuda-graph always: expected off, auto or on" "an unknown --cuda-graph word"

run "$TRAINER" train --help
expect_in out "--cuda-graph" "train --help lists --cuda-graph"

# trainer bench train takes it too, for graph against plain at small batches.
bench=(bench train models/mlp.model --device cpu --batch 16 --steps 2 --repeats 1 --warmup 1)
run "$TRAINER" "${bench[@]}" --cuda-graph on
expect_error 3 "--cuda-graph on: cpu has no CUDA Graphs" "bench train --cuda-graph on on the CPU"
run "$TRAINER" "${bench[@]}" --cuda-graph auto
expect_rc 0 "bench train --cuda-graph auto on the CPU"
expect_in out "cuda graph  plain launches: this device has no CUDA Graphs" \
    "bench says how its timed steps ran"
run "$TRAINER" "${bench[@]}"
expect_no_match out "cuda graph" "without the option, bench says nothing about graphs"
run "$TRAINER" bench gemm --cuda-graph on
expect_error 2 "--cuda-graph does not apply to trainer bench gemm" "bench gemm refuses it"
finish

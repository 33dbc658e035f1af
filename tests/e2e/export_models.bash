# Shared by export_onnx.sh and export_pytorch.sh; sourced after common.bash. For a bundled
# model: 64 random images of its input shape (PNGs under $work/NAME), its weights after one
# epoch on them (batchnorm's running statistics then differ from their start), and
# `trainer predict`'s probabilities of the 64 images with 8 decimals.
EXPORT_HELPER="$TRAINER_SOURCE_DIR/tests/e2e/export_compare.py"

# prepare_model NAME PYTHON: sets $images, $weights and $predicted, or fails and returns 1.
prepare_model() {
    local name=$1 python=$2 shape c h w
    shape=$(grep -oE '^input +shape=[0-9x]+' "models/$name.model" | sed 's/.*shape=//')
    case $shape in
    *x*x*) IFS=x read -r c h w <<<"$shape" ;;
    784) c=1 h=28 w=28 ;;  # a vector input takes a 28x28 gray image
    *) fail "$name: an input shape=$shape this test cannot draw"; return 1 ;;
    esac
    images="$work/$name"
    weights="$work/$name.safetensors"
    predicted="$work/$name.predicted"
    "$python" "$EXPORT_HELPER" images "$images" "$c" "$h" "$w" 64 ||
        { fail "$name: the test images were written"; return 1; }
    run "$TRAINER" train "models/$name.model" --data "png:$images" --epochs 1 --batch 32 \
        --save "$weights"
    [ "$rc" -eq 0 ] || { fail "$name: one epoch on the 64 images trains" "exit $rc"; return 1; }
    # shellcheck disable=SC2046  # one argument per image path (no spaces in them)
    run "$TRAINER" predict "models/$name.model" --weights "$weights" --top 10 --digits 8 \
        $(cat "$images/list.txt")
    [ "$rc" -eq 0 ] || { fail "$name: trainer predict runs" "exit $rc"; return 1; }
    printf '%s\n' "$out" >"$predicted"
}

bundled_models() {
    local f
    for f in models/*.model; do basename "$f" .model; done
}

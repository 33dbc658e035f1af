# export.sh's models; sourced after common.bash. For a bundled
# model: 64 random images of its input shape (PNGs under $work/NAME), its weights after one
# epoch on them (batchnorm's running statistics then differ from their start), and
# `trainer predict`'s probabilities of the 64 images with 8 decimals.
EXPORT_HELPER="$TRAINER_SOURCE_DIR/tests/e2e/export_compare.py"

# image_shape MODEL: sets $c, $h and $w to the images MODEL's input takes; 1 when it is a
# shape this test cannot draw.
image_shape() {
    local shape
    shape=$(grep -oE '^input +shape=[0-9x]+' "$1" | sed 's/.*shape=//')
    case $shape in
    *x*x*) IFS=x read -r c h w <<<"$shape" ;;
    784) c=1 h=28 w=28 ;;  # a vector input takes a 28x28 gray image
    *) return 1 ;;
    esac
}

# draw_images PYTHON MODEL...: prepare_model's images for every MODEL, drawn by one python
# process (importing numpy once, not once a model). prepare_model draws any still missing.
draw_images() {
    local python=$1 model c h w folders=()
    shift
    for model in "$@"; do
        image_shape "$model" && folders+=("$work/$(basename "$model" .model)" "$c" "$h" "$w" 64)
    done
    [ ${#folders[@]} -eq 0 ] || "$python" "$EXPORT_HELPER" images "${folders[@]}"
}

# prepare_model MODEL PYTHON: sets $name, $images, $weights and $predicted, or fails and
# returns 1.
prepare_model() {
    local model=$1 python=$2 c h w
    name=$(basename "$model" .model)
    image_shape "$model" ||
        { fail "$name: an input shape=$(grep -oE '^input +shape=[0-9x]+' "$model" |
            sed 's/.*shape=//') this test cannot draw"; return 1; }
    images="$work/$name"
    weights="$work/$name.safetensors"
    predicted="$work/$name.predicted"
    [ -f "$images/list.txt" ] || "$python" "$EXPORT_HELPER" images "$images" "$c" "$h" "$w" 64 ||
        { fail "$name: the test images were written"; return 1; }
    run "$TRAINER" train "$model" --data "png:$images" --epochs 1 --batch 32 \
        --save "$weights"
    [ "$rc" -eq 0 ] || { fail "$name: one epoch on the 64 images trains" "exit $rc"; return 1; }
    # shellcheck disable=SC2046  # one argument per image path (no spaces in them)
    run "$TRAINER" predict "$model" --weights "$weights" --top 10 --digits 8 \
        $(cat "$images/list.txt")
    [ "$rc" -eq 0 ] || { fail "$name: trainer predict runs" "exit $rc"; return 1; }
    printf '%s\n' "$out" >"$predicted"
}

# export_models: the bundled models, and $work/kinds.model, written here: every layer kind
# and what the bundled ones leave out (an even kernel's uneven pad=same, dilation, groups,
# avgpool's padding, a 3-input add, reshape, batchnorm of a vector, leaky_relu, gelu,
# sigmoid, tanh, a name with '-', the mse loss).
export_models() {
    cat >"$work/kinds.model" <<'MODEL'
input      shape=3x12x12 dtype=f32
conv2d     filters=4 kernel=4 pad=same name=c1
leaky_relu slope=0.2
conv2d     filters=4 kernel=3 pad=2 dilation=2 groups=2 bias=false name=c2
gelu
avgpool    size=3 stride=2 pad=1 name=ap
conv2d     filters=4 kernel=1 stride=2 from=c1 name=proj
conv2d     filters=4 kernel=2 stride=2 from=c1 name=proj-2
add        from=ap,proj,proj-2 name=sum3
tanh
maxpool    size=3 stride=1 pad=1
batchnorm  eps=0.001 momentum=0.2
flatten
reshape    shape=4x6x6
global_avgpool
dense      units=16 act=sigmoid
batchnorm
dropout    rate=0.3
dense      units=10
loss       mse
optimizer  adam lr=0.05
train      batch=32 epochs=1 seed=2
MODEL
    printf '%s\n' models/*.model "$work/kinds.model"
}

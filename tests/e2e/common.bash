# Shared by the end-to-end scripts in this folder; sourced, never run on its own (ctest
# only runs e2e/*.sh). Each script drives the `trainer` binary the way a person would and
# checks exit codes and messages, so the CLI contract (exit 0 ok, 1 runtime failure,
# 2 bad usage/model/data, 3 no usable device; errors as `trainer: error: ...` with a
# `  hint:` line) is pinned from the outside.
#
# Environment (set by tests/CMakeLists.txt): TRAINER, the binary; TRAINER_SOURCE_DIR,
# the repository root. Exit: 0 pass, 1 fail, 77 skipped (the reason is printed).
set -u

if [ -z "${TRAINER:-}" ] || [ ! -x "$TRAINER" ]; then
    echo "FAIL: TRAINER must name the trainer binary (got '${TRAINER:-}')"
    exit 1
fi
if [ -z "${TRAINER_SOURCE_DIR:-}" ] || [ ! -f "$TRAINER_SOURCE_DIR/models/mlp.model" ]; then
    echo "FAIL: TRAINER_SOURCE_DIR must name the repository root (got '${TRAINER_SOURCE_DIR:-}')"
    exit 1
fi
# Model paths in commands and messages read as a user would type them: models/mlp.model.
cd "$TRAINER_SOURCE_DIR" || exit 1

work=$(mktemp -d "${TMPDIR:-/tmp}/trainer-e2e.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT

failures=0
FASHION_DIR=${TRAINER_FASHION_MNIST_DIR:-/usr/share/datasets/fashion-mnist}

# Exits 77 when the script needs the installed Fashion-MNIST and it is absent.
require_fashion_mnist() {
    local f
    for f in train-images-idx3-ubyte train-labels-idx1-ubyte t10k-images-idx3-ubyte \
        t10k-labels-idx1-ubyte; do
        if [ ! -e "$FASHION_DIR/$f" ] && [ ! -e "$FASHION_DIR/$f.gz" ]; then
            echo "SKIP: Fashion-MNIST is not installed ($FASHION_DIR/$f[.gz] is missing);" \
                "apt-get install dataset-fashion-mnist"
            exit 77
        fi
    done
}

# require_python3 WHY: exits 77 when python3 is missing, saying what the script needs it for.
require_python3() {
    if ! command -v python3 >/dev/null; then
        echo "SKIP: python3 is needed to $1"
        exit 77
    fi
}

# require_usable_gpu: exits 77 unless `trainer doctor --json` reports a usable GPU, with the
# doctor's reason; else $usable_gpus holds how many (the gpu/ scripts start with it).
require_usable_gpu() {
    require_python3 "read trainer doctor --json"
    run "$TRAINER" doctor --json
    usable_gpus=$(python3 -c 'import json, sys; print(json.load(sys.stdin)["usable_devices"])' \
        <<<"$out" 2>/dev/null)
    if [ -z "$usable_gpus" ] || [ "$usable_gpus" = "0" ]; then
        local reason
        reason=$(python3 -c 'import json, sys
d = json.load(sys.stdin)
print("; ".join(p["what"] for p in d["problems"]) or d["verdict"])' <<<"$out" 2>/dev/null)
        echo "SKIP: trainer doctor reports no usable GPU: ${reason:-its JSON did not parse}"
        exit 77
    fi
}

# python_has PYTHON MODULE...: PYTHON finds every MODULE (importlib's find_spec, without
# importing it: importing torch to see whether it is there took 2 s of CPU, a third of a
# test's Python time; the test's own import then says whether it works).
python_has() {
    "$1" -c 'import importlib.util, sys
sys.exit(not all(importlib.util.find_spec(m) for m in sys.argv[1:]))' "${@:2}" >/dev/null 2>&1
}

# ---- Python packages from PyPI ----
# require_venv NAME IMPORTS PACKAGE...: sets $python to the python of virtual environment
# NAME, where the python code IMPORTS runs; made once with `pip install PACKAGE...` and kept
# (a test that needs more packages in the same NAME adds them). It lives in
# $TRAINER_VENV_DIR when that is set, else beside the trainer binary: scripts/test.sh
# points its sanitizer build's pass at the release build's folder, whose environments the
# first pass made, instead of installing them again (a minute and a half of pip). A lock
# keeps two tests of one `ctest -j` from making or adding to NAME at once. Exits 77, saying
# why, without python3 -m venv, pip or the network.
require_venv() {
    local name=$1 imports=$2
    shift 2
    local dir=${TRAINER_VENV_DIR:-$(dirname "$TRAINER")}
    local venv=$dir/$name lock
    python=$venv/bin/python
    require_python3 "make a virtual environment for $*"
    mkdir -p "$dir" && exec {lock}>"$venv.lock" && flock "$lock" || {
        echo "SKIP: cannot lock $venv.lock to make the virtual environment for $*"
        exit 77
    }
    if ! "$python" -c "$imports" 2>/dev/null; then
        if [ ! -x "$python" ] && ! { rm -rf "$venv" && python3 -m venv "$venv"; } \
            >"$work/venv.log" 2>&1; then
            echo "SKIP: python3 -m venv failed (apt-get install python3-venv):" \
                "$(tail -n 1 "$work/venv.log")"
            exit 77
        fi
        # --no-compile: the modules a test imports are byte-compiled as it imports them,
        # not every module of every package first (3.5 s of CPU of onnx's 17 s here).
        if ! "$venv/bin/pip" install -q --no-compile --disable-pip-version-check "$@" \
            >"$work/pip.log" 2>&1 ||
            ! "$python" -c "$imports" >>"$work/pip.log" 2>&1; then
            echo "SKIP: pip could not install $* into $venv (no network?):" \
                "$(tail -n 1 "$work/pip.log")"
            exit 77
        fi
    fi
    exec {lock}>&-
}

# ---- several processes (mpirun) ----
# require_mpirun: exits 77 without Open MPI's launcher; lets it run as root (CI's container),
# on this one host.
require_mpirun() {
    if ! command -v mpirun >/dev/null; then
        echo "SKIP: mpirun is not installed (apt-get install openmpi-bin libopenmpi-dev)"
        exit 77
    fi
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
    # Under AddressSanitizer: Open MPI's own plugins (dlopen'ed, unloaded at MPI_Finalize)
    # leave some 3,300 allocations at exit that LeakSanitizer cannot attribute; the leak check
    # stays on for every other test, and ASan's other checks stay on here.
    export ASAN_OPTIONS="${ASAN_OPTIONS:-}${ASAN_OPTIONS:+:}detect_leaks=0"
    # Keep Open MPI off the network: the ranks of these tests share one host.
    export OMPI_MCA_btl=self,vader OMPI_MCA_btl_vader_single_copy_mechanism=none
    # Once a rank exits non-zero, mpirun signals the others (SIGCONT, SIGTERM, SIGKILL) and
    # sleeps this many seconds after each signal, 1 by default, even when they have already
    # exited and mpirun has not yet reaped them: 2 s of idling per failing launch, some 25 s
    # a test run. No test waits on what a rank does between those signals.
    export OMPI_MCA_odls_base_sigkill_timeout=0
}

# ranks N ARGS...: `run` trainer under mpirun with N processes (more than cores is fine).
ranks() {
    local n=$1
    shift
    run mpirun -np "$n" --oversubscribe "$TRAINER" "$@"
}

# require_trainer_mpi: exits 77 when this trainer was built without MPI (--version says).
require_trainer_mpi() {
    if "$TRAINER" --version | grep -q '^MPI: not built in'; then
        echo "SKIP: this trainer was built without MPI"
        exit 77
    fi
}

# write_sgd_mlp FILE UNITS BATCH: a 784-UNITS-10 MLP without dropout or batchnorm, trained
# with SGD and momentum: runs split over processes must end where one process ends, and
# Adam would turn float summation order into differences far above rounding (it divides by
# the root of tiny second moments).
write_sgd_mlp() {
    {
        cat <<MODEL
input     shape=784 dtype=f32
dense     units=$2 act=relu
dense     units=10
MODEL
        sgd_training "$3"
    } >"$1"
}

# sgd_training BATCH: the loss, optimizer and train lines of write_sgd_mlp and write_bn_model.
sgd_training() {
    cat <<MODEL
loss      softmax_cross_entropy
optimizer sgd lr=0.05 momentum=0.9
train     batch=$1 epochs=2 seed=3
MODEL
}

# write_bn_model FILE FILTERS UNITS BATCH: conv (FILTERS, no bias: beta takes its place) and
# dense (UNITS) layers each followed by a batchnorm, without dropout, trained with SGD and
# momentum as write_sgd_mlp argues: both the [n, C, H*W] and the [n, features] batchnorm
# layouts, for runs whose statistics are summed over processes.
write_bn_model() {
    {
        cat <<MODEL
input     shape=1x28x28 dtype=f32
conv2d    filters=$2 kernel=3 pad=same bias=false
batchnorm act=relu
maxpool   size=2
flatten
dense     units=$3 bias=false
batchnorm act=relu
dense     units=10
MODEL
        sgd_training "$4"
    } >"$1"
}

# write_class_pngs FOLDER VALUE COUNT: COUNT 28x28 gray PNGs FOLDER/00.png, 01.png, ...,
# image i's rows holding (VALUE + i + x) mod 256 at column x (plain python3; the caller
# checks require_python3). Tests of png:DIR readers make their class folders with it.
write_class_pngs() {
    python3 - "$1" "$2" "$3" <<'PY'
import os, struct, sys, zlib

def chunk(kind, data):
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

folder, value, count = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
os.makedirs(folder, exist_ok=True)
header = struct.pack(">IIBBBBB", 28, 28, 8, 0, 0, 0, 0)
for i in range(count):
    rows = b"".join(b"\x00" + bytes([(value + i + x) % 256 for x in range(28)])
                    for _ in range(28))
    with open(os.path.join(folder, "%02d.png" % i), "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) +
                chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b""))
PY
}

# expect_same_weights A B WHAT: the two safetensors files hold the same tensors within a
# relative error of 1e-5 (tests/e2e/compare_weights.py).
expect_same_weights() {
    local result
    if result=$(python3 tests/e2e/compare_weights.py "$1" "$2"); then pass "$3: $result"
    else fail "$3" "$result"; fi
}

# ---- tiny IDX datasets made on the spot (no installed dataset needed) ----
# A big-endian u32 as printf escapes.
be32() {
    printf '\\x%02x\\x%02x\\x%02x\\x%02x' $(($1 >> 24 & 255)) $(($1 >> 16 & 255)) \
        $(($1 >> 8 & 255)) $(($1 & 255))
}
# write_images FILE COUNT: COUNT 28x28 images (all pixels 0x40).
write_images() {
    {
        printf '%b' "\\x00\\x00\\x08\\x03$(be32 "$2")$(be32 28)$(be32 28)"
        head -c $(($2 * 784)) /dev/zero | tr '\0' '\100'
    } >"$1"
}
# write_labels FILE COUNT: labels 0,1,...,9,0,1,... so that every class up to 9 appears.
write_labels() {
    local i body=""
    for ((i = 0; i < $2; i++)); do body+="\\x0$((i % 10))"; done
    printf '%b' "\\x00\\x00\\x08\\x01$(be32 "$2")$body" >"$1"
}
# wait_for_output FILE PATTERN PID: until a line of FILE matches PATTERN (grep -E), for at
# most 60 s; 1 when PID exits first or the time runs out.
wait_for_output() {
    local i
    for ((i = 0; i < 1200; i++)); do
        grep -qE -- "$2" "$1" 2>/dev/null && return 0
        kill -0 "$3" 2>/dev/null || return 1
        sleep 0.05
    done
    return 1
}
# metadata FILE KEY: the value of KEY in FILE's safetensors __metadata__.
metadata() {
    python3 - "$1" "$2" <<'PY'
import json, struct, sys
with open(sys.argv[1], "rb") as f:
    size = struct.unpack("<Q", f.read(8))[0]
    print(json.loads(f.read(size))["__metadata__"].get(sys.argv[2], ""), end="")
PY
}
# make_dataset DIR TRAIN TEST: a complete, valid idx:DIR folder of TRAIN + TEST samples.
make_dataset() {
    mkdir -p "$1"
    write_images "$1/train-images-idx3-ubyte" "$2"
    write_labels "$1/train-labels-idx1-ubyte" "$2"
    write_images "$1/t10k-images-idx3-ubyte" "$3"
    write_labels "$1/t10k-labels-idx1-ubyte" "$3"
}

# last_epoch_result: the last run's final epoch line without its timing ("epoch 2/2  train
# loss ... test ... acc 0.7985"), to compare what two runs learned.
last_epoch_result() {
    grep '^epoch ' <<<"$out" | tail -n 1 | sed 's/  [0-9]* samples.*//'
}

# run CMD...: runs it with stdin closed, leaving its exit code in $rc, stdout in $out,
# stderr in $err, and the command line in $ran (for failure reports).
run() {
    ran="$*"
    "$@" </dev/null >"$work/.stdout" 2>"$work/.stderr"
    rc=$?
    out=$(cat "$work/.stdout")
    err=$(cat "$work/.stderr")
}

show_last_run() {
    echo "    command: $ran"
    echo "    exit code: $rc"
    echo "    stdout:"
    sed 's/^/      | /' <<<"$out"
    echo "    stderr:"
    sed 's/^/      | /' <<<"$err"
}

pass() { echo "ok   - $1"; }

fail() {
    echo "FAIL - $1"
    [ -n "${2:-}" ] && echo "    $2"
    show_last_run
    failures=$((failures + 1))
}

# expect_rc WANT WHAT: the last run exited WANT.
expect_rc() {
    if [ "$rc" -eq "$1" ]; then pass "$2 (exit $rc)"; else fail "$2" "exit code $rc, expected $1"; fi
}

# stream_text STREAM: the last run's stdout (out), stderr (err) or both (all).
stream_text() {
    case "$1" in
    out) printf '%s' "$out" ;;
    err) printf '%s' "$err" ;;
    *) printf '%s\n%s' "$out" "$err" ;;
    esac
}

# expect_in STREAM TEXT WHAT: STREAM (out, err or all) of the last run contains TEXT
# (a fixed string, not a pattern).
expect_in() {
    if grep -qF -- "$2" <<<"$(stream_text "$1")"; then pass "$3"; else fail "$3" "$1 lacks: $2"; fi
}

# expect_match STREAM REGEX WHAT: as expect_in, with an extended regular expression.
expect_match() {
    if grep -qE -- "$2" <<<"$(stream_text "$1")"; then pass "$3"
    else fail "$3" "$1 does not match: $2"; fi
}

# expect_no_match STREAM REGEX WHAT: STREAM of the last run has no line matching REGEX.
expect_no_match() {
    if grep -qE -- "$2" <<<"$(stream_text "$1")"; then fail "$3" "$1 matches: $2"
    else pass "$3"; fi
}

# expect_error WANT_RC TEXT WHAT: the last run failed with WANT_RC and printed, on
# stderr, an error in the project's format that contains TEXT, followed by a hint.
expect_error() {
    local problems=""
    [ "$rc" -eq "$1" ] || problems+="exit code $rc, expected $1; "
    grep -q '^trainer: error: ' <<<"$err" || problems+="no 'trainer: error:' line on stderr; "
    grep -qF -- "$2" <<<"$err" || problems+="stderr lacks: $2; "
    grep -q '^  hint: .' <<<"$err" || problems+="no '  hint:' line; "
    if [ -z "$problems" ]; then pass "$3 (exit $rc)"; else fail "$3" "${problems%; }"; fi
}

finish() {
    if [ "$failures" -gt 0 ]; then
        echo "$failures check(s) failed"
        exit 1
    fi
    echo "all checks passed"
    exit 0
}

# ---- checkpoint tests: a tiny model with dropout, and random images ----
# random_bytes COUNT SEED: COUNT pseudo-random bytes, the same for the same seed. Why not
# /dev/urandom: checks on what a run prints (a mean, the best epoch) held for most draws
# and failed CI on one; a seeded draw makes a failure reproducible and a pass stay a pass.
random_bytes() {
    python3 -c 'import random, sys
random.seed(int(sys.argv[2]))
sys.stdout.buffer.write(random.randbytes(int(sys.argv[1])))' "$1" "$2"
}

# make_random_dataset DIR TRAIN TEST [SEED]: like make_dataset, with random pixels, so that
# training moves the weights and the data order matters (runs compared share one dataset).
make_random_dataset() {
    require_python3 "draw the random images"
    mkdir -p "$1"
    local split count
    for split in train t10k; do
        count=$2
        [ "$split" = t10k ] && count=$3
        {
            printf '%b' "\\x00\\x00\\x08\\x03$(be32 "$count")$(be32 28)$(be32 28)"
            random_bytes $((count * 784)) "$((${4:-1} * 2 + ${#split} % 2))"
        } >"$1/$split-images-idx3-ubyte"
        write_labels "$1/$split-labels-idx1-ubyte" "$count"
    done
}

# write_tiny_model FILE [UNITS]: a 784-UNITS-10 MLP with dropout (so resuming must restore
# the dropout masks' seeds too), Adam, batch 16.
write_tiny_model() {
    cat >"$1" <<MODEL
input     shape=784 dtype=f32
dense     units=${2:-32} act=relu
dropout   rate=0.5
dense     units=10
loss      softmax_cross_entropy
optimizer adam lr=0.001
train     batch=16 epochs=4 seed=3
MODEL
}

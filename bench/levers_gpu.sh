#!/usr/bin/env bash
# bench/levers_gpu.sh [-m "MODELS"] [-b BATCH | BATCH] [-d cuda:N] [-s SECONDS] [-t SECONDS]
#                     [-o RESULTS.jsonl] [-n] [-r RESULTS.jsonl] [-h]
# Each GPU lever of issue 15 measured alone, before and after, in one GPU call: for every
# model of -m, `trainer bench train models/MODEL.model --device DEV --batch BATCH
# --per-layer --json` once with everything on, once per lever turned off with --without
# (bias-gradient, batchnorm-split, maxpool-scatter, multi-tensor, gemm-epilogue,
# conv-fused: docs/cli.md), once with --no-fuse (act= activations as their own passes),
# once with --cuda-graph on (the default replays nothing) and once with --layout nhwc
# (NHWC images between the convolutions). Then, per model:
#   - configuration | samples/s | x all-on | step ms
#   - the per-layer forward and backward times of the layers each lever touches (conv2d
#     for bias-gradient and conv-fused, batchnorm, maxpool, dense for gemm-epilogue, the
#     optimizer's "(update)" row for multi-tensor, every layer for --no-fuse and the
#     CUDA Graph), all-on beside lever-off.
# A lever a model does not exercise (conv-fused and bias-gradient on cnn-bn's bias=false
# convolutions) measures the same as all-on, within noise.
#
# Options:
#   -m MODELS  models under models/ (default "lenet cnn-bn")
#   -b BATCH   samples per step (default 1024; a positional BATCH is the same)
#   -d DEV     the device (default cuda:0); --without is refused on the CPU
#   -s SECONDS the time budget of the whole script (default 480): a run that would start
#              with less than its timeout left is skipped, and the tables say so
#   -t SECONDS each run's timeout (default 60)
#   -o FILE    the results, one JSON object per line (default a new file under $TMPDIR);
#              each run's output is kept in FILE's name with .log
#   -n         dry run: check the arguments and print the runs, without running them
#   -r FILE    no runs: print the tables of a results file written by an earlier run
# When $OUT is set (a lent GPU machine, whose working tree does not come back), the results,
# the log and the tables are copied there.
#
# Needs: a trainer built with the CUDA backend ($TRAINER, or $BUILD/trainer, default
# build/trainer) and python3 for the tables. Exit 2 for a usage mistake, 1 when a run
# failed or was skipped (the tables are still printed), 0 otherwise.
set -euo pipefail
cd "$(dirname "$0")/.."
models="lenet cnn-bn" batch="" device=cuda:0 budget=480 timeout_s=60 results="" dry=0 replay=""
usage_error() {
  printf 'levers_gpu.sh: %s\n  hint: bash bench/levers_gpu.sh -h\n' "$1" >&2
  exit 2
}
while getopts "m:b:d:s:t:o:nr:h" opt; do
  case $opt in
    m) models=$OPTARG ;; b) batch=$OPTARG ;; d) device=$OPTARG ;; s) budget=$OPTARG ;;
    t) timeout_s=$OPTARG ;; o) results=$OPTARG ;; n) dry=1 ;; r) replay=$OPTARG ;;
    h) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) usage_error "unknown option" ;;
  esac
done
shift $((OPTIND - 1))
if [ $# -gt 0 ]; then
  [ -n "$batch" ] && usage_error "the batch is given twice: -b $batch and $1"
  batch=$1
  shift
fi
[ $# -eq 0 ] || usage_error "unexpected argument '$1': one BATCH at most"
batch=${batch:-1024}
number() { [[ $2 =~ ^[1-9][0-9]*$ ]] || usage_error "$1 takes a whole number above 0, not '$2'"; }
number "the batch" "$batch"
number "-s" "$budget"
number "-t" "$timeout_s"
case $device in cuda | cuda:[0-9]*) ;; *) usage_error "-d takes cuda or cuda:N, not '$device' (levers are the CUDA backend's)" ;; esac
[ -n "$models" ] || usage_error "-m names no model"
for model in $models; do
  [ -f "models/$model.model" ] || usage_error "no model file models/$model.model"
done
levers=(bias-gradient batchnorm-split maxpool-scatter multi-tensor gemm-epilogue conv-fused)

# configuration name and its trainer options, in the tables' order
configs=("all on|" "no-fuse|--no-fuse" "cuda-graph on|--cuda-graph on" "layout nhwc|--layout nhwc")
for lever in "${levers[@]}"; do configs+=("without $lever|--without $lever"); done

python=${PYTHON:-python3}
tables() {
  command -v "$python" >/dev/null || { echo "levers_gpu.sh: python3 is needed for the tables" >&2; return 1; }
  "$python" - "$1" <<'EOF'
import json, sys

# What each configuration changes, as layer kinds (bench's "kind" column starts with it).
touches = {
    "without bias-gradient": ("conv2d",), "without conv-fused": ("conv2d",),
    "without batchnorm-split": ("batchnorm",), "without maxpool-scatter": ("maxpool",),
    "without gemm-epilogue": ("dense",), "without multi-tensor": (),
    "layout nhwc": ("conv2d", "batchnorm", "maxpool", "avgpool", "flatten", "add"),
    "no-fuse": None,  # None: every layer
    # --per-layer steps always run plainly, so a CUDA Graph shows in samples/s only.
}

def ms(x):
    return "-" if x is None else f"{x:.3f}"

runs = {}
order = []
for line in open(sys.argv[1], encoding="utf-8"):
    if not line.strip():
        continue
    r = json.loads(line)
    key = (r["model"], r["batch"])
    if key not in runs:
        runs[key] = {}
        order.append(key)
    runs[key][r["config"]] = r

def train(r):
    return (r or {}).get("bench", {}).get("train") if r and r.get("status") == "ok" else None

def layer_times(t):
    rows = {}
    for l in t.get("per_layer", {}).get("layers", []):
        rows[l["name"]] = (l["kind"], l.get("forward_ms"), l.get("backward_ms"))
    rows["(update)"] = (t.get("optimizer", "optimizer"), None, t.get("per_layer", {}).get("update_ms"))
    return rows

for key in order:
    model, batch = key
    cfgs = runs[key]
    base = train(cfgs.get("all on"))
    print(f"\n#### {model}, batch {batch}\n")
    print("| configuration | samples/s | x all-on | step ms |")
    print("|---|---:|---:|---:|")
    for name, r in cfgs.items():
        t = train(r)
        if not t:
            print(f"| {name} | {r.get('status')}: {r.get('reason', '')} | | |")
            continue
        sps, step = t.get("samples_per_second"), t.get("step_ms")
        ratio = f"{sps / base['samples_per_second']:.3f}" if base and sps and base.get("samples_per_second") else "-"
        # The run's own record of what was off, so a mislabelled run shows.
        off = ",".join(t.get("levers_off", [])) or "none off"
        if t.get("cuda_graph"):
            off += "; " + t["cuda_graph"].replace("|", "/")
        print(f"| {name} ({off}) | {sps:,.0f} | {ratio} | {ms(step)} |")
    if not base or "per_layer" not in base:
        print("\n(no per-layer table: the all-on run did not finish)")
        continue
    on = layer_times(base)
    print(f"\nPer layer, ms, all on beside the configuration (the CUDA Graph's steps are timed "
          "whole: --per-layer steps run plainly)\n")
    print("| configuration | layer | kind | forward on | forward off | backward on | backward off |")
    print("|---|---|---|---:|---:|---:|---:|")
    for name, r in cfgs.items():
        if name not in touches:
            continue
        t = train(r)
        if not t or "per_layer" not in t:
            continue
        off = layer_times(t)
        kinds = touches.get(name)
        for layer, (kind, f_on, b_on) in on.items():
            if layer == "(update)":
                if name not in ("without multi-tensor", "no-fuse"):
                    continue
            elif kinds is not None and not kind.startswith(kinds):
                continue
            _, f_off, b_off = off.get(layer, (kind, None, None))
            print(f"| {name} | {layer} | {kind} | {ms(f_on)} | {ms(f_off)} | {ms(b_on)} | {ms(b_off)} |")
EOF
}

if [ -n "$replay" ]; then
  [ -f "$replay" ] || usage_error "-r: no results file '$replay'"
  tables "$replay"
  exit $?
fi

build=${BUILD:-build}
trainer=${TRAINER:-$build/trainer}
if [ "$dry" = 1 ]; then
  echo "levers_gpu.sh dry run: ${#configs[@]} runs per model, each under ${timeout_s} s, ${budget} s in all"
  for model in $models; do
    for config in "${configs[@]}"; do
      echo "$trainer bench train models/$model.model --device $device --batch $batch --per-layer --json ${config#*|}  # ${config%%|*}"
    done
  done
  exit 0
fi
[ -x "$trainer" ] || { echo "levers_gpu.sh: no trainer at $trainer (set TRAINER or BUILD)" >&2; exit 1; }
command -v timeout >/dev/null || { echo "levers_gpu.sh: timeout (coreutils) is needed" >&2; exit 1; }
command -v "$python" >/dev/null || { echo "levers_gpu.sh: python3 is needed for the results" >&2; exit 1; }
results=${results:-$(mktemp --suffix=.jsonl "${TMPDIR:-/tmp}/levers-gpu.XXXXXX")}
log=${results%.jsonl}.log
: >"$results"
: >"$log"
# record STATUS REASON [BENCH_JSON_FILE]: one line of the results for $model, $batch, $name.
record() {
  "$python" - "$model" "$batch" "$name" "$1" "$2" "${3:-}" >>"$results" <<'EOF'
import json, sys
model, batch, name, status, reason, path = sys.argv[1:7]
r = {"model": model, "batch": int(batch), "config": name, "status": status}
if reason:
    r["reason"] = reason
if path:
    r["bench"] = json.load(open(path, encoding="utf-8"))
print(json.dumps(r))
EOF
}
start=$SECONDS
bad=0
for model in $models; do
  for config in "${configs[@]}"; do
    name=${config%%|*}
    read -r -a extra <<<"${config#*|}"
    left=$((budget - (SECONDS - start)))
    if [ "$left" -lt "$timeout_s" ]; then
      echo "skip: $model $name: ${left} s of the budget left, under the ${timeout_s} s timeout" >&2
      record skipped "${left} s of the ${budget} s budget left"
      bad=1
      continue
    fi
    cmd=("$trainer" bench train "models/$model.model" --device "$device" --batch "$batch"
      --per-layer --json "${extra[@]}")
    echo "run: ${cmd[*]}" >&2
    echo "== ${cmd[*]}" >>"$log"
    out=$(mktemp "${TMPDIR:-/tmp}/levers-run.XXXXXX")
    rc=0
    timeout "$timeout_s" "${cmd[@]}" >"$out" 2>>"$log" || rc=$?
    cat "$out" >>"$log"
    if [ "$rc" -eq 0 ]; then
      record ok "" "$out" 2>>"$log" || { record failed "its output did not parse as JSON"; bad=1; }
    elif [ "$rc" -eq 124 ]; then
      record failed "timed out after ${timeout_s} s"
      bad=1
    else
      record failed "exit $rc (see $(basename "$log"))"
      bad=1
    fi
    rm -f "$out"
  done
done
table_file=${results%.jsonl}.md
tables "$results" | tee "$table_file" || bad=1
echo "results: $results; log: $log; tables: $table_file" >&2
if [ -n "${OUT:-}" ]; then
  cp "$results" "$log" "$table_file" "$OUT"/
  echo "copied to \$OUT: $(basename "$results") $(basename "$log") $(basename "$table_file")" >&2
fi
exit "$bad"

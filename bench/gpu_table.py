#!/usr/bin/env python3
"""The GPU tables of docs/benchmarks.md, made from the results files that GPU runs leave in
bench/results/DATE-GPU/ folders (bench/compare_gpu.sh: compare-gpu.tsv; bench/
time_to_accuracy.sh: race.tsv). Standard library only, so that the tables can be made, and
tested, on a machine without a GPU or PyTorch (tests/e2e/compare_gpu_table.sh).

usage: gpu_table.py [--markdown] RESULTS.tsv [RESULTS.tsv...]
       gpu_table.py --write FILE [--summary] [--results DIR]
       gpu_table.py --accuracy-records LOG

  (no option)    the text tables of the given files, for the terminal
  --markdown     the same as the markdown of one folder
  --write FILE   FILE's generated block (between its two marker lines) replaced by the tables
                 of every folder under DIR (default bench/results), newest first, each named
                 by its folder; FILE must hold exactly one begin and one end marker, in that
                 order. With no folder, the block says that no GPU run has results yet.
  --summary      with --write: the short form, for a README: the newest folder's rows
                 (trainer, PyTorch's best column, the ratio) and its race, naming the folder
  --accuracy-records LOG   the accuracy records of tests/gpu/precision_train.sh's output

Several results files are read as one, in order; a later measurement of the same cell
replaces an earlier one (so a run split over two commands makes one table).

A results file is tab-separated text, one record per line, '#' lines ignored:
  meta      KEY VALUE                        date, command, gpu, driver, trainer_libraries,
                                             pytorch, commit, ...
  run       MODEL BATCH PRECISION SIDE SAMPLES_PER_S TEST_ACC FIRST_EPOCH_S NOTE
            SIDE: trainer, eager, compile or graphs; '-' for a figure not measured, and NOTE
            says why (failed, timed out, skipped, not run)
  gemm      PRECISION MxNxK TFLOPS NOTE        from `trainer bench gemm --json`
  accuracy  MODEL PRECISION TEST_ACC FP32_TEST_ACC   from tests/gpu/precision_train.sh
  step      NAME RESULT SECONDS SAMPLES_PER_S TEST_ACC DETAIL   scripts/gpu-check.sh's rows
  race      MODEL TARGET SIDE SEED SECONDS EPOCH TEST_ACC NOTE   from time_to_accuracy.sh:
            SECONDS from the process start to the end of the epoch that reached TARGET
            ('-' when none did; NOTE says why)

The ratio of each row is trainer's samples/s over the best PyTorch column of that row (the
highest of eager, compile and graphs measured), and the table names that column.

Exit: 0, 1 for a results file or FILE that cannot be read or written (said on stderr).
"""
import os
import re
import sys

BEGIN = "<!-- gpu_table.py: GPU results begin"
END = "<!-- gpu_table.py: GPU results end"
SIDES = ("trainer", "eager", "compile", "graphs", "reduce-overhead")
SIDE_NAMES = {"trainer": "trainer", "eager": "PyTorch eager", "compile": "torch.compile",
              "graphs": "CUDA graph", "reduce-overhead": "compile, reduce-overhead"}
SIDE_SHORT = {"trainer": "trainer", "eager": "eager", "compile": "compile", "graphs": "graph",
              "reduce-overhead": "reduce-ovh"}
HERE = os.path.dirname(os.path.abspath(__file__))

PYTORCH_SIDES = ("eager", "compile", "graphs", "reduce-overhead")
# Always in the samples table; reduce-overhead (an optional column) only where measured.
SHOWN_SIDES = ("trainer", "eager", "compile", "graphs")
RESULTS_DIR = os.path.join(HERE, "results")
# What a folder's tables are made from, in this order.
RESULT_FILES = ("gpu-check.tsv", "compare-gpu.tsv", "race.tsv")

# Issue 33's thresholds: (model, batch, precisions, least trainer / best PyTorch column).
# The batch thresholds hold at equal precision on both sides; trainer's default is TF32, so
# they are read on the tf32 rows (and fp32 ones, a run with -f).
RATIO_TARGETS = (
    ("mlp", 128, ("tf32", "fp32"), 2.0),
    ("lenet", 128, ("tf32", "fp32"), 2.0),
    ("cnn-bn", 128, ("tf32", "fp32"), 2.0),
    ("lenet", 1024, ("tf32", "fp32"), 1.3),
    ("cnn-bn", 1024, ("tf32", "fp32"), 1.3),
    ("wide-mlp", 4096, ("bf16",), 1.1),
)
# The wide MLP in bf16 at batch 4096 reaches this share of the card's best bf16 GEMM rate
# (`trainer bench gemm`), counting the training FLOPs derived from the model file.
GEMM_SHARE_TARGET = ("wide-mlp", 4096, "bf16", 0.80)
# Time to accuracy: trainer's median at most this share of the best PyTorch column's.
RACE_TARGET = 0.5
# bf16 and fp16 training reach fp32's test accuracy less at most this much (0.5 points).
ACCURACY_SLACK = 0.005


class Results:
    def __init__(self):
        self.meta = {}
        self.runs = {}        # (model, batch, precision) -> {side: {samples, acc, first, note}}
        self.gemm = {}        # (precision, size) -> (tflops or None, note)
        self.accuracy = {}    # model -> {precision: (acc, fp32 acc)}
        self.race = {}        # (model, target) -> {side: {seed: (seconds, epoch, acc, note)}}
        self.steps = []       # gpu-check.sh's rows: [name, result, seconds, detail]

    def read(self, path):
        try:
            with open(path, encoding="utf-8") as f:
                lines = f.read().splitlines()
        except OSError as error:
            raise SystemExit(f"gpu_table.py: cannot read {path}: {error.strerror}")
        for number, line in enumerate(lines, 1):
            if not line.strip() or line.startswith("#"):
                continue
            fields = line.split("\t")
            try:
                self.record(fields)
            except (ValueError, IndexError) as error:
                raise SystemExit(f"gpu_table.py: {path}:{number}: cannot read the record "
                                 f"{line!r}: {error}")

    def record(self, f):
        kind = f[0]
        if kind == "meta":
            self.meta[f[1]] = f[2] if len(f) > 2 else ""
        elif kind == "run":
            model, batch, precision, side = f[1], int(f[2]), f[3], f[4]
            if side not in SIDES:
                raise ValueError(f"side {side!r} is none of {', '.join(SIDES)}")
            self.runs.setdefault((model, batch, precision), {})[side] = {
                "samples": number(f[5], int), "acc": number(f[6], float),
                "first": number(f[7], float), "note": f[8] if len(f) > 8 else ""}
        elif kind == "gemm":
            self.gemm[(f[1], f[2])] = (number(f[3], float), f[4] if len(f) > 4 else "")
        elif kind == "accuracy":
            self.accuracy.setdefault(f[1], {})[f[2]] = (number(f[3], float),
                                                       number(f[4], float))
        elif kind == "step":
            self.steps.append([f[1], f[2], f[3] if len(f) > 3 else "",
                               f[6] if len(f) > 6 else ""])
        elif kind == "race":
            model, target, side, seed = f[1], float(f[2]), f[3], int(f[4])
            if side not in SIDES:
                raise ValueError(f"side {side!r} is none of {', '.join(SIDES)}")
            self.race.setdefault((model, target), {}).setdefault(side, {})[seed] = (
                number(f[5], float), number(f[6], int), number(f[7], float),
                f[8] if len(f) > 8 else "")
        else:
            raise ValueError(f"unknown record kind {kind!r}")

    def figure(self, key, side):
        return self.runs.get(key, {}).get(side, {}).get("samples")

    def best(self, key):
        """(samples/s, side) of the fastest PyTorch column measured on row KEY, or (None,
        None)."""
        figures = [(self.figure(key, side), side) for side in PYTORCH_SIDES
                   if self.figure(key, side)]
        return max(figures) if figures else (None, None)

    def ratio(self, key, side="best"):
        ours = self.figure(key, "trainer")
        theirs = self.best(key)[0] if side == "best" else self.figure(key, side)
        return ours / theirs if ours and theirs else None

    def best_gemm(self, precision):
        """The highest TFLOP/s measured at PRECISION, and its size; (None, None) if none."""
        rows = [(t, size) for (p, size), (t, _) in self.gemm.items() if p == precision and t]
        return max(rows) if rows else (None, None)


def number(text, kind):
    return None if text in ("", "-") else kind(text)


# ---- what a model trains per sample ------------------------------------------------------

def training_flops(model):
    """FLOPs of one sample's training step for a model file of dense layers only, or None.
    A dense layer of IN inputs and OUT units is an IN x OUT GEMM per sample: forward 2*IN*OUT
    (a multiply and an add per weight), backward 2*IN*OUT for the weights' gradient and
    2*IN*OUT for the inputs' gradient, except in the first layer, whose input is the data
    and needs none (neither trainer nor PyTorch computes it). Biases, activations, the loss
    and Adam are O(IN + OUT) per sample or O(weights) per step: under 0.1% here, left out.
    wide-mlp: 6 * 36,806,656 - 2 * 784 * 4096 = 214,417,408 per sample."""
    path = os.path.join(HERE, "..", "models", f"{model}.model")
    try:
        with open(path, encoding="utf-8") as f:
            lines = [line.split("#")[0].split() for line in f]
    except OSError:
        return None
    width, total, first = None, 0, True
    for words in filter(None, lines):
        attrs = dict(w.split("=", 1) for w in words[1:] if "=" in w)
        if words[0] == "input":
            shape = attrs.get("shape", "")
            if not shape.isdigit():
                return None  # images: convolutions are not counted here
            width = int(shape)
        elif words[0] == "dense":
            if width is None or not attrs.get("units", "").isdigit():
                return None
            units = int(attrs["units"])
            total += (4 if first else 6) * width * units
            width, first = units, False
        elif words[0] in ("dropout", "loss", "optimizer", "train", "schedule"):
            continue
        else:
            return None
    return total or None


# ---- targets ----------------------------------------------------------------------------

def targets(results, key):
    """[(text, state)] for the row KEY; state is 'met', 'not met' or 'not measured'."""
    model, batch, precision = key
    out = []
    for t_model, t_batch, t_precisions, least in RATIO_TARGETS:
        if (model, batch) != (t_model, t_batch) or precision not in t_precisions:
            continue
        ratio = results.ratio(key)
        text = f">= {least:g}x PyTorch's best"
        if ratio is None:
            out.append((text, "not measured"))
        else:
            out.append((text, "met" if ratio >= least else f"not met ({ratio:.2f}x)"))
    share = gemm_share(results, key)
    if (model, batch, precision) == GEMM_SHARE_TARGET[:3]:
        least = GEMM_SHARE_TARGET[3]
        text = f">= {least:.0%} of bf16 GEMM"
        if share is None:
            out.append((text, "not measured"))
        else:
            out.append((text, "met" if share >= least else f"not met ({share:.0%})"))
    return out


def gemm_share(results, key, side="trainer"):
    """SIDE's training TFLOP/s on row KEY over the best GEMM TFLOP/s at its precision."""
    model, _, precision = key
    flops, samples = training_flops(model), results.figure(key, side)
    best, _ = results.best_gemm(precision)
    if not (flops and samples and best):
        return None
    return samples * flops / 1e12 / best


def target_cell(items):
    return "; ".join(f"{text}: {state}" for text, state in items)


def accuracy_rows(results):
    """[(model, fp32, {precision: (acc, difference, state)})]."""
    rows = []
    for model, by_precision in results.accuracy.items():
        reference = next((r for _, r in by_precision.values() if r is not None), None)
        if "fp32" in by_precision and by_precision["fp32"][0] is not None:
            reference = by_precision["fp32"][0]
        cells = {}
        for precision in ("bf16", "fp16"):
            acc = by_precision.get(precision, (None, None))[0]
            if acc is None or reference is None:
                cells[precision] = (acc, None, "not measured")
                continue
            difference = round(acc - reference, 6)  # 4-digit accuracies: no float residue
            state = "met" if difference >= -ACCURACY_SLACK else "not met"
            cells[precision] = (acc, difference, state)
        rows.append((model, reference, cells))
    return rows


def median(values):
    values = sorted(values)
    if not values:
        return None
    middle = len(values) // 2
    return values[middle] if len(values) % 2 else (values[middle - 1] + values[middle]) / 2


def race_medians(results, key):
    """{side: (median seconds or None, seeds reached, seeds run)} for race KEY. A side with a
    seed that did not reach the target has no median: its time is unknown, not short."""
    out = {}
    for side, seeds in results.race.get(key, {}).items():
        times = [t for t, _, _, _ in seeds.values() if t is not None]
        out[side] = (median(times) if len(times) == len(seeds) else None, len(times), len(seeds))
    return out


def race_best(medians):
    """(median seconds, side) of the fastest PyTorch column, or (None, None)."""
    timed = [(m[0], side) for side, m in medians.items() if side != "trainer" and m[0]]
    return min(timed) if timed else (None, None)


def race_target(results, key):
    medians = race_medians(results, key)
    ours = medians.get("trainer", (None,))[0]
    best, _ = race_best(medians)
    text = f"<= {RACE_TARGET:g}x PyTorch's best"
    if not (ours and best):
        return text, "not measured"
    share = ours / best
    return text, "met" if share <= RACE_TARGET else f"not met ({share:.2f}x)"


def all_targets(results):
    items = [t for key in results.runs for t in targets(results, key)]
    items += [race_target(results, key) for key in results.race]
    for _, _, cells in accuracy_rows(results):
        items += [("accuracy", state) for _, _, state in cells.values()]
    met = sum(1 for _, state in items if state == "met")
    unmeasured = sum(1 for _, state in items if state == "not measured")
    return met, len(items) - met - unmeasured, unmeasured


# ---- formatting ----------------------------------------------------------------------------

def grouped(value):
    return "" if value is None else f"{value:,}"


def fixed(value, digits=2):
    return "" if value is None else f"{value:.{digits}f}"


def cell_note(run):
    """A missing figure's reason, shortened for a table cell."""
    return run.get("note", "") if run else ""


def samples_cell(results, key, side, markdown):
    run = results.runs.get(key, {}).get(side)
    if run and run["samples"] is not None:
        return grouped(run["samples"]) if markdown else str(run["samples"])
    note = cell_note(run)
    if not note:
        return ""
    return note if markdown else "-"


def accuracy_cell(results, key):
    ours = results.runs.get(key, {}).get("trainer", {}).get("acc")
    side = results.best(key)[1] or "eager"
    theirs = results.runs.get(key, {}).get(side, {}).get("acc")
    if ours is None and theirs is None:
        return ""
    return f"{fixed(ours, 4) or '-'} / {fixed(theirs, 4) or '-'}"


def markdown_table(header, rows):
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for row in rows:
        cells = [str(c).replace("|", "\\|") for c in row]
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def pytorch_versions(text):
    """'versions torch=2.11.0 cuda=13.0 ... gpu=NVIDIA H100 80GB HBM3' -> dict."""
    return dict(re.findall(r"(\w+)=(.*?)(?= \w+=|$)", text or ""))


def library_versions(text):
    """trainer --version's 'CUDA runtime 13.0, driver 13.0, cuBLAS 13.1.0, ...' -> dict."""
    found = {}
    for part in (text or "").split(","):
        words = part.split()
        if len(words) >= 2:
            found[" ".join(words[:-1])] = words[-1]
    return found


def versions_rows(results):
    m = results.meta
    torch = pytorch_versions(m.get("pytorch"))
    libraries = library_versions(m.get("trainer_libraries"))
    cudnn = torch.get("cudnn", "")
    if cudnn.isdigit() and len(cudnn) >= 5:  # 91900 -> 9.19.0
        cudnn = f"{int(cudnn) // 10000}.{int(cudnn) // 100 % 100}.{int(cudnn) % 100}"
    def both(ours, theirs):  # "" when neither is known, so the row is left out
        return " / ".join(x or "?" for x in (ours, theirs)) if ours or theirs else ""
    rows = [
        ("GPU", m.get("gpu", "unknown")),
        ("driver", m.get("driver", "unknown")),
        ("CUDA, trainer / PyTorch", both(libraries.get("CUDA runtime"), torch.get("cuda"))),
        ("cuDNN, trainer / PyTorch", both(libraries.get("cuDNN"), cudnn or None)),
        ("cuBLAS, trainer", libraries.get("cuBLAS", "?")),
        ("PyTorch", torch.get("torch", m.get("pytorch", "not run"))),
        ("Triton, Python", both(torch.get("triton"), torch.get("python"))),
        ("trainer", f"commit {m.get('commit', '?')}"),
        ("trainer's steps", m.get("trainer_cuda_graph", "")),
        ("date", m.get("date", "?")),
        ("run", m.get("run", "")),
    ]
    return [(k, v) for k, v in rows if v]


def run_keys(results):
    return list(results.runs)


def table_sides(results):
    """The sides of the samples table: SHOWN_SIDES, and any other side a row measured."""
    present = {side for sides in results.runs.values() for side in sides}
    return [side for side in SIDES if side in SHOWN_SIDES or side in present]


def samples_header(results):
    return (["model", "batch", "precision"] + [SIDE_NAMES[s] for s in table_sides(results)] +
            ["best PyTorch", "x best", "test acc, trainer / best", "target"])


def samples_rows(results, markdown):
    rows = []
    for key in run_keys(results):
        model, batch, precision = key
        best, side = results.best(key)
        rows.append([model, batch, precision] +
                    [samples_cell(results, key, side_, markdown)
                     for side_ in table_sides(results)] +
                    [SIDE_NAMES[side] if side else "", fixed(results.ratio(key)),
                     accuracy_cell(results, key), target_cell(targets(results, key))])
    return rows


def race_rows(results):
    """One row per race and side: each seed's seconds (epoch), the median, the ratio."""
    rows = []
    for key in results.race:
        model, target = key
        medians = race_medians(results, key)
        best, best_side = race_best(medians)
        for side in SIDES:
            seeds = results.race[key].get(side)
            if not seeds:
                continue
            cells = []
            for seed in sorted(seeds):
                seconds, epoch, acc, note = seeds[seed]
                cells.append(f"{seconds:.1f} (epoch {epoch})" if seconds is not None
                             else (note or "not reached"))
            middle, reached, ran = medians[side]
            notes = {note.split(":")[0] for _, _, _, note in seeds.values()}
            summary = "skipped" if notes == {"skipped"} else f"{reached} of {ran} reached"
            mark = " (best)" if side == best_side else ""
            ratio = fixed(middle / best) if middle and best else ""
            verdict = target_cell([race_target(results, key)]) if side == "trainer" else ""
            rows.append([model, f"{target:.4f}", SIDE_NAMES[side] + mark, "; ".join(cells),
                         fixed(middle, 1) if middle else summary,
                         ratio, verdict])
    return rows


def wide_rows(results):
    """Every dense-only row at batch >= 1024 with its TFLOP/s: the GEMM-bound comparison."""
    rows = []
    for key in run_keys(results):
        flops = training_flops(key[0])
        if not flops or key[1] < 1024 or key[0] == "mlp":
            continue
        best, size = results.best_gemm(key[2])
        for side in SIDES:
            samples = results.figure(key, side)
            if samples is None:
                continue
            share = gemm_share(results, key, side)
            rows.append([f"{key[0]} {key[2]}", SIDE_NAMES[side], grouped(samples),
                         tflops(samples * flops / 1e12),
                         f"{share:.0%} of {best:.0f} at {size}" if share else ""])
    return rows


def gemm_rows(results):
    return [[p, size, tflops(t), note] for (p, size), (t, note) in results.gemm.items()]


def tflops(value):
    """A GPU's hundreds of TFLOP/s to one decimal; a CPU's hundredths (a dry run) readable."""
    if not value:
        return ""
    return f"{value:.1f}" if value >= 10 else f"{value:.2g}"


def accuracy_table_rows(results):
    rows = []
    for model, reference, cells in accuracy_rows(results):
        row = [model, fixed(reference, 4) or "-"]
        for precision in ("bf16", "fp16"):
            acc, difference, state = cells[precision]
            row.append(f"{fixed(acc, 4)} ({difference * 100:+.2f})" if difference is not None
                       else "-")
            row.append(state)
        rows.append(row)
    return rows


RACE_HEADER = ["model", "target test acc", "side", "each seed: seconds (epoch reached)",
               "median s", "x best PyTorch", "target"]


def markdown_tables(results):
    """The markdown of one results file (or several read as one): the command, the versions,
    then each table it has data for."""
    m = results.meta
    out = ["```", m.get("command", "bash bench/compare_gpu.sh"), "```", ""]
    if results.steps:  # gpu-check.sh: its steps; the versions are in versions.txt
        out += markdown_table(["step", "result", "seconds", "detail"], results.steps)
        failed = sum(1 for row in results.steps if row[1] == "FAIL")
        ran = sum(1 for row in results.steps if row[1] != "SKIP")
        out += ["", f"{failed} of {ran} steps failed (SKIP: not run here, and no failure).",
                ""]
        return out
    out += markdown_table(["", ""], versions_rows(results))
    out.append("")
    if results.runs:
        out += markdown_table(samples_header(results), samples_rows(results, True))
        out.append("")
        out.append(f"samples/s, best epoch of {m.get('epochs', '?')} (the first, with its "
                   "warm-up and compilation, is almost never the best); x best = trainer / "
                   "the best PyTorch column of the row (above 1: trainer is faster). Test "
                   "accuracy after the last epoch.")
        out.append("")
    wide = wide_rows(results)
    if wide:
        out += markdown_table(["model", "side", "samples/s", "TFLOP/s", "share of the best GEMM "
                               "(`trainer bench gemm` TFLOP/s, size)"], wide)
        out.append("")
        flops = training_flops("wide-mlp")
        if flops:
            out.append(f"TFLOP/s = samples/s x {flops:,} FLOPs per sample, the training step of "
                       "models/wide-mlp.model derived from its layer sizes (bench/gpu_table.py, "
                       "`training_flops`).")
            out.append("")
    if results.gemm:
        out += markdown_table(["GEMM precision", "size", "TFLOP/s", "note"], gemm_rows(results))
        out.append("")
    if results.accuracy:
        out += markdown_table(["model", "fp32 test acc", "bf16 (points)", "bf16 target",
                               "fp16 (points)", "fp16 target"], accuracy_table_rows(results))
        out.append("")
        out.append("tests/gpu/precision_train.sh, full Fashion-MNIST, the model files' batch, "
                   f"{m.get('accuracy_epochs', '?')} epochs; target: fp32's test accuracy "
                   "less at most 0.5 points.")
        out.append("")
    if results.race:
        out += markdown_table(RACE_HEADER, race_rows(results))
        out.append("")
        out.append("Time to accuracy: seconds from the process start to the end of the first "
                   "epoch whose test accuracy reaches the target (data loading, compilation and "
                   "every evaluation included), median of the seeds; both sides train the "
                   "model file's recipe (optimizer, batch, no augmentation) up to "
                   f"{m.get('max_epochs', '?')} epochs.")
        out.append("")
    met, missed, unmeasured = all_targets(results)
    out.append(f"Targets: {met} met, {missed} not met, {unmeasured} not measured. Reported, "
               "never asserted: a benchmark is not a test.")
    out.append("")
    return out


def markdown(results):
    """The generated block of RESULTS alone, markers included."""
    return "\n".join(marker_begin() + markdown_tables(results) + [f"{END} -->"]) + "\n"


def marker_begin(command="python3 bench/gpu_table.py --write docs/benchmarks.md"):
    return [f"{BEGIN}; `{command}` replaces everything up to the end marker with the tables "
            "of bench/results/ -->", ""]


def folder_results(folder):
    """[(file name, Results)] for each results file of FOLDER, in RESULT_FILES' order."""
    out = []
    for name in RESULT_FILES:
        path = os.path.join(folder, name)
        if os.path.exists(path):
            results = Results()
            results.read(path)
            out.append((name, results))
    return out


def results_block(root):
    """The generated block of every folder under ROOT: newest (by name, DATE-GPU) first."""
    try:
        names = sorted((n for n in os.listdir(root) if os.path.isdir(os.path.join(root, n))),
                       reverse=True)
    except OSError:
        names = []
    out = marker_begin()
    shown = 0
    for name in names:
        files = folder_results(os.path.join(root, name))
        if not files:
            continue
        shown += 1
        out += [f"#### bench/results/{name}", ""]
        for file_name, results in files:
            out += [f"From `bench/results/{name}/{file_name}`:", ""]
            out += markdown_tables(results)
    if not shown:
        out += ["No GPU run has its results in bench/results/ yet: no GPU figure is quoted "
                "here until one does.", ""]
    out.append(f"{END} -->")
    return "\n".join(out) + "\n"


def summary_block(root):
    """The short block: the newest folder with comparison or race results, in one table."""
    try:
        names = sorted((n for n in os.listdir(root) if os.path.isdir(os.path.join(root, n))),
                       reverse=True)
    except OSError:
        names = []
    out = marker_begin("python3 bench/gpu_table.py --write README.md --summary")
    for name in names:
        files = dict(folder_results(os.path.join(root, name)))
        if not files:
            continue
        rows = []
        for file_name in RESULT_FILES:
            results = files.get(file_name)
            if results is None:
                continue
            for key in results.runs:
                best, side = results.best(key)
                ours = results.figure(key, "trainer")
                rows.append([f"{key[0]}, batch {key[1]}, {key[2]}", "samples/s",
                             grouped(ours) or "-", grouped(best) or "-",
                             SIDE_NAMES[side] if side else "", fixed(results.ratio(key))])
            for key in results.race:
                medians = race_medians(results, key)
                best, side = race_best(medians)
                ours = medians.get("trainer", (None,))[0]
                rows.append([f"{key[0]} to {key[1]:.1%} test accuracy", "seconds (median)",
                             fixed(ours, 1) or "-", fixed(best, 1) or "-",
                             SIDE_NAMES[side] if side else "",
                             fixed(ours / best) if ours and best else ""])
        if not rows:  # gpu-check.sh's steps alone: no figure for the summary
            continue
        out += markdown_table(["", "figure", "trainer", "PyTorch's best", "its column",
                               "trainer / best"], rows)
        out += ["", f"From bench/results/{name}/ (docs/benchmarks.md has every table and "
                "how they were measured).", ""]
        break
    else:
        out += ["No GPU run has its results in bench/results/ yet.", ""]
    out.append(f"{END} -->")
    return "\n".join(out) + "\n"


def text(results):
    """The same tables for a terminal: figures without separators, one row a line."""
    sides = table_sides(results)
    widths = [10, 6, 5] + [10] * len(sides) + [14, 7, 15]
    header = (["model", "batch", "prec"] + [SIDE_SHORT[s] for s in sides] +
              ["best PyTorch", "x best", "acc ours/best", "target"])
    lines = [" ".join(h.rjust(w) if i > 2 else h.ljust(w) for i, (h, w) in
                      enumerate(zip(header, widths + [0])))] if results.runs else []
    last = len(widths)  # the target column, unpadded
    for row in samples_rows(results, False):
        cells = [str(c) if c != "" else "-" for c in row[:last]]
        cells[last - 1] = cells[last - 1].replace(" / ", "/")
        lines.append(" ".join(c.rjust(w) if i > 2 else c.ljust(w)
                              for i, (c, w) in enumerate(zip(cells, widths))) +
                     ("  " + row[last] if row[last] else ""))
    for key, sides in results.runs.items():
        for side, run in sides.items():
            if run["samples"] is None and run["note"]:
                lines.append(f"  {key[0]} {key[1]} {key[2]} {side}: {run['note']}")
    for model, side, samples, tflops, share in wide_rows(results):
        lines.append(f"{model}, {side}: {samples} samples/s, {tflops} TFLOP/s"
                     f"{', ' + share + ' (GEMM TFLOP/s)' if share else ''}")
    for row in gemm_rows(results):
        lines.append("gemm: " + "  ".join(c for c in row if c))
    for row in accuracy_table_rows(results):
        lines.append(f"accuracy: {row[0]} fp32 {row[1]}, bf16 {row[2]} {row[3]}, "
                     f"fp16 {row[4]} {row[5]}")
    for model, target, side, seeds, middle, ratio, verdict in race_rows(results):
        lines.append(f"race {model} to {target}: {side}: {seeds}; median {middle}"
                     f"{', x best ' + ratio if ratio else ''}{'  ' + verdict if verdict else ''}")
    met, missed, unmeasured = all_targets(results)
    lines.append(f"targets: {met} met, {missed} not met, {unmeasured} not measured")
    return "\n".join(lines) + "\n"


# ---- the generated block in a markdown file -----------------------------------------------

def block_span(lines, path):
    """(begin, end) line indexes of the generated block; SystemExit unless exactly one."""
    begins = [i for i, line in enumerate(lines) if line.startswith(BEGIN)]
    ends = [i for i, line in enumerate(lines) if line.startswith(END)]
    if len(begins) != 1 or len(ends) != 1 or begins[0] > ends[0]:
        raise SystemExit(f"gpu_table.py: {path} needs exactly one line starting '{BEGIN}' and "
                         f"one starting '{END}' after it (found {len(begins)} and {len(ends)}"
                         f"{', in the wrong order' if begins and ends and begins[0] > ends[0] else ''}"
                         "); put them where the table belongs")
    return begins[0], ends[0]


def write(path, block):
    try:
        with open(path, encoding="utf-8") as f:
            lines = f.read().split("\n")
    except OSError as error:
        raise SystemExit(f"gpu_table.py: cannot read {path}: {error.strerror}")
    begin, end = block_span(lines, path)
    new = lines[:begin] + block.rstrip("\n").split("\n") + lines[end + 1:]
    try:  # a whole new file, then a rename: a failed write leaves the old one
        with open(path + ".tmp", "w", encoding="utf-8") as f:
            f.write("\n".join(new))
        os.replace(path + ".tmp", path)
    except OSError as error:
        raise SystemExit(f"gpu_table.py: cannot write {path}: {error.strerror}")


# precision_train.sh's verdicts (tests/e2e/common.bash's pass and fail):
#   "ok   - mlp bf16 test accuracy 0.8812 reaches fp32's 0.8830 less 0.5 points (0 steps skipped)"
#   "FAIL - mlp fp16 test accuracy 0.8702 below fp32's 0.8830 less 0.5 points"
# and, before 25dc9d9, "... test accuracy 0.8812 within 0.5 points of fp32's 0.8830". Each
# carries both accuracies; the table judges them itself (fp32's less at most 0.5 points).
# tests/e2e/compare_gpu_table.sh runs precision_train.sh itself to keep the two in step.
ACCURACY_LINE = re.compile(r"^(?:ok   |FAIL )- ([a-z0-9-]+) (bf16|fp16) test accuracy "
                           r"([0-9.]+) (?:reaches|below|within 0\.5 points of) fp32's ([0-9.]+)")


def accuracy_records(path):
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            lines = f.read().splitlines()
    except OSError as error:
        raise SystemExit(f"gpu_table.py: cannot read {path}: {error.strerror}")
    return "".join("accuracy\t%s\t%s\t%s\t%s\n" % m.groups()
                   for m in map(ACCURACY_LINE.match, lines) if m)


def main(argv):
    mode, target, paths, root, short = "text", None, [], RESULTS_DIR, False
    i = 0
    while i < len(argv):
        if argv[i] == "--markdown":
            mode = "markdown"
        elif argv[i] == "--write" and i + 1 < len(argv):
            mode, target = "write", argv[i + 1]
            i += 1
        elif argv[i] == "--summary":
            short = True
        elif argv[i] == "--results" and i + 1 < len(argv):
            root = argv[i + 1]
            i += 1
        elif argv[i] == "--accuracy-records" and i + 1 < len(argv):
            sys.stdout.write(accuracy_records(argv[i + 1]))
            return 0
        elif argv[i] in ("-h", "--help"):
            print(__doc__)
            return 0
        elif argv[i].startswith("-"):
            raise SystemExit(f"gpu_table.py: unknown option {argv[i]!r} (--markdown, --write "
                             "FILE, --results DIR)")
        else:
            paths.append(argv[i])
        i += 1
    if mode == "write":
        if paths:
            raise SystemExit("gpu_table.py: --write takes the tables of bench/results/ "
                             "(--results DIR for another folder), not results files")
        write(target, summary_block(root) if short else results_block(root))
        print(f"gpu_table.py: wrote the generated block of {target} from {root}")
        return 0
    if not paths:
        raise SystemExit("gpu_table.py: no results file given (compare_gpu.sh -o writes one)")
    results = Results()
    for path in paths:
        results.read(path)
    sys.stdout.write(text(results) if mode == "text" else markdown(results))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

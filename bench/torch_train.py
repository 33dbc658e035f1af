#!/usr/bin/env python3
"""PyTorch side of bench/compare_cpu.sh, bench/compare_gpu.sh and bench/time_to_accuracy.sh:
the same model, data, batch, optimizer (Adam, lr 0.001) and precision as `trainer train`,
written as a user who tunes PyTorch writes it. One run measures one column:

  eager    eager mode, Adam(fused=True) (on the CPU, where fused needs torch 2.4 or newer,
           Adam's multi-tensor `foreach` implementation)
  compile  the whole training step (batch gather, forward, loss, backward, Adam with
           capturable=True) as one function under
           torch.compile(mode="max-autotune-no-cudagraphs") (Dynamo compiles it in pieces
           around backward())
  graphs   the whole step (gather, forward, backward, Adam(fused=True, capturable=True))
           captured once into one CUDA graph (torch.cuda.graph, PyTorch's "whole-network
           capture") and replayed each step; the forward is torch.compile'd (the same mode)
           where torch has torch.compile. torch.compile(mode="reduce-overhead") makes several
           graphs of such a step, split where it calls backward(), so the step is captured
           by hand. Needs a CUDA device.
  reduce-overhead  (optional) the compile column's whole step under
           torch.compile(mode="reduce-overhead"), its pieces replayed as CUDA graphs (CUDA
           graph trees); for comparison with the graph column. Needs a CUDA device.

What every column shares, as trainer does it: the dataset's bytes are put on the device once
(outside the timing); each epoch's order is drawn on the device (torch.randperm with a
device generator), and each batch is gathered and converted there from its slice, so no
index crosses the bus; the loss is read back every 16 steps (--loss-every), as often as
trainer reads it; the epoch's last, smaller batch is trained too (in graphs, by the same step
run uncaptured). The CNNs run channels_last on a GPU (--channels-last auto; on or off to
force it). cuDNN's autotuner (torch.backends.cudnn.benchmark) is on.

Throughput (the default): prints one line `pytorch MODEL batch=B samples/s=X test_acc=Y
column=C ... first_epoch_s=S`. samples/s is the best epoch's over the training steps
(evaluation excluded; timed between two synchronizations); with the default of one epoch that
is the first, warm-up and compilation and all, so comparisons pass --epochs 3.

Time to accuracy (--target-acc A): evaluates on the test set after every epoch, prints
`epoch E/N test_acc=Y` (flushed) and stops after the first epoch that reaches A, or after
--epochs. bench/time_to_accuracy.sh times those lines from the process start.

--precision: fp32 (TF32 off), tf32 (TF32 allowed: the default on a GPU), bf16 (autocast), fp16
(autocast and a GradScaler; not under graphs: the scaler reads its overflow flag on the host).
On the CPU: fp32 only. Weights, gradients and Adam's state stay fp32.

A column that cannot run here (graphs on the CPU, compile without torch.compile) prints
`torch_train.py: skipped: WHY` on stderr and exits 77. --versions prints torch, CUDA, cuDNN,
Triton and the GPU's name, one line, and exits."""
import argparse
import gzip
import os
import sys
import time

try:
    import numpy as np
    import torch
    from torch import nn
except ImportError as error:  # a clear line for compare_*.sh to show, not a traceback
    sys.exit(f"torch_train.py: cannot import {error.name} ({error}); it needs PyTorch and "
             "numpy (pip install torch numpy, or apt-get install python3-torch), or PYTHON= "
             "naming a python that has them")

SKIP = 77
COMPILE_MODE = "max-autotune-no-cudagraphs"


def skip(why):
    print(f"torch_train.py: skipped: {why}", file=sys.stderr)
    sys.exit(SKIP)


def read_idx(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        data = f.read()
    dims = data[3]
    shape = [int.from_bytes(data[4 + 4 * i: 8 + 4 * i], "big") for i in range(dims)]
    return np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * dims).reshape(shape)


def load(folder, split):
    prefix = "train" if split == "train" else "t10k"
    def find(name):
        for candidate in (name, name + ".gz"):
            if os.path.exists(os.path.join(folder, candidate)):
                return os.path.join(folder, candidate)
        raise FileNotFoundError(os.path.join(folder, name))
    images = read_idx(find(f"{prefix}-images-idx3-ubyte"))
    labels = read_idx(find(f"{prefix}-labels-idx1-ubyte"))
    return images, labels


class ResidualBlock(nn.Module):
    """models/resnet-mini.model's block: conv-bn-relu-conv-bn, plus the block's input, relu."""

    def __init__(self, channels):
        super().__init__()
        self.conv1 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(channels)
        self.conv2 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(channels)

    def forward(self, x):
        y = torch.relu(self.bn1(self.conv1(x)))
        return torch.relu(x + self.bn2(self.conv2(y)))


MODELS = ("mlp", "lenet", "cnn-bn", "resnet-mini", "wide-mlp")
FLAT_MODELS = ("mlp", "wide-mlp")  # the others take 1x28x28 images


def build(model):
    """The bundled model files, layer for layer (models/*.model). trainer's batchnorm has
    PyTorch's defaults (momentum 0.1, eps 1e-5); `pad=same` at kernel K is padding K // 2."""
    if model == "mlp":
        return nn.Sequential(nn.Flatten(), nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 128),
                             nn.ReLU(), nn.Linear(128, 10))
    if model == "wide-mlp":
        return nn.Sequential(nn.Flatten(), nn.Linear(784, 4096), nn.ReLU(),
                             nn.Linear(4096, 4096), nn.ReLU(), nn.Linear(4096, 4096), nn.ReLU(),
                             nn.Linear(4096, 10))
    if model == "lenet":
        return nn.Sequential(nn.Conv2d(1, 32, 5, padding=2), nn.ReLU(), nn.MaxPool2d(2),
                             nn.Conv2d(32, 64, 5, padding=2), nn.ReLU(), nn.MaxPool2d(2),
                             nn.Flatten(), nn.Linear(64 * 7 * 7, 256), nn.ReLU(), nn.Dropout(0.5),
                             nn.Linear(256, 10))
    if model == "cnn-bn":
        return nn.Sequential(nn.Conv2d(1, 32, 3, padding=1, bias=False), nn.BatchNorm2d(32),
                             nn.ReLU(), nn.MaxPool2d(2),
                             nn.Conv2d(32, 64, 3, padding=1, bias=False), nn.BatchNorm2d(64),
                             nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(),
                             nn.Linear(64 * 7 * 7, 128), nn.ReLU(), nn.Dropout(0.5),
                             nn.Linear(128, 10))
    if model == "resnet-mini":
        # stem (conv, batchnorm act=relu, pool1), blocks 1 and 2 at 32x14x14, pool2, block 3
        # at 32x7x7, global_avgpool (AdaptiveAvgPool2d(1) + flatten), dense units=10.
        return nn.Sequential(nn.Conv2d(1, 32, 3, padding=1, bias=False), nn.BatchNorm2d(32),
                             nn.ReLU(), nn.MaxPool2d(2),
                             ResidualBlock(32), ResidualBlock(32), nn.MaxPool2d(2),
                             ResidualBlock(32), nn.AdaptiveAvgPool2d(1), nn.Flatten(),
                             nn.Linear(32, 10))
    raise SystemExit(f"unknown model {model} (known: {', '.join(MODELS)})")


def versions(device):
    """One line: what the GPU columns' figures were measured with."""
    try:
        import triton
        triton_version = triton.__version__
    except Exception:  # missing, or broken: either way torch.compile will say more
        triton_version = "none (torch.compile needs it on a GPU)"
    name = torch.cuda.get_device_name(device) if device is not None else "none (cpu)"
    return (f"versions torch={torch.__version__} cuda={torch.version.cuda} "
            f"cudnn={torch.backends.cudnn.version()} triton={triton_version} "
            f"python={sys.version.split()[0]} gpu={name}")


def grad_scaler(enabled):
    """fp16's dynamic loss scaling; torch.amp.GradScaler("cuda") from 2.3, before that
    torch.cuda.amp.GradScaler. Disabled, it passes the loss and the step through."""
    if hasattr(torch.amp, "GradScaler"):
        return torch.amp.GradScaler("cuda", enabled=enabled)
    return torch.cuda.amp.GradScaler(enabled=enabled)


def adam(params, column, cuda):
    """(optimizer, its name): the fastest Adam each column can use, lr 0.001 as trainer's."""
    attempts = []
    if column == "eager":
        attempts = [dict(fused=True)] if cuda else []
        attempts.append(dict(foreach=True))
    elif column == "graphs":  # one fused kernel, its step count on the device
        attempts = [dict(fused=True, capturable=True), dict(foreach=True, capturable=True)]
    else:  # compile, reduce-overhead: Inductor writes the update; capturable: on the device
        attempts = [dict(foreach=True, capturable=cuda)]
    params = list(params)
    for i, options in enumerate(attempts):
        try:
            optimizer = torch.optim.Adam(params, lr=1e-3, **options)
        except (TypeError, RuntimeError, ValueError):  # an older torch, or not on this device
            if i + 1 == len(attempts):
                raise
            continue
        name = "adam " + " ".join(k if v is True else f"{k}={v}" for k, v in options.items())
        return optimizer, name
    raise AssertionError("unreachable")


def process_seconds():
    """Seconds since this process started (Linux's /proc), so that imports count too."""
    try:
        with open("/proc/self/stat") as f:
            start_ticks = int(f.read().rsplit(")", 1)[1].split()[19])
        with open("/proc/uptime") as f:
            uptime = float(f.read().split()[0])
        return uptime - start_ticks / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return time.perf_counter() - START


START = time.perf_counter()


class Setup:
    """The device, the data on it, the model and how a batch becomes the model's input."""

    def __init__(self, args):
        self.args = args
        self.device = torch.device(args.device)
        self.cuda = self.device.type == "cuda"
        self.precision = args.precision or ("tf32" if self.cuda else "fp32")
        tf32 = self.precision != "fp32"
        if self.cuda:
            torch.cuda.set_device(self.device)
            torch.backends.cuda.matmul.allow_tf32 = tf32
            torch.backends.cudnn.allow_tf32 = tf32
            torch.backends.cudnn.benchmark = args.cudnn_benchmark
        self.autocast_dtype = {"bf16": torch.bfloat16, "fp16": torch.float16}.get(self.precision)
        if self.precision == "bf16" and self.cuda and not torch.cuda.is_bf16_supported():
            raise SystemExit(f"--precision bf16: {torch.cuda.get_device_name(self.device)} "
                             "has no bf16 (compute capability 8.0 or newer)")
        # Disabled (fp32, tf32), autocast changes nothing; its dtype must still be one it knows.
        self.amp = dict(device_type=self.device.type, dtype=self.autocast_dtype or torch.bfloat16,
                        enabled=self.autocast_dtype is not None)
        if args.column == "graphs":  # a captured step must not reuse casts cached before it
            self.amp["cache_enabled"] = False
        self.flat = args.model in FLAT_MODELS
        self.channels_last = (args.channels_last == "on" or
                              (args.channels_last == "auto" and self.cuda and not self.flat))
        train_x, train_y = load(args.data, "train")
        test_x, test_y = load(args.data, "test")
        if args.train_limit:
            train_x, train_y = train_x[:args.train_limit], train_y[:args.train_limit]
        if args.test_limit:
            test_x, test_y = test_x[:args.test_limit], test_y[:args.test_limit]
        # Bytes on the device once, outside the timing, as trainer uploads them (frombuffer
        # arrays are read-only: copied first).
        self.train_x = torch.from_numpy(train_x.copy()).to(self.device)
        self.train_y = torch.from_numpy(train_y.astype(np.int64)).to(self.device)
        self.test_x = torch.from_numpy(test_x.copy()).to(self.device)
        self.test_y = torch.from_numpy(test_y.astype(np.int64)).to(self.device)
        self.model = build(args.model).to(self.device)
        if self.channels_last:
            self.model = self.model.to(memory_format=torch.channels_last)
        self.loss_fn = nn.CrossEntropyLoss()

    def images(self, raw):
        """uint8 images, [n, 28, 28], to the model's float input."""
        x = raw.float().mul_(1.0 / 255.0)
        if self.flat:
            return x.reshape(x.shape[0], 784)
        x = x.reshape(x.shape[0], 1, 28, 28)
        return x.contiguous(memory_format=torch.channels_last) if self.channels_last else x

    def batch(self, index):
        return self.images(self.train_x[index]), self.train_y[index]

    def synchronize(self):
        if self.cuda:
            torch.cuda.synchronize(self.device)

    def test_accuracy(self):
        model = self.model
        model.eval()
        hits = torch.zeros((), dtype=torch.int64, device=self.device)
        with torch.no_grad(), torch.autocast(**self.amp):
            for i in range(0, len(self.test_y), 1000):
                logits = model(self.images(self.test_x[i:i + 1000]))
                hits += (logits.argmax(1) == self.test_y[i:i + 1000]).sum()
        model.train()
        return hits.item() / len(self.test_y)


def plain_step(s, optimizer, scaler):
    """The step of the eager and compile columns: gather, forward, loss, backward, Adam."""
    def step(index):
        x, y = s.batch(index)
        optimizer.zero_grad(set_to_none=True)
        with torch.autocast(**s.amp):
            loss = s.loss_fn(s.model(x), y)
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
        return loss.detach()
    return step


def graphed_step(s, optimizer, batch, forward):
    """The whole step captured into one CUDA graph. Returns step(index): the batch's slice
    of the order is copied into the graph's own index tensor (device to device) and the
    graph replayed; a batch of another size (the epoch's last) runs the same work uncaptured.
    The warm-up before the capture trains; the parameters, buffers and Adam's state are
    put back after it, so the run trains from the same start as the other columns."""
    model = s.model
    saved = [t.detach().clone() for t in list(model.parameters()) + list(model.buffers())]
    static_index = torch.arange(batch, device=s.device) % len(s.train_y)

    def work(index, run_forward):
        x, y = s.batch(index)
        with torch.autocast(**s.amp):
            loss = s.loss_fn(run_forward(x), y)
        loss.backward()
        optimizer.step()
        return loss.detach()

    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):  # warm-up: compilation, cuDNN's choice, Adam's state
        for _ in range(3):
            optimizer.zero_grad(set_to_none=True)
            work(static_index, forward)
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    optimizer.zero_grad(set_to_none=True)  # backward in the graph writes the gradients
    with torch.cuda.graph(graph):
        static_loss = work(static_index, forward)
    with torch.no_grad():
        for tensor, value in zip(list(model.parameters()) + list(model.buffers()), saved):
            tensor.copy_(value)
        for state in optimizer.state.values():
            for value in state.values():
                if torch.is_tensor(value):
                    value.zero_()

    def step(index):
        if len(index) == batch:
            static_index.copy_(index)
            graph.replay()
            return static_loss
        for p in model.parameters():  # the graph's gradients, kept in place: zeroed, then
            if p.grad is not None:     # backward adds into them
                p.grad.zero_()
        return work(index, model)
    return step


def make_step(s, column):
    """(step(index) -> loss tensor, optimizer's name) for COLUMN."""
    args = s.args
    if column in ("graphs", "reduce-overhead") and not s.cuda:
        skip(f"{column}: CUDA graphs need a CUDA device (--device cuda)")
    if column == "graphs" and s.precision == "fp16":
        skip("graphs with fp16: GradScaler reads its overflow flag on the host, which a "
             "captured step cannot")
    has_compile = hasattr(torch, "compile")
    if column in ("compile", "reduce-overhead") and not has_compile:
        skip(f"{column}: torch {torch.__version__} has no torch.compile (2.0 or newer)")
    optimizer, name = adam(s.model.parameters(), column, s.cuda)
    if column == "graphs":
        forward = s.model
        if has_compile:
            forward = torch.compile(s.model, mode=COMPILE_MODE, dynamic=False)
        return graphed_step(s, optimizer, args.batch, forward), name
    step = plain_step(s, optimizer, grad_scaler(s.precision == "fp16"))
    if column == "compile":
        step = torch.compile(step, mode=COMPILE_MODE, dynamic=False)
    elif column == "reduce-overhead":
        compiled = torch.compile(step, mode="reduce-overhead", dynamic=False)
        mark = torch.compiler.cudagraph_mark_step_begin

        def step(index):  # a new step: the last one's graph outputs may be overwritten
            mark()
            return compiled(index)
    return step, name


def train(args):
    s = Setup(args)
    step, optimizer_name = make_step(s, args.column)
    generator = torch.Generator(device=s.device)
    generator.manual_seed(args.seed)
    n = len(s.train_y)
    best, first_epoch_s, steps, accuracy = 0.0, None, 0, None
    for epoch in range(1, args.epochs + 1):
        order = torch.randperm(n, device=s.device, generator=generator)
        s.synchronize()
        start = time.perf_counter()
        for i in range(0, n, args.batch):
            loss = step(order[i:i + args.batch])
            steps += 1
            if steps % args.loss_every == 0:
                loss.item()  # as often as trainer reads its loss back (a sync)
        s.synchronize()
        elapsed = time.perf_counter() - start
        first_epoch_s = elapsed if first_epoch_s is None else first_epoch_s
        best = max(best, n / elapsed)
        if args.target_acc is not None:
            accuracy = s.test_accuracy()
            print(f"epoch {epoch}/{args.epochs} test_acc={accuracy:.4f} "
                  f"elapsed_s={process_seconds():.2f}", flush=True)
            if accuracy >= args.target_acc:
                break
    if accuracy is None:
        accuracy = s.test_accuracy()
    print(f"pytorch {args.model} batch={args.batch} samples/s={best:.0f} test_acc={accuracy:.4f} "
          f"device={args.device} precision={s.precision} column={args.column} "
          f"optimizer={optimizer_name.replace(' ', ',')} "
          f"channels_last={'on' if s.channels_last else 'off'} loss_every={args.loss_every} "
          f"first_epoch_s={first_epoch_s:.1f}", flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="mlp", choices=MODELS)
    parser.add_argument("--batch", type=int, default=128)
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--train-limit", type=int, default=0)
    parser.add_argument("--test-limit", type=int, default=0)
    parser.add_argument("--threads", type=int, default=2, help="CPU threads (default 2)")
    parser.add_argument("--data", default="/usr/share/datasets/fashion-mnist")
    parser.add_argument("--device", default="cpu",
                        help="cpu (default), cuda, cuda:N, or auto (cuda when there is one)")
    parser.add_argument("--column", choices=("eager", "compile", "graphs", "reduce-overhead"),
                        default="eager")
    parser.add_argument("--precision", choices=("fp32", "tf32", "bf16", "fp16"),
                        help="default tf32 on a GPU, fp32 on the CPU")
    parser.add_argument("--channels-last", dest="channels_last", choices=("auto", "on", "off"),
                        default="auto", help="the CNNs in channels_last (auto: on a GPU)")
    parser.add_argument("--loss-every", dest="loss_every", type=int, default=16,
                        help="read the loss back every N steps (default 16, as trainer)")
    parser.add_argument("--target-acc", dest="target_acc", type=float,
                        help="evaluate after each epoch; stop at this test accuracy")
    parser.add_argument("--no-cudnn-benchmark", dest="cudnn_benchmark", action="store_false")
    parser.add_argument("--versions", action="store_true",
                        help="print torch, CUDA, cuDNN, Triton and the GPU's name, and exit")
    args = parser.parse_args()

    if args.device == "auto":
        args.device = "cuda" if torch.cuda.is_available() else "cpu"
    if args.device != "cpu" and not torch.cuda.is_available():
        raise SystemExit(f"torch {torch.__version__} has no usable CUDA device (built with "
                         f"CUDA {torch.version.cuda}); --device {args.device} needs a CUDA "
                         "build of PyTorch and a GPU")
    if args.versions:
        print(versions(torch.device(args.device) if args.device != "cpu" else None))
        return
    if args.device == "cpu" and args.precision not in (None, "fp32"):
        raise SystemExit(f"--precision {args.precision} is measured on a GPU only "
                         "(--device cuda); the CPU runs fp32")
    if args.batch < 1 or args.epochs < 1 or args.loss_every < 1:
        raise SystemExit("--batch, --epochs and --loss-every take positive numbers")
    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    if torch.cuda.is_available():
        torch.cuda.manual_seed(args.seed)
    train(args)


if __name__ == "__main__":
    main()

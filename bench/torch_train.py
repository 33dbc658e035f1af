#!/usr/bin/env python3
"""PyTorch side of bench/compare_cpu.sh and bench/compare_gpu.sh: the same model, data,
batch, optimizer and thread count as `trainer train`, timed the same way (training steps of
one epoch, evaluation excluded). Prints one line: `pytorch MODEL batch=B samples/s=X
test_acc=Y`, followed on a GPU by `device=... tf32=on|off batches=device|host
precision=P compile=MODE first_epoch_s=S`. samples/s is the best epoch's; with the default
of one epoch that is the first, warm-up and all, so comparisons pass --epochs 3.

--device cuda[:N] runs on that GPU. As trainer does, the dataset's bytes are put on the GPU
once when they fit (before the timing) and each batch is gathered and converted there from
shuffled indices; --batches-from host instead converts each batch on the host and copies
it in (trainer's fallback under a memory limit). The timing waits for the GPU
(torch.cuda.synchronize) at both ends of an epoch. cuDNN's autotuner
(torch.backends.cudnn.benchmark) is on, as trainer picks a convolution algorithm per shape
once; --no-cudnn-benchmark turns it off.

--precision (GPU only), against trainer's --precision of the same name:
  fp32  matmuls and convolutions in full fp32 (allow_tf32 off; trainer --precision fp32)
  tf32  TF32 allowed (allow_tf32 on), the default, as trainer's default
  bf16  torch.autocast(bfloat16) around forward and loss, TF32 allowed for the rest
  fp16  torch.autocast(float16) and a GradScaler (dynamic loss scaling, as trainer's fp16)
Weights, gradients and Adam's state stay fp32 in every precision, as in trainer. --tf32
on|off is the older spelling of --precision tf32|fp32.

--compile (GPU only): none (eager, the default), default (torch.compile) or
reduce-overhead (torch.compile(mode="reduce-overhead"), which replays CUDA graphs). What is
compiled is one function, forward and loss (its backward with it, through AOTAutograd);
the optimizer step stays eager (Adam's default multi-tensor implementation), as in eager
mode. Shapes are static (dynamic=False): the epoch's last, smaller batch is compiled once
more instead of turning every step into a dynamic-shape kernel. Compilation, CUDA-graph
recording and cuDNN's autotuning happen in the first epoch(s), so take the best of 3.
Evaluation uses the same module uncompiled (not timed).

--versions prints torch, CUDA, cuDNN, Triton and the GPU's name, one line, and exits."""
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
             "numpy (pip install torch numpy), or PYTHON= naming a python that has them")


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
        raise FileNotFoundError(name)
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
    """One line: what the GPU column's figures were measured with."""
    try:
        import triton
        triton_version = triton.__version__
    except Exception:  # missing, or broken: either way torch.compile will say more
        triton_version = "none (torch.compile needs it on a GPU)"
    name = torch.cuda.get_device_name(device) if torch.cuda.is_available() else "no CUDA device"
    return (f"versions torch={torch.__version__} cuda={torch.version.cuda} "
            f"cudnn={torch.backends.cudnn.version()} triton={triton_version} "
            f"python={sys.version.split()[0]} gpu={name}")


def grad_scaler(enabled):
    """fp16's dynamic loss scaling; torch.amp.GradScaler("cuda") from 2.3, before that
    torch.cuda.amp.GradScaler. Disabled, it passes the loss and the step through."""
    if hasattr(torch.amp, "GradScaler"):
        return torch.amp.GradScaler("cuda", enabled=enabled)
    return torch.cuda.amp.GradScaler(enabled=enabled)


def run_gpu(args):
    """The GPU path; the CPU path in main() stays as compare_cpu.sh has always measured it."""
    if not torch.cuda.is_available():
        raise SystemExit(f"torch {torch.__version__} has no usable CUDA device "
                         f"(built with CUDA {torch.version.cuda}); --device {args.device} "
                         "needs a CUDA build of PyTorch and a GPU")
    device = torch.device(args.device)
    torch.cuda.set_device(device)
    precision = args.precision or ("tf32" if args.tf32 == "on" else "fp32")
    tf32 = precision != "fp32"
    torch.backends.cuda.matmul.allow_tf32 = tf32
    torch.backends.cudnn.allow_tf32 = tf32
    torch.backends.cudnn.benchmark = args.cudnn_benchmark
    autocast_dtype = {"bf16": torch.bfloat16, "fp16": torch.float16}.get(precision)
    if precision == "bf16" and not torch.cuda.is_bf16_supported():
        raise SystemExit(f"--precision bf16: {torch.cuda.get_device_name(device)} has no bf16 "
                         "(compute capability 8.0 or newer)")
    torch.cuda.manual_seed(1)
    train_x, train_y = load(args.data, "train")
    test_x, test_y = load(args.data, "test")
    if args.train_limit:
        train_x, train_y = train_x[:args.train_limit], train_y[:args.train_limit]
    model = build(args.model).to(device)
    if args.model not in FLAT_MODELS:
        train_x = train_x.reshape(-1, 1, 28, 28)
        test_x = test_x.reshape(-1, 1, 28, 28)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    loss_fn = nn.CrossEntropyLoss()
    scaler = grad_scaler(precision == "fp16")

    # Disabled (fp32, tf32), autocast changes nothing; its dtype must still be one it knows.
    amp = dict(device_type="cuda", dtype=autocast_dtype or torch.bfloat16,
               enabled=autocast_dtype is not None)

    def forward_loss(x, y):
        # The autocast region inside, so that torch.compile traces the casts with the model.
        with torch.autocast(**amp):
            return loss_fn(model(x), y)

    step_loss = forward_loss
    if args.compile != "none":
        step_loss = torch.compile(forward_loss, mode=args.compile, dynamic=False)
    # Under reduce-overhead, tell the CUDA-graph trees where a training step begins, so a
    # replay never overwrites outputs the last step still uses (a no-op otherwise).
    mark_step = getattr(getattr(torch, "compiler", None), "cudagraph_mark_step_begin", None)
    if args.compile != "reduce-overhead":
        mark_step = None

    generator = np.random.default_rng(1)
    on_device = args.batches_from == "device"
    if on_device:  # bytes on the GPU once, outside the timing, as trainer uploads them
        train_x_dev = torch.from_numpy(train_x.copy()).to(device)  # frombuffer is read-only
        train_y_dev = torch.from_numpy(train_y.astype(np.int64)).to(device)
    best = 0.0
    first_epoch_s = None
    for _ in range(args.epochs):
        order = generator.permutation(len(train_x))
        torch.cuda.synchronize(device)
        start = time.perf_counter()
        model.train()
        for i in range(0, len(order), args.batch):
            index = order[i:i + args.batch]
            if on_device:
                # Only the indices cross the bus; gather and convert on the GPU.
                index_dev = torch.from_numpy(index).to(device)
                x = train_x_dev[index_dev].float().mul_(1.0 / 255.0)
                y = train_y_dev[index_dev]
            else:
                x = torch.from_numpy(train_x[index].astype(np.float32) * (1.0 / 255.0)).to(device)
                y = torch.from_numpy(train_y[index].astype(np.int64)).to(device)
            if mark_step:
                mark_step()
            optimizer.zero_grad(set_to_none=True)
            loss = step_loss(x, y)
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
            loss.item()  # trainer reads the loss back every step too (a sync per step)
        torch.cuda.synchronize(device)
        elapsed = time.perf_counter() - start
        first_epoch_s = elapsed if first_epoch_s is None else first_epoch_s
        best = max(best, len(order) / elapsed)
    model.eval()
    with torch.no_grad(), torch.autocast(**amp):
        logits = torch.cat([model(torch.from_numpy(test_x[i:i + 1000].astype(np.float32) / 255.0)
                                  .to(device)).float().cpu()
                            for i in range(0, len(test_x), 1000)])
        accuracy = (logits.argmax(1).numpy() == test_y).mean()
    print(f"pytorch {args.model} batch={args.batch} samples/s={best:.0f} test_acc={accuracy:.4f} "
          f"device={args.device} tf32={'on' if tf32 else 'off'} batches={args.batches_from} "
          f"precision={precision} compile={args.compile} first_epoch_s={first_epoch_s:.1f}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", default="mlp", choices=MODELS)
    parser.add_argument("--batch", type=int, default=128)
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--train-limit", type=int, default=0)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--data", default="/usr/share/datasets/fashion-mnist")
    parser.add_argument("--device", default="cpu", help="cpu (default), cuda or cuda:N")
    parser.add_argument("--tf32", choices=("on", "off"), default="on",
                        help="GPU only: TF32 for matmuls and convolutions (default on)")
    parser.add_argument("--batches-from", dest="batches_from", choices=("device", "host"),
                        default="device", help="GPU only: gather batches on the GPU from the "
                        "dataset held there (default), or convert them on the host")
    parser.add_argument("--no-cudnn-benchmark", dest="cudnn_benchmark", action="store_false")
    parser.add_argument("--precision", choices=("fp32", "tf32", "bf16", "fp16"),
                        help="GPU only: fp32, tf32 (the default), bf16 or fp16 autocast")
    parser.add_argument("--compile", choices=("none", "default", "reduce-overhead"),
                        default="none", help="GPU only: eager (none, the default), "
                        "torch.compile, or torch.compile with CUDA graphs (reduce-overhead)")
    parser.add_argument("--versions", action="store_true",
                        help="print torch, CUDA, cuDNN, Triton and the GPU's name, and exit")
    args = parser.parse_args()

    if args.versions:
        if not torch.cuda.is_available():
            raise SystemExit(f"torch {torch.__version__} sees no CUDA device (built for CUDA "
                             f"{torch.version.cuda})")
        print(versions(torch.device(args.device if args.device != "cpu" else "cuda")))
        return
    if args.device == "cpu" and (args.compile != "none" or args.precision not in (None, "fp32")):
        raise SystemExit("--compile and --precision bf16|fp16|tf32 are measured on a GPU only "
                         "(--device cuda); the CPU path is compare_cpu.sh's, eager fp32")

    torch.set_num_threads(args.threads)
    torch.manual_seed(1)
    if args.device != "cpu":
        run_gpu(args)
        return
    train_x, train_y = load(args.data, "train")
    test_x, test_y = load(args.data, "test")
    if args.train_limit:
        train_x, train_y = train_x[:args.train_limit], train_y[:args.train_limit]
    model = build(args.model)
    if args.model not in FLAT_MODELS:  # convolutional models take 1x28x28 images
        train_x = train_x.reshape(-1, 1, 28, 28)
        test_x = test_x.reshape(-1, 1, 28, 28)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    loss_fn = nn.CrossEntropyLoss()
    generator = np.random.default_rng(1)
    best = 0.0
    for _ in range(args.epochs):
        order = generator.permutation(len(train_x))
        start = time.perf_counter()
        model.train()
        # Like trainer: bytes are converted to floats batch by batch, inside the timing.
        for i in range(0, len(order), args.batch):
            index = order[i:i + args.batch]
            x = torch.from_numpy(train_x[index].astype(np.float32) * (1.0 / 255.0))
            y = torch.from_numpy(train_y[index].astype(np.int64))
            optimizer.zero_grad(set_to_none=True)
            loss = loss_fn(model(x), y)
            loss.backward()
            optimizer.step()
            loss.item()  # trainer reads the loss back every step too
        elapsed = time.perf_counter() - start
        best = max(best, len(order) / elapsed)
    model.eval()
    with torch.no_grad():
        logits = torch.cat([model(torch.from_numpy(test_x[i:i + 1000].astype(np.float32) / 255.0))
                            for i in range(0, len(test_x), 1000)])
        accuracy = (logits.argmax(1).numpy() == test_y).mean()
    print(f"pytorch {args.model} batch={args.batch} samples/s={best:.0f} test_acc={accuracy:.4f}")


if __name__ == "__main__":
    main()

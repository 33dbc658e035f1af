#!/usr/bin/env python3
"""PyTorch side of bench/compare_cpu.sh and bench/compare_gpu.sh: the same model, data,
batch, optimizer and thread count as `trainer train`, timed the same way (training steps of
one epoch, evaluation excluded). Prints one line: `pytorch MODEL batch=B samples/s=X
test_acc=Y`, followed on a GPU by `device=... tf32=on|off batches=device|host`.

--device cuda[:N] runs eagerly on that GPU. As trainer does, the dataset's bytes are put
on the GPU once when they fit (before the timing) and each batch is gathered and converted
there from shuffled indices; --batches-from host instead converts each batch on the host and
copies it in (trainer's fallback under a memory limit). The timing waits for the GPU
(torch.cuda.synchronize) at both ends of an epoch. --tf32 on (the default, as trainer's
default) lets matmuls and cuDNN convolutions use TF32; off keeps them FP32 (trainer's
--no-tf32). cuDNN's autotuner (torch.backends.cudnn.benchmark) is on, as trainer picks a
convolution algorithm per shape once; --no-cudnn-benchmark turns it off."""
import argparse
import gzip
import os
import time

import numpy as np
import torch
from torch import nn


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


def build(model):
    """The bundled model files, layer for layer (models/*.model)."""
    if model == "mlp":
        return nn.Sequential(nn.Flatten(), nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 128),
                             nn.ReLU(), nn.Linear(128, 10))
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
    raise SystemExit(f"unknown model {model}")


def run_gpu(args):
    """The GPU path; the CPU path in main() stays as compare_cpu.sh has always measured it."""
    if not torch.cuda.is_available():
        raise SystemExit(f"torch {torch.__version__} has no usable CUDA device "
                         f"(built with CUDA {torch.version.cuda}); --device {args.device} "
                         "needs a CUDA build of PyTorch and a GPU")
    device = torch.device(args.device)
    torch.cuda.set_device(device)
    torch.backends.cuda.matmul.allow_tf32 = args.tf32 == "on"
    torch.backends.cudnn.allow_tf32 = args.tf32 == "on"
    torch.backends.cudnn.benchmark = args.cudnn_benchmark
    torch.cuda.manual_seed(1)
    train_x, train_y = load(args.data, "train")
    test_x, test_y = load(args.data, "test")
    if args.train_limit:
        train_x, train_y = train_x[:args.train_limit], train_y[:args.train_limit]
    model = build(args.model).to(device)
    if args.model != "mlp":
        train_x = train_x.reshape(-1, 1, 28, 28)
        test_x = test_x.reshape(-1, 1, 28, 28)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    loss_fn = nn.CrossEntropyLoss()
    generator = np.random.default_rng(1)
    on_device = args.batches_from == "device"
    if on_device:  # bytes on the GPU once, outside the timing, as trainer uploads them
        train_x_dev = torch.from_numpy(train_x.copy()).to(device)  # frombuffer is read-only
        train_y_dev = torch.from_numpy(train_y.astype(np.int64)).to(device)
    best = 0.0
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
            optimizer.zero_grad(set_to_none=True)
            loss = loss_fn(model(x), y)
            loss.backward()
            optimizer.step()
            loss.item()  # trainer reads the loss back every step too (a sync per step)
        torch.cuda.synchronize(device)
        elapsed = time.perf_counter() - start
        best = max(best, len(order) / elapsed)
    model.eval()
    with torch.no_grad():
        logits = torch.cat([model(torch.from_numpy(test_x[i:i + 1000].astype(np.float32) / 255.0)
                                  .to(device)).cpu()
                            for i in range(0, len(test_x), 1000)])
        accuracy = (logits.argmax(1).numpy() == test_y).mean()
    print(f"pytorch {args.model} batch={args.batch} samples/s={best:.0f} test_acc={accuracy:.4f} "
          f"device={args.device} tf32={args.tf32} batches={args.batches_from}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", default="mlp")
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
    args = parser.parse_args()

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
    if args.model != "mlp":  # convolutional models take 1x28x28 images
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

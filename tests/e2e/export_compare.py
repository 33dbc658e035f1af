"""Helper of export.sh (not a test of its own).

  images [DIR C H W COUNT]...   COUNT random images as PNGs in DIR/{train,test}/cK/
                           (K = i % 10), their pixels in DIR/pixels.npy and their paths in
                           DIR/list.txt; several folders in one process (numpy imported once)
  onnx [MODEL.onnx DIR PREDICT_OUT]...      onnxruntime's probabilities vs trainer predict's
  pytorch [MODULE.py WEIGHTS DIR PREDICT_OUT]...   the generated module's, loaded strictly

PREDICT_OUT is `trainer predict --top 10 --digits 8` of DIR/list.txt's images. Several
models in one process, as importing torch or onnxruntime takes seconds. Prints a line per
model, "NAME: ok ..." or "NAME: FAILED ..." with the largest difference; exits 1 when one
is over 1e-5 or fails to run.
"""
import importlib.util
import struct
import sys
import zlib

import numpy as np

TOLERANCE = 1e-5


def write_png(path, image):
    """8-bit gray (H x W) or RGB (H x W x 3), unfiltered rows, zlib: all a PNG needs."""
    h, w = image.shape[:2]
    colour = 0 if image.ndim == 2 else 2
    raw = b"".join(b"\0" + image[y].tobytes() for y in range(h))

    def chunk(kind, data):
        return (struct.pack(">I", len(data)) + kind + data +
                struct.pack(">I", zlib.crc32(kind + data)))
    header = struct.pack(">IIBBBBB", w, h, 8, colour, 0, 0, 0)
    with open(path, "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) +
                chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))


def make_images(folder, channels, height, width, count):
    import os
    rng = np.random.default_rng(1)
    pixels = rng.integers(0, 256, size=(count, channels, height, width), dtype=np.uint8)
    paths = []
    for split in ("train", "test"):
        for i in range(count):
            klass = "c%d" % (i % 10)
            os.makedirs("%s/%s/%s" % (folder, split, klass), exist_ok=True)
            path = "%s/%s/%s/%03d.png" % (folder, split, klass, i)
            image = pixels[i, 0] if channels == 1 else pixels[i].transpose(1, 2, 0).copy()
            write_png(path, image)
            if split == "test":
                paths.append(path)
    np.save(folder + "/pixels.npy", pixels)
    with open(folder + "/list.txt", "w") as f:
        f.write("\n".join(paths) + "\n")


def model_inputs(folder, input_shape):
    """The images as trainer predict feeds them: bytes / 255 in f32, in the input's shape."""
    pixels = np.load(folder + "/pixels.npy")
    values = pixels.astype(np.float32) * np.float32(1.0 / 255.0)
    return values.reshape((len(pixels),) + tuple(input_shape))


def predicted(path, count):
    """trainer predict's probabilities, [images, classes], from its --top 10 listing."""
    rows, row = [], None
    for line in open(path):
        if not line.startswith("  "):
            row = {}
            rows.append(row)
            continue
        name, probability = line.split()
        row[int(name[1:]) if name.startswith("c") else int(name)] = float(probability)
    assert len(rows) == count, "predict printed %d images, not %d" % (len(rows), count)
    return np.array([[r[k] for k in sorted(r)] for r in rows])


def compare(what, ours, theirs):
    worst = float(np.abs(ours - theirs).max())
    verdict = "ok" if worst <= TOLERANCE else "FAILED"
    print("%s %s: %d images, largest difference from trainer predict %.2e (tolerance %.0e)"
          % (verdict, what, len(ours), worst, TOLERANCE))
    return worst <= TOLERANCE


def run_onnx(model_path, folder, predict_out):
    import onnx
    import onnxruntime
    onnx.checker.check_model(onnx.load(model_path), full_check=True)
    session = onnxruntime.InferenceSession(model_path, providers=["CPUExecutionProvider"])
    shape = session.get_inputs()[0].shape[1:]
    (probabilities,) = session.run(["probabilities"], {"input": model_inputs(folder, shape)})
    want = predicted(predict_out, len(probabilities))
    return compare("onnxruntime", probabilities, want)


def run_pytorch(module_path, weights, folder, predict_out):
    import torch
    spec = importlib.util.spec_from_file_location("exported", module_path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    model = module.load(weights)  # load_state_dict(strict=True) inside
    inputs = torch.from_numpy(model_inputs(folder, model.input_shape))
    with torch.no_grad():
        probabilities = model.probabilities(inputs).numpy()
    want = predicted(predict_out, len(probabilities))
    return compare("pytorch", probabilities, want)


def run_each(check, group, args):
    import os
    import traceback
    good = True
    for i in range(0, len(args), group):
        name = os.path.splitext(os.path.basename(args[i]))[0]
        print(name + ": ", end="", flush=True)
        try:
            good &= check(*args[i:i + group])
        except Exception:  # noqa: BLE001 - said, and the next model still runs
            print("FAILED: " + traceback.format_exc().replace("\n", "\n    "))
            good = False
    return good


if __name__ == "__main__":
    command, args = sys.argv[1], sys.argv[2:]
    if command == "images":
        for i in range(0, len(args), 5):
            make_images(args[i], *map(int, args[i + 1:i + 5]))
    elif command == "onnx":
        sys.exit(0 if run_each(run_onnx, 3, args) else 1)
    else:
        sys.exit(0 if run_each(run_pytorch, 4, args) else 1)

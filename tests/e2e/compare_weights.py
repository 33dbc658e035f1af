#!/usr/bin/env python3
"""compare_weights.py A B [TOLERANCE]: exit 0 when the two safetensors files hold the same
F32 tensors (names, shapes) whose values agree within a relative error of TOLERANCE
(default 1e-5: the largest absolute difference over the largest magnitude, per tensor).
Optimizer state (names starting with "optimizer.") is compared too when both files hold it.
Standard library only, so the tests need no numpy."""
import array
import json
import struct
import sys


def tensors(path):
    with open(path, "rb") as f:
        data = f.read()
    (length,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + length])
    header.pop("__metadata__", None)
    body = data[8 + length:]
    out = {}
    for name, info in header.items():
        begin, end = info["data_offsets"]
        values = array.array("f")
        values.frombytes(body[begin:end])
        if sys.byteorder != "little":
            values.byteswap()
        out[name] = (tuple(info["shape"]), values)
    return out


def main():
    a, b = tensors(sys.argv[1]), tensors(sys.argv[2])
    tolerance = float(sys.argv[3]) if len(sys.argv) > 3 else 1e-5
    if set(a) != set(b):
        print("different tensors:", sorted(set(a) ^ set(b)))
        return 1
    worst = 0.0
    for name in sorted(a):
        (shape_a, va), (shape_b, vb) = a[name], b[name]
        if shape_a != shape_b:
            print(f"{name}: shape {shape_a} against {shape_b}")
            return 1
        scale = max((abs(x) for x in va), default=0.0) or 1.0
        difference = max((abs(x - y) for x, y in zip(va, vb)), default=0.0) / scale
        worst = max(worst, difference)
        if not difference <= tolerance:
            print(f"{name}: relative difference {difference:.3g} > {tolerance}")
            return 1
    print(f"same within {tolerance}: {len(a)} tensors, largest relative difference {worst:.3g}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""bench/colour_pngs.py DIR [--per-class N] [--classes K] [--size S] [--seed SEED]

Writes a synthetic png:DIR of CIFAR-sized colour images: DIR/train/CLASS/NNNNN.png
(K classes of N images, S x S RGB, 8-bit) and DIR/test/CLASS/ with a tenth as many, for
bench/loader_cpu.sh to time the PNG reader on colour: `trainer data export` writes only
what it can read, and no CIFAR-10 is installed here. Standard library only (zlib), so it
runs wherever python3 does.

Each image is a smooth colour gradient plus +-8 of noise per value, written with PNG's
Sub filter, so that a file compresses to about 2 KB of its 3 KB of pixels, near what a
photo of that size does: pure noise would not compress and time a worse case, a flat
colour would compress to nothing. Labels mean nothing; the images are only for timing.
"""
import argparse
import operator
import os
import random
import struct
import zlib

NOISE = 8


def chunk(kind, data):
    body = kind + data
    return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))


def png_rgb(size, pixels):
    """An 8-bit RGB PNG of `pixels` (size * size * 3 bytes, row-major)."""
    header = struct.pack(">IIBBBBB", size, size, 8, 2, 0, 0, 0)
    stride = 3 * size
    rows = []
    for y in range(size):
        row = pixels[y * stride:(y + 1) * stride]
        # Filter 1 (Sub): each byte minus the one a pixel to its left, as encoders pick
        # for smooth images.
        rows.append(b"\x01" + row[:3] + bytes((a - b) & 255 for a, b in zip(row[3:], row[:-3])))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) +
            chunk(b"IDAT", zlib.compress(b"".join(rows), 6)) + chunk(b"IEND", b""))


def gradient(rng, size):
    """Corner colours blended across the image, NOISE below the final value, so that
    adding noise in [0, 2 * NOISE] stays within a byte."""
    corners = [[rng.randrange(NOISE, 256 - NOISE) for _ in range(3)] for _ in range(4)]
    out = bytearray()
    for y in range(size):
        fy = y / (size - 1)
        for x in range(size):
            fx = x / (size - 1)
            for c in range(3):
                top = corners[0][c] * (1 - fx) + corners[1][c] * fx
                bottom = corners[2][c] * (1 - fx) + corners[3][c] * fx
                out.append(int(top * (1 - fy) + bottom * fy) - NOISE)
    return bytes(out)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dir")
    parser.add_argument("--per-class", type=int, default=1000)
    parser.add_argument("--classes", type=int, default=10)
    parser.add_argument("--size", type=int, default=32)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    # Gradients are slow in pure Python, so 64 are made and shared; the noise, drawn anew
    # for every image, keeps each file different.
    pool = [gradient(rng, args.size) for _ in range(64)]
    noise_of_byte = bytes(i % (2 * NOISE + 1) for i in range(256))
    values = args.size * args.size * 3
    for split, per_class in (("train", args.per_class), ("test", max(1, args.per_class // 10))):
        total = 0
        for k in range(args.classes):
            folder = os.path.join(args.dir, split, "class%02d" % k)
            os.makedirs(folder, exist_ok=True)
            for i in range(per_class):
                noise = rng.randbytes(values).translate(noise_of_byte)
                pixels = bytes(map(operator.add, rng.choice(pool), noise))
                with open(os.path.join(folder, "%05d.png" % i), "wb") as f:
                    total += f.write(png_rgb(args.size, pixels))
        count = args.classes * per_class
        print("%s: %d images of 3x%dx%d under %s/%s, %.0f bytes each on average" %
              (split, count, args.size, args.size, args.dir, split, total / count))


if __name__ == "__main__":
    main()

#!/usr/bin/python3
"""bench/jpeg_pil.py make FOLDER_OUT [--from PNG_FOLDER | --photos N --size S]
   bench/jpeg_pil.py time FOLDER MODE [--repeats R]

For bench/loader_cpu.sh -J: the trainer's JPEG reader against PIL (Debian's python3-pil,
itself on libjpeg-turbo) on the same files.

make  writes FOLDER_OUT/train/CLASS/*.jpg at quality 90: every PNG of a png:DIR's train/
      (--from; Fashion-MNIST as `trainer data export` writes it), or N synthetic colour
      "photos" of S x S (smooth gradients plus noise, in 10 classes).
time  decodes every train/CLASS/*.jpg of FOLDER in the order the trainer reads them
      (sorted class folders, sorted files), one thread, to MODE (L: gray, RGB) bytes in
      memory (Image.open, convert, tobytes: what a PyTorch loader does before its tensor),
      REPEATS times (default 3), and prints `pil samples=N samples/s=R` with the median.
"""
import argparse
import os
import random
import statistics
import sys
import time

from PIL import Image


def files_of(folder):
    root = os.path.join(folder, "train")
    for name in sorted(os.listdir(root)):
        class_dir = os.path.join(root, name)
        for f in sorted(os.listdir(class_dir)):
            if f.lower().endswith((".jpg", ".jpeg", ".png")):
                yield os.path.join(class_dir, f)


def make_from(png_folder, out):
    for path in files_of(png_folder):
        rel = os.path.relpath(path, png_folder)
        target = os.path.join(out, os.path.splitext(rel)[0] + ".jpg")
        os.makedirs(os.path.dirname(target), exist_ok=True)
        Image.open(path).save(target, quality=90)


def make_photos(out, count, size):
    rng = random.Random(1)
    for i in range(count):
        folder = os.path.join(out, "train", "c%d" % (i % 10))
        os.makedirs(folder, exist_ok=True)
        a = [rng.randrange(256) for _ in range(6)]
        small = Image.new("RGB", (2, 2))
        small.putdata([(a[0], a[1], a[2]), (a[3], a[4], a[5]), (a[5], a[0], a[3]),
                       (a[2], a[4], a[1])])
        im = small.resize((size, size), Image.BILINEAR)
        noise = Image.effect_noise((size, size), 24).convert("RGB")
        Image.blend(im, noise, 0.15).save(os.path.join(folder, "%05d.jpg" % i), quality=90)


def time_decode(folder, mode, repeats):
    paths = list(files_of(folder))
    rates = []
    for _ in range(repeats):
        start = time.perf_counter()
        for p in paths:
            with Image.open(p) as im:
                im.convert(mode).tobytes()
        rates.append(len(paths) / (time.perf_counter() - start))
    print("pil samples=%d samples/s=%.0f" % (len(paths), statistics.median(rates)))


def main():
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers(dest="action", required=True)
    make = sub.add_parser("make")
    make.add_argument("out")
    make.add_argument("--from", dest="source")
    make.add_argument("--photos", type=int, default=0)
    make.add_argument("--size", type=int, default=256)
    t = sub.add_parser("time")
    t.add_argument("folder")
    t.add_argument("mode", choices=["L", "RGB"])
    t.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    if args.action == "make":
        if args.source:
            make_from(args.source, args.out)
        else:
            make_photos(args.out, args.photos, args.size)
    else:
        time_decode(args.folder, args.mode, args.repeats)


if __name__ == "__main__":
    sys.exit(main())

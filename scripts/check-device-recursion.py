#!/usr/bin/env python3
"""No __device__ function of kernels/cuda/ names itself in its own body.

    scripts/check-device-recursion.py [FILE...]   (default: kernels/cuda/**/*.cu, *.h)

Why: our kernels never recurse (a thread's stack is a few KB), so a device function that
calls itself is a mistake, and one nothing else catches without a GPU. Commit 4ff39e9 moved
a loop into rows_normalise and left the function calling itself in the loop's place; nvcc
gave no warning, and at -O3 it deleted the call as a recursion with no side effects, so the
kernels that called it never wrote their output (found by reading the PTX). clang's
-Winfinite-recursion would say so, but clang cannot parse CUDA 13's headers, and the
device side never reaches a host compiler.

The check reads the source: each `__device__ ... NAME(...) {BODY}` whose BODY contains
`NAME(` or `NAME<...>(`. Before looking at our files it must find the self-call planted in
tests/static/device_self_call.cu, so that it cannot quietly stop looking.
Exit status: 0 none found, 1 found (printed as FILE:LINE: ...), 2 the planted one missed.
"""
import glob
import os
import re
import sys

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEVICE_FUNCTION = re.compile(r"__device__[^;{}()]*?\b(\w+)\s*\(")


def matching(text, start, opening, closing):
    """The index just past the bracket that closes the one open before START."""
    depth = 1
    i = start
    while i < len(text) and depth:
        if text[i] == opening:
            depth += 1
        elif text[i] == closing:
            depth -= 1
        i += 1
    return i


def self_calls(path):
    """(line, name) of each device function in PATH whose body names it."""
    text = open(path, encoding="utf-8").read()
    found = []
    for m in DEVICE_FUNCTION.finditer(text):
        name = m.group(1)
        after_parameters = matching(text, m.end(), "(", ")")
        # A declaration ends in ';' before any '{'; a definition's body opens with '{'.
        brace = after_parameters
        while brace < len(text) and text[brace] not in "{;":
            brace += 1
        if brace >= len(text) or text[brace] == ";":
            continue
        body = text[brace + 1:matching(text, brace + 1, "{", "}") - 1]
        if re.search(r"\b" + re.escape(name) + r"\s*(<[^;()]*>)?\s*\(", body):
            found.append((text.count("\n", 0, m.start()) + 1, name))
    return found


def main():
    planted = os.path.join(TOP, "tests", "static", "device_self_call.cu")
    if not self_calls(planted):
        print(f"check-device-recursion.py: missed the self-call planted in {planted}",
              file=sys.stderr)
        return 2
    paths = sys.argv[1:] or sorted(
        glob.glob(os.path.join(TOP, "kernels", "cuda", "**", "*.cu"), recursive=True) +
        glob.glob(os.path.join(TOP, "kernels", "cuda", "**", "*.h"), recursive=True))
    reports = 0
    for path in paths:
        for line, name in self_calls(path):
            print(f"{os.path.relpath(path, TOP)}:{line}: device function {name} calls itself "
                  "(device code does not recurse: was a loop or another overload meant?)")
            reports += 1
    return 1 if reports else 0


if __name__ == "__main__":
    sys.exit(main())

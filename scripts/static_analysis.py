#!/usr/bin/env python3
"""Runs clang's static analyzer over every C and CUDA source of a build.

    scripts/static_analysis.py BUILD_DIR   (a build configured with clang and
                                            CMAKE_EXPORT_COMPILE_COMMANDS=ON)

The checkers are the memory-ownership ones (use after free, double free, leaks): the
class of bug that compiles cleanly with one compiler and breaks the build with the next
(GCC 13 on a GPU machine). clang cannot parse CUDA 13's headers itself, so a .cu file's
host side is first written out by nvcc (`-cuda`: the host code after nvcc's own front
end, as the host compiler would see it) and analysed as C++. That file pastes every
header in, so only reports that point into this repository count, and shallow mode keeps
the header-heavy files to about a second each.

Before anything else the analyzer must find the known bugs in tests/static/, so that a
newer clang or a changed flag cannot turn this check into one that always passes.
Exit status: 0 clean, 1 reports (printed), 2 the analyzer missed a known bug or failed.
"""
import concurrent.futures
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile

CHECKERS = "unix.Malloc,cplusplus.NewDelete"
ANALYZE = ["--analyze", "--analyzer-no-default-checks",
           "-Xanalyzer", "-analyzer-checker=" + CHECKERS,
           "-Xanalyzer", "-analyzer-config", "-Xanalyzer", "mode=shallow",
           "-Xanalyzer", "-analyzer-output=text"]
REPORT = re.compile(r"^(?P<file>[^:\s]+):(?P<line>\d+):(?P<col>\d+): warning: (?P<what>.*)$")
TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def drop_output_args(args):
    """The compile command less its object file, dependency-file and -c arguments."""
    kept, skip = [], False
    for a in args:
        if skip:
            skip = False
            continue
        if a in ("-o", "-MF", "-MT", "-MQ"):
            skip = True
            continue
        if a in ("-c", "-MD", "-MMD") or a.startswith("-MF") or a.startswith("-MT"):
            continue
        kept.append(a)
    return kept


def analyze_c(args, source):
    cmd = ["clang"] + drop_output_args(args[1:]) + ANALYZE + ["-o", os.devnull]
    return run(cmd, source)


def analyze_cuda(args, source, host_cxx):
    with tempfile.TemporaryDirectory() as tmp:
        host_side = os.path.join(tmp, "host.ii")
        front = drop_output_args(args) + ["-cuda", "-o", host_side]
        out = run(front, source)
        if out[0] != 0:
            return out
        return run([host_cxx, "-x", "c++", "-std=c++17", host_side] + ANALYZE +
                   ["-o", os.devnull], source)


def run(cmd, source):
    p = subprocess.run(cmd, cwd=TOP, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       text=True)
    return p.returncode, p.stdout, source


def our_reports(output):
    """Analyzer warnings that point into this repository, with their notes."""
    reports = []
    for line in output.splitlines():
        m = REPORT.match(line)
        if not m:
            continue
        path = os.path.normpath(os.path.join(TOP, m.group("file")))
        if path.startswith(TOP + os.sep) and "[" in m.group("what"):
            reports.append(os.path.relpath(path, TOP) + line[len(m.group("file")):])
    return reports


def entries(build_dir):
    with open(os.path.join(build_dir, "compile_commands.json")) as f:
        for e in json.load(f):
            source = os.path.normpath(os.path.join(e["directory"], e["file"]))
            if not source.startswith(TOP + os.sep):
                continue
            args = e.get("arguments") or shlex.split(e["command"])
            yield e["directory"], args, source


def job(directory, args, source, host_cxx):
    if source.endswith(".cu"):
        return analyze_cuda(args, source, host_cxx)
    return analyze_c(args, source)


def self_test(host_cxx):
    """The analyzer must report the use-after-free in each known-bad sample."""
    ok = True
    for name, args in (
            ("use_after_free.c", ["clang", "-std=c11", "-c"]),
            ("use_after_free.cu", ["nvcc", "-ccbin", host_cxx, "-arch=sm_75", "-c"])):
        source = os.path.join(TOP, "tests", "static", name)
        rc, output, _ = job(TOP, args + [source], source, host_cxx)
        if not any("after it is freed" in r for r in our_reports(output)):
            print("static analysis: clang's analyzer no longer reports the known bug in "
                  "tests/static/%s (exit %d):\n%s" % (name, rc, output), file=sys.stderr)
            ok = False
    return ok


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    host_cxx = os.environ.get("CUDAHOSTCXX", "clang++")
    if not self_test(host_cxx):
        return 2
    todo = list(entries(sys.argv[1]))
    failed, reports = [], []
    with concurrent.futures.ThreadPoolExecutor(os.cpu_count() or 2) as pool:
        for rc, output, source in pool.map(lambda e: job(*e, host_cxx), todo):
            if rc != 0 and not our_reports(output):
                failed.append((source, output))
            reports.extend(our_reports(output))
    for source, output in failed:
        print("static analysis: could not analyse %s:\n%s" % (os.path.relpath(source, TOP),
                                                              output), file=sys.stderr)
    for r in reports:
        print(r)
    print("static analysis: %d files, %d reports (%s)" % (len(todo), len(reports), CHECKERS))
    if failed:
        return 2
    return 1 if reports else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""scripts/check-floors.py: the two checks of scripts/check-floors.sh that need a graph.

1. Includes, followed transitively: no file in tools/ and no header in core/ or
   diagnostics/ reaches a kernels/cuda/ header through any chain of #includes. Plain-C
   facts shared with the CUDA side live in kernels/device_facts.h.
2. Call loops between files: an edge A -> B when A's code names a global function that B
   defines (a call, or a pointer put in a table); every group of files that reach each
   other again is a loop. Read from the sources with regexes, no build needed: comments,
   strings and preprocessor lines are dropped, a definition is `name(...) {` at file scope
   without `static`, a use is any other occurrence of a defined name.

Prints what it finds and exits 1 when either list is not empty. Before looking at our files
it must find the loop planted in tests/static/call_loop_*.c (exit 2 when it does not), so
that it cannot quietly stop looking.
"""
import os
import re
import subprocess
import sys

FLOORS = ("base", "models", "data", "kernels", "core", "diagnostics", "tools")
INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*"([^"]+)"', re.M)
IDENT = re.compile(r"[A-Za-z_]\w*")
KEYWORDS = {"if", "for", "while", "switch", "return", "sizeof", "defined", "__attribute__",
            "_Static_assert", "static_assert", "alignof", "_Alignof", "__launch_bounds__"}


def our_files():
    out = subprocess.run(["git", "ls-files", "*.c", "*.h", "*.cu"], check=True,
                         capture_output=True, text=True).stdout.split()
    return [f for f in out if f.split("/", 1)[0] in FLOORS]


def read(path):
    with open(path, encoding="utf-8", errors="replace") as fh:
        return fh.read()


# ---- 1. includes, transitively ---------------------------------------------------------

def include_chains(files, texts):
    includes = {f: [i for i in INCLUDE.findall(texts[f]) if i in texts] for f in files}

    def is_cuda(path):
        return path.startswith("kernels/cuda/")

    def watched(path):
        top = path.split("/", 1)[0]
        return top == "tools" or (path.endswith(".h") and top in ("core", "diagnostics"))

    problems = []
    for start in sorted(f for f in files if watched(f)):
        parent = {start: None}
        queue = [start]
        found = None
        while queue and not found:
            nxt = []
            for f in queue:
                for i in includes[f]:
                    if i in parent:
                        continue
                    parent[i] = f
                    if is_cuda(i):
                        found = i
                        break
                    nxt.append(i)
                if found:
                    break
            queue = nxt
        if found:
            chain = []
            while found:
                chain.append(found)
                found = parent[found]
            problems.append(" -> ".join(reversed(chain)))
    return problems


# ---- 2. call loops between files -------------------------------------------------------

def code_only(text):
    """The text with comments, string and character literals and preprocessor lines blanked."""
    text = re.sub(r"\\\n", " ", text)
    pattern = re.compile(r'//[^\n]*|/\*.*?\*/'                 # comments
                         r'|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\''  # literals
                         r'|^[ \t]*#[^\n]*', re.S | re.M)           # preprocessor lines
    return pattern.sub(lambda m: " " if not m.group(0).startswith("#") else "", text)


def definitions_and_uses(code):
    """Names of the non-static functions defined at file scope, and the text inside braces
    (function bodies, tables' initialisers): where a use of a function can be, unlike a
    prototype at file scope."""
    names, inner = [], []
    depth = 0
    last = 0  # where the current file-scope declaration began
    for i, c in enumerate(code):
        if c == "{":
            if depth == 0:
                head = code[last:i]
                m = re.search(r"([A-Za-z_]\w*)\s*\((?:[^()]|\([^()]*\))*\)\s*(?:const\s*)?$", head)
                storage = head[:m.start()] if m else ""
                if m and m.group(1) not in KEYWORDS and "=" not in head \
                        and not re.search(r"\b(static|typedef|struct|enum|union)\b", storage):
                    names.append(m.group(1))
                start = i + 1
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0:
                inner.append(code[start:i])
                last = i + 1
        elif c == ";" and depth == 0:
            last = i + 1
    # `extern "C" {` opens a block whose functions this misses: only headers have one.
    return names, " ".join(inner)


def call_loops(files, texts):
    sources = [f for f in files if not f.endswith(".h")]
    code = {f: code_only(texts[f]) for f in sources}
    parsed = {f: definitions_and_uses(code[f]) for f in sources}
    defined_in = {}
    for f in sources:
        for name in parsed[f][0]:
            defined_in.setdefault(name, set()).add(f)
    edges = {f: {} for f in sources}
    for f in sources:
        own = set(parsed[f][0])
        for name in set(IDENT.findall(parsed[f][1])):
            if name in own or name not in defined_in:
                continue
            for g in defined_in[name]:
                if g != f:
                    edges[f].setdefault(g, set()).add(name)
    return strongly_connected(sources, edges), edges


def strongly_connected(nodes, edges):
    """Tarjan's groups of more than one file, each sorted, iteratively."""
    index, low, on_stack, stack, groups = {}, {}, set(), [], []
    counter = 0
    for root in nodes:
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            v, it = work[-1]
            advanced = False
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(edges[w]))))
                    advanced = True
                    break
                if w in on_stack:
                    low[v] = min(low[v], index[w])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                group = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    group.append(w)
                    if w == v:
                        break
                if len(group) > 1:
                    groups.append(sorted(group))
    return sorted(groups)


def main():
    os.chdir(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    files = our_files()
    texts = {f: read(f) for f in files}
    planted = ["tests/static/call_loop_clock.c", "tests/static/call_loop_sums.c"]
    if call_loops(planted, {f: read(f) for f in planted})[0] != [planted]:
        print(f"check-floors.py: missed the call loop planted in {' and '.join(planted)}")
        return 2
    failed = False

    chains = include_chains(files, texts)
    for chain in chains:
        print(f"{chain.split(' -> ')[0]}: reaches kernels/cuda/ through {chain}")
    failed |= bool(chains)

    loops, edges = call_loops(files, texts)
    for group in loops:
        print("call loop between " + ", ".join(group) + ":")
        members = set(group)
        for a in group:
            for b in sorted(set(edges[a]) & members):
                print(f"  {a} -> {b} ({', '.join(sorted(edges[a][b]))})")
    failed |= bool(loops)

    print(f"check-floors: {len(chains)} file(s) reaching kernels/cuda/ through includes, "
          f"{len(loops)} call loop(s) between files")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

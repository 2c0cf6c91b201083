#!/usr/bin/env python3
"""callgraph.py OBJ... - the references between source files, from their objects.

An edge A -> B means A's object refers to a symbol B's object defines (an
undefined symbol in A that B defines): a function (T, W weak), or data
(D, B, R, V, G, S: a variable, a hook pointer, a table). Data counts as
much as a call: a hook pointer defined in an upper file and read by a
lower one is a loop as surely as a call up. Prints every cycle
(A -> B -> ... -> A) and exits 1 if there is one, else prints the edges
and exits 0. A call through a pointer that the lower file defines and
the upper one sets (a registration) is an edge from the upper to the
lower only: that is how a lower layer calls up. A reference to a
function of the C library is the C library's, even where a file of ours
defines it to interpose it (libtrail's open, write, sigaction...): the
other files call the C library through it, not that file.
"""
import os
import subprocess
import sys


def symbols(obj):
    out = subprocess.run(["nm", "-P", obj], capture_output=True, text=True, check=True).stdout
    defined, undefined = set(), set()
    for line in out.splitlines():
        parts = line.split()
        if len(parts) < 2:
            continue
        name, kind = parts[0], parts[1]
        if kind in "TWDBRVGS":
            defined.add(name)
        elif kind == "U":
            undefined.add(name)
    return defined, undefined


def libc_symbols():
    try:
        path = subprocess.run(["cc", "-print-file-name=libc.so.6"], capture_output=True,
                              text=True, check=True).stdout.strip()
        out = subprocess.run(["nm", "-D", "--defined-only", "-P", path], capture_output=True,
                             text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return set()
    return {line.split()[0].split("@")[0] for line in out.splitlines() if line.split()}


def name_of(obj):
    base = os.path.basename(obj)
    return base[:-2] if base.endswith(".o") else base


def main(objs):
    defs, uses = {}, {}
    owner = {}
    libc = libc_symbols()
    for o in objs:
        d, u = symbols(o)
        n = name_of(o)
        defs[n], uses[n] = d, u
        for s in d:
            if s not in libc:
                owner.setdefault(s, n)
    edges = {n: sorted({owner[s] for s in uses[n] if s in owner and owner[s] != n}) for n in defs}
    # cycles: a depth-first search from each node back to itself
    cycles = set()
    def walk(start, node, path):
        for nxt in edges[node]:
            if nxt == start:
                cyc = path[:]
                k = cyc.index(min(cyc))
                cycles.add(tuple(cyc[k:] + cyc[:k]))
            elif nxt not in path and nxt > start:
                walk(start, nxt, path + [nxt])
    for n in sorted(edges):
        walk(n, n, [n])
    for n in sorted(edges):
        if edges[n]:
            print(f"{n} -> {', '.join(edges[n])}")
    for c in sorted(cycles):
        print("cycle: " + " -> ".join(c + (c[0],)))
    return 1 if cycles else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

#!/usr/bin/env python3
"""The include rule (docs/design.md, "Layout"): every quoted include names its folder from an
include root, and no folder includes one above it in the layering. Prints each include that
breaks it and exits 1; with --graph, also every folder import and its count.

Include roots: src/ for the host code ("problems/problem.h"), the repository root for kernels/
and tests/ ("kernels/masks.cuh", "tests/test_support.h"), the build's generated/ directory
("commit/mha_build_commit.h"), and, for the PyTorch extension, python/ ("src/checks.h").
The installed package keeps the same paths under include/mha_tune, so examples/ and python/src
include the installed folders only."""

import argparse
import collections
import os
import re
import subprocess
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Bottom first: a folder includes only itself and the folders before it. kernels/ and registry/
# are mha::kernels (the device code and its generated table); common/ is the vocabulary every
# stage speaks (errors, kinds, rows, splits, statistics, the partition rule); defaults/ and api/
# are mha::decode; then the stages in the order data flows through them; cli/ on top.
LAYERS = ["kernels", "registry", "common", "defaults", "api", "problems", "sweep", "gpu",
          "verify", "reports", "runner", "cli"]
# What `cmake --install` puts under include/mha_tune, the only folders a consumer can include.
INSTALLED = {"kernels", "registry", "common", "api"}
GENERATED = {"commit/mha_build_commit.h"}
SOURCES = ("*.cpp", "*.h", "*.cu", "*.cuh")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def tracked(repo):
    out = subprocess.run(["git", "ls-files", "--", *SOURCES], cwd=repo, check=True,
                         capture_output=True, text=True).stdout
    return [f for f in out.splitlines() if f]


def folder(path):
    """The layer of a tracked file ("problems" for src/problems/x.h), or its top folder."""
    parts = path.split("/")
    return parts[1] if parts[0] == "src" and len(parts) > 2 else parts[0]


def roots_of(path):
    """The include roots a file compiles with, as repository paths ("" is the root)."""
    top = path.split("/")[0]
    if top == "python":
        return ["python", "src", ""]
    return ["src", ""]


def resolve(inc, path, files):
    """The tracked file an include names, or None."""
    hits = [os.path.normpath(os.path.join(root, inc)) for root in roots_of(path)]
    hits = [h for h in hits if h in files]
    return hits[0] if len(hits) == 1 else None


def check(repo):
    files = set(tracked(repo))
    problems, graph = [], collections.defaultdict(list)
    for path in sorted(files):
        with open(os.path.join(repo, path), encoding="utf-8") as f:
            text = f.read()
        for inc in INCLUDE.findall(text):
            where = f"{path}: #include \"{inc}\""
            if inc in GENERATED:
                continue
            if "/" not in inc:
                problems.append(f"{where}: name its folder (\"problems/problem.h\")")
                continue
            if inc.startswith(("../", "./")) or (inc.startswith("src/") and folder(path) != "python"):
                problems.append(f"{where}: spell it from the include root src/")
                continue
            target = resolve(inc, path, files)
            if target is None:
                problems.append(f"{where}: not a file under an include root")
                continue
            a, b = folder(path), folder(target)
            if a != b:
                graph[(a, b)].append(where)
            if path.split("/")[0] in ("examples", "python") and b not in INSTALLED | {a}:
                problems.append(f"{where}: {b}/ is not installed (only {sorted(INSTALLED)})")
            elif a in LAYERS and b in LAYERS and LAYERS.index(b) > LAYERS.index(a):
                problems.append(f"{where}: {a}/ includes {b}/, which is above it")
    return problems, graph


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--graph", action="store_true", help="print every folder import")
    args = parser.parse_args()
    problems, graph = check(REPO)
    if args.graph:
        for (a, b), where in sorted(graph.items()):
            print(f"{a} -> {b}: {len(where)}")
    for p in problems:
        print(p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())

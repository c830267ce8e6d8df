#!/usr/bin/env python3
"""The decode kernel's key loop in SASS, per instance: registers, spill bytes, the loop's
instructions, the lazy-rescale block that most tiles skip, and the loop's instruction mix. The
"instructions a tile" of docs/performance.md are counted this way, so a prediction can be
reproduced without a GPU.

  scripts/sass_loop.py [--kernels DIR] [--interior] TRAITS [TRAITS ...]
  scripts/sass_loop.py --parse LISTING      (an existing `cuobjdump -sass` listing)

TRAITS is DecodeTraits' argument list, as in scripts/compare_sass.sh, e.g.
  "DecodeFeatures<__nv_bfloat16, __nv_bfloat16, 64, 64, ContiguousKv, NullMask, false>,
   TileShape<16, 128, 32, 16, 16, 256, 3, true>"

The loop runs from the stage wait at its top (DEPBAR.LE SB0) up to the backward branch that
returns to it (not counted); the rescale block is the vote's branch and what it jumps over, so
"loop less the block" is what a tile that keeps its reference maxima issues, less its two
branches (the count docs/performance.md uses). --interior compiles a copy of
the kernels with the two tests that only a sequence's last tile needs (the whole-tile copy test and
the all-visible mask test) forced to true, so the loop holds only the path of every other tile; if
the source no longer has those tests, that is an error, not a silent count. Needs nvcc and
cuobjdump (on PATH, or CUOBJDUMP=...; `pip download nvidia-cuda-cuobjdump` has one). Exit 0; 2 on
bad input; 3 when a tool is missing.
"""

import argparse
import collections
import os
import re
import shutil
import subprocess
import sys
import tempfile

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# (file, the test as written, what --interior makes it): the tests an interior tile always passes.
INTERIOR_TESTS = [
    ("kv_pipeline.cuh", "if ((tile + 1) * kBN <= w.n)", "if (true)"),
    ("decode_stages.cuh", "if (first_key >= keys.all_lo && first_key + T::kWN <= keys.all_end)",
     "if (true)"),
    ("decode_stages_columns.cuh",
     "if (first_key >= keys.all_lo && first_key + kKeyTiles * 16 <= keys.all_end)", "if (true)"),
]

INSTRUCTION = re.compile(r"^\s+/\*([0-9a-f]{4,})\*/\s+(.*?)\s*;")
BRANCH_TARGET = re.compile(r"\bBRA\b.*?0x([0-9a-f]+)")


# Instructions a backward branch may land before the stage wait at the top of its loop (a
# uniform add of the loop counter, a predicate).
LOOP_TOP_SLACK = 4


class InputError(Exception):
    pass


def decode_function(listing):
    """[(address, instruction)] of the decode kernel's function in a cuobjdump -sass listing."""
    instructions, inside = [], False
    for line in listing.splitlines():
        if "Function :" in line:
            inside = "decode_kernel" in line
            continue
        match = INSTRUCTION.match(line)
        if inside and match:
            instructions.append((int(match.group(1), 16), match.group(2)))
    if not instructions:
        raise InputError("no decode_kernel function in the listing")
    return instructions


def key_loop(instructions):
    """The key loop: the first backward branch whose target is the stage wait at the loop's top
    (DEPBAR.LE SB0, at most a few instructions after the target), from that wait up to the branch
    (excluded). A wait outside the loop is not its start: the contiguous early path waits for its
    first tile before the loop (kv_pipeline.cuh) and was counted into the loop until this rule."""
    if not any(text.startswith("DEPBAR.LE SB0") for _, text in instructions):
        raise InputError("no pipeline wait (DEPBAR.LE SB0): not a decode kernel's key loop")
    index = {address: i for i, (address, _) in enumerate(instructions)}
    for end, (address, text) in enumerate(instructions):
        target = BRANCH_TARGET.search(text)
        if not target or int(target.group(1), 16) >= address:
            continue
        top = index.get(int(target.group(1), 16))
        if top is None:
            continue
        for start in range(top, min(top + LOOP_TOP_SLACK + 1, end)):
            if instructions[start][1].startswith("DEPBAR.LE SB0"):
                return instructions[start:end]
    raise InputError("no backward branch to a pipeline wait (DEPBAR.LE SB0)")


def rescale_block(loop):
    """The lazy-rescale vote's branch and the instructions it jumps over (None without a vote)."""
    for i, (_, text) in enumerate(loop):
        if text.startswith("VOTE.ANY") and i + 1 < len(loop):
            address, branch = loop[i + 1]
            target = BRANCH_TARGET.search(branch)
            if target and int(target.group(1), 16) > address:
                return (int(target.group(1), 16) - address) // 16
    return None


def opcode(text):
    words = text.split()
    if words and words[0].startswith("@"):
        words = words[1:]
    return words[0].split(".")[0] if words else ""


def summary(loop):
    skipped = rescale_block(loop)
    mix = collections.Counter(opcode(text) for _, text in loop).most_common(8)
    return {"loop": len(loop), "rescale_block": skipped,
            "tile": len(loop) - (skipped or 0), "mix": mix}


def tool(name, env):
    path = os.environ.get(env) or shutil.which(name)
    if not path or not os.path.exists(path):
        print(f"sass_loop.py: {name} not found (set {env}=... or put it on PATH)", file=sys.stderr)
        sys.exit(3)
    return path


def interior_copy(kernels, work):
    copy = os.path.join(work, "kernels")
    shutil.copytree(kernels, copy)
    for name, test, forced in INTERIOR_TESTS:
        path = os.path.join(copy, name)
        text = ""
        if os.path.exists(path):
            with open(path) as f:
                text = f.read()
        if text.count(test) != 1:
            raise InputError(f"{name}: the interior test `{test}` is not there once; "
                             "update INTERIOR_TESTS in scripts/sass_loop.py")
        with open(path, "w") as f:
            f.write(text.replace(test, forced))
    return copy


def compile_instance(traits, kernels, work, index, nvcc, cuobjdump):
    source = os.path.join(work, f"instance{index}.cu")
    with open(source, "w") as f:
        f.write('#include "decode_launch.cuh"\nnamespace mha { cudaError_t f(const DecodeParams& p, '
                f"cudaStream_t s) {{ return launch_decode<DecodeTraits<{traits}>>(p, s); }} }}\n")
    cubin = source + ".cubin"
    built = subprocess.run([nvcc, f"-I{kernels}", "-O3", "-DNDEBUG", "-arch=sm_90", "-std=c++17",
                            "--expt-relaxed-constexpr", "-cubin", "-Xptxas", "-v", "-o", cubin, source],
                           capture_output=True, text=True)
    if built.returncode != 0:
        raise InputError(f"{traits}: nvcc failed:\n{built.stderr[-2000:]}")
    # ptxas -v reports the decode kernel and the reduce; the decode kernel's block comes first
    # after its mangled name.
    report = built.stderr[built.stderr.find("decode_kernel"):]
    registers = re.search(r"Used (\d+) registers", report)
    spills = re.search(r"(\d+) bytes spill stores", report)
    listing = subprocess.run([cuobjdump, "-sass", cubin], capture_output=True, text=True, check=True).stdout
    return (int(registers.group(1)) if registers else None,
            int(spills.group(1)) if spills else 0, listing)


def print_row(label, registers, spills, counts):
    mix = ", ".join(f"{op} {n}" for op, n in counts["mix"])
    block = "—" if counts["rescale_block"] is None else counts["rescale_block"]
    print(f"| {label} | {registers if registers is not None else '—'} | {spills} | {counts['loop']} "
          f"| {block} | {counts['tile']} | {mix} |")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("traits", nargs="*", help="DecodeTraits argument lists")
    parser.add_argument("--kernels", default=os.path.join(REPO, "kernels"), help="kernel sources")
    parser.add_argument("--interior", action="store_true",
                        help="force the last-tile tests off: count the interior tiles' path")
    parser.add_argument("--parse", metavar="LISTING", help="count an existing cuobjdump -sass listing")
    args = parser.parse_args()
    if bool(args.parse) == bool(args.traits):
        parser.error("give TRAITS to compile, or --parse LISTING")
    print("| instance | registers | spill bytes | loop | rescale block | loop less the block | mix |")
    print("|---|---:|---:|---:|---:|---:|---|")
    try:
        if args.parse:
            try:
                with open(args.parse) as f:
                    listing = f.read()
            except OSError as error:
                raise InputError(f"{args.parse}: {error.strerror}")
            print_row(os.path.basename(args.parse), None, 0, summary(key_loop(decode_function(listing))))
            return 0
        with tempfile.TemporaryDirectory() as work:
            kernels = interior_copy(args.kernels, work) if args.interior else args.kernels
            nvcc, cuobjdump = tool("nvcc", "NVCC"), tool("cuobjdump", "CUOBJDUMP")
            for index, traits in enumerate(args.traits):
                registers, spills, listing = compile_instance(traits, kernels, work, index, nvcc,
                                                              cuobjdump)
                print_row(traits, registers, spills, summary(key_loop(decode_function(listing))))
    except InputError as error:
        print(f"sass_loop.py: {error}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())

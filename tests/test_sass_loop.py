#!/usr/bin/env python3
"""scripts/sass_loop.py --parse on a synthetic cuobjdump listing shaped like the decode kernel's:
a prologue, the key loop (a stage wait, a vote whose branch skips the rescale block, the
backward branch) and a second function that must be ignored; listings without a decode kernel or
a loop are refused (exit 2), and compiling without cuobjdump says so (exit 3)."""

import os
import subprocess
import sys
import tempfile
import unittest

from mha_test_env import REPO  # noqa: E402
SCRIPT = os.path.join(REPO, "scripts", "sass_loop.py")


def listing(function, body):
    lines = [f"\t\tFunction : {function}", "\t.headerflags\t@\"EF_CUDA_SM90\""]
    lines += [f"        /*{16 * i:04x}*/                   {text} ;  /* 0x000000000000 */"
              for i, text in enumerate(body)]
    return "\n".join(lines) + "\n"


# Addresses are 16 * index: the loop is instructions 2..9 (the wait up to the backward branch at
# 10, which jumps to 0x20); the vote's branch at 5 jumps to 0x80 (index 8), over 6 and 7.
DECODE = [
    "MOV R1, c[0x0][0x28]",               # 0  prologue
    "LDGSTS.E.BYPASS.128 [R2], desc[UR4][R4.64]",  # 1
    "DEPBAR.LE SB0, 0x1",                 # 2  loop start
    "HMMA.16816.F32.BF16 R8, R12, R16, RZ",  # 3
    "VOTE.ANY P0, P0",                    # 4
    "@!P0 BRA 0x80",                      # 5  skips 6 and 7
    "FMUL R20, R20, R21",                 # 6  rescale block
    "FMUL R22, R22, R21",                 # 7
    "MUFU.EX2 R24, R25",                  # 8
    "@P1 FADD R26, R26, R24",             # 9
    "@!P2 BRA 0x20",                      # 10 backward: the loop's end (not counted)
    "EXIT",                               # 11
]


class SassLoop(unittest.TestCase):
    def run_on(self, text, *args, env=None):
        with tempfile.NamedTemporaryFile("w", suffix=".sass", delete=False) as f:
            f.write(text)
        try:
            return subprocess.run([sys.executable, SCRIPT, "--parse", f.name, *args],
                                  capture_output=True, text=True, env=env)
        finally:
            os.unlink(f.name)

    def test_counts_the_loop_and_the_block_the_vote_skips(self):
        text = listing("_ZN3mha19splitk_reduce_kernelEv", ["DEPBAR.LE SB0, 0x0", "BRA 0x0"]) + \
            listing("_ZN3mha13decode_kernelINS_12DecodeTraitsIEEEEvNS_12DecodeParamsE", DECODE)
        result = self.run_on(text)
        self.assertEqual(result.returncode, 0, result.stderr)
        row = result.stdout.strip().splitlines()[-1].split("|")
        # loop 8 (indices 2..9), block 3 (the branch and the two it skips), the rest 5
        self.assertEqual([c.strip() for c in row[4:7]], ["8", "3", "5"])
        self.assertIn("FMUL 2", row[7])
        self.assertIn("FADD 1", row[7])  # the predicate is not the opcode

    def test_a_stage_wait_before_the_loop_is_not_its_start(self):
        # The contiguous early path waits for its first tile (and zeroes rows) before the loop:
        # that wait is not the loop's top; the loop is still indices 2..9 shifted by the three
        # instructions put in front of it.
        early = ["DEPBAR.LE SB0, 0x1", "STS.128 [R3], RZ", "MOV R9, R10"]
        body = DECODE[:2] + early + [t.replace("BRA 0x20", "BRA 0x50").replace("BRA 0x80", "BRA 0xb0")
                                     for t in DECODE[2:]]
        result = self.run_on(listing("_ZN3mha13decode_kernelEv", body))
        self.assertEqual(result.returncode, 0, result.stderr)
        row = result.stdout.strip().splitlines()[-1].split("|")
        self.assertEqual([c.strip() for c in row[4:7]], ["8", "3", "5"])
        self.assertNotIn("STS", row[7])

    def test_a_listing_without_the_decode_kernel_is_refused(self):
        result = self.run_on(listing("_ZN3mha19splitk_reduce_kernelEv", DECODE))
        self.assertEqual(result.returncode, 2)
        self.assertIn("no decode_kernel", result.stderr)

    def test_a_decode_kernel_without_a_loop_is_refused(self):
        result = self.run_on(listing("_ZN3mha13decode_kernelEv", ["MOV R1, R2", "EXIT"]))
        self.assertEqual(result.returncode, 2)
        self.assertIn("DEPBAR.LE SB0", result.stderr)

    def test_compiling_without_cuobjdump_says_so(self):
        env = dict(os.environ, CUOBJDUMP="/nonexistent/cuobjdump", NVCC=sys.executable)
        result = subprocess.run([sys.executable, SCRIPT, "__nv_bfloat16"], capture_output=True,
                                text=True, env=env)
        self.assertEqual(result.returncode, 3)
        self.assertIn("cuobjdump not found", result.stderr)

    def test_interior_finds_the_last_tile_tests_in_the_kernels(self):
        # The copy with the tests forced succeeds on this tree's kernels (then the missing tool
        # stops it); a tree without them is refused, so the count cannot silently include them.
        env = dict(os.environ, CUOBJDUMP="/nonexistent/cuobjdump", NVCC=sys.executable)
        result = subprocess.run([sys.executable, SCRIPT, "--interior", "__nv_bfloat16"],
                                capture_output=True, text=True, env=env)
        self.assertEqual(result.returncode, 3, result.stderr)
        with tempfile.TemporaryDirectory() as kernels:
            for name in ("kv_pipeline.cuh", "decode_stages.cuh", "decode_stages_columns.cuh"):
                with open(os.path.join(kernels, name), "w") as f:
                    f.write("// no interior tests here\n")
            result = subprocess.run([sys.executable, SCRIPT, "--interior", "--kernels", kernels,
                                     "__nv_bfloat16"], capture_output=True, text=True, env=env)
        self.assertEqual(result.returncode, 2)
        self.assertIn("is not there once", result.stderr)


if __name__ == "__main__":
    unittest.main()

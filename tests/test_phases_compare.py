#!/usr/bin/env python3
"""scripts/phases_compare.py on synthetic `mha-tune phases` outputs: rows pair on (kernel,
problem, P) and each phase prints before → after with its difference (a cluster row's finish
keeps its last-barrier part out of the parse); a key printed twice counts once; unpaired rows are
listed; no pair fails (1); a file without rows or with a malformed row is exit 2."""

import os
import subprocess
import sys
import tempfile
import unittest

from mha_test_env import REPO  # noqa: E402
SCRIPT = os.path.join(REPO, "scripts", "phases_compare.py")

HEADER = ("| kernel | problem | P | working blocks (max an SM) | last start | ramp (max) | loop (max) | tail (max) | "
          "tail: merge / cluster wait / finish (of it, last barrier) | decode end | reduce start | reduce waited | "
          "reduce end | step | timed step | timer step ns |\n|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")


def row(kernel, split, ramp, loop, tail, parts, end, step, timed):
    return (f"| {kernel} | b1_n512 | {split} | 64 (1) | 0.00 | {ramp:.2f} (2.00) | {loop:.2f} (0.50) | {tail:.2f} (2.60) | "
            f"{parts} | {end:.2f} | - | - | - | {step:.2f} | {timed:.2f} | 32 |\n")


class PhasesCompareTest(unittest.TestCase):
    def run_on(self, before, after):
        with tempfile.TemporaryDirectory() as d:
            paths = []
            for name, text in (("before.md", before), ("after.md", after)):
                paths.append(os.path.join(d, name))
                with open(paths[-1], "w", encoding="utf-8") as f:
                    f.write(text)
            return subprocess.run([sys.executable, SCRIPT, *paths], capture_output=True, text=True)

    def test_pairs_and_differences(self):
        before = "--filter x\n\n" + HEADER + row("decode_a", "cluster8", 1.73, 0.47, 2.44, "0.36 / 0.94 / 1.13", 4.86, 4.86, 5.29) \
            + row("decode_a", "cluster8", 9.0, 9.0, 9.0, "9.00 / 9.00 / 9.00", 9.0, 9.0, 9.0) \
            + row("decode_a", "8", 1.79, 0.48, 1.30, "0.37 / 0.00 / 0.93", 4.10, 5.89, 6.24) \
            + "\n3 point(s) stamped, 0 failed verification\n"
        after = HEADER + row("decode_a", "cluster8", 1.70, 0.47, 2.00, "0.30 / 0.60 / 1.10 (0.50)", 4.40, 4.40, 4.90) \
            + row("decode_b", "cluster8", 1.0, 1.0, 1.0, "0.10 / 0.10 / 0.10", 3.0, 3.0, 3.5)
        r = self.run_on(before, after)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("| decode_a | b1_n512 | cluster8 | 1.73 → 1.70 (-0.03) | 0.47 → 0.47 (+0.00) | 2.44 → 2.00 (-0.44) | "
                      "0.36 → 0.30 (-0.06) | 0.94 → 0.60 (-0.34) | 1.13 → 1.10 (-0.03) | 4.86 → 4.40 (-0.46) | "
                      "4.86 → 4.40 (-0.46) | 5.29 → 4.90 (-0.39) |", r.stdout)
        self.assertIn("- only before: decode_a b1_n512 P 8", r.stdout)
        self.assertIn("- only after: decode_b b1_n512 P cluster8", r.stdout)
        self.assertIn("1 row(s) compared", r.stdout)

    def test_nothing_paired_fails(self):
        r = self.run_on(HEADER + row("decode_a", "1", 1, 1, 1, "0 / 0 / 1", 3, 3, 4),
                        HEADER + row("decode_a", "2", 1, 1, 1, "0 / 0 / 1", 3, 3, 4))
        self.assertEqual(r.returncode, 1)
        self.assertIn("nothing was compared", r.stderr)

    def test_bad_input(self):
        r = self.run_on("no table here\n", HEADER + row("decode_a", "1", 1, 1, 1, "0 / 0 / 1", 3, 3, 4))
        self.assertEqual(r.returncode, 2)
        self.assertIn("no phases row", r.stderr)
        r = self.run_on(HEADER + "| decode_a | p | 1 | 2 |\n", HEADER)
        self.assertEqual(r.returncode, 2)
        self.assertIn("columns, not a phases row", r.stderr)
        r = self.run_on(HEADER + row("decode_a", "1", 1, 1, 1, "0 / 1", 3, 3, 4), HEADER)
        self.assertEqual(r.returncode, 2)
        self.assertIn("are not merge / cluster wait / finish", r.stderr)


if __name__ == "__main__":
    unittest.main()

#!/usr/bin/env python3
"""Smoke test of scripts/lab/suggest_study.py on the committed H200 baseline
(results/h200_default.json): three rounds of `select --suggest` take 25% of its points,
and the defaults chosen from them are priced on every point (cost >= 1, within 1.05 there).
Run: MHA_BUILD_DIR=build-ci python3 tests/test_suggest_study.py (ctest: label "host")."""

import os
import re
import subprocess
import sys
import tempfile
import unittest

from mha_test_env import REPO, MHA_TUNE  # noqa: E402
BASELINE = os.path.join(REPO, "results", "h200_default.json")
SCRIPT = os.path.join(REPO, "scripts", "lab", "suggest_study.py")


@unittest.skipUnless(os.path.exists(MHA_TUNE), f"{MHA_TUNE} not built")
class SuggestStudy(unittest.TestCase):
    def test_a_quarter_of_the_points_prices_close_to_all_of_them(self):
        with tempfile.TemporaryDirectory(prefix="suggest_study_") as work:
            p = subprocess.run([sys.executable, SCRIPT, MHA_TUNE, BASELINE, "--fraction", "0.25",
                                "--work", work], capture_output=True, text=True, timeout=300)
            self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
            rounds = re.findall(r"round \d: (\d+) of (\d+) points", p.stdout)
            self.assertEqual(len(rounds), 3, p.stdout)
            taken, total = map(int, rounds[-1])
            self.assertEqual(taken, int(0.25 * total))
            m = re.search(r"^\| all \| (\d+) \| ([0-9.]+) \| ([0-9.]+) \|$", p.stdout, re.M)
            self.assertIsNotNone(m, p.stdout)
            geomean = float(m.group(2))
            self.assertGreaterEqual(geomean, 1.0)
            self.assertLessEqual(geomean, 1.05, p.stdout)

    def test_bad_arguments_are_refused(self):
        p = subprocess.run([sys.executable, SCRIPT, MHA_TUNE, BASELINE, "--fraction", "0"],
                           capture_output=True, text=True, timeout=60)
        self.assertNotEqual(p.returncode, 0)
        self.assertIn("--fraction", p.stderr)


if __name__ == "__main__":
    unittest.main()

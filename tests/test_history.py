#!/usr/bin/env python3
"""Tests of scripts/history.py: a step in a series of reports is found at the report where it
happened, noise that overlaps is not, nothing to track fails, bad input exits 2. No GPU needed.
Run: python3 tests/test_history.py (ctest: label "host")."""

import copy
import json
import os
import subprocess
import sys
import tempfile
import unittest

from mha_test_env import REPO  # noqa: E402
SCRIPT = os.path.join(REPO, "scripts", "history.py")
BASELINE = os.path.join(REPO, "results", "h200_default.json")


def run(*args):
    return subprocess.run([sys.executable, SCRIPT, *args], capture_output=True, text=True, timeout=120)


class History(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls._tmp = tempfile.TemporaryDirectory()
        with open(BASELINE) as f:
            full = json.load(f)
        cls.base = dict(full, rows=full["rows"][:6])

    @classmethod
    def tearDownClass(cls):
        cls._tmp.cleanup()

    def series(self, name, factors_by_row):
        """Reports night by night: row r's median times factors_by_row[r][night]."""
        paths = []
        nights = len(next(iter(factors_by_row.values())))
        for night in range(nights):
            doc = copy.deepcopy(self.base)
            doc["metadata"]["timestamp"] = f"2026-12-{night + 1:02d}T00:00:00Z"
            for r, factors in factors_by_row.items():
                doc["rows"][r]["time"]["median_us"] *= factors[night]
            path = os.path.join(self._tmp.name, f"{name}_{night}.json")
            with open(path, "w") as f:
                json.dump(doc, f)
            paths.append(path)
        return paths

    def test_a_step_is_found_where_it_happened_and_noise_is_not(self):
        flat = [1.0, 1.01, 0.99, 1.0, 1.01, 0.99]
        paths = self.series("step", {0: [1.0, 1.01, 0.99, 1.2, 1.21, 1.19],  # +20% from night 4
                                     1: [1.0, 1.08, 0.95, 1.07, 0.96, 1.06],  # noisy, no step
                                     2: flat})
        r = run(*reversed(paths))  # the order of the arguments does not matter: time order does
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("1 moved by more than 5%", r.stdout)
        self.assertIn("(1 slower, 0 faster)", r.stdout)
        self.assertIn(os.path.basename(paths[3]), r.stdout)
        self.assertIn("+20.0%", r.stdout)
        self.assertEqual(run(*paths, "--fail-on-slowdown").returncode, 1)

    def test_nothing_to_track_and_bad_input(self):
        paths = self.series("short", {0: [1.0, 1.0, 1.0]})
        r = run(*paths)  # 3 reports, 2 x --min-run = 4 needed
        self.assertEqual(r.returncode, 1)
        self.assertIn("nothing to track", r.stderr)
        bad = os.path.join(self._tmp.name, "bad.json")
        with open(bad, "w") as f:
            f.write("{")
        self.assertEqual(run(bad).returncode, 2)
        self.assertEqual(run(*paths, "--threshold", "0").returncode, 2)


if __name__ == "__main__":
    unittest.main()

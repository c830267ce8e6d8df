#!/usr/bin/env python3
"""An option given an empty value is refused with exit 2, naming it: `--threshold ''` passed the
gate with a 0% threshold, `--out ''` and `--partitions ''` acted as absent. No GPU needed.
Run: MHA_BUILD_DIR=build-ci python3 tests/test_cli_empty_values.py (ctest: label "host")."""

import os
import subprocess
import unittest

from mha_test_env import REPO, MHA_TUNE  # noqa: E402
BASELINE = os.path.join(REPO, "results", "h200_default.json")


def run(*args):
    return subprocess.run([MHA_TUNE, *args], capture_output=True, text=True, timeout=60, cwd=REPO)


@unittest.skipUnless(os.path.exists(MHA_TUNE), f"{MHA_TUNE} not built")
class EmptyValues(unittest.TestCase):
    def test_every_empty_value_is_refused_by_name(self):
        cases = [
            (["compare", BASELINE, BASELINE, "--threshold", ""], "--threshold"),
            (["compare", BASELINE, BASELINE, "--threshold="], "--threshold"),
            (["select", BASELINE, "--out-json", ""], "--out-json"),
            (["sweep", "--dry-run", "--partitions", ""], "--partitions"),
            (["sweep", "--dry-run", "--out", ""], "--out"),
        ]
        for args, option in cases:
            p = run(*args)
            self.assertEqual(p.returncode, 2, (args, p.stdout, p.stderr))
            self.assertIn(f"{option}: an empty value", p.stderr, args)

    def test_values_that_are_not_empty_still_work(self):
        p = run("compare", BASELINE, BASELINE, "--threshold", "0.03")
        self.assertEqual(p.returncode, 0, p.stderr)


if __name__ == "__main__":
    unittest.main()

#!/usr/bin/env python3
"""scripts/ab_sweep.sh refuses what it cannot A/B before it builds anything: too few arguments,
a directory that is not an mha-tune source tree, a missing config (exit 2, naming the fault). The
builds, verification and sweeps need a GPU and run where one is."""

import os
import subprocess
import tempfile
import unittest

from mha_test_env import REPO  # noqa: E402
SCRIPT = os.path.join(REPO, "scripts", "ab_sweep.sh")


def run(*args):
    return subprocess.run(["bash", SCRIPT, *args], capture_output=True, text=True, cwd=REPO)


class AbSweepArguments(unittest.TestCase):
    def test_usage(self):
        r = run("a", "b")
        self.assertEqual(r.returncode, 2)
        self.assertIn("usage: scripts/ab_sweep.sh BEFORE_TREE AFTER_TREE CONFIG PREFIX", r.stderr)

    def test_not_a_source_tree(self):
        with tempfile.TemporaryDirectory() as tmp:
            r = run(tmp, REPO, "configs/suites/ci.json", os.path.join(tmp, "ab"))
        self.assertEqual(r.returncode, 2)
        self.assertIn("not an mha-tune source tree", r.stderr)

    def test_missing_config(self):
        with tempfile.TemporaryDirectory() as tmp:
            r = run(REPO, REPO, "configs/none.json", os.path.join(tmp, "ab"))
        self.assertEqual(r.returncode, 2)
        self.assertIn("configs/none.json: no such config", r.stderr)


if __name__ == "__main__":
    unittest.main()

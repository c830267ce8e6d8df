#!/usr/bin/env python3
"""scripts/refresh_baseline.sh refuses, before it builds or sweeps anything, to make a baseline
that would not be main's: from a tree with uncommitted changes, or on a machine whose GPU is not
the baseline's (here: none). Each refusal is exit 2 with the reason. The sweep itself runs on an
H200 (results/README.md, "Refreshing the baseline")."""

import os
import shutil
import subprocess
import tempfile
import unittest

from mha_test_env import REPO  # noqa: E402


def git(*args, cwd):
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=True)


@unittest.skipIf(shutil.which("git") is None or not os.path.isdir(os.path.join(REPO, ".git")),
                 "needs git and a git checkout")
class RefreshBaseline(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.tree = os.path.join(self.tmp.name, "tree")
        git("clone", "--quiet", "--no-hardlinks", REPO, self.tree, cwd=self.tmp.name)

    def tearDown(self):
        self.tmp.cleanup()

    def run_script(self):
        # No nvidia-smi on PATH: this machine has no GPU as far as the script can tell.
        env = dict(os.environ, PATH="/usr/bin:/bin")
        env.pop("MHA_GIT_COMMIT", None)
        return subprocess.run([os.path.join(self.tree, "scripts", "refresh_baseline.sh")],
                              cwd=self.tree, capture_output=True, text=True, env=env, timeout=60)

    def test_a_dirty_tree_makes_no_baseline(self):
        with open(os.path.join(self.tree, "README.md"), "a") as f:
            f.write("\nlocal edit\n")
        r = self.run_script()
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn("uncommitted changes", r.stderr)

    def test_a_copy_without_its_repository_must_name_its_commit(self):
        shutil.rmtree(os.path.join(self.tree, ".git"))
        r = self.run_script()
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn("MHA_GIT_COMMIT", r.stderr)

    def test_another_gpu_makes_no_baseline(self):
        if shutil.which("nvidia-smi"):
            self.skipTest("this machine has nvidia-smi: the GPU check is for the H200 itself")
        r = self.run_script()
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn("the baseline is a NVIDIA H200", r.stderr)
        self.assertFalse(os.path.exists(os.path.join(self.tree, "build")))  # nothing was built


if __name__ == "__main__":
    unittest.main()

#!/usr/bin/env python3
"""The commit a build reports (cmake/MhaGitCommit.cmake, run with `cmake -P`): MHA_GIT_COMMIT,
when set, wins over the git repository that encloses the tree; without it the repository's HEAD
is used, and outside any repository "unknown"."""

import os
import shutil
import subprocess
import tempfile
import unittest

from mha_test_env import REPO  # noqa: E402
MODULE = os.path.join(REPO, "cmake", "MhaGitCommit.cmake")
CMAKE = shutil.which("cmake")
GIT = shutil.which("git")


def resolve(source_dir, env_commit=None):
    with tempfile.TemporaryDirectory(prefix="mha_build_info_") as tmp:
        script = os.path.join(tmp, "resolve.cmake")
        with open(script, "w") as f:
            f.write(f'include("{MODULE}")\n'
                    f'mha_git_commit(commit "{source_dir}")\n'
                    'message(STATUS "commit=[${commit}]")\n')
        env = dict(os.environ)
        env.pop("MHA_GIT_COMMIT", None)
        if env_commit is not None:
            env["MHA_GIT_COMMIT"] = env_commit
        r = subprocess.run([CMAKE, "-P", script], capture_output=True, text=True, env=env)
        assert r.returncode == 0, r.stderr
        out = r.stdout + r.stderr
        return out[out.index("commit=[") + 8:out.index("]", out.index("commit=["))]


@unittest.skipUnless(CMAKE and GIT, "cmake or git not on PATH: build info test skipped")
class GitCommitTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="mha_repo_")
        self.addCleanup(self.tmp.cleanup)
        # A tree copied inside some unrelated repository, as on a machine the tree was shipped to.
        self.outer = self.tmp.name
        git = lambda *a: subprocess.run([GIT, "-C", self.outer, *a], check=True, capture_output=True)
        git("init", "-q")
        git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty", "-m", "x")
        self.outer_head = subprocess.run([GIT, "-C", self.outer, "rev-parse", "--short", "HEAD"],
                                         check=True, capture_output=True, text=True).stdout.strip()
        self.tree = os.path.join(self.outer, "mha-tune")
        os.makedirs(self.tree)

    def test_environment_wins_over_the_enclosing_repository(self):
        self.assertEqual(resolve(self.tree, "1a2b3c4"), "1a2b3c4")

    def test_enclosing_repository_without_the_environment(self):
        self.assertEqual(resolve(self.tree), self.outer_head)
        self.assertEqual(resolve(self.tree, ""), self.outer_head)  # set but empty: not set

    def test_unknown_outside_any_repository(self):
        with tempfile.TemporaryDirectory(prefix="mha_norepo_") as bare:
            env_ceiling = os.path.dirname(bare)
            os.environ["GIT_CEILING_DIRECTORIES"] = env_ceiling
            try:
                self.assertEqual(resolve(bare), "unknown")
            finally:
                del os.environ["GIT_CEILING_DIRECTORIES"]


if __name__ == "__main__":
    unittest.main()

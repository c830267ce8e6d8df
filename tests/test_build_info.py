#!/usr/bin/env python3
"""The commit a build reports (cmake/MhaGitCommit.cmake, run with `cmake -P`): MHA_GIT_COMMIT,
when set, wins over the git repository that encloses the tree; without it the repository's HEAD
is used, with "-dirty" when a tracked file of the tree differs from it, and outside any repository
"unknown". cmake/MhaCommitHeader.cmake writes it into the header the binary includes, at every
build, touching the file only when the commit changed."""

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


def git(repo, *args):
    return subprocess.run([GIT, "-C", repo, *args], check=True, capture_output=True,
                          text=True).stdout.strip()


def init_repo(repo, tracked=()):
    """A repository at `repo` with one commit of the files `tracked` (may be none); its HEAD."""
    git(repo, "init", "-q")
    for name in tracked:
        git(repo, "add", name)
    git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty", "-m", "x")
    return git(repo, "rev-parse", "--short", "HEAD")


@unittest.skipUnless(CMAKE and GIT, "cmake or git not on PATH: build info test skipped")
class GitCommitTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="mha_repo_")
        self.addCleanup(self.tmp.cleanup)
        # A tree copied inside some unrelated repository, as on a machine the tree was shipped to.
        self.outer = self.tmp.name
        self.outer_head = init_repo(self.outer)
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


@unittest.skipUnless(CMAKE and GIT, "cmake or git not on PATH: build info test skipped")
class DirtyTreeTest(unittest.TestCase):
    """A tree whose files are tracked: clean at HEAD, "-dirty" once a tracked file changes."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="mha_dirty_")
        self.addCleanup(self.tmp.cleanup)
        self.repo = self.tmp.name
        self.kernel = os.path.join(self.repo, "kernel.cuh")
        with open(self.kernel, "w") as f:
            f.write("// v1\n")
        self.head = init_repo(self.repo, ["kernel.cuh"])

    def header(self, output):
        env = dict(os.environ)
        env.pop("MHA_GIT_COMMIT", None)
        subprocess.run([CMAKE, f"-DSOURCE_DIR={self.repo}", f"-DOUTPUT={output}", "-P",
                        os.path.join(REPO, "cmake", "MhaCommitHeader.cmake")],
                       check=True, capture_output=True, env=env)
        with open(output) as f:
            return f.read()

    def test_clean_tree_reports_head(self):
        self.assertEqual(resolve(self.repo), self.head)

    def test_changed_tracked_file_reports_dirty(self):
        with open(self.kernel, "a") as f:
            f.write("// an edit not yet committed\n")
        self.assertEqual(resolve(self.repo), self.head + "-dirty")
        git(self.repo, "checkout", "--", "kernel.cuh")
        self.assertEqual(resolve(self.repo), self.head)

    def test_untracked_file_does_not_make_dirty(self):
        with open(os.path.join(self.repo, "notes.txt"), "w") as f:
            f.write("scratch\n")
        self.assertEqual(resolve(self.repo), self.head)

    def test_environment_still_wins_over_a_dirty_tree(self):
        with open(self.kernel, "a") as f:
            f.write("// edit\n")
        self.assertEqual(resolve(self.repo, "1a2b3c4"), "1a2b3c4")

    def test_header_follows_the_tree_and_is_rewritten_only_on_change(self):
        with tempfile.TemporaryDirectory(prefix="mha_header_") as out_dir:
            output = os.path.join(out_dir, "mha_build_commit.h")
            self.assertIn(f'#define MHA_GIT_COMMIT "{self.head}"', self.header(output))
            os.utime(output, (1, 1))
            self.header(output)
            self.assertEqual(os.stat(output).st_mtime, 1, "an unchanged commit rewrote the header")
            with open(self.kernel, "a") as f:
                f.write("// edit after configuring\n")
            self.assertIn(f'#define MHA_GIT_COMMIT "{self.head}-dirty"', self.header(output))


if __name__ == "__main__":
    unittest.main()

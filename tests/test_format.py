#!/usr/bin/env python3
"""Every tracked C++ and CUDA file is as .clang-format writes it (Google style, 100 columns), so
a change's diff holds no reformatting: clang-format --dry-run -Werror over `git ls-files`. A
badly formatted probe must fail the same check, so the test cannot pass on nothing. Skipped
(exit 77) where clang-format or git is missing, or the tree is not a git checkout."""

import os
import shutil
import subprocess
import sys
import tempfile
import unittest

from mha_test_env import REPO  # noqa: E402

SOURCES = ("*.cpp", "*.h", "*.cu", "*.cuh")


def tracked_sources():
    r = subprocess.run(["git", "ls-files", "--", *SOURCES], cwd=REPO, capture_output=True,
                       text=True)
    return [f for f in r.stdout.splitlines() if f] if r.returncode == 0 else None


def unformatted(paths, cwd):
    """The paths clang-format would change, with its first complaint."""
    bad = []
    for path in paths:
        r = subprocess.run(["clang-format", "--dry-run", "-Werror", f"--style=file:{REPO}/.clang-format",
                            path], cwd=cwd, capture_output=True, text=True)
        if r.returncode != 0:
            bad.append(f"{path}: {(r.stderr.splitlines() or ['?'])[0]}")
    return bad


class Format(unittest.TestCase):
    def test_tracked_sources_are_formatted(self):
        sources = tracked_sources()
        self.assertTrue(sources, "git ls-files found no C++ or CUDA source")
        bad = unformatted(sources, REPO)
        self.assertEqual(bad, [], "run `clang-format -i` on:\n" + "\n".join(bad))

    def test_the_check_fails_on_a_badly_formatted_file(self):
        with tempfile.TemporaryDirectory() as tmp:
            probe = os.path.join(tmp, "probe.cpp")
            with open(probe, "w") as f:
                f.write("int  f( int x ){return x;}\n")
            self.assertEqual(len(unformatted([probe], tmp)), 1)


if __name__ == "__main__":
    if shutil.which("clang-format") is None or shutil.which("git") is None:
        print("clang-format or git not installed: format check skipped")
        sys.exit(77)
    if tracked_sources() is None:
        print(f"{REPO} is not a git checkout: format check skipped")
        sys.exit(77)
    unittest.main()

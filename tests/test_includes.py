#!/usr/bin/env python3
"""The include rule (docs/design.md, "The include rule"): every quoted include in the tracked C++
and CUDA files names its folder from an include root, and no folder includes one above it
(scripts/check_includes.py). A probe tree with a bare include and an upward one must fail the
same check, so the test cannot pass on nothing. Skipped (exit 77) where git is missing or the
tree is not a git checkout."""

import os
import shutil
import subprocess
import sys
import tempfile
import unittest

from mha_test_env import REPO  # noqa: E402

sys.path.insert(0, os.path.join(REPO, "scripts"))
import check_includes  # noqa: E402


def is_checkout():
    return subprocess.run(["git", "rev-parse", "--is-inside-work-tree"], cwd=REPO,
                          capture_output=True).returncode == 0


class Includes(unittest.TestCase):
    def test_the_tree_keeps_the_rule(self):
        problems, graph = check_includes.check(REPO)
        self.assertTrue(graph, "no folder imports found: the check read nothing")
        self.assertEqual(problems, [], "\n".join(problems))

    def test_the_check_fails_on_a_bare_and_an_upward_include(self):
        files = {
            "src/problems/problem.h": "#pragma once\n",
            "src/sweep/plan.h": '#pragma once\n#include "problems/problem.h"\n',
            "src/gpu/run.cpp": '#include "problem.h"\n',         # bare
            "src/problems/spec.cpp": '#include "sweep/plan.h"\n',  # upward
            "src/verify/check.cpp": '#include "src/sweep/plan.h"\n',
        }
        with tempfile.TemporaryDirectory() as tmp:
            for path, text in files.items():
                os.makedirs(os.path.join(tmp, os.path.dirname(path)), exist_ok=True)
                with open(os.path.join(tmp, path), "w") as f:
                    f.write(text)
            subprocess.run(["git", "init", "-q"], cwd=tmp, check=True)
            subprocess.run(["git", "add", "."], cwd=tmp, check=True)
            problems, graph = check_includes.check(tmp)
        self.assertEqual(len(problems), 3, "\n".join(problems))
        self.assertIn("src/gpu/run.cpp", problems[0])
        self.assertIn("name its folder", problems[0])
        self.assertIn("problems/ includes sweep/", problems[1])
        self.assertIn("src/verify/check.cpp", problems[2])
        self.assertEqual(sorted(graph), [("problems", "sweep"), ("sweep", "problems")])


if __name__ == "__main__":
    if shutil.which("git") is None or not is_checkout():
        print("git missing or not a git checkout: include check skipped")
        sys.exit(77)
    unittest.main()

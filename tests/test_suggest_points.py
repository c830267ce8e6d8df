#!/usr/bin/env python3
"""Tests of the few-points workflow with no GPU: `sweep --dry-run --json` lists the candidates,
`select --suggest N --candidates PLAN --out-points F` chooses N of them (seeds when nothing was
measured), and `sweep --points F --dry-run` plans exactly those; bad lists are refused (exit 2).
Run: MHA_BUILD_DIR=build-ci python3 tests/test_suggest_points.py (ctest: label "host")."""

import json
import os
import subprocess
import tempfile
import unittest

from mha_test_env import REPO, MHA_TUNE as BINARY  # noqa: E402
CONFIG = os.path.join(REPO, "configs", "suites", "ci.json")


def run(*args):
    return subprocess.run([BINARY, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          text=True, timeout=60, cwd=REPO)


@unittest.skipUnless(os.path.exists(BINARY), f"{BINARY} not built")
class SuggestPoints(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="test_suggest_points_")
        cls.plan_path = os.path.join(cls.dir, "plan.json")
        r = run("sweep", "--dry-run", "--json", "--config", CONFIG)
        assert r.returncode == 0, r.stderr
        with open(cls.plan_path, "w") as f:
            f.write(r.stdout)
        cls.plan = json.loads(r.stdout)

    def suggest(self, n, name):
        out = os.path.join(self.dir, name)
        r = run("select", "--suggest", str(n), "--candidates", self.plan_path, "--out-points", out)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(out) as f:
            return out, json.load(f)

    def test_seeds_cover_every_tile_and_the_sweep_plans_exactly_them(self):
        out, s = self.suggest(12, "seeds.json")
        self.assertEqual(s["candidates"], self.plan["counts"]["points"])
        self.assertEqual(s["measured"], 0)
        self.assertEqual(len(s["points"]), 12)
        self.assertEqual(len({p["key"] for p in s["points"]}), 12)  # no point twice
        # Round robin over tiles: the first points seed as many kernels as there are.
        first = [p["kernel"] for p in s["points"][:len(self.plan["kernels"])]]
        self.assertEqual(len(set(first)), len(self.plan["kernels"]))
        r = run("sweep", "--dry-run", "--json", "--config", CONFIG, "--points", out)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(json.loads(r.stdout)["counts"]["points"], 12)

    def test_the_plan_records_what_the_model_needs(self):
        q = self.plan["problems"][0]
        for key in ["kv_dtype", "kv_scale", "soft_cap", "ragged_lengths", "kernels", "partitions"]:
            self.assertIn(key, q)

    def test_a_list_of_another_plan_or_no_point_is_refused(self):
        bad = os.path.join(self.dir, "bad.json")
        with open(bad, "w") as f:
            json.dump({"points": [{"key": "decode_x_bm16|nope|p1"}]}, f)
        r = run("sweep", "--dry-run", "--config", CONFIG, "--points", bad)
        self.assertEqual(r.returncode, 2)
        self.assertIn("not a point of this sweep's plan", r.stderr)
        with open(bad, "w") as f:
            json.dump({"points": []}, f)
        r = run("sweep", "--dry-run", "--config", CONFIG, "--points", bad)
        self.assertEqual(r.returncode, 2)
        self.assertIn("empty", r.stderr)
        r = run("select", "--suggest", "5", "--candidates", self.plan_path)
        self.assertEqual(r.returncode, 2)
        self.assertIn("go together", r.stderr)
        r = run("select", "--suggest", "5", "--candidates", bad, "--out-points", bad + ".out")
        self.assertEqual(r.returncode, 2)


if __name__ == "__main__":
    unittest.main()

#!/usr/bin/env python3
"""Tests of `mha-tune sweep --dry-run [--json]` (the plan and its duration estimate, with no
GPU), of --filter (globs with '-' excludes, the count of matches, exit 2 on no match) and of the
range form of lists on the command line. Needs no GPU: the dry run never touches one.
Run: MHA_BUILD_DIR=build-ci python3 tests/test_sweep_dry_run.py (ctest: label "host")."""

import json
import os
import re
import subprocess
import unittest

from mha_test_env import REPO, MHA_TUNE as BINARY  # noqa: E402
CONFIG = os.path.join(REPO, "configs", "suites", "ci.json")


def run(*args):
    return subprocess.run([BINARY, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          text=True, timeout=60, cwd=REPO)


def plan(*args):
    r = run("sweep", "--dry-run", "--json", *args)
    if r.returncode != 0:
        raise AssertionError(f"exit {r.returncode}: {r.stderr}")
    return json.loads(r.stdout)


@unittest.skipUnless(os.path.exists(BINARY), f"{BINARY} not built")
class DryRun(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.kernels = [k["name"] for k in json.loads(run("list", "--json").stdout)]
        # The bf16-cache kernels: an fp8 cache or a soft cap is never a spec's default; nor are
        # several query tokens (a multi-token kernel computes none of a q_len 1 spec).
        cls.g4 = [k for k in cls.kernels if "_bf16_bf16_d128_g4_contig_" in k and "_mt_" not in k]

    def test_plan_counts_problems_kernels_partitions(self):
        # dtype and kv given: a spec's missing fields come from each kernel's family, so without
        # them the paged fp16 kernel would add problems of its own.
        p = plan("--problem", "dtype=bf16,kv=contig,batch=1,heads=32,kv_heads=8,keys=512:8192:x4",
                 "--partitions", "1:4:x2")
        self.assertEqual(p["counts"]["problems"], 3)  # 512, 2048, 8192
        self.assertEqual(p["counts"]["kernels"], len(self.g4))
        self.assertEqual(p["counts"]["partition_counts"], 3)  # 1, 2, 4
        self.assertEqual(p["counts"]["points"], 3 * len(self.g4) * 3)
        self.assertEqual([q["keys"] for q in p["problems"]], [512, 2048, 8192])
        for q in p["problems"]:
            self.assertEqual(q["partitions"], [1, 2, 4])
            self.assertEqual(q["points"], len(q["kernels"]) * 3)
            self.assertGreater(q["bytes_per_step"], 0)
        self.assertIsNone(p["shard"])

    def test_auto_is_resolved_for_the_sm_count_given(self):
        spec = "dtype=bf16,kv=contig,batch=1,heads=32,kv_heads=8,keys=131072"
        h200 = plan("--problem", spec, "--partitions", "auto")
        half = plan("--problem", spec, "--partitions", "auto", "--sm-count", "66")
        self.assertEqual(h200["estimate"]["auto_partitions_sm_count"], 132)
        self.assertEqual(half["estimate"]["auto_partitions_sm_count"], 66)
        # Two blocks per SM over 8 KV heads: 33 partitions on 132 SMs, 17 on 66.
        self.assertEqual(h200["problems"][0]["partitions"], [33])
        self.assertEqual(half["problems"][0]["partitions"], [17])
        r = run("sweep", "--problem", spec, "--sm-count", "66")
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn("--sm-count: only for --dry-run", r.stderr)

    def test_estimate_is_positive_explained_and_grows_with_the_budget(self):
        small = plan("--problem", "keys=131072", "--time-budget", "0.001")  # the budget binds
        large = plan("--problem", "keys=131072", "--time-budget", "5")
        for p in (small, large):
            self.assertGreater(p["estimate"]["seconds"], 0)
            self.assertIn("bytes", p["estimate"]["method"])
            self.assertIn("assumed_read_gbps", p["estimate"])
        self.assertGreater(large["estimate"]["seconds"], small["estimate"]["seconds"])
        self.assertAlmostEqual(sum(q["estimated_s"] for q in small["problems"]),
                               small["estimate"]["seconds"])

    def test_config_suite_and_text_form(self):
        p = plan("--config", CONFIG)
        self.assertGreater(p["counts"]["points"], 0)
        r = run("sweep", "--dry-run", "--config", CONFIG)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn(f"{p['counts']['points']} point(s)", r.stdout)
        self.assertIn("estimated duration", r.stdout)

    def test_shards_partition_the_points(self):
        whole = plan("--config", CONFIG)
        total = 0
        for k in range(3):
            s = plan("--config", CONFIG, "--shard", f"{k}/3")
            self.assertEqual(s["shard"], {"index": k, "count": 3})
            total += s["counts"]["points"]
        self.assertEqual(total, whole["counts"]["points"])

    def test_nothing_to_run_is_exit_2(self):
        for args in (["--problem", "keys=512,depth=64"],   # no kernel of that family
                     ["--problem", "keys=512", "--shard", "7/8"],  # this shard is empty
                     ["--problem", "keys=512,kv=contig", "--filter", "*_paged_*"]):
            r = run("sweep", "--dry-run", "--json", *args)
            self.assertEqual(r.returncode, 2, f"{args}: {r.stdout} {r.stderr}")
            self.assertEqual(r.stdout, "")
        r = run("sweep", "--json", "--problem", "keys=512")
        self.assertEqual(r.returncode, 2)
        self.assertIn("--dry-run", r.stderr)


@unittest.skipUnless(os.path.exists(BINARY), f"{BINARY} not built")
class Filter(unittest.TestCase):
    def test_globs_excludes_and_counts(self):
        every = json.loads(run("list", "--json").stdout)
        self.assertGreater(len(every), 2)
        wsk = [k["name"] for k in every if k["name"].endswith("_wsk")]
        self.assertTrue(wsk)
        r = run("list", "--json", "--filter", "*,-*_wsk")
        self.assertEqual(r.returncode, 0, r.stderr)
        kept = [k["name"] for k in json.loads(r.stdout)]
        self.assertEqual(len(kept), len(every) - len(wsk))
        self.assertFalse(set(kept) & set(wsk))
        self.assertIn(f"{len(kept)} of {len(every)} kernel(s) match", r.stderr)
        # A lone exclude keeps everything else; repeated --filter flags add up.
        r = run("list", "--json", "--filter", "-*_wsk")
        self.assertEqual(len(json.loads(r.stdout)), len(kept))
        r = run("list", "--json", "--filter", wsk[0], "--filter", kept[0])
        self.assertEqual({k["name"] for k in json.loads(r.stdout)}, {wsk[0], kept[0]})

    def test_no_match_is_exit_2_everywhere(self):
        for cmd in (["list"], ["verify"], ["sweep", "--dry-run", "--problem", "keys=512"]):
            r = run(*cmd, "--filter", "no_such_kernel_*")
            self.assertEqual(r.returncode, 2, f"{cmd}: {r.stderr}")
            self.assertIn("matches none", r.stderr)

    def test_sweep_and_verify_print_the_count(self):
        r = run("sweep", "--dry-run", "--problem", "keys=512", "--filter", "*_bn64_*")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertRegex(r.stderr, r"\d+ of \d+ kernel\(s\) match")

    def test_help_says_how_filter_matches(self):
        for cmd in ("list", "verify", "sweep"):
            r = run(cmd, "--help")
            self.assertIn("prefixed with '-'", re.sub(r"\s+", " ", r.stdout))


if __name__ == "__main__":
    unittest.main()

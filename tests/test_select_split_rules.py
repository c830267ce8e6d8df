#!/usr/bin/env python3
"""`mha-tune select` prices the field's split rules (fitted, flash_attn, vllm_512, flashinfer,
seed) on the committed H200 baseline (results/h200_default.json): the markdown table
after the existing output has one row per rule with its figures, and --out-json gains a
"split_rules" key with per-problem details while the keys it had before stay as they were.

Needs $MHA_BUILD_DIR/mha-tune (skipped when missing)."""

import json
import os
import re
import subprocess
import sys
import tempfile
import unittest

from mha_test_env import REPO, MHA_TUNE  # noqa: E402
BASELINE = os.path.join(REPO, "results", "h200_default.json")
RULES = ["fitted", "flash_attn", "vllm_512", "flashinfer", "seed"]
ROW = re.compile(r"^\| (\w+) \| (\d+) \| ([0-9.]+) \| ([0-9.]+) \| (\d+) \| (\d+) \|$")


@unittest.skipUnless(os.access(MHA_TUNE, os.X_OK),
                     f"mha-tune not built at {MHA_TUNE} (set MHA_BUILD_DIR): select test skipped")
class SelectSplitRules(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.out_json = os.path.join(cls.tmp.name, "defaults.json")
        proc = subprocess.run([MHA_TUNE, "select", BASELINE, "--out-json", cls.out_json],
                              capture_output=True, text=True, timeout=300)
        cls.proc = proc
        with open(BASELINE) as f:
            cls.problems = len({r["problem"]["name"] for r in json.load(f)["rows"]
                                if r["status"] == "passed"})

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_prints_one_row_per_rule_after_the_existing_output(self):
        self.assertEqual(self.proc.returncode, 0, self.proc.stderr)
        out = self.proc.stdout
        header = "| rule | problems | geomean | worst | snapped | not measured |"
        self.assertIn(header, out)
        self.assertGreater(out.index(header), out.index("Cost of the defaults"))
        rows = {}
        for line in out[out.index(header):].splitlines()[2:]:
            m = ROW.match(line)
            if not m:
                break
            rows[m.group(1)] = m.groups()[1:]
        self.assertEqual(list(rows), RULES)
        for rule, (problems, geomean, worst, snapped, not_measured) in rows.items():
            self.assertEqual(int(problems) + int(not_measured), self.problems, rule)
            self.assertGreater(int(problems), 0, rule)
            self.assertGreaterEqual(float(geomean), 1.0, rule)
            self.assertGreaterEqual(float(worst), float(geomean), rule)
            self.assertLessEqual(int(snapped), int(problems), rule)

    def test_json_details_agree_with_the_table(self):
        with open(self.out_json) as f:
            j = json.load(f)
        for key in ["schema_version", "gpu_name", "sm_count", "sources", "partition_rule",
                    "buckets", "cost", "time_model", "failed_problems"]:
            self.assertIn(key, j)
        self.assertEqual(sorted(j["cost"]), ["definition", "geomean", "holdout_by_batch",
                                             "holdout_by_family", "holdout_by_length",
                                             "holdout_by_q_len", "holdout_definition", "problems",
                                             "ragged_holdout_by_half", "worst"])
        rules = j["split_rules"]["rules"]
        self.assertEqual([r["rule"] for r in rules], RULES)
        for r in rules:
            measured = [d for d in r["per_problem"] if d["measured"]]
            self.assertEqual(len(r["per_problem"]), self.problems)
            self.assertEqual(len(measured), r["problems"])
            self.assertEqual(sum(d["snapped"] for d in measured), r["snapped"])
            self.assertAlmostEqual(max(d["cost"] for d in measured), r["worst_cost"])
            for d in r["per_problem"]:
                self.assertGreaterEqual(d["partitions"], 1)
                if d["measured"]:
                    ratio = d["measured_partitions"] / d["partitions"]
                    self.assertTrue(0.5 <= ratio <= 2, d)
                    self.assertEqual(d["snapped"], d["measured_partitions"] != d["partitions"])
        # vLLM's fixed partitions: keys / 512, rounded up.
        vllm = next(r for r in rules if r["rule"] == "vllm_512")
        for d in vllm["per_problem"]:
            keys = int(re.search(r"_n(\d+)$", d["problem"]).group(1))
            self.assertEqual(d["partitions"], max(1, -(-keys // 512)), d)


if __name__ == "__main__":
    sys.exit(unittest.main())

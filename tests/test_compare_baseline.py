#!/usr/bin/env python3
"""The CI regression gate on the committed H200 baseline (results/h200_default.json):
`mha-tune compare` passes the baseline against itself and against a copy 1% slower (inside the 3%
threshold), fails (exit 1) on a copy 10% slower and on a copy with one row turned incorrect, and
refuses (exit 2) a copy from another GPU unless --allow-different-gpu. It never passes on nothing:
every committed report passes against itself, but the paged report against the default one (no
pair matched) and a copy missing 95% of the baseline's rows fail (exit 1, the latter passing with
--allow-missing), and the g4 reports measured with different reduce modes are refused (exit 2)
unless --allow-method-mismatch.

Needs $MHA_BUILD_DIR/mha-tune (skipped when missing)."""

import copy
import json
import os
import subprocess
import sys
import tempfile
import unittest

from mha_test_env import REPO, MHA_TUNE  # noqa: E402
RESULTS = os.path.join(REPO, "results")
BASELINE = os.path.join(RESULTS, "h200_default.json")


def load_baseline():
    with open(BASELINE) as f:
        return json.load(f)


def passed_rows(report):
    return [r for r in report["rows"] if r["status"] == "passed"]


def scaled(report, factor, keys=("median_us", "min_us", "mean_us")):
    out = copy.deepcopy(report)
    for r in passed_rows(out):
        for k in keys:
            r["time"][k] *= factor
    return out


@unittest.skipUnless(os.access(MHA_TUNE, os.X_OK),
                     f"mha-tune not built at {MHA_TUNE} (set MHA_BUILD_DIR): compare test skipped")
class CompareBaselineTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        # The baseline is committed: a missing or empty one is a failure, not a skip.
        assert os.path.isfile(BASELINE), f"committed baseline missing: {BASELINE}"
        cls.report = load_baseline()
        cls.n_passed = len(passed_rows(cls.report))
        assert cls.n_passed > 0, f"{BASELINE} has no passed rows"

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="mha_compare_")
        self.addCleanup(self.tmp.cleanup)

    def write(self, name, report):
        path = os.path.join(self.tmp.name, name)
        with open(path, "w") as f:
            json.dump(report, f)
        return path

    def compare(self, candidate, *extra):
        p = subprocess.run([MHA_TUNE, "compare", BASELINE, candidate, *extra],
                           capture_output=True, text=True, timeout=60)
        return p.returncode, p.stdout, p.stderr

    def assert_summary(self, out, verdict):
        self.assertIn("## mha-tune compare", out)
        self.assertIn("| result | pairs |", out)
        self.assertIn(f"**{verdict}**", out)

    def test_a_baseline_against_itself_passes(self):
        rc, out, err = self.compare(BASELINE)
        self.assertEqual(rc, 0, out + err)
        self.assert_summary(out, "PASS")
        self.assertIn("NVIDIA H200", out)
        self.assertIn(f"| same | {self.n_passed} |", out)
        self.assertIn("| slower (regression) | 0 |", out)
        self.assertNotIn("### Regressions", out)

    def test_b_a_quarter_slower_regresses(self):
        # 25%, not 10%: a few baseline points have a standard error near 3%, and 3 standard
        # errors of two medians (the pair's tolerance) then pass a 10% step as noise.
        rc, out, err = self.compare(self.write("slow25.json", scaled(self.report, 1.25)))
        self.assertEqual(rc, 1, out + err)
        self.assert_summary(out, "FAIL")
        self.assertIn(f"| slower (regression) | {self.n_passed} |", out)
        self.assertIn("### Regressions", out)
        self.assertIn("+25.0%", out)

    def test_c_one_row_incorrect_regresses(self):
        cand = copy.deepcopy(self.report)
        row = passed_rows(cand)[0]
        row["status"] = "incorrect"
        row["reason"] = "injected by test_compare_baseline"
        rc, out, err = self.compare(self.write("incorrect.json", cand))
        self.assertEqual(rc, 1, out + err)
        self.assert_summary(out, "FAIL")
        self.assertIn("| broken: passed -> not passed (regression) | 1 |", out)
        self.assertIn("passed -> incorrect", out)
        self.assertIn(row["kernel"], out)

    def test_d_different_gpu_is_unusable_unless_allowed(self):
        cand = copy.deepcopy(self.report)
        cand["metadata"]["gpu_name"] = "NVIDIA H100 80GB HBM3"
        path = self.write("other_gpu.json", cand)
        rc, out, err = self.compare(path)
        self.assertEqual(rc, 2, out + err)
        self.assertIn("gpu_name", err)
        self.assertIn("--allow-different-gpu", err)
        rc, out, err = self.compare(path, "--allow-different-gpu")
        self.assertEqual(rc, 0, out + err)
        self.assert_summary(out, "PASS")

    def test_e_one_percent_slower_is_within_threshold(self):
        rc, out, err = self.compare(self.write("slow1.json",
                                               scaled(self.report, 1.01, keys=("median_us",))))
        self.assertEqual(rc, 0, out + err)
        self.assert_summary(out, "PASS")
        self.assertIn("| slower (regression) | 0 |", out)

    def test_g_every_committed_report_passes_against_itself(self):
        reports = [os.path.join(RESULTS, f) for f in sorted(os.listdir(RESULTS))
                   if f.endswith(".json") and "rows" in json.load(open(os.path.join(RESULTS, f)))]
        self.assertGreaterEqual(len(reports), 4, reports)
        for path in reports:
            with self.subTest(report=os.path.basename(path)):
                p = subprocess.run([MHA_TUNE, "compare", path, path], capture_output=True,
                                   text=True, timeout=60)
                self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
                self.assert_summary(p.stdout, "PASS")
                n = len(json.load(open(path))["rows"])
                self.assertIn(f"{n} of {n} baseline points matched", p.stdout)

    def test_h_no_matched_pair_fails(self):
        # The paged suite's problems are not the default suite's: nothing is compared.
        rc, out, err = self.compare(os.path.join(RESULTS, "h200_2026-11-29_paged.json"))
        self.assertEqual(rc, 1, out + err)
        self.assert_summary(out, "FAIL")
        self.assertIn("no pair matched", out)
        self.assertIn(f"0 of {len(self.report['rows'])} baseline points matched", out)
        rc, out, err = self.compare(os.path.join(RESULTS, "h200_2026-11-29_paged.json"),
                                    "--allow-missing")
        self.assertEqual(rc, 1, out + err)

    def test_i_missing_baseline_rows_fail_unless_allowed(self):
        cand = copy.deepcopy(self.report)
        n = len(cand["rows"])
        cand["rows"] = cand["rows"][: n // 20]  # 95% missing, the rest unchanged
        kept = len(cand["rows"])
        path = self.write("five_percent.json", cand)
        rc, out, err = self.compare(path)
        self.assertEqual(rc, 1, out + err)
        self.assert_summary(out, "FAIL")
        self.assertIn(f"{n - kept} baseline points missing from the candidate", out)
        self.assertIn(f"{kept} of {n} baseline points matched", out)
        rc, out, err = self.compare(path, "--allow-missing")
        self.assertEqual(rc, 0, out + err)
        self.assert_summary(out, "PASS")

    def test_j_reports_measured_differently_are_refused_unless_allowed(self):
        sep = os.path.join(RESULTS, "h200_2026-11-29_g4_reduce_separate.json")
        fused = os.path.join(RESULTS, "h200_2026-11-29_g4_reduce_fused.json")
        p = subprocess.run([MHA_TUNE, "compare", sep, fused], capture_output=True, text=True,
                           timeout=60)
        self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
        self.assertIn("metadata.reduce_mode: 'fused' differs from 'separate'", p.stderr)
        self.assertIn("--allow-method-mismatch", p.stderr)
        # Warm-cache and stream timing are other methods: refused the same way.
        for key, value in (("cold_cache", False), ("timing_mode", "stream")):
            cand = copy.deepcopy(self.report)
            cand["metadata"][key] = value
            rc, out, err = self.compare(self.write(f"{key}.json", cand))
            self.assertEqual(rc, 2, out + err)
            self.assertIn(f"metadata.{key}", err)
        p = subprocess.run([MHA_TUNE, "compare", sep, fused, "--allow-method-mismatch"],
                           capture_output=True, text=True, timeout=60)
        self.assertIn(p.returncode, (0, 1), p.stdout + p.stderr)
        self.assertIn("**Measured differently**", p.stdout)


if __name__ == "__main__":
    unittest.main()

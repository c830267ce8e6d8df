#!/usr/bin/env python3
"""`mha-tune noise` and `compare --noise` on the committed H200 baseline
(results/h200_default.json): a second "machine" (the baseline with +-4% noise) gives
the floor; a third one, as noisy and 1% slower on the whole, fails the plain gate (exit 1) and
passes with the floor (exit 0); a copy 10% slower fails with it; a report given as --noise and a
floor from another GPU are refused (exit 2).

Needs $MHA_BUILD_DIR/mha-tune (skipped when missing)."""

import copy
import json
import os
import random
import subprocess
import tempfile
import unittest

from mha_test_env import REPO, MHA_TUNE  # noqa: E402
BASELINE = os.path.join(REPO, "results", "h200_default.json")


def machine(report, seed, spread=0.04, factor=1.0):
    """The report as another machine of one model would measure it: every median x factor x
    (1 + uniform(-spread, spread))."""
    rng = random.Random(seed)
    out = copy.deepcopy(report)
    for r in out["rows"]:
        if r["status"] == "passed":
            f = factor * (1 + rng.uniform(-spread, spread))
            for k in ("median_us", "min_us", "mean_us"):
                r["time"][k] *= f
    return out


@unittest.skipUnless(os.access(MHA_TUNE, os.X_OK),
                     f"mha-tune not built at {MHA_TUNE} (set MHA_BUILD_DIR): noise test skipped")
class NoiseCliTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        with open(BASELINE) as f:
            cls.report = json.load(f)

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="mha_noise_")
        self.addCleanup(self.tmp.cleanup)

    def write(self, name, report):
        path = os.path.join(self.tmp.name, name)
        with open(path, "w") as f:
            json.dump(report, f)
        return path

    def mha(self, *args):
        return subprocess.run([MHA_TUNE, *args], capture_output=True, text=True)

    def floor(self):
        second = self.write("second.json", machine(self.report, 2))
        out = os.path.join(self.tmp.name, "noise.json")
        r = self.mha("noise", BASELINE, second, "--out", out)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("tolerance", r.stdout)
        with open(out) as f:
            floor = json.load(f)
        self.assertEqual(floor["gpu_name"], "NVIDIA H200")
        self.assertGreater(len(floor["buckets"]), 1)
        return out

    def test_shifted_machine_passes_only_with_the_floor(self):
        noise = self.floor()
        third = self.write("third.json", machine(self.report, 3, factor=1.01))
        plain = self.mha("compare", BASELINE, third)
        self.assertEqual(plain.returncode, 1, plain.stdout[-2000:])
        gated = self.mha("compare", BASELINE, third, "--noise", noise)
        self.assertEqual(gated.returncode, 0, gated.stdout[-3000:] + gated.stderr)
        self.assertIn("Cross-machine noise floor", gated.stdout)

    def test_ten_percent_slower_fails_with_the_floor(self):
        noise = self.floor()
        slow = self.write("slow.json", machine(self.report, 4, factor=1.10))
        r = self.mha("compare", BASELINE, slow, "--noise", noise)
        self.assertEqual(r.returncode, 1, r.stdout[-2000:])

    def test_bad_noise_files_exit_2(self):
        r = self.mha("compare", BASELINE, BASELINE, "--noise", BASELINE)
        self.assertEqual(r.returncode, 2)
        self.assertIn("not a noise floor file", r.stderr)
        noise = self.floor()
        with open(noise) as f:
            floor = json.load(f)
        floor["gpu_name"] = "NVIDIA H100"
        other = self.write("h100_noise.json", floor)
        r = self.mha("compare", BASELINE, BASELINE, "--noise", other)
        self.assertEqual(r.returncode, 2)
        self.assertIn("gpu_name", r.stderr)
        r = self.mha("noise", BASELINE, os.path.join(self.tmp.name, "missing.json"),
                     "--out", os.path.join(self.tmp.name, "n.json"))
        self.assertEqual(r.returncode, 2)


if __name__ == "__main__":
    unittest.main()

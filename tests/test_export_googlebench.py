#!/usr/bin/env python3
"""Tests of `mha-tune export --format googlebench`: the output has the structure Google
Benchmark's JSON reporter writes (context + benchmarks with name, run_name, run_type,
iterations, real_time, cpu_time, time_unit, counters), on the committed H200 sweep; a report
that is not a sweep, or is malformed or empty, is refused with exit 2.
Run: MHA_BUILD_DIR=build-ci python3 tests/test_export_googlebench.py (ctest: label "host")."""

import json
import os
import subprocess
import tempfile
import unittest

from mha_test_env import REPO, MHA_TUNE as BINARY  # noqa: E402
REPORT = os.path.join(REPO, "results", "h200_default.json")


def run(*args):
    return subprocess.run([BINARY, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          text=True, timeout=60)


@unittest.skipUnless(os.path.exists(BINARY), f"{BINARY} not built")
class ExportGoogleBench(unittest.TestCase):
    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory()
        self.tmp = self._tmp.name

    def tearDown(self):
        self._tmp.cleanup()

    def test_structure_matches_google_benchmark(self):
        out = os.path.join(self.tmp, "gb.json")
        r = run("export", "--format", "googlebench", REPORT, "--out", out)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(out) as f:
            gb = json.load(f)
        with open(REPORT) as f:
            report = json.load(f)
        self.assertEqual(set(gb), {"context", "benchmarks"})
        ctx = gb["context"]
        for key in ("date", "host_name", "executable", "num_cpus", "mhz_per_cpu",
                    "cpu_scaling_enabled", "caches", "library_build_type"):
            self.assertIn(key, ctx)
        self.assertEqual(ctx["gpu_name"], "NVIDIA H200")
        self.assertEqual(ctx["date"], report["metadata"]["timestamp"])
        benches = gb["benchmarks"]
        self.assertEqual(len(benches), len(report["rows"]))
        names = set()
        for b, row in zip(benches, report["rows"]):
            for key, kind in (("name", str), ("run_name", str), ("run_type", str),
                              ("iterations", int), ("real_time", (int, float)),
                              ("cpu_time", (int, float)), ("time_unit", str),
                              ("family_index", int), ("per_family_instance_index", int),
                              ("repetitions", int), ("threads", int)):
                self.assertIsInstance(b[key], kind, key)
            self.assertEqual(b["run_type"], "iteration")
            self.assertEqual(b["time_unit"], "us")
            split = row.get("split", row.get("partitions"))
            self.assertEqual(b["name"], f"{row['kernel']}/{row['problem']['name']}/p{split}")
            self.assertEqual(b["run_name"], b["name"])
            names.add(b["name"])
            if row["status"] == "passed":
                self.assertEqual(b["iterations"], row["time"]["samples"])
                self.assertAlmostEqual(b["real_time"], row["time"]["median_us"])
                self.assertAlmostEqual(b["bytes_per_second"], row["achieved_gbps"] * 1e9, delta=1)
                self.assertNotIn("error_occurred", b)
            else:  # Google Benchmark's skipped runs: an error only for a failure
                self.assertEqual(b["error_occurred"],
                                 row["status"] not in ("not_supported", "skipped"))
                self.assertTrue(b["error_message"].startswith(row["status"]))
        self.assertEqual(len(names), len(benches))  # names are unique: a dashboard's series key

    def test_stdout_is_the_same_json(self):
        r = run("export", "--format", "googlebench", REPORT)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("benchmarks", json.loads(r.stdout))

    def test_non_sweep_malformed_and_empty_reports_exit_2(self):
        with open(REPORT) as f:
            report = json.load(f)
        empty = dict(report, rows=[])
        bad_row = dict(report, rows=[dict(report["rows"][0], time={"median_us": "fast"})])
        with open(os.path.join(REPO, "results", "h200_2026-11-29_defaults.json")) as f:
            defaults = f.read()  # select's output: not a report
        files = {"defaults.json": defaults,
                 "empty.json": json.dumps(empty), "bad_row.json": json.dumps(bad_row),
                 "truncated.json": json.dumps(report)[:5000], "list.json": "[]"}
        for name, text in files.items():
            path = os.path.join(self.tmp, name)
            with open(path, "w") as f:
                f.write(text)
            r = run("export", "--format", "googlebench", path)
            self.assertEqual(r.returncode, 2, f"{name}: {r.stdout[-300:]} {r.stderr}")
            self.assertIn(path, r.stderr)
            self.assertEqual(r.stdout, "")
        r = run("export", "--format", "nvbench", REPORT)
        self.assertEqual(r.returncode, 2)


if __name__ == "__main__":
    unittest.main()

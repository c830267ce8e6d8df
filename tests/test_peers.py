#!/usr/bin/env python3
"""Tests of the pure parts of scripts/peers.py (no torch, no GPU): problem parsing and errors,
names as src/problem.cpp problem_name, bytes, rotation copies, the stopping rule's statistics,
report assembly with mha-tune's exact keys, --dry-run and --help without torch, and (when
MHA_BUILD_DIR holds mha-tune) that mha-tune reads the assembled report."""

import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import unittest

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRIPT = os.path.join(REPO, "scripts", "peers.py")
spec = importlib.util.spec_from_file_location("peers", SCRIPT)
peers = importlib.util.module_from_spec(spec)
spec.loader.exec_module(peers)

# Keys exactly as src/report_json.cpp writes them.
ROW_KEYS = {"kernel", "traits", "problem", "partitions", "status", "reason", "time", "bytes",
            "achieved_gbps", "peak_fraction", "rel_l2_error", "max_abs_error", "sm_clock_mhz",
            "throttled", "device"}
TRAIT_KEYS = {"dtype", "out_dtype", "depth", "group", "kv", "mask", "has_sink", "bm", "bn", "bk",
              "wm", "wn", "threads", "stages", "warp_split_k", "smem_bytes"}
PROBLEM_KEYS = {"name", "batch", "heads", "kv_heads", "depth", "dtype", "out_dtype", "kv",
                "page_size", "mask", "window", "chunk", "has_sink", "keys", "lengths"}
TIME_KEYS = {"median_us", "min_us", "mean_us", "stdev_us", "samples"}
META_KEYS = {"schema_version", "tool_version", "git_commit", "gpu_name", "sm_count",
             "sm_clock_max_mhz", "mem_clock_max_mhz", "l2_bytes", "driver_version", "cuda_version",
             "timestamp", "config_file", "config_hash", "command_line", "peak_read_gbps", "seed",
             "timing_mode", "cold_cache", "shard_index", "shard_count", "devices"}


class ParseTest(unittest.TestCase):
    def test_lists_and_names(self):
        ps = peers.parse_problems("b=1,h=32,kv=8,n=512:2048; batch=8,heads=8,kv_heads=1,keys=7,d=64")
        self.assertEqual([p["name"] for p in ps], [
            "b1_h32_kv8_d128_n512_bf16_contig_null", "b1_h32_kv8_d128_n2048_bf16_contig_null",
            "b8_h8_kv1_d64_n7_bf16_contig_null"])
        self.assertEqual(ps[2]["heads"] // ps[2]["kv_heads"], 8)
        self.assertEqual(peers.parse_problems("n=1,dtype=fp16")[0]["name"],
                         "b1_h32_kv8_d128_n1_fp16_contig_null")
        self.assertEqual(len(peers.parse_problems(peers.DEFAULT_PROBLEMS)), 10)

    def test_errors(self):
        for bad in ["", "b=1,h=32,kv=8", "b=0,n=4", "h=30,kv=8,n=4", "n=4,d=96", "n=x", "q=1,n=4",
                    "n4", "b=1:2,n=4", "n=4,dtype=fp8"]:
            with self.assertRaises(peers.UsageError, msg=bad):
                peers.parse_problems(bad)

    def test_bytes_and_rotation(self):
        p = peers.parse_problems("b=1,h=32,kv=8,n=512")[0]
        self.assertEqual(peers.step_bytes(p), 2113536.0)  # as mha-tune's report for this shape
        self.assertEqual(peers.rotation_copies(peers.copy_bytes(p), 62914560), 120)
        self.assertEqual(peers.rotation_copies(5e9, 62914560), 1)
        self.assertEqual(peers.rotation_copies(1.0, 62914560), 512)
        self.assertEqual(peers.steps_per_replay(2), 8)
        self.assertEqual(peers.steps_per_replay(30), 30)


class StatsTest(unittest.TestCase):
    def test_statistics(self):
        self.assertEqual(peers.median([3, 1, 2]), 2)
        self.assertEqual(peers.median([4, 1, 2, 3]), 2.5)
        self.assertAlmostEqual(peers.quantile([1, 2, 3, 4], 0.25), 1.75)
        s = peers.summarize_us([1.0, 2.0, 3.0])
        self.assertEqual((s["median_us"], s["min_us"], s["mean_us"], s["samples"]), (2.0, 1.0, 2.0, 3))
        self.assertAlmostEqual(s["stdev_us"], 1.0)

    def test_stopping_rule(self):
        flat = [10.0] * 9
        self.assertFalse(peers.should_stop(flat, 0.1))  # fewer than 10 samples
        self.assertTrue(peers.should_stop(flat + [10.0], 0.1))  # converged
        noisy = [10.0, 12.0] * 10
        self.assertGreater(peers.relative_median_error(noisy), 0.005)
        self.assertFalse(peers.should_stop(noisy, 0.1))
        self.assertTrue(peers.should_stop(noisy, 0.5))  # time budget
        self.assertTrue(peers.should_stop([10.0, 12.0] * 1000, 0.1))  # max samples


class ReportTest(unittest.TestCase):
    def report(self):
        ps = peers.parse_problems("b=1,h=32,kv=8,n=512:4096")
        t = peers.summarize_us([10.0, 10.1, 9.9])
        rows = [peers.make_row("flash", ps[0], "passed", "enable_gqa=True", t, peak_gbps=4400.0,
                               rel_l2=0.002, max_abs=0.001),
                peers.make_row("cudnn", ps[0], "not_supported", "no kernel"),
                peers.make_row("cudnn", ps[1], "failed", "RuntimeError: boom")]
        meta = peers.make_metadata("NVIDIA H200", 132, 62914560, 4400.0, "peers.py --out x", 1,
                                   "13.0", "13.0", "abc")
        return peers.make_report(meta, rows)

    def test_keys_and_values(self):
        rep = self.report()
        self.assertEqual(set(rep), {"schema_version", "metadata", "rows"})
        self.assertEqual(set(rep["metadata"]), META_KEYS)
        m = rep["metadata"]
        self.assertEqual((m["tool_version"], m["timing_mode"], m["cold_cache"]), ("peers.py", "graph", True))
        for r in rep["rows"]:
            self.assertEqual(set(r), ROW_KEYS)
            self.assertEqual(set(r["traits"]), TRAIT_KEYS)
            self.assertEqual(set(r["problem"]), PROBLEM_KEYS)
            self.assertEqual(set(r["time"]), TIME_KEYS)
            self.assertEqual(r["partitions"], 1)
            self.assertEqual((r["traits"]["group"], r["traits"]["bm"], r["traits"]["kv"]), (4, 0, "contig"))
        ok = rep["rows"][0]
        self.assertEqual(ok["kernel"], "peer_torch_sdpa_flash")
        self.assertAlmostEqual(ok["achieved_gbps"], 2113536.0 / 10.0e-6 / 1e9)
        self.assertAlmostEqual(ok["peak_fraction"], ok["achieved_gbps"] / 4400.0)
        self.assertEqual(rep["rows"][1]["achieved_gbps"], 0.0)
        self.assertEqual(peers.number(float("nan")), "nan")
        self.assertIn("peer_torch_sdpa_cudnn", peers.format_table(rep["rows"]))

    def test_mha_tune_reads_it(self):
        exe = os.path.join(os.environ.get("MHA_BUILD_DIR", ""), "mha-tune")
        if not os.environ.get("MHA_BUILD_DIR") or not os.access(exe, os.X_OK):
            self.skipTest("MHA_BUILD_DIR has no mha-tune binary")
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "peers.json")
            peers.write_report(path, self.report())
            r = subprocess.run([exe, "compare", path, path], capture_output=True, text=True)
            self.assertEqual(r.returncode, 0, r.stdout + r.stderr)


class CliTest(unittest.TestCase):
    def run_cli(self, *args):
        env = dict(os.environ, PYTHONPATH="")  # torch must not be needed
        return subprocess.run([sys.executable, SCRIPT, *args], capture_output=True, text=True, env=env)

    def test_help_and_dry_run(self):
        self.assertEqual(self.run_cli("--help").returncode, 0)
        r = self.run_cli("--out", "/tmp/x", "--dry-run", "--problems", "b=1,h=32,kv=8,n=512")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("b1_h32_kv8_d128_n512_bf16_contig_null", r.stdout)
        self.assertIn("copies 120", r.stdout)
        self.assertNotIn("torch", sys.modules)

    def test_usage_errors_exit_2(self):
        self.assertEqual(self.run_cli("--out", "x", "--dry-run", "--backends", "flash,xla").returncode, 2)
        self.assertEqual(self.run_cli("--out", "x", "--dry-run", "--problems", "h=3,kv=2,n=4").returncode, 2)
        self.assertEqual(self.run_cli("--dry-run").returncode, 2)  # --out is required


if __name__ == "__main__":
    unittest.main()

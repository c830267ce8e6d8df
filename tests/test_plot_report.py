#!/usr/bin/env python3
"""Tests of scripts/plot_report.py on a small synthetic report: PNGs written (with and without
defaults), exit 2 on a missing, malformed, empty or swapped input, exit 3 without matplotlib,
page sizes kept apart. The PNG tests are skipped when matplotlib is not importable; the others
run everywhere (a stand-in package that fails to import simulates a missing matplotlib)."""

import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import unittest

from mha_test_env import REPO  # noqa: E402
SCRIPT = os.path.join(REPO, "scripts", "plot_report.py")

try:
    import matplotlib  # noqa: F401
    HAVE_MPL = True
except ImportError:
    HAVE_MPL = False

TILE = dict(bm=16, bn=64, bk=32, wm=16, wn=16, threads=128, stages=4, warp_split_k=False)


def row(batch, keys, stages, wsk, partitions, us, status="passed", page_size=0):
    tile = dict(TILE, stages=stages, warp_split_k=wsk)
    name = (f"decode_bf16_bf16_d128_g4_contig_null_bm16_bn64_bk32_wm16_wn16_t128_s{stages}"
            + ("_wsk" if wsk else ""))
    kv = "paged" if page_size else "contig"
    problem = dict(name=f"b{batch}_h32_kv8_d128_n{keys}_bf16_{kv}{page_size or ''}_null", batch=batch,
                   heads=32, kv_heads=8, depth=128, dtype="bf16", out_dtype="bf16", kv=kv,
                   page_size=page_size,
                   mask="null", window=0, chunk=0, has_sink=False, keys=keys, lengths="")
    traits = dict(tile, dtype="bf16", out_dtype="bf16", depth=128, group=4, kv="contig",
                  mask="null", has_sink=False, smem_bytes=1000)
    nbytes = 2.0 * batch * keys * 8 * 128 * 2
    return dict(kernel=name, traits=traits, problem=problem, partitions=partitions, status=status,
                reason="" if status == "passed" else "x",
                time=dict(median_us=us, min_us=us, mean_us=us, stdev_us=0.0, samples=10),
                bytes=nbytes, achieved_gbps=nbytes / (us * 1e-6) / 1e9, peak_fraction=0.5,
                rel_l2_error=0.001, max_abs_error=0.001, sm_clock_mhz=1980.0, throttled=False,
                device=0)


def synthetic_report():
    rows = []
    for batch in (1, 8):
        for keys in (512, 4096, 32768):
            for stages in (2, 4):
                for wsk in (False, True):
                    for p in (1, 4, 16):
                        us = 5 + keys * batch / 2e3 / (1 + p / 8) + stages + wsk
                        rows.append(row(batch, keys, stages, wsk, p, us))
    rows.append(row(1, 32768, 2, False, 64, 1.0, status="incorrect"))  # must not be plotted
    meta = dict(schema_version=1, tool_version="0.1.0", git_commit="x", gpu_name="Test GPU",
                sm_count=132, peak_read_gbps=4400.0, timing_mode="graph", cold_cache=True)
    return dict(schema_version=1, metadata=meta, rows=rows)


def load_module():
    spec = importlib.util.spec_from_file_location("plot_report", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


class PureTest(unittest.TestCase):  # no matplotlib needed
    def test_tile_name_and_defaults_lookup(self):
        pr = load_module()
        self.assertEqual(pr.tile_name("decode_bf16_bf16_d128_g4_contig_null_bm16_bn64_bk32_wm16_wn16"
                                      "_t128_s4_wsk"), "bm16_bn64_bk32_wm16_wn16_t128_s4_wsk")
        rows = synthetic_report()["rows"]
        defaults = {"buckets": [dict(dtype="bf16", depth=128, group=4, kv="contig", mask="null",
                                     work_units=8, min_keys=4096, max_keys=8191,
                                     tile=dict(TILE, stages=2), partitions=4)]}
        found = pr.default_rows(defaults, rows)
        self.assertEqual(list(found), ["b1_h32_kv8_d128_n4096_bf16_contig_null"])
        r = found["b1_h32_kv8_d128_n4096_bf16_contig_null"]
        self.assertEqual((r["partitions"], r["traits"]["stages"], r["traits"]["warp_split_k"]), (4, 2, False))
        best = pr.best_rows(rows)
        self.assertEqual(best["b1_h32_kv8_d128_n32768_bf16_contig_null"]["status"], "passed")

    def test_cache_dtypes_and_soft_caps_are_separate_lines(self):
        pr = load_module()
        rows = [row(1, keys, 2, False, 1, 10 + keys / 1e3) for keys in (512, 4096)]
        fp8 = [row(1, keys, 2, False, 1, 6 + keys / 1e3) for keys in (512, 4096)]
        capped = [row(1, keys, 2, False, 1, 12 + keys / 1e3) for keys in (512, 4096)]
        for r in fp8:
            r["problem"]["kv_dtype"] = "e4m3"
            r["problem"]["name"] += "_kve4m3"
        for r in capped:
            r["problem"]["soft_cap"] = 50.0
            r["problem"]["name"] += "_cap50"
        lines = pr.bandwidth_series(pr.best_rows(rows + fp8 + capped).values())
        self.assertEqual(len(lines), 3, list(lines))  # bf16, e4m3 and capped: three lines
        keys = list(lines)
        labels = sorted(pr.shape_label(k, pr.varying_fields(keys)) for k in keys)
        self.assertEqual(labels, ["b1 h32/kv8", "b1 h32/kv8 cap 50", "b1 h32/kv8 kv e4m3"])

    def test_page_sizes_are_separate_lines(self):
        pr = load_module()
        rows = [row(1, keys, 2, False, 1, 10 + keys / 1e3 + page / 10, page_size=page)
                for page in (16, 64) for keys in (512, 4096)]
        self.assertNotEqual(pr.shape_key(rows[0]["problem"]), pr.shape_key(rows[2]["problem"]))
        lines = pr.bandwidth_series(pr.best_rows(rows).values())
        self.assertEqual(len(lines), 2, list(lines))  # one line per page size, not one zig-zag
        for key, pts in lines.items():
            self.assertEqual([k for k, _ in pts], [512, 4096])
        keys = list(lines)
        labels = sorted(pr.shape_label(k, pr.varying_fields(keys)) for k in keys)
        self.assertEqual(labels, ["b1 h32/kv8 page 16", "b1 h32/kv8 page 64"])
        # Contiguous problems carry page_size 0 and stay one line.
        contig = pr.bandwidth_series(pr.best_rows(synthetic_report()["rows"]).values())
        self.assertEqual(len(contig), 2)  # batch 1 and batch 8


def run_with_env(args, env=None):
    return subprocess.run([sys.executable, SCRIPT, *args], capture_output=True, text=True, env=env)


class InputErrorTest(unittest.TestCase):  # no matplotlib needed: these exit before plotting
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)
        self.dir = self.tmp.name
        self.report = self.write("sweep_x.json", synthetic_report())
        self.defaults = self.write("defaults.json", {"schema_version": 1, "buckets": [
            dict(dtype="bf16", depth=128, group=4, kv="contig", mask="null", work_units=8,
                 min_keys=256, max_keys=65535, tile=dict(TILE, stages=2), partitions=4)]})

    def write(self, name, value):
        path = os.path.join(self.dir, name)
        with open(path, "w") as f:
            json.dump(value, f)
        return path

    def assert_usage_error(self, r, text):
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn(text, r.stderr)
        self.assertNotIn("Traceback", r.stderr)
        self.assertEqual([f for f in os.listdir(self.dir) if f.endswith(".png")], [])

    def test_swapped_arguments(self):
        self.assert_usage_error(run(self.defaults, "--defaults", self.report), "defaults file")
        self.assert_usage_error(run(self.report, "--defaults", self.report), "arguments swapped")

    def test_empty_reports(self):
        empty = synthetic_report()
        empty["rows"] = []
        self.assert_usage_error(run(self.write("empty.json", empty)), "rows: empty")
        failed = synthetic_report()
        for r in failed["rows"]:
            r["status"] = "failed"
        self.assert_usage_error(run(self.write("failed.json", failed)), "none passed")

    def test_problem_without_passed_rows(self):
        rep = synthetic_report()
        rep["rows"].append(row(2, 512, 2, False, 1, 5.0, status="not_supported"))
        path = self.write("some.json", rep)
        self.assert_usage_error(run(path, "--problem", rep["rows"][-1]["problem"]["name"]),
                                "no passed row")

    def test_missing_matplotlib_exits_3(self):
        fake = os.path.join(self.dir, "fake_site")
        os.makedirs(os.path.join(fake, "matplotlib"))
        with open(os.path.join(fake, "matplotlib", "__init__.py"), "w") as f:
            f.write("raise ImportError('simulated: no matplotlib', name='matplotlib')\n")
        env = dict(os.environ, PYTHONPATH=fake + os.pathsep + os.environ.get("PYTHONPATH", ""))
        r = run_with_env([self.report, "--out-dir", self.dir], env)
        self.assertEqual(r.returncode, 3, r.stderr)
        self.assertIn("python3-matplotlib", r.stderr)
        self.assertNotIn("Traceback", r.stderr)


def run(*args):
    return subprocess.run([sys.executable, SCRIPT, *args], capture_output=True, text=True)


@unittest.skipUnless(HAVE_MPL, "matplotlib is not importable: plot_report.py tests skipped "
                               "(pip install matplotlib numpy to run them)")
class PlotReportTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = self.tmp.name
        self.report = os.path.join(self.dir, "sweep_x.json")
        with open(self.report, "w") as f:
            json.dump(synthetic_report(), f)

    def tearDown(self):
        self.tmp.cleanup()

    def assert_png(self, path):
        self.assertTrue(os.path.isfile(path), path)
        with open(path, "rb") as f:
            self.assertEqual(f.read(8), b"\x89PNG\r\n\x1a\n")

    def test_writes_both_pngs(self):
        out = os.path.join(self.dir, "plots")
        r = run(self.report, "--out-dir", out)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assert_png(os.path.join(out, "sweep_x_bandwidth.png"))
        self.assert_png(os.path.join(out, "sweep_x_heatmap.png"))
        self.assertIn("b1_h32_kv8_d128_n32768_bf16_contig_null", r.stdout)  # longest batch-1

    def test_defaults_and_problem(self):
        defaults = {"schema_version": 1, "buckets": [
            dict(dtype="bf16", depth=128, group=4, kv="contig", mask="null", work_units=8,
                 min_keys=256, max_keys=65535, tile=dict(TILE, stages=2), partitions=4)]}
        dpath = os.path.join(self.dir, "defaults.json")
        with open(dpath, "w") as f:
            json.dump(defaults, f)
        r = run(self.report, "--defaults", dpath, "--problem", "b8_h32_kv8_d128_n512_bf16_contig_null")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assert_png(os.path.join(self.dir, "sweep_x_bandwidth.png"))
        self.assertIn("b8_h32_kv8_d128_n512", r.stdout)
        # --problem writes its own heatmap file, leaving the default heatmap alone.
        self.assert_png(os.path.join(self.dir, "sweep_x_heatmap_b8_h32_kv8_d128_n512_bf16_contig_null.png"))
        self.assertFalse(os.path.exists(os.path.join(self.dir, "sweep_x_heatmap.png")))
        mapping = os.path.join(self.dir, "mapping.json")  # the plain mapping form
        with open(mapping, "w") as f:
            json.dump({"b1_h32_kv8_d128_n512_bf16_contig_null": {
                "kernel": synthetic_report()["rows"][0]["kernel"], "partitions": 1}}, f)
        r = run(self.report, "--defaults", mapping, "--out-dir", self.dir)
        self.assertEqual(r.returncode, 0, r.stderr)

    def test_bad_inputs_exit_2(self):
        r = run(os.path.join(self.dir, "missing.json"))
        self.assertEqual(r.returncode, 2)
        self.assertIn("missing.json", r.stderr)
        bad = os.path.join(self.dir, "bad.json")
        with open(bad, "w") as f:
            f.write("{not json")
        r = run(bad)
        self.assertEqual(r.returncode, 2)
        self.assertIn("not valid JSON", r.stderr)
        with open(bad, "w") as f:
            json.dump({"schema_version": 1, "metadata": {}, "rows": [{"kernel": "k"}]}, f)
        r = run(bad)
        self.assertEqual(r.returncode, 2)
        self.assertIn("rows[0].problem", r.stderr)
        r = run(self.report, "--problem", "nope")
        self.assertEqual(r.returncode, 2)


if __name__ == "__main__":
    unittest.main()

#!/usr/bin/env python3
"""Tests of scripts/peers/peers.py and scripts/peers/peerlib without torch or a GPU: problem parsing
and its errors, names and bytes as mha-tune computes them (checked against the built binary when
MHA_BUILD_DIR has one), page tables, which peer refuses which problem and why, the report schema,
crash isolation of the worker processes (a stand-in worker that segfaults), --resume's reading of
its own report, --dry-run and usage errors without importing torch. The GPU paths run on the H200 (scripts/bench_vs_peers.sh)."""

import argparse
import contextlib
import importlib.util
import io
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
import unittest

from mha_test_env import REPO, MHA_TUNE  # noqa: E402
SCRIPT = os.path.join(REPO, "scripts", "peers", "peers.py")
sys.path[:0] = [os.path.join(REPO, "scripts"), os.path.join(REPO, "scripts", "peers")]
from peerlib import (backends, fa3, flashinfer_sites, kernel_time, report, suite,  # noqa: E402
                     timing, worker)

spec = importlib.util.spec_from_file_location("peers", SCRIPT)
peers = importlib.util.module_from_spec(spec)
spec.loader.exec_module(peers)

# Keys exactly as src/reports/report_json.cpp writes them.
ROW_KEYS = {"kernel", "traits", "problem", "partitions", "status", "reason", "time", "bytes",
            "achieved_gbps", "peak_fraction", "rel_l2_error", "max_abs_error", "sm_clock_mhz",
            "throttled", "device",
            # The peers' own: the kernel-time convention beside the step's (peerlib/kernel_time.py).
            "kernel_time_us", "kernels_per_step", "kernel_time_method"}
TRAIT_KEYS = {"dtype", "out_dtype", "kv_dtype", "soft_cap", "depth", "group", "kv", "mask",
              "has_sink", "bm", "bn", "bk", "wm", "wn", "threads", "stages", "warp_split_k",
              "smem_bytes"}
PROBLEM_KEYS = {"name", "batch", "heads", "kv_heads", "depth", "dtype", "out_dtype", "kv_dtype",
                "kv_scale", "kv", "page_size", "mask", "window", "chunk", "soft_cap", "has_sink",
                "keys", "lengths"}
TIME_KEYS = {"median_us", "min_us", "mean_us", "stdev_us", "samples"}
SERVING = os.path.join(REPO, "configs", "serving.json")


def problems(text):
    return suite.expand_all(suite.parse_inline(text))


class ParseTest(unittest.TestCase):
    def test_keys_aliases_and_names(self):
        ps = problems("b=1,h=32,kv_heads=8,n=512:2048; batch=8,heads=8,kv_heads=1,keys=7,d=64")
        self.assertEqual([p["name"] for p in ps], [
            "b1_h32_kv8_d128_n512_bf16_contig_null", "b1_h32_kv8_d128_n2048_bf16_contig_null",
            "b8_h8_kv1_d64_n7_bf16_contig_null"])
        p = problems("kv=paged,page_size=128,mask=window,window=64,sink=1,sink_mean=3,keys=9")[0]
        self.assertEqual(p["name"], "b1_h32_kv8_d128_n9_bf16_paged128_window64_sink3")
        self.assertEqual(problems("kv=paged,keys=9")[0]["page_size"], 16)  # mha-tune's default
        # HND pages: named as mha-tune names them; the peers read pages either way.
        hnd = problems("kv=paged_hnd,page_size=128,keys=9")[0]
        self.assertEqual(hnd["name"], "b1_h32_kv8_d128_n9_bf16_paged_hnd128_null")
        self.assertEqual(backends.problem_layout(hnd).page_size, 128)
        self.assertEqual(problems("kv=paged_hnd,keys=9")[0]["page_size"], 16)
        named = problems("name=mix,lengths=5:77:300")[0]
        self.assertEqual((named["name"], named["batch"], named["keys"], named["lengths_name"]),
                         ("mix", 3, 300, "ragged5-77-300"))
        self.assertEqual(problems("name=s,keys=4:8")[1]["name"], "s_n8")
        self.assertEqual(len(problems(peers.DEFAULT_PROBLEMS)), 10)

    def test_errors_name_the_key(self):
        for bad, what in [("", "no problem"), ("b=1,h=32", "keys"), ("b=0,n=4", "batch"),
                          ("h=30,kv_heads=8,n=4", "multiple"), ("n=4,d=96", "depth"),
                          ("n=x", "keys"), ("q=1,n=4", "unknown key 'q'"), ("n4", "key=value"),
                          ("b=1:2,n=4", "batch"), ("n=4,dtype=fp8", "dtype"),
                          ("batch=2,lengths=3:4:5", "disagrees"), ("name=a,n=4;name=a,n=4", "twice"),
                          ("n=0", "lengths must be"), ("q_std=nan,n=4", "finite"),
                          ("n=4,kv_dtype=fp8", "key 'kv_dtype': 'fp8'"),
                          ("n=4,kv_dtype=e4m3,kv_scale=row", "key 'kv_scale': 'row'"),
                          ("n=4,kv_scale=head", "key 'kv_scale': a bf16 cache has no scales"),
                          ("n=4,dtype=fp16,kv_dtype=fp16,kv_scale=tensor", "key 'kv_scale'"),
                          ("n=4,dtype=fp32,kv_dtype=e4m3", "key 'dtype': 'fp32'"),
                          ("n=4,soft_cap=-30", "key 'soft_cap': -30 is negative"),
                          ("n=4,soft_cap=big", "key 'soft_cap': 'big' is not a number"),
                          ("n=4,soft_cap=inf", "key 'soft_cap': 'inf' is not a finite")]:
            with self.assertRaises(suite.UsageError, msg=bad) as ctx:
                problems(bad)
            self.assertIn(what, str(ctx.exception), bad)
        with self.assertRaises(suite.UsageError) as ctx:
            problems("n=4;n=8,kv_scale=head")
        self.assertIn("--problems item 2 ('n=8,kv_scale=head'): key 'kv_scale'", str(ctx.exception))

    def test_fp8_cache_and_soft_cap_names(self):
        """kv_dtype (with h for per-head scales) after the out dtype, the cap after the mask, as
        src/problems/problem.cpp names them."""
        for text, name in [
                ("n=512,kv_dtype=e4m3", "b1_h32_kv8_d128_n512_bf16_kve4m3_contig_null"),
                ("n=512,kv_dtype=e4m3,kv_scale=tensor", "b1_h32_kv8_d128_n512_bf16_kve4m3_contig_null"),
                ("kv=paged,n=512,kv_dtype=e4m3,kv_scale=head",
                 "b1_h32_kv8_d128_n512_bf16_kve4m3h_paged16_null"),
                ("dtype=fp16,out_dtype=fp32,kv_dtype=e5m2,kv_scale=head,mask=window,window=64,"
                 "soft_cap=50,sink=1,sink_mean=2,n=512",
                 "b1_h32_kv8_d128_n512_fp16_ofp32_kve5m2h_contig_window64_cap50_sink2"),
                ("mask=chunked,chunk=128,soft_cap=30.5,q_std=2,n=9",
                 "b1_h32_kv8_d128_n9_bf16_contig_chunked128_cap30.5_qstd2"),
                ("soft_cap=0.125,lengths=3:9", "b2_h32_kv8_d128_n9_bf16_contig_null_cap0.125_ragged3-9"),
                ("n=9,kv_dtype=bf16", "b1_h32_kv8_d128_n9_bf16_contig_null"),
                ("n=9,soft_cap=0", "b1_h32_kv8_d128_n9_bf16_contig_null"),  # 0: no cap, as in C++
                ("n=9,dtype=fp16,kv_dtype=bf16", "b1_h32_kv8_d128_n9_fp16_kvbf16_contig_null")]:
            self.assertEqual(problems(text)[0]["name"], name, text)
        p = problems("n=9")[0]
        self.assertEqual((p["kv_dtype"], p["kv_scale"], p["soft_cap"]), ("bf16", "tensor", 0.0))
        p = problems("dtype=fp16,kv_dtype=e4m3,kv_scale=head,soft_cap=20,n=9")[0]
        self.assertEqual((p["kv_dtype"], p["kv_scale"], p["soft_cap"]), ("e4m3", "head", 20.0))
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "s.json")
            with open(path, "w") as f:
                json.dump({"problems": [{"keys": [64], "kv_dtype": "e4m3", "soft_cap": 50.0}]}, f)
            self.assertEqual(suite.expand_all(suite.read_suite(path))[0]["name"],
                             "b1_h32_kv8_d128_n64_bf16_kve4m3_contig_null_cap50")
            with open(path, "w") as f:
                json.dump({"problems": [{"keys": [64], "soft_cap": -1}]}, f)
            with self.assertRaises(suite.UsageError) as ctx:
                suite.read_suite(path)
            self.assertIn("problems[0]: key 'soft_cap'", str(ctx.exception))

    def test_serving_suite(self):
        ps = suite.expand_all(suite.read_suite(SERVING))
        names = [p["name"] for p in ps]
        self.assertEqual(len(names), len(set(names)))
        kinds = {(p["kv"], p["page_size"], suite.is_ragged(p)) for p in ps}
        for kind in [("contig", 0, False), ("paged", 16, False), ("paged", 128, False),
                     ("contig", 0, True), ("paged", 16, True)]:
            self.assertIn(kind, kinds)
        self.assertTrue(any(p["has_sink"] and p["mask"] == "window" for p in ps))

    def test_suite_file_errors(self):
        with tempfile.TemporaryDirectory() as d:
            for text, what in [("{", "not JSON"), ('{"problems": 3}', "problems"),
                               ('{"problems": [{"keys": [1], "bogus": 1}]}', "problems[0]"),
                               ('{"suite": {"problems": [{"keys": "x"}]}}', "suite: problems[0]")]:
                path = os.path.join(d, "s.json")
                with open(path, "w") as f:
                    f.write(text)
                with self.assertRaises(suite.UsageError) as ctx:
                    suite.read_suite(path)
                self.assertIn(what, str(ctx.exception))

    @unittest.skipUnless(os.access(MHA_TUNE, os.X_OK), "MHA_BUILD_DIR has no mha-tune binary")
    def test_names_match_mha_tune(self):
        """The names peers give are the names mha-tune's sweep gives the same specs."""
        for text in ["batch=2,heads=32,kv_heads=8,dtype=bf16,kv=contig,keys=37:1000",
                     "dtype=fp16,out_dtype=fp32,kv=paged,page_size=16,batch=3,keys=100",
                     "dtype=bf16,kv=contig,lengths=5:77:300"]:
            r = subprocess.run([MHA_TUNE, "sweep", "--dry-run", "--problem", text],
                               capture_output=True, text=True)
            self.assertEqual(r.returncode, 0, r.stderr)
            for p in problems(text):
                self.assertRegex(r.stdout, r"(?m)^" + re.escape(p["name"]) + r"\s", text)


    @unittest.skipUnless(os.access(MHA_TUNE, os.X_OK), "MHA_BUILD_DIR has no mha-tune binary")
    def test_fp8_and_soft_cap_as_mha_tune(self):
        """Names and step bytes of fp8 caches and soft caps equal mha-tune's, for the specs this
        build has kernels for (each spec states kv_dtype and soft_cap: mha-tune would take a
        kernel's own where a spec leaves them out)."""
        served = 0
        for text in ["kv_dtype=e4m3,kv=contig,soft_cap=50,batch=2,keys=77:512",
                     "kv_dtype=e4m3,kv_scale=head,kv=contig,soft_cap=30.5,lengths=5:77:300",
                     "kv_dtype=e5m2,kv_scale=head,kv=paged,page_size=16,soft_cap=50,keys=300",
                     "dtype=fp16,kv_dtype=e4m3,mask=window,window=64,soft_cap=50,sink=1,keys=300"]:
            r = subprocess.run([MHA_TUNE, "sweep", "--dry-run", "--json", "--problem", text],
                               capture_output=True, text=True)
            if re.search(r"unknown key '(kv_dtype|kv_scale|soft_cap)'", r.stderr):
                self.skipTest("this mha-tune predates kv_dtype, kv_scale and soft_cap")
            if "no compiled kernel serves" in r.stderr:
                continue
            self.assertEqual(r.returncode, 0, r.stderr)
            served += 1
            theirs = [(q["name"], q["bytes_per_step"]) for q in json.loads(r.stdout)["problems"]]
            self.assertEqual(theirs, [(p["name"], suite.step_bytes(p)) for p in problems(text)], text)
        if not served:
            self.skipTest("this build has no fp8 or soft-capping kernel")


class IdentityTest(unittest.TestCase):
    """A peers report names its GPU as mha-tune's reports do: UUID, PCI bus id, driver release."""

    def test_gpu_identity_as_nvidia_smi_prints_it(self):
        props = argparse.Namespace(uuid="8f7c1a02-b34d-5e6f-7081-92a3b4c5d6e7", pci_domain_id=0,
                                   pci_bus_id=0x3B, pci_device_id=0)
        self.assertEqual(worker.gpu_uuid(props), "GPU-8f7c1a02-b34d-5e6f-7081-92a3b4c5d6e7")
        self.assertEqual(worker.pci_bus_id(props), "00000000:3B:00.0")
        self.assertEqual(worker.gpu_uuid(argparse.Namespace()), "")
        self.assertEqual(worker.pci_bus_id(argparse.Namespace(pci_bus_id=1)), "")
        with tempfile.NamedTemporaryFile("w") as f:
            f.write("NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.159.03  Release "
                    "Build  (dvs-builder@U16)  Thu Jan 23 2025\n")
            f.flush()
            self.assertEqual(worker.nvidia_driver_release(f.name), "580.159.03")
        self.assertEqual(worker.nvidia_driver_release("/nonexistent/version"), "")

    def test_metadata_carries_it(self):
        meta = report.make_metadata("NVIDIA H200", 132, gpu_uuids="GPU-1", gpu_pci_bus_ids="00:01",
                                    nvidia_driver_version="580.159")
        self.assertEqual((meta["gpu_uuids"], meta["gpu_pci_bus_ids"], meta["nvidia_driver_version"]),
                         ("GPU-1", "00:01", "580.159"))


class PlanTest(unittest.TestCase):
    """--plan: the problems as mha-tune's sweep expands them (ranges, mixes, names), so the peers
    time what the sweep times whatever syntax the spec uses."""

    def plan_of(self, *specs):
        args = [MHA_TUNE, "sweep", "--dry-run", "--json"]
        for text in specs:
            args += ["--problem", text]
        r = subprocess.run(args, capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        return json.loads(r.stdout)

    @unittest.skipUnless(os.access(MHA_TUNE, os.X_OK), "MHA_BUILD_DIR has no mha-tune binary")
    def test_the_binarys_expansion(self):
        plan = self.plan_of("batch=2,kv_heads=8,dtype=bf16,kv=contig,keys=1000:2000:+500,q_std=2",
                            "kv_heads=8,dtype=bf16,kv=contig,lengths=5:9000:130,scale=0.05")
        got = suite.problems_from_plan(plan, "plan")
        self.assertEqual([p["name"] for p in got], [q["name"] for q in plan["problems"]])
        self.assertEqual([p["keys"] for p in got[:3]], [1000, 1500, 2000])  # steps of 500
        self.assertEqual(got[0]["lengths"], [1000, 1000])
        self.assertEqual(got[0]["q_std"], 2.0)
        self.assertAlmostEqual(got[0]["scale"], 128 ** -0.5, places=6)
        self.assertEqual(got[3]["lengths"], [5, 9000, 130])
        self.assertAlmostEqual(got[3]["scale"], 0.05, places=6)
        self.assertEqual(got[0]["kv_scale"], "tensor")  # a 16-bit cache: no scales

    def test_refuses_what_is_not_a_plan(self):
        for doc, says in (({}, "no 'problems' list"), ({"problems": []}, "holds no problem"),
                          ({"problems": [{"name": "x"}]}, "lacks batch")):
            with self.assertRaises(suite.UsageError) as ctx:
                suite.problems_from_plan(doc, "p.json")
            self.assertIn(says, str(ctx.exception))
            self.assertIn("p.json", str(ctx.exception))


class LengthMixTest(unittest.TestCase):
    def test_mixes_and_names(self):
        self.assertEqual(suite.mix_lengths("uniform", 3, 70, 1), [70, 70, 70])
        one = suite.mix_lengths("one_long", 32, 65536, 1)
        self.assertEqual(one[0], 65536)
        self.assertTrue(all(256 <= n <= 1024 for n in one[1:]))
        self.assertNotEqual(suite.mix_lengths("lognormal", 9, 4096, 1),
                            suite.mix_lengths("lognormal", 9, 4096, 2))
        p = problems("mix=many_long,batch=4,keys=8192,mix_seed=3")[0]
        self.assertEqual(p["lengths_name"], "many_long4x8192s3")
        self.assertEqual(p["keys"], max(p["lengths"]))
        self.assertEqual(problems("name=c,mix=lognormal,batch=2,keys=64")[0]["name"], "c_n64")
        for bad in ["mix=lognormal,keys=5", "mix=gamma,batch=2,keys=5",
                    "mix=uniform,batch=2,keys=5,lengths=1:2"]:
            with self.assertRaises(suite.UsageError, msg=bad):
                problems(bad)

    @unittest.skipUnless(os.access(MHA_TUNE, os.X_OK), "MHA_BUILD_DIR has no mha-tune binary")
    def test_same_lengths_as_mha_tune(self):
        """Python draws the batch mha-tune draws: same name, longest length and step bytes."""
        for mix in ("lognormal", "one_long", "many_long", "uniform"):
            for keys, seed in ((4096, 1), (131072, 7), (3, 2)):
                text = f"mix={mix},batch=24,keys={keys},mix_seed={seed},dtype=bf16,kv=contig"
                r = subprocess.run([MHA_TUNE, "sweep", "--dry-run", "--json", "--problem", text],
                                   capture_output=True, text=True)
                self.assertEqual(r.returncode, 0, r.stderr)
                ours = json.loads(r.stdout)["problems"][0]
                p = problems(text)[0]
                self.assertEqual((ours["name"], ours["keys"], ours["bytes_per_step"]),
                                 (p["name"], p["keys"], suite.step_bytes(p)), text)
        # A long explicit list: named by size, longest and the list's hash, on both sides.
        text = "lengths=" + ":".join(str(100 + i) for i in range(20)) + ":5000,dtype=bf16,kv=contig"
        r = subprocess.run([MHA_TUNE, "sweep", "--dry-run", "--json", "--problem", text],
                           capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(json.loads(r.stdout)["problems"][0]["name"], problems(text)[0]["name"])


class BytesAndPagesTest(unittest.TestCase):
    def test_bytes_as_mha_tune(self):
        p = problems("b=1,h=32,kv_heads=8,n=512")[0]
        self.assertEqual(suite.step_bytes(p), 2113536.0)  # as mha-tune's report for this shape
        w = problems("mask=window,window=128,n=4096")[0]
        self.assertEqual(suite.step_bytes(w), suite.step_bytes(problems("n=128")[0]))
        c = problems("mask=chunked,chunk=256,n=1000")[0]  # chunk [768, 1000): 232 keys
        self.assertEqual(suite.step_bytes(c), suite.step_bytes(problems("n=232")[0]))
        r = problems("lengths=100:300")[0]
        self.assertEqual(suite.step_bytes(r) - 2 * 32 * 128 * 4, 400 * 8 * 128 * 4)

    def test_fp8_bytes(self):
        """One byte per K/V element in an fp8 cache; q and the output keep theirs."""
        for kv_dtype in ("e4m3", "e5m2"):
            p = problems(f"kv_dtype={kv_dtype},kv_scale=head,n=512")[0]
            self.assertEqual(suite.step_bytes(p), 512 * 8 * 128 * 2 + 32 * 128 * 4)
            self.assertEqual(suite.cache_bytes(p, 128), 2.0 * 4 * 128 * 8 * 128)
        w = problems("kv_dtype=e4m3,mask=window,window=128,out_dtype=fp32,n=4096")[0]
        self.assertEqual(suite.step_bytes(w), 128 * 8 * 128 * 2 + 32 * 128 * (2 + 4))
        p = problems("kv_dtype=e4m3,lengths=100:300")[0]
        self.assertEqual(worker.copy_bytes(p, backends.Layout(16, True)),
                         2.0 * (7 + 19) * 16 * 8 * 128 + 2 * 32 * 128 * 2)
        self.assertEqual(suite.step_bytes(problems("soft_cap=50,n=512")[0]), 2113536.0)

    def test_fp8_data_scales(self):
        """Per-head sigmas 0.5, 1, 2, 4, ...; 8 sigma at the format's largest value, sigma the
        head's own or the largest over heads."""
        p = problems("kv_dtype=e4m3,n=8")[0]
        self.assertEqual(suite.kv_sigmas(p), [0.5, 1.0, 2.0, 4.0] * 2)
        self.assertEqual(suite.kv_scales(p), [32.0 / 448] * 8)
        h = problems("kv_dtype=e4m3,kv_scale=head,n=8")[0]
        self.assertEqual(suite.kv_scales(h), [4.0 / 448, 8.0 / 448, 16.0 / 448, 32.0 / 448] * 2)
        e = problems("kv_dtype=e5m2,heads=4,kv_heads=2,n=8")[0]
        self.assertEqual(suite.kv_scales(e), [8.0 / 57344] * 2)
        self.assertEqual(suite.kv_sigmas(problems("n=8")[0]), [1.0] * 8)

    def test_rotation(self):
        self.assertEqual(timing.rotation_copies(5e9, 62914560), 1)
        self.assertEqual(timing.rotation_copies(1.0, 62914560), 512)
        self.assertEqual(timing.rotation_copies(2.1e6, 62914560), 120)
        self.assertEqual(timing.steps_per_replay(2), 8)

    def test_page_table(self):
        rows, total = suite.page_table([33, 16, 1], 16, seed=1)
        self.assertEqual(total, 5)
        self.assertEqual([len(r) for r in rows], [3, 3, 3])
        used = rows[0][:3] + rows[1][:1] + rows[2][:1]
        self.assertEqual(sorted(used), [0, 1, 2, 3, 4])  # every page once
        self.assertEqual(suite.page_table([33, 16, 1], 16, seed=1), (rows, total))  # seeded
        self.assertNotEqual(suite.page_table([4096], 16, seed=1)[0][0], list(range(256)))
        self.assertEqual(suite.page_table([300], 128, 1, shuffle=False)[0], [[0, 1, 2]])
        self.assertEqual(suite.cache_bytes(problems("lengths=100:300")[0], 128),
                         2.0 * 4 * 128 * 8 * 128 * 2)


class StatsTest(unittest.TestCase):
    def test_statistics_and_stopping(self):
        self.assertEqual(timing.median([4, 1, 2, 3]), 2.5)
        self.assertAlmostEqual(timing.quantile([1, 2, 3, 4], 0.25), 1.75)
        s = timing.summarize_us([1.0, 2.0, 3.0])
        self.assertEqual((s["median_us"], s["min_us"], s["samples"]), (2.0, 1.0, 3))
        self.assertFalse(timing.should_stop([10.0] * 9, 0.1))
        self.assertTrue(timing.should_stop([10.0] * 10, 0.1))
        self.assertFalse(timing.should_stop([10.0, 12.0] * 10, 0.1))
        self.assertTrue(timing.should_stop([10.0, 12.0] * 10, 0.5))


class PeerTableTest(unittest.TestCase):
    def why(self, peer, text):
        return backends.PEERS[peer].why_not(problems(text)[0])

    def test_who_refuses_what(self):
        self.assertIn("page table", self.why("torch_sdpa_flash", "kv=paged,n=64"))
        self.assertIn("lengths", self.why("torch_sdpa_cudnn", "lengths=3:9"))
        self.assertIsNone(self.why("torch_sdpa_flash", "n=64"))
        self.assertIsNone(self.why("torch_flex", "lengths=3:9,mask=window,window=4"))
        self.assertIn("sink", self.why("torch_flex", "sink=1,n=64"))
        self.assertIn("sinks", self.why("flashinfer_fa2", "sink=1,kv=paged,n=64"))
        self.assertIsNone(self.why("flashinfer_tc", "kv=paged,page_size=7,lengths=3:9"))
        self.assertIn("not 7", self.why("flashinfer_xqa", "kv=paged,page_size=7,n=64"))
        self.assertIsNone(self.why("flashinfer_xqa", "kv=paged,mask=window,sink=1,n=64"))
        self.assertIn("window", self.why("flashinfer_cudnn", "kv=paged,mask=window,n=64"))
        fp32 = problems("out_dtype=fp32,n=64")[0]
        self.assertIn("query's dtype", peers.common_why_not(fp32))

    def test_fp8_and_soft_cap(self):
        """Who takes an fp8 cache (per tensor or per head, e4m3 or e5m2) and a soft cap."""
        paged = "kv=paged,page_size=16,n=64,"
        for peer in ("torch_sdpa_flash", "torch_sdpa_cudnn", "torch_flex"):
            self.assertIn("no fp8 K/V cache", self.why(peer, "n=64,kv_dtype=e4m3"), peer)
        self.assertIn("soft-capping", self.why("torch_sdpa_cudnn", "n=64,soft_cap=50"))
        self.assertIsNone(self.why("torch_flex", "lengths=3:9,mask=window,window=4,soft_cap=50"))
        for peer in ("flashinfer_fa2", "flashinfer_tc"):
            for kv_dtype in ("e4m3", "e5m2"):
                self.assertIsNone(self.why(peer, paged + f"kv_dtype={kv_dtype}"), peer)
            self.assertIsNone(self.why(peer, "n=64,kv_dtype=e4m3,soft_cap=30,mask=window"), peer)
            self.assertIn("one scale per tensor",
                          self.why(peer, paged + "kv_dtype=e4m3,kv_scale=head"), peer)
        self.assertIsNone(self.why("flashinfer_xqa", paged + "kv_dtype=e4m3,sink=1,mask=window"))
        self.assertIn("e4m3 only", self.why("flashinfer_xqa", paged + "kv_dtype=e5m2"))
        self.assertIn("one K/V scale", self.why("flashinfer_xqa", paged + "kv_dtype=e4m3,kv_scale=head"))
        self.assertIn("soft-capping", self.why("flashinfer_xqa", paged + "soft_cap=50"))
        self.assertIn("dequantisation scales", self.why("flashinfer_cudnn", paged + "kv_dtype=e4m3"))
        self.assertIn("soft-capping", self.why("flashinfer_cudnn", paged + "soft_cap=50"))
        self.assertIn("16-bit K/V cache", peers.common_why_not(problems("dtype=fp16,kv_dtype=bf16,n=8")[0]))
        self.assertIsNone(peers.common_why_not(problems("dtype=fp16,kv_dtype=e5m2,n=8")[0]))

    def test_fa3_refusals(self):
        self.assertIn("attention-sink", self.why("fa3", "kv=paged,sink=1,n=64"))
        self.assertIn("e4m3 only", self.why("fa3", "kv=paged,kv_dtype=e5m2,n=64"))
        for text in ("n=64", "kv=paged,page_size=16,lengths=3:9", "kv=paged,kv_dtype=e4m3,"
                     "kv_scale=head,n=64", "mask=window,window=8,soft_cap=30,n=64"):
            self.assertIsNone(self.why("fa3", text), text)
        fp8 = problems("kv=paged,kv_dtype=e4m3,n=64")[0]
        self.assertEqual(backends.PEERS["fa3"].tolerance(fp8), 0.15)
        self.assertEqual(backends.PEERS["fa3"].layout(problems("n=64")[0]).page_size, 0)

    def test_fa3_build_refusal_names_the_switch(self):
        built = {"build_flags": {"FLASHATTENTION_DISABLE_HDIM256": True,
                                 "FLASHATTENTION_DISABLE_FP8": True,
                                 "FLASHATTENTION_DISABLE_HDIM128": False}}
        why = lambda text: fa3.build_refusal(None, problems(text)[0], built)  # noqa: E731
        self.assertIn("FLASHATTENTION_DISABLE_HDIM256", why("depth=256,n=64"))
        self.assertIn("e4m3 cache", why("kv=paged,kv_dtype=e4m3,n=64"))
        self.assertIsNone(why("depth=128,n=64,soft_cap=30"))
        self.assertIsNone(fa3.build_refusal(None, problems("depth=256,n=64")[0], {}))

    def test_tolerances(self):
        """XQA's sm90 fp8 kernel rounds q and P to e4m3 too: a looser bound for it alone."""
        fp8, bf16 = problems("kv=paged,kv_dtype=e4m3,n=64")[0], problems("kv=paged,n=64")[0]
        xqa = backends.PEERS["flashinfer_xqa"]
        self.assertEqual((xqa.tolerance(fp8), xqa.tolerance(bf16)), (0.15, backends.TOLERANCE))
        for name in ("flashinfer_fa2", "flashinfer_tc", "torch_flex"):
            self.assertEqual(backends.PEERS[name].tolerance(fp8), backends.TOLERANCE, name)

    def test_group_key(self):
        """One worker per JIT module: cache dtype and soft cap on/off split groups; the cap's
        value, the scale kind, lengths and paging do not."""
        key = lambda text: suite.group_key(problems(text)[0])  # noqa: E731
        self.assertNotEqual(key("n=64"), key("n=64,kv_dtype=e4m3"))
        self.assertNotEqual(key("n=64,kv_dtype=e4m3"), key("n=64,kv_dtype=e5m2"))
        self.assertNotEqual(key("n=64"), key("n=64,soft_cap=50"))
        self.assertEqual(key("n=64,soft_cap=50"), key("kv=paged,n=9000,soft_cap=30"))
        self.assertEqual(key("n=64,kv_dtype=e4m3"), key("lengths=3:9,kv_dtype=e4m3,kv_scale=head"))

    def test_layouts(self):
        contig, paged = problems("n=300")[0], problems("kv=paged,page_size=16,n=300")[0]
        self.assertEqual(backends.PEERS["torch_sdpa_flash"].layout(contig).page_size, 0)
        for fi in ("flashinfer_fa2", "flashinfer_tc", "flashinfer_xqa", "flashinfer_cudnn"):
            lay = backends.PEERS[fi].layout(contig)
            self.assertEqual((lay.page_size, lay.shuffled), (128, False), fi)
            lay = backends.PEERS[fi].layout(paged)
            self.assertEqual((lay.page_size, lay.shuffled), (16, True), fi)

    def test_flashinfer_workspace_holds_its_split_scratch(self):
        # MQA (64/1, d64) asked FlashInfer's tensor-core plan for 276,824,064 bytes of
        # batch_prefill_tmp_v (64 heads x 264 blocks x 64 rows x 64 floats) and 128 MB failed.
        mqa = problems("heads=64,kv_heads=1,depth=64,n=8192")[0]
        self.assertGreaterEqual(backends._fi_decode_workspace_bytes(mqa, 132), 276824064 + 64 * 264 * 64 * 4)
        llama = problems("heads=32,kv_heads=8,n=8192")[0]
        self.assertEqual(backends._fi_decode_workspace_bytes(llama, 132), 128 << 20)

    def test_resolve(self):
        self.assertEqual(len(backends.resolve("all")), 10)
        self.assertEqual([p.name for p in backends.resolve("fi_tc, flash")],
                         ["flashinfer_tc", "torch_sdpa_flash"])
        self.assertEqual([p.name for p in backends.resolve("ours")], ["mha_tune"])
        with self.assertRaises(ValueError):
            backends.resolve("fi_tc,xla")


class ReportTest(unittest.TestCase):
    def test_schema(self):
        ps = problems("b=1,n=512;kv=paged,page_size=128,lengths=4:9,mask=window,window=4,sink=1")
        t = timing.summarize_us([10.0, 10.1, 9.9])
        rows = [report.make_row("flashinfer_tc", ps[0], "passed", "x", t, 4400.0, 0.002, 0.001),
                report.make_row("torch_flex", ps[1], "not_supported", "why")]
        rep = report.make_report(report.make_metadata("NVIDIA H200", 132, 62914560, 4400.0), rows)
        for r in rep["rows"]:
            self.assertEqual(set(r), ROW_KEYS)
            self.assertEqual(set(r["traits"]), TRAIT_KEYS)
            ragged = {"ragged_lengths", "total_keys"} if r["problem"]["lengths"] else set()
            self.assertEqual(set(r["problem"]), PROBLEM_KEYS | ragged)
            self.assertEqual(set(r["time"]), TIME_KEYS)
            self.assertEqual((r["partitions"], r["traits"]["bm"]), (1, 0))
        self.assertEqual(rows[0]["kernel"], "peer_flashinfer_tc")
        self.assertAlmostEqual(rows[0]["achieved_gbps"], 2113536.0 / 10.0e-6 / 1e9)
        p = rows[1]["problem"]
        self.assertEqual((p["kv"], p["page_size"], p["mask"], p["window"], p["has_sink"],
                          p["lengths"], p["keys"]), ("paged", 128, "window", 4, True, "ragged4-9", 9))
        self.assertEqual((p["ragged_lengths"], p["total_keys"]), ([4, 9], 13))
        self.assertEqual(report.number(float("nan")), "nan")
        self.assertEqual((rows[0]["traits"]["kv_dtype"], rows[0]["traits"]["soft_cap"],
                          rows[0]["problem"]["kv_scale"], rows[0]["problem"]["soft_cap"]),
                         ("bf16", False, "", 0.0))
        self.assertEqual((rows[0]["kernel_time_us"], rows[0]["kernel_time_method"]), (0.0, ""))
        k = {"kernel_us": 8.5, "kernels_per_step": 2.0, "method": "cupti via torch.profiler"}
        timed = report.make_row("flashinfer_tc", ps[0], "passed", "x", t, 4400.0, kernel=k)
        self.assertEqual((timed["kernel_time_us"], timed["kernels_per_step"],
                          timed["kernel_time_method"]), (8.5, 2.0, "cupti via torch.profiler"))
        # Only a timed row carries a kernel time.
        self.assertEqual(report.make_row("torch_flex", ps[0], "failed", "x", kernel=k)
                         ["kernel_time_us"], 0.0)
        self.assertIn("kernel us", report.format_table([timed]))
        fp8 = report.make_row("flashinfer_xqa", problems("kv_dtype=e4m3,soft_cap=50,n=512")[0],
                              "passed", "x", t, 4400.0)
        self.assertEqual((fp8["traits"]["kv_dtype"], fp8["traits"]["soft_cap"],
                          fp8["problem"]["kv_dtype"], fp8["problem"]["kv_scale"],
                          fp8["problem"]["soft_cap"], fp8["bytes"]),
                         ("e4m3", True, "e4m3", "tensor", 50.0, 1064960.0))


class FlashInferSitesTest(unittest.TestCase):
    def setUp(self):
        saved = dict(backends.PEERS), dict(backends.SHORT)

        def restore():
            backends.PEERS.clear(), backends.PEERS.update(saved[0])
            backends.SHORT.clear(), backends.SHORT.update(saved[1])
        self.addCleanup(restore)

    def test_parse(self):
        self.assertEqual(flashinfer_sites.parse(["v072=/tmp/fi"]), {"v072": "/tmp/fi"})
        for bad in (["v072"], ["V072=/x"], ["v0.7=/x"], ["v072="], ["a=/x", "a=/y"]):
            with self.assertRaises(ValueError, msg=bad):
                flashinfer_sites.parse(bad)

    def test_register_names_packages_and_0_7_api(self):
        added = flashinfer_sites.register({"v072": "/tmp/fi072"})
        self.assertEqual(sorted(p.name for p in added), [
            "flashinfer_cudnn_v072", "flashinfer_fa2_v072", "flashinfer_tc_fa3_v072",
            "flashinfer_tc_v072", "flashinfer_trtllm_v072", "flashinfer_xqa_v072"])
        self.assertEqual(flashinfer_sites.register({"v072": "/tmp/fi072"}), [])  # idempotent
        xqa = backends.PEERS["flashinfer_xqa_v072"]
        self.assertEqual((xqa.package, xqa.site, xqa.api07), ("flashinfer@v072", "/tmp/fi072", True))
        self.assertFalse(backends.PEERS["flashinfer_xqa"].api07)  # the original is untouched
        self.assertEqual([p.name for p in backends.resolve("fi_xqa_v072,fi_tc_fa3_v072")],
                         ["flashinfer_xqa_v072", "flashinfer_tc_fa3_v072"])
        self.assertEqual(len(backends.resolve("all")), 16)
        # 0.7's API takes sinks in the wrapper and a window, sinks and fp16 in cuDNN; 0.5.3's not.
        sink, window = problems("kv=paged,sink=1,n=64")[0], problems("kv=paged,mask=window,n=64")[0]
        fp16 = problems("dtype=fp16,kv=paged,n=64")[0]
        for name in ("flashinfer_fa2", "flashinfer_tc", "flashinfer_cudnn"):
            self.assertIsNotNone(backends.PEERS[name].why_not(sink), name)
            self.assertIsNone(backends.PEERS[name + "_v072"].why_not(sink), name)
        self.assertIsNone(backends.PEERS["flashinfer_cudnn_v072"].why_not(window))
        self.assertIsNone(backends.PEERS["flashinfer_cudnn_v072"].why_not(fp16))
        self.assertIn("dequantisation", backends.PEERS["flashinfer_cudnn_v072"].why_not(
            problems("kv=paged,kv_dtype=e4m3,n=64")[0]))

    def test_worker_env_puts_the_site_first(self):
        flashinfer_sites.register({"v072": "/tmp/fi072"})
        env = flashinfer_sites.worker_env(backends.PEERS["flashinfer_tc_v072"],
                                          {"PYTHONPATH": "/tmp/site053", "X": "1"})
        self.assertEqual(env["PYTHONPATH"], "/tmp/fi072" + os.pathsep + "/tmp/site053")
        self.assertEqual(flashinfer_sites.worker_env(backends.PEERS["flashinfer_tc"],
                                                     {"X": "1"}), {"X": "1"})

    def test_probe_refuses_a_flashinfer_from_elsewhere(self):
        with tempfile.TemporaryDirectory() as tmp:
            site, other = os.path.join(tmp, "site"), os.path.join(tmp, "other")
            for d, version in ((site, "0.7.2.post1"), (other, "0.5.3")):
                os.makedirs(os.path.join(d, "flashinfer"))
                with open(os.path.join(d, "flashinfer", "__init__.py"), "w") as f:
                    f.write(f"__version__ = {version!r}\n")
            out = os.path.join(tmp, "probe.json")
            for path, want in ((site, {"version": "0.7.2.post1"}), (other, None)):
                r = subprocess.run([sys.executable, SCRIPT, "--probe-flashinfer", out, site],
                                   env=dict(os.environ, PYTHONPATH=path), capture_output=True,
                                   text=True)
                self.assertEqual(r.returncode, 0, r.stderr)
                with open(out) as f:
                    got = json.load(f)
                if want:
                    self.assertEqual(got, want)
                else:
                    self.assertIn("not from", got["error"])


class KernelTimeTest(unittest.TestCase):
    def test_summarize_counts_kernels_only(self):
        events = [("flash_fwd_kernel", 6.0), ("combine", 1.5), ("Memcpy DtoD (Device -> Device)", 9.0),
                  ("Memset (Device)", 2.0), ("flash_fwd_kernel", 6.5), ("combine", 2.0)]
        got = kernel_time.summarize(events, steps=2)
        self.assertEqual(got, {"kernel_us": 8.0, "kernels_per_step": 2.0})
        self.assertIsNone(kernel_time.summarize([("Memset (Device)", 1.0)], steps=2))
        self.assertIsNone(kernel_time.summarize([], steps=1))

    def test_graph_first_then_stream_launches(self):
        class FakeTorch:  # measure() is replaced: only the fallback order is under test
            pass
        calls = []

        def fake_measure(torch, launch, steps, replays=kernel_time.REPLAYS):
            calls.append(launch)
            return None if launch == "graph" else {"kernel_us": 3.0, "kernels_per_step": 1.0}
        real = kernel_time.measure
        kernel_time.measure = fake_measure
        try:
            got = kernel_time.measure_step(FakeTorch, "graph", "stream", 8)
        finally:
            kernel_time.measure = real
        self.assertEqual(calls, ["graph", "stream"])
        self.assertEqual(got["method"], "cupti via torch.profiler, stream launches")


STAND_IN_WORKER = r'''
import json, os, signal, sys
job = json.load(open(sys.argv[1]))
with open(job["journal"], "a") as j:
    for p in job["problems"]:
        j.write(json.dumps({"start": p["name"]}) + "\n"); j.flush()
        if p["name"].endswith("_n13"):
            os.kill(os.getpid(), signal.SIGSEGV)
        row = {"problem": {"name": p["name"]}, "status": "passed", "kernel": "peer_" + job["peer"]}
        j.write(json.dumps({"row": row}) + "\n"); j.flush()
        if p["name"].endswith("_n11"):
            sys.exit(3)  # as after a sticky CUDA error: the rest need a new process
'''


class WorkerOrderTest(unittest.TestCase):
    def test_problems_sharing_kernels_run_back_to_back(self):
        """One worker takes all of a peer's problems: those of one group_key together, groups in
        order of first appearance, each in its own order; none lost or repeated."""
        ps = problems("name=a,kv_heads=8,keys=11:12;name=b,kv_heads=1,keys=21;"
                      "name=c,kv_heads=8,batch=2,keys=31;name=d,kv_heads=1,depth=64,keys=41")
        # a and c share kernels (batch and lengths are runtime values); b and d differ in kv_heads
        # or depth.
        names = [p["name"] for p in peers.ordered_by_kernels(ps)]
        self.assertEqual(names, ["a_n11", "a_n12", "c_n31", "b_n21", "d_n41"])
        self.assertEqual(sorted(names), sorted(p["name"] for p in ps))


class CrashIsolationTest(unittest.TestCase):
    def test_crash_fails_only_the_problem_in_flight(self):
        """A worker that stops between problems (exit 3 after n11) is replaced without failing
        anything; one killed by a signal (n13) fails that problem alone; the rest go on."""
        with tempfile.TemporaryDirectory() as d:
            worker = os.path.join(d, "worker.py")
            with open(worker, "w") as f:
                f.write(STAND_IN_WORKER)
            saved = peers.worker_command
            peers.worker_command = lambda job: [sys.executable, worker, job]
            try:
                rows = peers.run_worker(backends.PEERS["flashinfer_xqa"],
                                        problems("name=g,keys=11:12:13:14:15"), {}, 60, d)
            finally:
                peers.worker_command = saved
        status = {r["problem"]["name"]: r["status"] for r in rows}
        self.assertEqual(status, {"g_n11": "passed", "g_n12": "passed", "g_n13": "failed",
                                  "g_n14": "passed", "g_n15": "passed"})
        crashed = next(r for r in rows if r["problem"]["name"] == "g_n13")
        self.assertIn("SIGSEGV", crashed["reason"])


class DeadlineTest(unittest.TestCase):
    def test_past_the_deadline_nothing_starts_and_rows_say_why(self):
        def no_worker(job):
            raise AssertionError("a worker started after the deadline")
        saved = peers.worker_command
        peers.worker_command = no_worker
        try:
            with tempfile.TemporaryDirectory() as d:
                rows = peers.run_worker(backends.PEERS["flashinfer_xqa"],
                                        problems("name=g,keys=11:12"), {}, 60, d,
                                        deadline=time.time() - 5)
        finally:
            peers.worker_command = saved
        self.assertEqual([r["status"] for r in rows], ["skipped", "skipped"])
        self.assertIn("--stop-after", rows[0]["reason"])

    def test_resume_times_skipped_rows_again_and_keeps_versions(self):
        """A resumed run keeps measured rows, re-times 'skipped' ones, and merges the earlier
        run's peer versions into its metadata."""
        info = {"gpu_name": "H200", "sm_count": 132, "l2_bytes": 62914560, "peak_gbps": 4400.0,
                "peak_method": "x", "torch": "2.11", "driver_version": "13.0",
                "cuda_version": "13.0", "packages": {"flashinfer": {"version": "0.5.3"}}}
        ps = problems("name=g,keys=11:12")
        with tempfile.TemporaryDirectory() as d:
            worker = os.path.join(d, "worker.py")
            with open(worker, "w") as f:  # rows as make_row writes them
                f.write(STAND_IN_WORKER.replace(
                    '"kernel": "peer_" + job["peer"]}',
                    '"kernel": "peer_" + job["peer"], "reason": "", "kernel_time_us": 0.0, '
                    '"time": {"median_us": 1.0}, "achieved_gbps": 0.0, "peak_fraction": 0.0}'))
            prefix = os.path.join(d, "peers")
            old = report.make_metadata()
            old["peer_versions"] = {"peer_fa3": "3.0.0"}
            kept = report.make_row("flashinfer_xqa", ps[0], "passed", "kept", {
                "median_us": 5.0, "min_us": 5.0, "mean_us": 5.0, "stdev_us": 0.0, "samples": 3})
            redo = report.make_row("flashinfer_xqa", ps[1], "skipped", "out of time")
            report.write_report(prefix + ".json", report.make_report(old, [kept, redo]))
            saved = peers.probe, peers.worker_command
            peers.probe = lambda workdir: dict(info)
            peers.worker_command = lambda job: [sys.executable, worker, job]
            args = argparse.Namespace(out=prefix, resume=True, sites={}, seed=1, time_budget=0.1,
                                      target_error=0.005, no_kernel_time=True, worker_timeout=60,
                                      stop_after=0, suite=None, plan=None)
            try:
                with contextlib.redirect_stdout(io.StringIO()):
                    rc = peers.run(args, ps, [backends.PEERS["flashinfer_xqa"]])
            finally:
                peers.probe, peers.worker_command = saved
            self.assertEqual(rc, 0)
            with open(prefix + ".json") as f:
                doc = json.load(f)
        by_name = {r["problem"]["name"]: r for r in doc["rows"]}
        self.assertEqual(by_name["g_n11"]["reason"], "kept")
        self.assertEqual(by_name["g_n12"]["status"], "passed")  # the stand-in worker's row
        self.assertEqual(doc["metadata"]["peer_versions"],
                         {"peer_fa3": "3.0.0", "peer_flashinfer_xqa": "0.5.3"})


class ResumeTest(unittest.TestCase):
    def test_resume_reads_own_report_before_the_gpu(self):
        """--resume keeps the rows of peers.py's own report; a file it cannot use (not JSON,
        a sweep's report) exits 2 before the GPU probe."""
        def no_probe(workdir):
            raise AssertionError("the GPU was probed before the report to resume was read")
        with tempfile.TemporaryDirectory() as d:
            prefix = os.path.join(d, "peers")
            row = report.make_row("torch_flex", problems("n=64")[0], "not_supported", "why")
            report.write_report(prefix + ".json", report.make_report(report.make_metadata(), [row]))
            self.assertEqual(peers.resumed_rows(prefix + ".json"), [row])
            saved = peers.probe
            peers.probe = no_probe
            try:
                for bad, text in [("{", "not valid JSON"), (json.dumps(report.make_report(
                        report.make_metadata(), [dict(row, kernel="decode_a")])), "not a peer's")]:
                    with open(prefix + ".json", "w") as f:
                        f.write(bad)
                    err = io.StringIO()
                    with contextlib.redirect_stderr(err):
                        rc = peers.run(argparse.Namespace(out=prefix, resume=True), [], [])
                    self.assertEqual(rc, 2)
                    self.assertIn(text, err.getvalue())
                    self.assertIn(prefix + ".json: ", err.getvalue())
            finally:
                peers.probe = saved


class CliTest(unittest.TestCase):
    def run_cli(self, *args):
        env = dict(os.environ, PYTHONPATH="")  # torch must not be needed
        return subprocess.run([sys.executable, SCRIPT, *args], capture_output=True, text=True,
                              env=env)

    def test_help_and_dry_run(self):
        self.assertEqual(self.run_cli("--help").returncode, 0)
        r = self.run_cli("--out", "/tmp/x", "--dry-run", "--suite", SERVING)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("llama3_8b_paged16_b1_n512", r.stdout)
        self.assertIn("not_supported: SDPA takes dense K/V only", r.stdout)
        self.assertRegex(r.stdout, r"\d+ problem\(s\) x 10 peer\(s\): \d+ to time")
        self.assertNotIn("torch", sys.modules)

    def test_plan_excludes_the_other_sources(self):
        with tempfile.NamedTemporaryFile("w", suffix=".json") as f:
            f.write("{not json")
            f.flush()
            r = self.run_cli("--out", "/tmp/x", "--dry-run", "--plan", f.name)
            self.assertEqual(r.returncode, 2)
            self.assertIn("cannot read it as JSON", r.stderr)
            r = self.run_cli("--out", "/tmp/x", "--dry-run", "--plan", f.name, "--suite", SERVING)
            self.assertEqual(r.returncode, 2)
            self.assertIn("leave out --suite", r.stderr)

    def test_dry_run_fp8_and_soft_cap(self):
        r = self.run_cli("--out", "/tmp/x", "--dry-run", "--problems",
                         "kv=paged,kv_dtype=e4m3,kv_scale=head,soft_cap=50,n=64;kv_dtype=e5m2,n=64")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("b1_h32_kv8_d128_n64_bf16_kve4m3h_paged16_null_cap50: 0.15 MB/step", r.stdout)
        self.assertIn("b1_h32_kv8_d128_n64_bf16_kve5m2_contig_null", r.stdout)
        self.assertIn("one scale per tensor", r.stdout)
        r = self.run_cli("--out", "x", "--dry-run", "--problems", "kv_scale=head,n=4")
        self.assertEqual(r.returncode, 2)
        self.assertIn("key 'kv_scale'", r.stderr)

    def test_usage_errors_exit_2(self):
        self.assertEqual(self.run_cli("--out", "x", "--dry-run", "--peers", "flash,xla").returncode, 2)
        r = self.run_cli("--out", "x", "--dry-run", "--problems", "h=3,kv_heads=2,n=4")
        self.assertEqual(r.returncode, 2)
        self.assertIn("not a multiple", r.stderr)
        self.assertEqual(self.run_cli("--out", "x", "--dry-run", "--suite", "/nonexistent").returncode, 2)
        self.assertEqual(self.run_cli("--dry-run").returncode, 2)  # --out is required


if __name__ == "__main__":
    unittest.main()

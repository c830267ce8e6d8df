#!/usr/bin/env python3
"""scripts/peers/side_by_side.py on small synthetic reports: the default is the row of select's
bucket, peers join on the problem name, the ratio is best peer / default, and inputs that do not fit
(reports swapped, no problem in common) fail with exit 2 or 1 instead of printing an empty table."""

import copy
import json
import os
import subprocess
import sys
import tempfile
import unittest

from mha_test_env import REPO  # noqa: E402
SCRIPT = os.path.join(REPO, "scripts", "peers", "side_by_side.py")

PROBLEM = {"name": "p_n1024", "batch": 1, "heads": 32, "kv_heads": 8, "depth": 128, "dtype": "bf16",
           "out_dtype": "bf16", "kv": "paged", "page_size": 16, "mask": "null", "window": 0,
           "chunk": 0, "has_sink": False, "keys": 1024, "lengths": ""}


def row(kernel, partitions, us, status="passed", problem=PROBLEM, floor_us=0.0):
    return {"kernel": kernel, "partitions": partitions, "status": status, "problem": dict(problem),
            "time": {"median_us": us}, "bytes": 4.2e6 if partitions == 1 else 4.5e6,
            "floor_us": floor_us}


OURS = {"metadata": {"gpu_name": "NVIDIA H200", "peak_read_gbps": 4200.0, "git_commit": "abc"},
        "rows": [row("decode_a", 1, 12.0, floor_us=3.5), row("decode_a", 4, 8.0, floor_us=3.5),
                 row("decode_b", 4, 7.0, floor_us=3.5)]}
PEERS = {"metadata": {"git_commit": "abc", "peer_packages": {"flashinfer": "0.5.3"}},
         "rows": [row("peer_flashinfer_xqa", 1, 10.0), row("peer_torch_sdpa_flash", 1, 0.0,
                                                              "not_supported")]}
DEFAULTS = {"buckets": [{"dtype": "bf16", "depth": 128, "group": 4, "kv": "paged", "mask": "null",
                         "work_units": 8, "min_keys": 1024, "max_keys": 2047,
                         "kernel": "decode_a", "partitions": 4}]}


class SideBySideTest(unittest.TestCase):
    def run_script(self, ours, peers, defaults):
        with tempfile.TemporaryDirectory() as d:
            paths = []
            for name, doc in (("ours", ours), ("peers", peers), ("defaults", defaults)):
                paths.append(os.path.join(d, name + ".json"))
                with open(paths[-1], "w") as f:
                    json.dump(doc, f)
            return subprocess.run([sys.executable, SCRIPT, *paths], capture_output=True, text=True)

    def test_geomean_by_batch_size_when_the_suite_has_several(self):
        ours, peers = copy.deepcopy(OURS), copy.deepcopy(PEERS)
        b8 = dict(PROBLEM, name="p8_n1024", batch=8)
        ours["rows"] += [row("decode_a", 4, 20.0, problem=b8)]
        peers["rows"] += [row("peer_flashinfer_xqa", 1, 30.0, problem=b8)]
        defaults = copy.deepcopy(DEFAULTS)
        defaults["buckets"].append(dict(DEFAULTS["buckets"][0], work_units=64))
        r = self.run_script(ours, peers, defaults)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("- batch 1: 1.250 over 1", r.stdout)   # 10 / 8
        self.assertIn("- batch 8: 1.500 over 1", r.stdout)   # 30 / 20
        self.assertNotIn("- batch", self.run_script(OURS, PEERS, DEFAULTS).stdout)  # one batch size

    def test_table(self):
        r = self.run_script(OURS, PEERS, DEFAULTS)
        self.assertEqual(r.returncode, 0, r.stderr)
        line = next(l for l in r.stdout.splitlines() if l.startswith("| p_n1024"))
        cells = [c.strip() for c in line.strip("|").split("|")]
        # problem, cache, default (select's decode_a at P=4), best (decode_b), FI xqa, SDPA FA2,
        # floor (P=1 bytes / peak), measured read floor, best peer, ratio = 10 / 8
        # then no kernel times: ours, best peer's, their ratio
        self.assertEqual(cells, ["p_n1024", "uniform, paged16", "8.00 (4)", "7.00 (4)", "10.00",
                                 "n/s", "1.00", "3.50", "FI xqa", "1.25", "—", "—", ""])
        self.assertIn("kernel time: not measured on both sides", r.stdout)
        self.assertIn("**1.250**", r.stdout)
        self.assertIn("more than 2% slower than the best peer: 0", r.stdout)

    def test_kernel_time_ratio_and_our_op_is_never_the_best_peer(self):
        peers = copy.deepcopy(PEERS)
        peers["rows"][0]["kernel_time_us"] = 9.0
        ours_op = row("peer_mha_tune", 1, 5.0)   # faster than every peer: still not "best peer"
        ours_op["kernel_time_us"] = 6.0
        fi072 = row("peer_flashinfer_xqa_v072", 1, 11.0)
        fi072["kernel_time_us"] = 7.5
        peers["rows"] += [ours_op, fi072]
        r = self.run_script(OURS, peers, DEFAULTS)
        self.assertEqual(r.returncode, 0, r.stderr)
        header = next(l for l in r.stdout.splitlines() if l.startswith("| problem"))
        self.assertIn("| ours (op) | FI xqa v072 |", header)
        line = next(l for l in r.stdout.splitlines() if l.startswith("| p_n1024"))
        cells = [c.strip() for c in line.strip("|").split("|")]
        # step: best peer FI xqa 10 / default 8; kernel: FI xqa v072's 7.5 / our op's 6.0
        self.assertEqual(cells[-5:], ["FI xqa", "1.25", "6.00", "7.50 (FI xqa v072)", "1.25"])
        self.assertIn("best peer / ours: 1.250 over 1", r.stdout)
        # The sweep's own kernel time, where its row has one, is preferred to the op's.
        ours = copy.deepcopy(OURS)
        ours["rows"][1]["kernel_time_us"] = 7.5   # decode_a at P=4, the default
        line = next(l for l in self.run_script(ours, peers, DEFAULTS).stdout.splitlines()
                    if l.startswith("| p_n1024"))
        self.assertTrue(line.rstrip().endswith("| 7.50 | 7.50 (FI xqa v072) | 1.00 |"), line)

    def test_floor_from_a_cluster_split_when_p1_was_not_swept(self):
        # Pages of 128 swept from P 16 up printed a floor of "nan"; a cluster split writes
        # no partials, so its bytes are the step's; with neither swept the cell says so.
        ours = copy.deepcopy(OURS)
        ours["rows"] = [r for r in ours["rows"] if r["partitions"] != 1]
        cluster = row("decode_a", (1 << 20) + 8, 9.0, floor_us=3.5)
        cluster["bytes"] = 4.2e6
        cells = lambda o: next(l for l in self.run_script(o, PEERS, DEFAULTS).stdout.splitlines()
                               if l.startswith("| p_n1024")).strip("|").split("|")
        self.assertEqual(cells(ours)[6].strip(), "—")
        ours["rows"].append(cluster)
        self.assertEqual(cells(ours)[6].strip(), "1.00")   # 4.2e6 B / 4200 GB/s

    def test_slower_default_is_listed(self):
        peers = copy.deepcopy(PEERS)
        peers["rows"][0]["time"]["median_us"] = 6.0
        r = self.run_script(OURS, peers, DEFAULTS)
        self.assertIn("p_n1024: default 8.00 µs, FI xqa 6.00 µs (33.3% slower)", r.stdout)

    def test_bad_inputs(self):
        self.assertEqual(self.run_script(PEERS, OURS, DEFAULTS).returncode, 2)  # swapped
        self.assertEqual(self.run_script(OURS, PEERS, {"rows": []}).returncode, 2)  # not defaults
        other = copy.deepcopy(PEERS)
        for r in other["rows"]:
            r["problem"]["name"] = "elsewhere"
        result = self.run_script(OURS, other, DEFAULTS)
        self.assertEqual(result.returncode, 1)  # nothing compared is not a pass
        self.assertIn("same suite", result.stderr)


if __name__ == "__main__":
    unittest.main()

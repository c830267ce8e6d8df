#!/usr/bin/env python3
"""configs/serving_batches.json and serving_batches_qwen.json: every problem is one the config's
own build computes (a family of its dtype, cache dtype, head dim, group, cache kind, mask and
sink), the suites cover what they are for (batches 16 to 256 at 512 to 8,192 keys; pages of 16, 32
and 64; the named head shapes, bf16 and e4m3; ragged mixes of 64 and 256), and they stay small
(problems, and the distinct (page size, group, cache dtype) triples XQA compiles a module for).
Expanded by scripts/peers/peerlib/suite.py, as peers.py expands them."""

import json
import os
import sys
import unittest

from mha_test_env import REPO  # noqa: E402
sys.path[:0] = [os.path.join(REPO, "scripts"), os.path.join(REPO, "scripts", "peers")]
from peerlib import suite  # noqa: E402

CONFIGS = [os.path.join(REPO, "configs", f) for f in ("serving_batches.json",
                                                      "serving_batches_qwen.json")]


def load(path):
    with open(path) as f:
        config = json.load(f)
    return config, suite.expand_all(suite.read_suite(path))


class ServingBatchesTest(unittest.TestCase):
    def test_every_problem_has_a_family_in_its_build(self):
        for path in CONFIGS:
            config, problems = load(path)
            families = {(f["dtype"], f.get("kv_dtype", f["dtype"]), f["out_dtype"], f["depth"],
                         f["group"], f["kv"], f["mask"], f["sink"]) for f in config["families"]}
            for p in problems:
                key = (p["dtype"], p["kv_dtype"], p["out_dtype"], p["depth"],
                       p["heads"] // p["kv_heads"], p["kv"], p["mask"], p["has_sink"])
                self.assertIn(key, families, f"{os.path.basename(path)}: {p['name']}")
                self.assertEqual(p["heads"] % p["kv_heads"], 0, p["name"])

    def test_coverage(self):
        problems = [p for path in CONFIGS for p in load(path)[1]]
        self.assertLessEqual({16, 32, 64, 128, 256}, {p["batch"] for p in problems})
        self.assertTrue(all(16 <= p["batch"] <= 256 for p in problems))
        self.assertTrue(all(512 <= max(p["lengths"]) for p in problems))
        self.assertTrue(all(p["keys"] <= 8192 for p in problems if not suite.is_ragged(p)))
        self.assertEqual({p["page_size"] for p in problems}, {16, 32, 64})
        self.assertTrue(all(suite.is_paged(p) for p in problems))
        shapes = {(p["heads"], p["kv_heads"]) for p in problems}
        self.assertEqual(shapes, {(32, 8), (8, 1), (16, 2), (28, 4), (40, 8)})
        self.assertEqual({p["kv_dtype"] for p in problems}, {"bf16", "e4m3"})
        ragged = sorted(p["batch"] for p in problems if suite.is_ragged(p))
        self.assertEqual(ragged, [64, 256])

    def test_small_enough_for_one_side_by_side_each(self):
        for path in CONFIGS:
            config, problems = load(path)
            self.assertLessEqual(len(problems), 40, path)
            xqa_modules = {(p["page_size"], p["heads"] // p["kv_heads"], p["kv_dtype"])
                           for p in problems}
            self.assertLessEqual(len(xqa_modules), 6, path)
            self.assertTrue(all(len(f["tiles"]) <= 3 for f in config["families"]), path)


if __name__ == "__main__":
    unittest.main()

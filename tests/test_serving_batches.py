#!/usr/bin/env python3
"""configs/suites/serving_batches.json, serving_batches_70b_e4m3_ragged.json and
serving_batches_qwen.json: every problem is one the config's own build computes (a family of its
dtype, cache dtype, head dim, group, cache kind, mask and sink), the suites cover what they are
for (batches 16 to 256 at 512 to 8,192 keys; pages of 16, 32 and 64; the named head shapes, bf16
and e4m3; ragged mixes of 64 and 256), and they stay small (problems, and the distinct (page
size, group, cache dtype) triples XQA compiles a module for).
Read from the suites' own specs, which spell out every field they are checked on (a spec that
leaves one to a default, or gives keys as anything but a list, fails here first): one problem per
keys value, ragged where a spec names a length mix. The peers take the sweep's expansion of the
same specs (`sweep --dry-run --json`)."""

import json
import os
import unittest

from mha_test_env import REPO  # noqa: E402
CONFIGS = [os.path.join(REPO, "configs", "suites", f)
           for f in ("serving_batches.json", "serving_batches_70b_e4m3_ragged.json",
                     "serving_batches_qwen.json")]


# The fields each spec must spell out: the checks below read them, no default.
SPELLED = ("name", "batch", "heads", "kv_heads", "depth", "dtype", "out_dtype", "kv", "page_size",
           "mask", "sink", "keys")


def load(path):
    """The config and its problems: one per keys value of each spec (the mix's scale for a
    mixed batch, which is ragged), with the spec's fields."""
    with open(path) as f:
        config = json.load(f)
    with open(os.path.join(os.path.dirname(path), config["tile_space"])) as f:
        config["families"] = json.load(f)["families"]  # the build's: the suite's tile space's
    problems = []
    for i, spec in enumerate(config["suite"]["problems"]):
        where = f"{os.path.basename(path)}: suite.problems[{i}]"
        missing = [k for k in SPELLED if k not in spec]
        if missing:
            raise AssertionError(f"{where} leaves {', '.join(missing)} to a default")
        if not (isinstance(spec["keys"], list) and spec["keys"]
                and all(isinstance(n, int) for n in spec["keys"])) or "lengths" in spec:
            raise AssertionError(f"{where}: keys must be a list of integers (no lengths)")
        for n in spec["keys"]:
            problems.append({"name": f"{spec['name']}_n{n}", "batch": spec["batch"],
                             "heads": spec["heads"], "kv_heads": spec["kv_heads"],
                             "depth": spec["depth"], "dtype": spec["dtype"],
                             "out_dtype": spec["out_dtype"],
                             "kv_dtype": spec.get("kv_dtype", spec["dtype"]), "kv": spec["kv"],
                             "page_size": spec["page_size"], "mask": spec["mask"],
                             "has_sink": spec["sink"], "keys": n, "ragged": "mix" in spec})
    return config, problems


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
        self.assertTrue(all(512 <= p["keys"] for p in problems))
        self.assertTrue(all(p["keys"] <= 8192 for p in problems if not p["ragged"]))
        self.assertEqual({p["page_size"] for p in problems}, {16, 32, 64})
        self.assertTrue(all(p["kv"] in ("paged", "paged_hnd") for p in problems))
        shapes = {(p["heads"], p["kv_heads"]) for p in problems}
        self.assertEqual(shapes, {(32, 8), (8, 1), (16, 2), (28, 4), (40, 8)})
        self.assertEqual({p["kv_dtype"] for p in problems}, {"bf16", "e4m3"})
        ragged = sorted(p["batch"] for p in problems if p["ragged"])
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

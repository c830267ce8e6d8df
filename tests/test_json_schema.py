#!/usr/bin/env python3
"""`mha-tune schema report|config` (src/reports/json_schema.h): valid JSON Schema (draft 2020-12)
that every committed report and config satisfies, and that refuses a report or config with a
wrong type, an unknown key or a value outside its choices, so it cannot pass on nothing.
Skipped (exit 77) without the jsonschema package or the binary."""

import copy
import glob
import json
import os
import subprocess
import sys
import unittest

from mha_test_env import REPO, MHA_TUNE  # noqa: E402


def schema(kind):
    r = subprocess.run([MHA_TUNE, "schema", kind], capture_output=True, text=True)
    if r.returncode != 0:
        raise AssertionError(f"mha-tune schema {kind}: exit {r.returncode}: {r.stderr}")
    return json.loads(r.stdout)


class JsonSchema(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        import jsonschema
        cls.validator = jsonschema.Draft202012Validator
        cls.report = schema("report")
        cls.config = schema("config")
        for s in (cls.report, cls.config):
            cls.validator.check_schema(s)

    def errors(self, schema_doc, doc):
        return list(self.validator(schema_doc).iter_errors(doc))

    def test_committed_reports_and_configs_satisfy_them(self):
        reports = [f for f in sorted(glob.glob(os.path.join(REPO, "results", "*.json")))
                   if "rows" in json.load(open(f))]
        configs = sorted(glob.glob(os.path.join(REPO, "configs", "*", "*.json")))
        self.assertGreater(len(reports), 3)
        self.assertGreater(len(configs), 5)
        for path in reports:
            self.assertEqual(self.errors(self.report, json.load(open(path)))[:1], [], path)
        for path in configs:
            self.assertEqual(self.errors(self.config, json.load(open(path)))[:1], [], path)

    def test_they_refuse_what_the_tool_refuses(self):
        with open(os.path.join(REPO, "results", "h200_2026-11-29_serving2_ours.json")) as f:
            report = json.load(f)
        report["rows"] = report["rows"][:2]
        for mutate in (lambda d: d["rows"][0]["time"].__setitem__("median_us", "fast"),
                       lambda d: d["rows"][0].__setitem__("kernal", "typo"),
                       lambda d: d["rows"][1]["problem"].pop("name"),
                       lambda d: d["metadata"].pop("gpu_name"),
                       lambda d: d.__setitem__("schema_version", 2)):
            doc = copy.deepcopy(report)
            mutate(doc)
            self.assertTrue(self.errors(self.report, doc))
        with open(os.path.join(REPO, "configs", "tiles", "ci.json")) as f:
            config = json.load(f)
        for mutate in (lambda d: d["families"][0].__setitem__("dtype", "fp64"),
                       lambda d: d["families"][0].__setitem__("colour", "red"),
                       lambda d: d.__setitem__("smem_limit_bytes", 1 << 40),
                       lambda d: d.__setitem__("families", []),
                       lambda d: d["families"][0].pop("kv")):
            doc = copy.deepcopy(config)
            mutate(doc)
            self.assertTrue(self.errors(self.config, doc))
        # A suite names its tile space instead of giving tiles or families, and must do one.
        with open(os.path.join(REPO, "configs", "suites", "ci.json")) as f:
            suite = json.load(f)
        self.assertEqual(self.errors(self.config, suite), [])
        for mutate in (lambda d: d.__setitem__("families", config["families"]),
                       lambda d: d.__setitem__("smem_limit_bytes", 1024),
                       lambda d: d.__setitem__("tile_space", 3),
                       lambda d: d.pop("tile_space")):
            doc = copy.deepcopy(suite)
            mutate(doc)
            self.assertTrue(self.errors(self.config, doc))


if __name__ == "__main__":
    try:
        import jsonschema  # noqa: F401
    except ImportError:
        print("the jsonschema package is not installed: schema test skipped")
        sys.exit(77)
    if not os.access(MHA_TUNE, os.X_OK):
        print(f"{MHA_TUNE} not built: schema test skipped")
        sys.exit(77)
    unittest.main()

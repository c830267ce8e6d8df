#!/usr/bin/env python3
"""Problems that no compiled kernel serves are named, with the reason, never dropped silently:
`verify` and `sweep` (including --dry-run) exit 2 when nothing at all would run, and warn about
each unserved problem when others run. `sweep --config` warns when the config's families differ
from the build's. Runs $MHA_BUILD_DIR/mha-tune built from configs/tiles/ci.json (skipped otherwise); no
GPU is needed (the checks come before the device)."""

import json
import os
import subprocess
import tempfile
import unittest

from mha_test_env import REPO, BUILD_DIR, MHA_TUNE  # noqa: E402


def built_config():
    try:
        with open(os.path.join(BUILD_DIR, "generated", "manifest.json")) as f:
            return json.load(f)["config"]
    except OSError:
        return None


@unittest.skipUnless(os.access(MHA_TUNE, os.X_OK) and built_config() == "configs/tiles/ci.json",
                     f"mha-tune of configs/tiles/ci.json not built at {MHA_TUNE}: test skipped")
class ProblemCoverageTest(unittest.TestCase):
    def run_tool(self, *args):
        p = subprocess.run([MHA_TUNE, *args], capture_output=True, text=True, timeout=60,
                           cwd=REPO)
        return p.returncode, p.stdout, p.stderr

    def test_unserved_problem_alone_is_a_usage_error(self):
        # ci.json compiles group 4 bf16 d128 contig null and a paged fp16->fp32 group 4 family.
        cases = {
            "heads=30,kv_heads=8,keys=512": "heads 30 is not a multiple of kv_heads 8",
            "depth=64,keys=512": "kernel depth 128 != 64",
            "mask=causal,keys=512": "kernel mask null != causal",
            "heads=8,kv_heads=8,keys=512": "kernel group 4 != heads/kv_heads 1",
        }
        for spec, reason in cases.items():
            for cmd in (["verify"], ["sweep", "--dry-run"], ["sweep"]):
                with self.subTest(cmd=cmd, spec=spec):
                    rc, out, err = self.run_tool(*cmd, "--problem", spec)
                    self.assertEqual(rc, 2, out + err)
                    self.assertIn("no compiled kernel serves any of the 1 problem(s)", err)
                    self.assertIn(f'--problem "{spec}"', err)
                    self.assertIn(reason, err)
                    self.assertIn("configs/tiles/ci.json", err)
                    self.assertNotIn("0 problem(s)", out)
                    self.assertNotIn("0 point(s)", out)

    def test_unserved_problem_beside_served_ones_is_named(self):
        rc, out, err = self.run_tool("sweep", "--dry-run", "--problem", "keys=512",
                                     "--problem", "depth=64,keys=512")
        self.assertEqual(rc, 0, out + err)
        self.assertIn("no compiled kernel serves 1 of the 2 problem(s)", err)
        self.assertIn('--problem "depth=64,keys=512": kernel depth 128 != 64', err)
        self.assertRegex(out, r"\n[1-9][0-9]* problem\(s\) x [1-9][0-9]* kernel\(s\) x .*: [1-9][0-9]* point\(s\)\n")
        # verify warns before it looks for a GPU (exit 3 here without one, 0 with one).
        rc, out, err = self.run_tool("verify", "--problem", "keys=512",
                                     "--problem", "depth=64,keys=512")
        self.assertIn(rc, (0, 3), out + err)
        self.assertIn('--problem "depth=64,keys=512": kernel depth 128 != 64', err)

    def test_config_of_another_build_sweeps_nothing_and_says_so(self):
        # configs/suites/paged.json on a build without its family (bf16 paged): ci.json's paged kernel
        # is fp16, so with the suite's dtype spelled out nothing is served.
        with open(os.path.join(REPO, "configs", "suites", "paged.json")) as f:
            cfg = json.load(f)
        # Written elsewhere, so its tile space by an absolute path.
        cfg["tile_space"] = os.path.join(REPO, "configs", "tiles", "paged.json")
        for p in cfg["suite"]["problems"]:
            p.update(dtype="bf16", out_dtype="bf16")
        with tempfile.TemporaryDirectory(prefix="mha_coverage_") as tmp:
            path = os.path.join(tmp, "paged_bf16.json")
            with open(path, "w") as f:
                json.dump(cfg, f)
            rc, out, err = self.run_tool("sweep", "--dry-run", "--config", path)
        self.assertEqual(rc, 2, out + err)
        self.assertIn(f"warning: {path}: its families differ from this build's", err)
        self.assertIn("not compiled: llama3_8b_paged (bf16->bf16 d128 g4 paged null)", err)
        self.assertIn(f"./scripts/sweep.sh --config {path}", err)
        self.assertIn(f"{path}: suite: problems[0]", err)
        self.assertIn("kernel kv contig != paged (5 kernels)", err)
        self.assertIn("kernel dtype fp16 != bf16 (1 kernel)", err)
        n = len(cfg["suite"]["problems"])
        self.assertIn(f"no compiled kernel serves any of the {n} problem(s)", err)

    def test_config_with_another_family_warns(self):
        # The real paged.json: served, by ci.json's fp16 paged kernel, not the config's family.
        rc, out, err = self.run_tool("sweep", "--dry-run", "--config", "configs/suites/paged.json")
        self.assertEqual(rc, 0, out + err)
        self.assertIn("not compiled: llama3_8b_paged (bf16->bf16 d128 g4 paged null)", err)
        self.assertIn("./scripts/sweep.sh --config configs/suites/paged.json", err)

    def test_config_partly_built_warns_and_sweeps_what_is_built(self):
        rc, out, err = self.run_tool("sweep", "--dry-run", "--config", "configs/suites/default.json")
        self.assertEqual(rc, 0, out + err)
        self.assertIn("not compiled: mha_g1", err)
        self.assertRegex(err, r"compiled, not in the config: .*fp16->fp32 d128 g4 paged null")
        # ci.json builds only group 4 kernels: every other family's problems are skipped.
        with open(os.path.join(REPO, "configs", "suites", "default.json")) as f:
            problems = json.load(f)["suite"]["problems"]
        g4 = sum(p["heads"] // p["kv_heads"] == 4 for p in problems)
        self.assertIn(f"no compiled kernel serves {len(problems) - g4} of the {len(problems)} "
                      "problem(s)", err)
        self.assertRegex(out, r"\n[1-9][0-9]* problem\(s\) x [1-9][0-9]* kernel\(s\) x .*: [1-9][0-9]* point\(s\)\n")

    def test_own_config_has_no_warning(self):
        rc, out, err = self.run_tool("sweep", "--dry-run", "--config", "configs/suites/ci.json")
        self.assertEqual(rc, 0, out + err)
        self.assertNotIn("warning", err)


if __name__ == "__main__":
    unittest.main()

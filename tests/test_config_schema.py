#!/usr/bin/env python3
"""One validation of config files: scripts/gen_dispatch.py and `mha-tune sweep --config` accept
the committed configs and reject the same bad ones (unknown keys, schema_version 2, bad choices,
bad tile blocks, a suite's bad "tile_space", ...) with exit 2, naming the same key path. mha-tune reads the generator's
schema from its build (build_config.cpp), so the two cannot drift apart silently.

Needs $MHA_BUILD_DIR/mha-tune for the mha-tune half (skipped when missing)."""

import copy
import json
import os
import re
import subprocess
import sys
import tempfile
import unittest

from mha_test_env import REPO, MHA_TUNE  # noqa: E402
GEN = os.path.join(REPO, "scripts", "gen_dispatch.py")
CONFIGS = sorted(os.path.join(REPO, "configs", d, f) for d in ("tiles", "suites")
                 for f in os.listdir(os.path.join(REPO, "configs", d)) if f.endswith(".json"))
CI_TILES = os.path.join(REPO, "configs", "tiles", "ci.json")


def base():
    with open(CI_TILES) as f:
        return json.load(f)


def mutate(change):
    cfg = base()
    change(cfg)
    return cfg


def fam(cfg, **fields):
    cfg["families"][0].update(fields)


def drop(d, key):
    d.pop(key)


TILE = {"bm": 16, "bn": 64, "bk": 32, "wm": 16, "wn": 16, "threads": 128, "stages": 2,
        "warp_split_k": False}

# name -> (config, the key path both must name)
BAD = {
    "unknown top-level key": (mutate(lambda c: c.update(tile_spaces="x.json")), "tile_spaces"),
    "schema_version 2": (mutate(lambda c: c.update(schema_version=2)), "schema_version"),
    "schema_version as text": (mutate(lambda c: c.update(schema_version="1")), "schema_version"),
    "schema_version missing": (mutate(lambda c: drop(c, "schema_version")), "schema_version"),
    "top level a list": ([base()], "(top level)"),
    "description a number": (mutate(lambda c: c.update(description=3)), "description"),
    "smem limit zero": (mutate(lambda c: c.update(smem_limit_bytes=0)), "smem_limit_bytes"),
    "smem limit 2^40": (mutate(lambda c: c.update(smem_limit_bytes=2**40)), "smem_limit_bytes"),
    "smem limit past 1 MiB": (mutate(lambda c: c.update(smem_limit_bytes=2**21)), "smem_limit_bytes"),
    "suite a list": (mutate(lambda c: c.update(suite=[])), "suite"),
    "families missing": (mutate(lambda c: drop(c, "families")), "families"),
    "families empty": (mutate(lambda c: c.update(families=[])), "families"),
    "family a string": (mutate(lambda c: c.update(families=["x"])), "families[0]"),
    "family unknown key": (mutate(lambda c: fam(c, heads=32)), "families[0].heads"),
    "family name with a dash": (mutate(lambda c: fam(c, name="a-b")), "families[0].name"),
    "duplicate family names": (
        mutate(lambda c: c["families"][1].update(name=c["families"][0]["name"])),
        "families[1].name"),
    "dtype fp8": (mutate(lambda c: fam(c, dtype="fp8")), "families[0].dtype"),
    "depth 96": (mutate(lambda c: fam(c, depth=96)), "families[0].depth"),
    "depth as text": (mutate(lambda c: fam(c, depth="128")), "families[0].depth"),
    "group 0": (mutate(lambda c: fam(c, group=0)), "families[0].group"),
    "group true": (mutate(lambda c: fam(c, group=True)), "families[0].group"),
    "kv missing": (mutate(lambda c: drop(c["families"][0], "kv")), "families[0].kv"),
    "mask alibi": (mutate(lambda c: fam(c, mask="alibi")), "families[0].mask"),
    "sink as text": (mutate(lambda c: fam(c, sink="yes")), "families[0].sink"),
    "tiles missing everywhere": (
        mutate(lambda c: [drop(c, "tiles") if "tiles" in c else None,
                          [f.pop("tiles", None) for f in c["families"]]]),
        "families[0].tiles"),
    "tile unknown axis": (mutate(lambda c: fam(c, tiles=dict(TILE, bq=1))), "families[0].tiles.bq"),
    "tile axis missing": (mutate(lambda c: fam(c, tiles={k: v for k, v in TILE.items()
                                                         if k != "stages"})),
                          "families[0].tiles.stages"),
    "tile axis empty": (mutate(lambda c: fam(c, tiles=dict(TILE, bn=[]))), "families[0].tiles.bn"),
    "tile bm 0": (mutate(lambda c: fam(c, tiles=[TILE, dict(TILE, bm=0)])),
                  "families[0].tiles[1].bm"),
    "tile list entry bad": (mutate(lambda c: fam(c, tiles=dict(TILE, bn=[32, "64"]))),
                            "families[0].tiles.bn[1]"),
    "warp_split_k 1": (mutate(lambda c: fam(c, tiles=dict(TILE, warp_split_k=1))),
                       "families[0].tiles.warp_split_k"),
    "tile blocks empty": (mutate(lambda c: fam(c, tiles=[])), "families[0].tiles"),
}


with open(os.path.join(REPO, "configs", "suites", "ci.json")) as f:
    SUITE = json.load(f)["suite"]


def suite(tile_space, **extra):
    return dict({"schema_version": 1, "tile_space": tile_space, "suite": SUITE}, **extra)


# Tile space files beside the suites (written by setUpClass), by name.
TILE_FILES = {
    "tiles_ok.json": base(),
    "tiles_with_suite.json": dict(base(), suite=SUITE),
    "tiles_with_tile_space.json": dict(base(), tile_space="tiles_ok.json"),
    "tiles_bad_depth.json": mutate(lambda c: fam(c, depth=96)),
}

# Suites naming a tile space: name -> (suite, the file the error is about (None: the suite), the
# key path both must name, texts the message must hold as well ("{tmp}": the suites' folder)).
NOT_ALLOWED = 'not allowed with "tile_space"'
BAD_SUITES = {
    "tile_space and tiles": (suite("tiles_ok.json", tiles=TILE), None, "tiles", (NOT_ALLOWED,)),
    "tile_space and families": (suite("tiles_ok.json", families=base()["families"]), None,
                                "families", (NOT_ALLOWED,)),
    "tile_space and smem_limit_bytes": (suite("tiles_ok.json", smem_limit_bytes=1024), None,
                                        "smem_limit_bytes", (NOT_ALLOWED,)),
    "tile_space a number": (suite(3), None, "tile_space", ()),
    "tile space missing": (suite("sub/../absent/tiles.json"), None, "tile_space",
                           ("{tmp}/absent/tiles.json",)),
    "tile space with a suite": (suite("tiles_with_suite.json"), None, "tile_space",
                                ("{tmp}/tiles_with_suite.json", '"suite"')),
    "tile space with a tile_space": (suite("tiles_with_tile_space.json"), None, "tile_space",
                                     ("{tmp}/tiles_with_tile_space.json", '"tile_space"')),
    "tile space with a bad family": (suite("tiles_bad_depth.json"), "tiles_bad_depth.json",
                                     "families[0].depth", ()),
}


class ConfigSchemaTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory(prefix="mha_config_schema_")
        for name, cfg in TILE_FILES.items():
            with open(os.path.join(cls.tmp.name, name), "w") as f:
                json.dump(cfg, f)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def write(self, name, cfg):
        path = os.path.join(self.tmp.name, re.sub(r"\W+", "_", name) + ".json")
        with open(path, "w") as f:
            json.dump(cfg, f)
        return path

    def generator(self, path):
        return subprocess.run([sys.executable, GEN, "--config", path, "--list"],
                              capture_output=True, text=True, timeout=60)

    def tool(self, path):
        # --problem: the problems come from the command line, so only the config is judged.
        return subprocess.run([MHA_TUNE, "sweep", "--dry-run", "--config", path,
                               "--problem", "keys=64"],
                              capture_output=True, text=True, timeout=60)

    def test_generator_rejects_every_bad_config(self):
        for name, (cfg, key) in BAD.items():
            with self.subTest(name):
                path = self.write(name, cfg)
                p = self.generator(path)
                self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
                self.assertIn(f"{path}: {key}: ", p.stderr)

    @unittest.skipUnless(os.access(MHA_TUNE, os.X_OK), f"mha-tune not built at {MHA_TUNE}")
    def test_mha_tune_rejects_the_same_configs_naming_the_same_key(self):
        for name, (cfg, key) in BAD.items():
            with self.subTest(name):
                path = self.write(name, cfg)
                p = self.tool(path)
                self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
                self.assertIn(f"{path}: {key}: ", p.stderr)

    def check_bad_suites(self, run):
        for name, (cfg, about, key, texts) in BAD_SUITES.items():
            with self.subTest(name):
                path = self.write(name, cfg)
                p = run(path)
                self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
                where = os.path.join(self.tmp.name, about) if about else path
                self.assertIn(f"{where}: {key}: ", p.stderr)
                for text in texts:  # paths as resolved, the reason
                    self.assertIn(text.format(tmp=self.tmp.name), p.stderr)

    def test_generator_rejects_every_bad_suite(self):
        self.check_bad_suites(self.generator)

    @unittest.skipUnless(os.access(MHA_TUNE, os.X_OK), f"mha-tune not built at {MHA_TUNE}")
    def test_mha_tune_rejects_the_same_suites_naming_the_same_key(self):
        self.check_bad_suites(self.tool)

    @unittest.skipUnless(os.access(MHA_TUNE, os.X_OK), f"mha-tune not built at {MHA_TUNE}")
    def test_a_suite_plans_as_its_copy_of_the_tile_space(self):
        """The same problems and kernels from a suite naming ci.json's tile space (by a path
        relative to the suite's folder) as from the copy of that tile space with the suite."""
        os.makedirs(os.path.join(self.tmp.name, "suites"), exist_ok=True)
        named = os.path.join(self.tmp.name, "suites", "named.json")
        with open(named, "w") as f:
            json.dump(suite(os.path.relpath(CI_TILES, os.path.dirname(named))), f)
        copied = self.write("copied", dict(base(), suite=SUITE))
        plans = []
        for path in (named, copied):
            p = self.generator(path)
            self.assertEqual(p.returncode, 0, p.stderr)
            kernels = p.stdout
            p = subprocess.run([MHA_TUNE, "sweep", "--dry-run", "--json", "--config", path],
                               capture_output=True, text=True, timeout=60)
            self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
            plan = json.loads(p.stdout)
            plans.append((kernels, plan["problems"], plan.get("kernels")))
        self.assertEqual(plans[0], plans[1])
        self.assertTrue(plans[0][0] and plans[0][1])

    @unittest.skipUnless(os.access(MHA_TUNE, os.X_OK), f"mha-tune not built at {MHA_TUNE}")
    def test_both_accept_every_committed_config(self):
        self.assertGreaterEqual(len(CONFIGS), 4)
        for path in CONFIGS:
            with self.subTest(os.path.basename(path)):
                p = self.generator(path)
                self.assertEqual(p.returncode, 0, p.stderr)
                p = self.tool(path)
                self.assertEqual(p.returncode, 0, p.stdout + p.stderr)


if __name__ == "__main__":
    unittest.main()

#!/usr/bin/env python3
"""Tests of scripts/gen_dispatch.py: rejection rules (against kernels/decode_traits.cuh),
procedural names, filters, config errors (exit 2 naming file and key), write-only-if-changed,
and the manifest. Run: python3 tests/test_generator.py (ctest runs it with label "host")."""

import copy
import hashlib
import importlib.util
import itertools
import json
import os
import re
import subprocess
import sys
import tempfile
import unittest

from mha_test_env import REPO  # noqa: E402
SCRIPT = os.path.join(REPO, "scripts", "gen_dispatch.py")
TRAITS_HEADER = os.path.join(REPO, "kernels", "decode_traits.cuh")

spec = importlib.util.spec_from_file_location("gen_dispatch", SCRIPT)
gen = importlib.util.module_from_spec(spec)
spec.loader.exec_module(gen)

# A valid point: bf16 d128 group 4, BN 64 over 4 warps of 16 keys.
GOOD = {"dtype": "bf16", "out_dtype": "bf16", "kv_dtype": "bf16", "depth": 128, "group": 4,
        "kv": "contig", "mask": "null", "has_sink": False, "soft_cap": False, "multi_token": False, "bm": 16, "bn": 64, "bk": 32, "wm": 16, "wn": 16,
        "threads": 128, "stages": 4, "warp_split_k": False}
LIMIT = 232448

FAMILY = {"name": "fam", "dtype": "bf16", "out_dtype": "bf16", "depth": 128, "group": 4,
          "kv": "contig", "mask": "null", "sink": False}
TILES = {"bm": [16], "bn": [32, 64, 128], "bk": [32, 64], "wm": [16], "wn": [16, 32],
         "threads": [64, 128, 256], "stages": [2, 3, 4], "warp_split_k": [False, True]}


def point(**kw):
    t = dict(GOOD)
    t.update(kw)
    return t


def reasons(**kw):
    return gen.reject_reasons(point(**kw), LIMIT)[0]


class Workdir(unittest.TestCase):
    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory()
        self.tmp = self._tmp.name

    def tearDown(self):
        self._tmp.cleanup()

    def write_config(self, cfg, name="cfg.json"):
        path = os.path.join(self.tmp, name)
        with open(path, "w") as f:
            f.write(cfg if isinstance(cfg, str) else json.dumps(cfg))
        return path

    def run_gen(self, *args):
        return subprocess.run([sys.executable, SCRIPT, *args], capture_output=True, text=True)


class RejectionRules(unittest.TestCase):
    def test_good_point_is_accepted(self):
        self.assertEqual(reasons(), [])
        self.assertEqual(reasons(warp_split_k=True), [])
        # Heads as MMA columns: WM 8, BM / 8 column tiles per warp, one warp row, warp split-K.
        for bm in (8, 16, 32, 64):
            self.assertEqual(reasons(bm=bm, wm=8, warp_split_k=True), [])

    def test_each_rule_fires_with_its_reason(self):
        cases = [
            (dict(depth=96), "depth must be 64, 128 or 256"),
            (dict(group=0), "group must be at least 1"),
            (dict(threads=100), "threads: a multiple of 32, at most 1024"),
            (dict(threads=2048), "threads: a multiple of 32, at most 1024"),
            (dict(bm=48, wm=32), "WM: a multiple of 16 dividing BM, or WM 8 with BM 8, 16, 32 or 64 (heads as MMA columns)"),
            (dict(bm=24, wm=8, warp_split_k=True), "WM: a multiple of 16 dividing BM, or WM 8 with BM 8, 16, 32 or 64 (heads as MMA columns)"),
            (dict(bm=128, wm=8, warp_split_k=True), "WM: a multiple of 16 dividing BM, or WM 8 with BM 8, 16, 32 or 64 (heads as MMA columns)"),
            (dict(bm=8, wm=8), "WM 8 (heads as MMA columns) needs warp split-K"),
            (dict(wm=8), "WM 8 (heads as MMA columns) needs warp split-K"),
            # One warp row: BM 32 in columns still needs BN / WN = threads / 32.
            (dict(bm=32, wm=8, wn=32, warp_split_k=True),
             "(BM/WM)*(BN/WN) warps must equal threads/32"),
            (dict(wn=8), "WN: a multiple of 16 dividing BN"),
            (dict(bn=64, wn=48), "WN: a multiple of 16 dividing BN"),
            (dict(bk=24), "BK: a multiple of 16 dividing depth"),
            (dict(bk=48), "BK: a multiple of 16 dividing depth"),
            (dict(threads=256), "(BM/WM)*(BN/WN) warps must equal threads/32"),
            # 8 warps over BN 128 split d64 into 8-column slices: not a multiple of 16.
            (dict(depth=64, bk=32, bn=128, wn=16, threads=256),
             "depth must split into 16-column slices across the warps of a row band"),
            # BN 16 of d128 = 256 chunks over 512 threads (BM 256 keeps the warp count right).
            (dict(bm=256, bn=16, wn=16, threads=512, warp_split_k=True),
             "K/V tile chunks must divide by threads"),
            (dict(stages=1), "at least two pipeline stages"),
            # One warp cannot cover d256's 64 float4 columns in the split-K combine.
            (dict(depth=256, threads=32, bm=16, wm=16, bn=16, wn=16),
             "threads: a multiple of depth / 4 (the combine's float4 columns)"),
            (dict(bn=128, wn=32, stages=4), "shared memory 271104 bytes exceeds the limit of "
                                            "232448 bytes"),
        ]
        for kw, reason in cases:
            with self.subTest(**{k: str(v) for k, v in kw.items()}):
                self.assertIn(reason, reasons(**kw))

    def test_generator_knows_every_static_assert_of_the_traits_header(self):
        with open(TRAITS_HEADER) as f:
            header = f.read()
        messages = [re.findall(r'"([^"]*)"', body)[-1]
                    for body in re.findall(r"static_assert\((.*?)\);", header, re.DOTALL)]
        self.assertGreaterEqual(len(messages), 8, "could not parse static_asserts")
        with open(SCRIPT) as f:
            source = f.read()
        for m in messages:
            self.assertTrue(f'"{m}"' in source, f"decode_traits.cuh rule not mirrored: {m}")

    def test_smem_formula(self):
        # pipeline 4*2*64*128*2 + q 16*128*2 + P 16*(64+8)*2 + row stats 2*4*16*4
        self.assertEqual(gen.derive(point())["smem_bytes"], 131072 + 4096 + 2304 + 512)
        # warp split-K: no P, no row stats; the merge buffer reuses the pipeline
        self.assertEqual(gen.derive(point(warp_split_k=True))["smem_bytes"], 131072 + 4096)
        # merge larger than a short pipeline: 4 copies * 16 rows * 130 * 4
        t = point(bn=64, stages=2, bm=16, depth=256, bk=32, warp_split_k=True)
        self.assertEqual(gen.derive(t)["smem_bytes"], max(2 * 2 * 64 * 512, 4 * 16 * 258 * 4)
                         + 16 * 256 * 2)

    def test_limit_is_inclusive(self):
        smem = gen.derive(point())["smem_bytes"]
        self.assertEqual(gen.reject_reasons(point(), smem)[0], [])
        self.assertTrue(gen.reject_reasons(point(), smem - 1)[0])


class Names(unittest.TestCase):
    def test_procedural_name(self):
        self.assertEqual(gen.kernel_name(point()),
                         "decode_bf16_bf16_d128_g4_contig_null_bm16_bn64_bk32_wm16_wn16_t128_s4")
        self.assertEqual(gen.kernel_name(point(dtype="fp16", kv_dtype="fp16", out_dtype="fp32", kv="paged",
                                               mask="window", has_sink=True,
                                               warp_split_k=True, group=7)),
                         "decode_fp16_fp32_d128_g7_paged_window_sink_bm16_bn64_bk32_wm16_wn16"
                         "_t128_s4_wsk")
        # The cache dtype only when it is not q's; _cap before the sink.
        self.assertEqual(gen.kernel_name(point(kv_dtype="e4m3", soft_cap=True, has_sink=True)),
                         "decode_bf16_bf16_kve4m3_d128_g4_contig_null_cap_sink_bm16_bn64_bk32"
                         "_wm16_wn16_t128_s4")

    def test_multi_token_family_name_and_traits(self):
        # _mt after the sink; the type spells the cache dtype and the cap to reach the flag.
        self.assertEqual(gen.kernel_name(point(multi_token=True, mask="causal", has_sink=True)),
                         "decode_bf16_bf16_d128_g4_contig_causal_sink_mt_bm16_bn64_bk32_wm16"
                         "_wn16_t128_s4")
        self.assertIn("CausalMask, false, __nv_bfloat16, false, true>, TileShape<",
                      gen.traits_type(point(multi_token=True, mask="causal")))
        fam = dict(FAMILY, multi_token=True, tiles=TILES)
        _, _, families = gen.load_config_obj({"schema_version": 1, "families": [fam]})
        inst = gen.expand(families, LIMIT, ["*"], [])[0]
        self.assertTrue(inst)
        self.assertTrue(all("_null_mt_" in e["name"] and e["traits"]["multi_token"] for e in inst))

    def test_fp8_family_traits_and_shared_memory(self):
        # An fp8 stage holds half the bytes; the two converted Elem tiles are added once.
        bf16 = gen.derive(point())["smem_bytes"]
        fp8 = gen.derive(point(kv_dtype="e4m3"))["smem_bytes"]
        tile = 64 * 128 * 2
        self.assertEqual(fp8, bf16 - 4 * tile + 2 * tile)
        # Heads as MMA columns (WM 8, any BM) convert fp8 in registers: no fp16 tiles
        # (kFp8InRegisters).
        bm8 = dict(bm=8, wm=8, warp_split_k=True)
        self.assertEqual(gen.derive(point(kv_dtype="e4m3", **bm8))["smem_bytes"],
                         gen.derive(point(**bm8))["smem_bytes"] - 4 * tile)
        # BM 32 in columns: Q and the merge area (4 warp copies of 32 rows) scale with BM; the
        # e4m3 pipeline (64 KB) is smaller than the merge area, which then sets the size.
        bm32 = dict(bm=32, wm=8, warp_split_k=True)
        self.assertEqual(gen.derive(point(**bm32))["smem_bytes"], 4 * 2 * tile + 32 * 128 * 2)
        self.assertEqual(gen.derive(point(kv_dtype="e4m3", **bm32))["smem_bytes"],
                         4 * 32 * 130 * 4 + 32 * 128 * 2)
        self.assertIn("K/V: the q dtype or fp8", reasons(dtype="fp16", kv_dtype="bf16"))
        self.assertIn("false, __nv_fp8_e5m2, true>, TileShape<",
                      gen.traits_type(point(kv_dtype="e5m2", soft_cap=True)))
        self.assertTrue(gen.traits_type(point()).endswith("NullMask, false>, TileShape<16, 64, "
                                                          "32, 16, 16, 128, 4, false>>"))
        # Production instances name no test fault (tests inject one with WithFault).
        self.assertNotIn("Fault", gen.traits_type(point(kv_dtype="e5m2", soft_cap=True)))

    def test_names_are_unique_and_encode_every_trait(self):
        _, _, families = gen.load_config(os.path.join(REPO, "configs", "tiles", "default.json"))
        inst, rej, filt = gen.expand(families, LIMIT, ["*"], [])
        names = [e["name"] for e in inst + rej + filt]
        self.assertEqual(len(names), len(set(names)))
        for e in inst:
            self.assertEqual(e["name"], gen.kernel_name(e["traits"]))


class Filters(unittest.TestCase):
    def test_parse(self):
        self.assertEqual(gen.parse_filter(""), (["*"], []))
        self.assertEqual(gen.parse_filter("a*;b*,-*wsk"), (["a*", "b*"], ["*wsk"]))
        self.assertEqual(gen.parse_filter("-*wsk"), (["*"], ["*wsk"]))

    def test_globs_select_instances(self):
        fam = dict(FAMILY, tiles=TILES)
        _, _, families = gen.load_config_obj({"schema_version": 1, "families": [fam]})
        all_inst = gen.expand(families, LIMIT, ["*"], [])[0]
        bn64 = gen.expand(families, LIMIT, ["*_bn64_*"], [])[0]
        self.assertTrue(bn64)
        self.assertTrue(all("_bn64_" in e["name"] for e in bn64))
        self.assertEqual(len(bn64), sum("_bn64_" in e["name"] for e in all_inst))
        no_wsk = gen.expand(families, LIMIT, ["*"], ["*_wsk"])[0]
        self.assertTrue(no_wsk)
        self.assertFalse(any(e["name"].endswith("_wsk") for e in no_wsk))
        two = gen.expand(families, LIMIT, ["*_bn32_*", "*_bn128_*"], [])[0]
        self.assertEqual({re.search(r"_bn(\d+)_", e["name"]).group(1) for e in two},
                         {"32", "128"})


class ConfigErrors(Workdir):
    def check_error(self, cfg, key, problem):
        path = self.write_config(cfg)
        r = self.run_gen("--config", path, "--out-dir", os.path.join(self.tmp, "gen"))
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn(path, r.stderr)
        self.assertIn(key, r.stderr)
        self.assertIn(problem, r.stderr)
        self.assertFalse(os.path.exists(os.path.join(self.tmp, "gen")))

    def base(self):
        return {"schema_version": 1, "tiles": copy.deepcopy(TILES),
                "families": [dict(FAMILY), dict(FAMILY, name="other", group=8)]}

    def test_multi_token_must_be_a_bool(self):
        cfg = self.base()
        cfg["families"][0]["multi_token"] = 1
        self.check_error(cfg, "families[0].multi_token", "wrong type")

    def test_value_not_allowed(self):
        cfg = self.base()
        cfg["families"][1]["depth"] = 96
        self.check_error(cfg, "families[1].depth", "not allowed")
        cfg = self.base()
        cfg["families"][0]["kv_dtype"] = "int8"
        self.check_error(cfg, "families[0].kv_dtype", "not allowed")
        cfg = self.base()
        cfg["families"][0]["dtype"] = "fp16"
        cfg["families"][0]["kv_dtype"] = "bf16"  # a 16-bit cache holds q's dtype
        self.check_error(cfg, "families[0].kv_dtype", "not allowed")
        cfg = self.base()
        cfg["families"][0]["soft_cap"] = 50
        self.check_error(cfg, "families[0].soft_cap", "wrong type")

    def test_unknown_key(self):
        cfg = self.base()
        cfg["families"][0]["heads"] = 32
        self.check_error(cfg, "families[0].heads", "unknown key")
        cfg = self.base()
        cfg["tile"] = {}
        self.check_error(cfg, "tile", "unknown key")
        cfg = self.base()
        cfg["tiles"]["bq"] = [16]
        self.check_error(cfg, "tiles.bq", "unknown key")

    def test_wrong_type(self):
        cfg = self.base()
        cfg["families"][0]["sink"] = "no"
        self.check_error(cfg, "families[0].sink", "wrong type")
        cfg = self.base()
        cfg["families"][1]["group"] = True
        self.check_error(cfg, "families[1].group", "wrong type")
        cfg = self.base()
        cfg["tiles"]["bn"] = [64, "128"]
        self.check_error(cfg, "tiles.bn[1]", "wrong type")

    def test_empty_axis(self):
        cfg = self.base()
        cfg["tiles"]["stages"] = []
        self.check_error(cfg, "tiles.stages", "empty axis")

    def test_missing_key_and_values(self):
        cfg = self.base()
        del cfg["families"][0]["mask"]
        self.check_error(cfg, "families[0].mask", "missing")
        cfg = self.base()
        del cfg["tiles"]
        self.check_error(cfg, "families[0].tiles", "missing")
        cfg = self.base()
        cfg["families"][0]["group"] = 0
        self.check_error(cfg, "families[0].group", "not allowed")
        cfg = self.base()
        cfg["schema_version"] = 2
        self.check_error(cfg, "schema_version", "not supported")
        cfg = self.base()
        cfg["families"][1]["name"] = "fam"
        self.check_error(cfg, "families[1].name", "duplicate")

    def test_family_tile_points(self):
        cfg = self.base()
        cfg["families"][0]["tiles"] = [{"bm": 16, "bn": 64, "bk": 32, "wm": 16, "wn": 16,
                                        "threads": 128, "stages": 0, "warp_split_k": False}]
        self.check_error(cfg, "families[0].tiles[0].stages", "not allowed")

    def test_not_json(self):
        self.check_error('{"schema_version": 1,', "(file)", "")
        self.check_error('{"schema_version": 1, "schema_version": 1}', "(file)", "duplicate key")

    def test_nothing_left(self):
        path = self.write_config(self.base())
        r = self.run_gen("--config", path, "--out-dir", os.path.join(self.tmp, "gen"),
                         "--filter", "nomatch*")
        self.assertEqual(r.returncode, 2)
        self.assertIn("no kernel instance", r.stderr)

    def test_missing_file(self):
        r = self.run_gen("--config", os.path.join(self.tmp, "absent.json"), "--list")
        self.assertEqual(r.returncode, 2)
        self.assertIn("absent.json", r.stderr)


class Outputs(Workdir):
    def config(self):
        return {"schema_version": 1, "families": [dict(FAMILY, tiles=copy.deepcopy(TILES))],
                "suite": {"problems": [{"name": "p"}]}}

    def generate(self, cfg_path, *extra):
        out = os.path.join(self.tmp, "gen")
        r = self.run_gen("--config", cfg_path, "--out-dir", out, *extra)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(os.path.join(out, "manifest.json")) as f:
            return out, json.load(f)

    def test_files_are_not_rewritten_when_unchanged(self):
        path = self.write_config(self.config())
        out, manifest = self.generate(path)
        files = sorted(os.listdir(out))
        self.assertEqual(len(files), len(manifest["instances"]) + 3)
        for fn in files:  # age every file so that a rewrite would show in its mtime
            os.utime(os.path.join(out, fn), ns=(10**18, 10**18))
        self.generate(path)
        self.assertEqual(sorted(os.listdir(out)), files)
        for fn in files:
            self.assertEqual(os.stat(os.path.join(out, fn)).st_mtime_ns, 10**18, fn)

    def test_narrower_config_rewrites_only_what_changed_and_drops_stale_files(self):
        path = self.write_config(self.config())
        out, before = self.generate(path)
        for fn in os.listdir(out):
            os.utime(os.path.join(out, fn), ns=(10**18, 10**18))
        _, after = self.generate(path, "--filter", "*_bn64_*")
        kept = {e["source"] for e in after["instances"]}
        self.assertTrue(kept)
        self.assertEqual(set(os.listdir(out)), kept | {"dispatch_table.cu", "build_config.cpp",
                                                     "manifest.json"})
        for fn in kept:
            self.assertEqual(os.stat(os.path.join(out, fn)).st_mtime_ns, 10**18, fn)
        self.assertNotEqual(os.stat(os.path.join(out, "dispatch_table.cu")).st_mtime_ns, 10**18)
        self.assertEqual(len(after["filtered_out"]) + len(after["instances"]) +
                         len(after["rejected"]),
                         len(before["instances"]) + len(before["rejected"]))

    def test_manifest_agrees_with_tile_axes(self):
        path = self.write_config(self.config())
        _, m = self.generate(path)
        axes = [TILES[a] for a in gen.TILE_AXES]
        expected = {}
        for combo in itertools.product(*axes):
            t = dict(GOOD)
            t.update(dict(zip(gen.TILE_AXES, combo)))
            expected[gen.kernel_name(t)] = t
        got = {e["name"]: e for e in m["instances"] + m["rejected"]}
        self.assertEqual(set(got), set(expected))
        self.assertEqual(m["filtered_out"], [])
        for name, e in got.items():
            t = expected[name]
            for k in gen.TILE_AXES:
                self.assertEqual(e["traits"][k], t[k], (name, k))
            self.assertEqual(e["traits"]["smem_bytes"], gen.derive(t)["smem_bytes"])
            self.assertEqual(bool(e.get("reasons")), e in m["rejected"])
            self.assertEqual(e.get("reasons", []), gen.reject_reasons(t, LIMIT)[0])
        self.assertTrue(m["instances"])
        self.assertTrue(m["rejected"])
        self.assertEqual(m["suite"], {"problems": [{"name": "p"}]})
        for e in m["instances"]:
            with open(os.path.join(self.tmp, "gen", e["source"])) as f:
                src = f.read()
            self.assertIn(f"launch_{e['name']}(", src)
            self.assertIn("#include \"kernels/decode_launch.cuh\"", src)

    def test_instance_source_and_dispatch_table(self):
        path = self.write_config(self.config())
        out, m = self.generate(path, "--filter",
                               "decode_bf16_bf16_d128_g4_contig_null_bm16_bn64_bk32_wm16_wn16"
                               "_t128_s4")
        self.assertEqual(len(m["instances"]), 1)
        with open(os.path.join(out, m["instances"][0]["source"])) as f:
            src = f.read()
        self.assertIn("launch_decode<DecodeTraits<DecodeFeatures<__nv_bfloat16, __nv_bfloat16, "
                      "128, 4, ContiguousKv, NullMask, false>, TileShape<16, 64, 32, 16, 16, 128, "
                      "4, false>>>(p, s)",
                      src)
        with open(os.path.join(out, "dispatch_table.cu")) as f:
            table = f.read()
        self.assertIn("kernel_registry()", table)
        self.assertIn(f"kSmemBytes == {m['instances'][0]['traits']['smem_bytes']}", table)

    def test_list_rejected(self):
        path = self.write_config(self.config())
        r = self.run_gen("--config", path, "--list-rejected")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("_wn32_t256_", r.stdout)
        self.assertIn("(BM/WM)*(BN/WN) warps must equal threads/32", r.stdout)


class TileSpaces(Workdir):
    """A suite naming its tile space ("tile_space", relative to the suite's folder). Its refusals,
    in both loaders alike, are test_config_schema.py's."""

    def tiles(self):
        return {"schema_version": 1, "smem_limit_bytes": 200000,
                "families": [dict(FAMILY, tiles=copy.deepcopy(TILES))]}

    def suite(self, tile_space="../tiles/t.json", **extra):
        os.makedirs(os.path.join(self.tmp, "suites"), exist_ok=True)
        cfg = dict({"schema_version": 1, "description": "d", "tile_space": tile_space,
                    "suite": {"problems": [{"name": "p"}]}}, **extra)
        return self.write_config(cfg, os.path.join("suites", "s.json"))

    def setUp(self):
        super().setUp()
        os.makedirs(os.path.join(self.tmp, "tiles"))
        self.tile_path = self.write_config(self.tiles(), os.path.join("tiles", "t.json"))

    def test_suite_loads_and_expands_as_its_copy(self):
        cfg, limit, fams = gen.load_config(self.suite())
        copied = dict(self.tiles(), description="d", suite={"problems": [{"name": "p"}]})
        _, copy_limit, copy_fams = gen.load_config_obj(copied)
        self.assertEqual((limit, fams), (copy_limit, copy_fams))
        self.assertEqual(gen.expand(fams, limit, ["*"], []), gen.expand(copy_fams, limit, ["*"], []))
        self.assertEqual(cfg["suite"], {"problems": [{"name": "p"}]})
        self.assertEqual(cfg["description"], "d")
        self.assertEqual(cfg["tile_space"], self.tile_path)

    def test_manifest_names_the_tile_space_and_hashes_both_files(self):
        path = self.suite()
        r = self.run_gen("--config", path, "--out-dir", os.path.join(self.tmp, "gen"), "--quiet")
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(os.path.join(self.tmp, "gen", "manifest.json")) as f:
            m = json.load(f)
        self.assertEqual(m["tile_space"], self.tile_path)  # outside the repository: absolute
        self.assertEqual(m["suite"], {"problems": [{"name": "p"}]})
        self.assertEqual(m["smem_limit_bytes"], 200000)
        with open(path, "rb") as a, open(self.tile_path, "rb") as b:
            self.assertEqual(m["config_sha256"], hashlib.sha256(a.read() + b.read()).hexdigest())


class CheckedInConfigs(unittest.TestCase):
    def test_suites_name_a_tile_space_and_tile_spaces_hold_no_suite(self):
        suites = os.path.join(REPO, "configs", "suites")
        for name in sorted(os.listdir(suites)):
            with self.subTest(name):
                with open(os.path.join(suites, name)) as f:
                    raw = json.load(f)
                self.assertTrue(raw["tile_space"].startswith("../tiles/"), raw["tile_space"])
                cfg, _, fams = gen.load_config(os.path.join(suites, name))
                self.assertTrue(fams and cfg["suite"]["problems"])
        tiles = os.path.join(REPO, "configs", "tiles")
        for name in sorted(os.listdir(tiles)):
            with self.subTest(name):
                with open(os.path.join(tiles, name)) as f:
                    self.assertFalse({"suite", "tile_space"} & set(json.load(f)))

    def test_ci_config_is_small(self):
        _, _, fams = gen.load_config(os.path.join(REPO, "configs", "tiles", "ci.json"))
        inst, _, _ = gen.expand(fams, LIMIT, ["*"], [])
        self.assertTrue(4 <= len(inst) <= 7, len(inst))
        self.assertEqual({e["traits"]["warp_split_k"] for e in inst}, {False, True})

    def test_default_config_has_twelve_tiles_per_family(self):
        cfg, limit, fams = gen.load_config(os.path.join(REPO, "configs", "suites", "default.json"))
        inst, _, _ = gen.expand(fams, limit, ["*"], [])
        for fam in fams:
            n = sum(fam["family"] in e["families"] for e in inst)
            self.assertGreaterEqual(n, 12, fam["family"])
        self.assertTrue(cfg["suite"]["problems"])


if __name__ == "__main__":
    unittest.main()

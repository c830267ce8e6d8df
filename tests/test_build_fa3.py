#!/usr/bin/env python3
"""scripts/peers/build_fa3.sh without a GPU, CUDA or FlashAttention: which FLASH_ATTENTION_DISABLE_*
switches each option sets and how many translation units that leaves (--dry-run), refusals of bad
arguments (exit 2) and of a missing tree or tool (exit 3), and the whole flow on a stand-in tree:
its setup.py writes a fake extension, stand-in nvcc, torch and wheel are on PATH and PYTHONPATH,
and the archive must hold the importable files and the build's record, be reused with --reuse and
unpack with --install. The real build runs on the H200."""

import json
import os
import shutil
import subprocess
import tarfile
import tempfile
import unittest

from mha_test_env import REPO  # noqa: E402

SCRIPT = os.path.join(REPO, "scripts", "peers", "build_fa3.sh")

# Writes what `setup.py build_ext --inplace` leaves, and the switches it saw, for the test to read.
FAKE_SETUP = """import json, os
os.makedirs("flash_attn_3", exist_ok=True)
open("flash_attn_3/_C.abi3.so", "w").write("not a library")
open("flash_attn_3/__init__.py", "w").write("")
open("flash_attn_interface.py", "w").write("def flash_attn_with_kvcache(*a, **k): pass\\n")
open("flash_attn_config.py", "w").write("CONFIG = {}\\n")
json.dump({k: v for k, v in os.environ.items() if k.startswith(("FLASH_", "MAX_JOBS", "NVCC_T"))},
          open("seen_env.json", "w"))
"""


def run(*args, env=None):
    return subprocess.run(["bash", SCRIPT, *args], capture_output=True, text=True, env=env)


def dry_env(*args):
    r = run("/nowhere", "--dry-run", *args)
    assert r.returncode == 0, r.stderr
    env = dict(line.split(" ", 2)[2].split("=", 1) for line in r.stdout.splitlines()
               if line.startswith("[fa3] env "))
    return env, r.stdout


class DryRun(unittest.TestCase):
    def test_defaults_build_forward_decode_only(self):
        env, out = dry_env("--jobs", "12")
        for off in ("BACKWARD", "SM80", "APPENDKV", "HDIM96", "HDIM192", "HDIMDIFF64",
                    "HDIMDIFF192", "FP16", "FP8"):
            self.assertEqual(env.get(f"FLASH_ATTENTION_DISABLE_{off}"), "TRUE", off)
        for kept in ("HDIM64", "HDIM128", "HDIM256", "SOFTCAP", "LOCAL", "PAGEDKV", "SPLIT",
                     "PACKGQA", "VARLEN"):
            self.assertNotIn(f"FLASH_ATTENTION_DISABLE_{kept}", env, kept)
        self.assertEqual(env["MAX_JOBS"], "12")
        self.assertEqual(env["NVCC_THREADS"], "1")
        # 3 head dims x bf16 x 10 units, plus flash_api, combine and the scheduler.
        self.assertIn("33 translation units on 12 job(s)", out)

    def test_options_change_switches_and_units(self):
        env, out = dry_env("--hdims", "128,64", "--dtypes", "bf16,e4m3,fp16", "--no-softcap",
                           "--no-local", "--nvcc-threads", "2")
        self.assertEqual(env.get("FLASH_ATTENTION_DISABLE_HDIM256"), "TRUE")
        self.assertNotIn("FLASH_ATTENTION_DISABLE_HDIM64", env)
        self.assertNotIn("FLASH_ATTENTION_DISABLE_FP8", env)
        self.assertNotIn("FLASH_ATTENTION_DISABLE_FP16", env)
        self.assertEqual(env.get("FLASH_ATTENTION_DISABLE_SOFTCAP"), "TRUE")
        self.assertEqual(env.get("FLASH_ATTENTION_DISABLE_LOCAL"), "TRUE")
        self.assertEqual(env["NVCC_THREADS"], "2")
        self.assertIn("head dims 64,128; dtypes bf16,e4m3,fp16", out)
        self.assertIn("33 translation units", out)  # 2 x 3 x 5 + 3

    def test_bad_arguments_exit_2(self):
        for args, said in ((["/x", "--hdims", "96"], "96 is not one of"),
                           (["/x", "--dtypes", "fp32"], "fp32 is not one of"),
                           (["/x", "--jobs", "0"], "not a positive number"),
                           (["/x", "--frobnicate"], "unknown option"),
                           (["/x", "/y"], "one source tree only"),
                           (["--dry-run"], "no source tree")):
            r = run(*args)
            self.assertEqual(r.returncode, 2, (args, r.stderr))
            self.assertIn(said, r.stderr)

    def test_missing_tree_exits_3(self):
        r = run("/nonexistent/flash-attention")
        self.assertEqual(r.returncode, 3, r.stderr)
        self.assertIn("no hopper/setup.py", r.stderr)


class FakeBuild(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="mha_fa3_")
        self.addCleanup(shutil.rmtree, self.tmp)
        src = os.path.join(self.tmp, "fa")
        os.makedirs(os.path.join(src, "hopper"))
        os.makedirs(os.path.join(src, "csrc", "cutlass", "include", "cute"))
        with open(os.path.join(src, "hopper", "setup.py"), "w") as f:
            f.write(FAKE_SETUP)
        with open(os.path.join(src, "FA3_COMMIT"), "w") as f:
            f.write("0123abcd\n")
        bin_dir, py_dir = os.path.join(self.tmp, "bin"), os.path.join(self.tmp, "py")
        os.makedirs(bin_dir)
        for mod, text in (("torch", "__version__ = '9.9.9+fake'\n"), ("wheel", "")):
            os.makedirs(os.path.join(py_dir, mod))
            with open(os.path.join(py_dir, mod, "__init__.py"), "w") as f:
                f.write(text)
        with open(os.path.join(bin_dir, "nvcc"), "w") as f:
            f.write("#!/bin/sh\necho 'Cuda compilation tools, release 13.0, V13.0.88'\n")
        os.chmod(os.path.join(bin_dir, "nvcc"), 0o755)
        self.src = src
        self.env = dict(os.environ, PATH=bin_dir + os.pathsep + os.environ["PATH"],
                        PYTHONPATH=py_dir)

    def test_build_archive_reuse_install(self):
        archive = os.path.join(self.tmp, "fa3.tar.gz")
        r = run(self.src, "--out", archive, "--hdims", "128", "--jobs", "3", env=self.env)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("built in", r.stdout)
        with open(os.path.join(self.src, "hopper", "seen_env.json")) as f:
            seen = json.load(f)
        self.assertEqual(seen["FLASH_ATTENTION_DISABLE_HDIM64"], "TRUE")
        self.assertEqual(seen["MAX_JOBS"], "3")
        with tarfile.open(archive) as t:
            names = set(t.getnames())
            info = json.load(t.extractfile("fa3_build_info.json"))
        for name in ("flash_attn_3/_C.abi3.so", "flash_attn_interface.py", "flash_attn_config.py"):
            self.assertIn(name, names)
        self.assertEqual(info["commit"], "0123abcd")
        self.assertEqual(info["torch"], "9.9.9+fake")
        self.assertEqual(info["units"], 13)
        self.assertIn("FLASH_ATTENTION_DISABLE_BACKWARD=TRUE", info["flags"])
        self.assertIsInstance(info["build_seconds"], int)

        os.remove(os.path.join(self.src, "hopper", "setup.py"))  # a rebuild would now fail
        site = os.path.join(self.tmp, "site")
        r = run(self.src, "--out", archive, "--reuse", "--install", site, env=self.env)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("reusing", r.stdout)
        self.assertTrue(os.path.exists(os.path.join(site, "flash_attn_interface.py")))

    def test_failed_build_exits_1(self):
        with open(os.path.join(self.src, "hopper", "setup.py"), "w") as f:
            f.write("raise SystemExit('nvcc error')\n")
        r = run(self.src, "--out", os.path.join(self.tmp, "a.tar.gz"), env=self.env)
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        self.assertIn("the build failed", r.stderr)


if __name__ == "__main__":
    unittest.main()

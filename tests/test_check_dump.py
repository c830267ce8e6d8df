#!/usr/bin/env python3
"""Tests of scripts/check_dump.py: exit 2 with a message (no traceback) on bad usage or input,
3 without numpy, and, where numpy is installed, 0 on a correct dump and 1 on a wrong output.
The numpy-free cases run everywhere (a stand-in package that fails to import simulates a
missing numpy); the recomputation cases are skipped without numpy."""

import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import unittest

from mha_test_env import REPO  # noqa: E402
SCRIPT = os.path.join(REPO, "scripts", "check_dump.py")

try:
    import numpy as np
    HAVE_NUMPY = True
except ImportError:
    HAVE_NUMPY = False


def run(*args, env=None):
    return subprocess.run([sys.executable, SCRIPT, *args], capture_output=True, text=True, env=env)


def manifest(outputs=None):
    return {"problem": "b2_h4_kv2_d8_n5", "shape": {"batch": 2, "heads": 4, "kv_heads": 2,
            "depth": 8, "max_len": 5, "group": 2}, "dtype": "bf16", "out_dtype": "bf16",
            "scale": 0.35, "mask": {"kind": "null", "window": 0, "chunk": 0}, "sink": False,
            "seed": 1, "outputs": outputs if outputs is not None else
            {"out_k_p2.npy": {"kernel": "decode_k", "partitions": 2, "status": "passed"}}}


class UsageTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)
        self.dir = self.tmp.name

    def assert_exit(self, r, code, text):
        self.assertEqual(r.returncode, code, r.stdout + r.stderr)
        self.assertIn(text, r.stderr)
        self.assertNotIn("Traceback", r.stderr)

    def test_bad_usage_and_missing_inputs_exit_2(self):
        self.assert_exit(run(), 2, "usage")
        self.assert_exit(run(os.path.join(self.dir, "nope")), 2, "no such directory")
        afile = os.path.join(self.dir, "manifest.json")
        with open(afile, "w") as f:
            json.dump(manifest(), f)
        self.assert_exit(run(afile), 2, "not a directory")
        empty = os.path.join(self.dir, "empty")
        os.makedirs(empty)
        self.assert_exit(run(empty), 2, "no */manifest.json")

    def test_missing_numpy_exits_3(self):
        os.makedirs(os.path.join(self.dir, "dump", "p0"))
        with open(os.path.join(self.dir, "dump", "p0", "manifest.json"), "w") as f:
            json.dump(manifest(), f)
        fake = os.path.join(self.dir, "fake_site", "numpy")
        os.makedirs(fake)
        with open(os.path.join(fake, "__init__.py"), "w") as f:
            f.write("raise ImportError('simulated: no numpy', name='numpy')\n")
        env = dict(os.environ, PYTHONPATH=os.path.dirname(fake))
        self.assert_exit(run(os.path.join(self.dir, "dump"), env=env), 3, "python3-numpy")


@unittest.skipUnless(HAVE_NUMPY, "numpy is not importable: check_dump.py recomputation tests "
                                 "skipped (apt-get install python3-numpy to run them)")
class RecomputeTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)
        self.dump = os.path.join(self.tmp.name, "dump")
        self.problem = os.path.join(self.dump, "p0")
        os.makedirs(self.problem)
        rng = np.random.default_rng(1)
        np.save(os.path.join(self.problem, "q.npy"), rng.standard_normal((2, 4, 8)).astype(np.float32))
        np.save(os.path.join(self.problem, "k.npy"), rng.standard_normal((2, 5, 2, 8)).astype(np.float32))
        np.save(os.path.join(self.problem, "v.npy"), rng.standard_normal((2, 5, 2, 8)).astype(np.float32))
        np.save(os.path.join(self.problem, "lengths.npy"), np.array([5, 3], dtype=np.int32))
        self.write_manifest(manifest())
        spec = importlib.util.spec_from_file_location("check_dump", SCRIPT)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        import pathlib
        expected = mod.attention(np, pathlib.Path(self.problem), manifest(), "manifest.json")
        np.save(os.path.join(self.problem, "reference.npy"), expected.astype(np.float32))
        self.expected = expected

    def write_manifest(self, m):
        with open(os.path.join(self.problem, "manifest.json"), "w") as f:
            json.dump(m, f)

    def test_correct_output_passes_and_wrong_one_fails(self):
        out = os.path.join(self.problem, "out_k_p2.npy")
        np.save(out, (self.expected * (1 + 1e-3)).astype(np.float32))
        r = run(self.dump)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("1 output(s)", r.stdout)
        np.save(out, (self.expected + 0.5).astype(np.float32))
        r = run(self.dump)
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        self.assertIn("decode_k p2", r.stdout)

    def test_query_tokens_see_the_keys_up_to_their_positions(self):
        # q [batch][q_len][heads][depth]: under the causal mask token t of a sequence of n keys
        # sees keys 0 .. n - q_len + t, so token 0 of the 3-key sequence sees key 0 alone.
        import pathlib
        spec = importlib.util.spec_from_file_location("check_dump", SCRIPT)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        rng = np.random.default_rng(2)
        np.save(os.path.join(self.problem, "q.npy"), rng.standard_normal((2, 3, 4, 8)))
        causal = dict(manifest(), mask={"kind": "causal", "window": 0, "chunk": 0})
        out = mod.attention(np, pathlib.Path(self.problem), causal, "manifest.json")
        v = np.load(os.path.join(self.problem, "v.npy"))
        self.assertEqual(out.shape, (2, 3, 4, 8))
        np.testing.assert_allclose(out[1, 0, 0], v[1, 0, 0], rtol=1e-6)
        self.assertGreater(float(np.abs(out[1, 2, 0] - v[1, 0, 0]).max()), 1e-3)
        null = mod.attention(np, pathlib.Path(self.problem), manifest(), "manifest.json")
        self.assertGreater(float(np.abs(null[1, 0, 0] - out[1, 0, 0]).max()), 1e-3)

    def test_ragged_tokens_are_packed_by_sequence(self):
        # shape.q_lens [3, 1]: q [tokens][heads][depth], sequence 0's three tokens at positions
        # 2..4 of its 5 keys, then sequence 1's one token, the newest of its 3; [3, 0]: no row
        # for sequence 1.
        import pathlib
        spec = importlib.util.spec_from_file_location("check_dump", SCRIPT)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        rng = np.random.default_rng(3)
        np.save(os.path.join(self.problem, "q.npy"), rng.standard_normal((4, 4, 8)))
        causal = dict(manifest(), mask={"kind": "causal", "window": 0, "chunk": 0})
        causal["shape"] = dict(causal["shape"], q_lens=[3, 1])
        out = mod.attention(np, pathlib.Path(self.problem), causal, "manifest.json")
        self.assertEqual(out.shape, (4, 4, 8))
        q = np.load(os.path.join(self.problem, "q.npy"))
        k = np.load(os.path.join(self.problem, "k.npy"))
        v = np.load(os.path.join(self.problem, "v.npy"))

        def attend(row, seq, keys, head):
            s = k[seq, :keys, head // 2] @ q[row, head] * 0.35
            w = np.exp(s - s.max())
            return (w[:, None] * v[seq, :keys, head // 2]).sum(0) / w.sum()
        np.testing.assert_allclose(out[0, 1], attend(0, 0, 3, 1), rtol=1e-6)  # position 2
        np.testing.assert_allclose(out[2, 3], attend(2, 0, 5, 3), rtol=1e-6)  # position 4
        np.testing.assert_allclose(out[3, 0], attend(3, 1, 3, 0), rtol=1e-6)  # sequence 1
        causal["shape"]["q_lens"] = [3, 0]
        np.save(os.path.join(self.problem, "q.npy"), q[:3])
        self.assertEqual(mod.attention(np, pathlib.Path(self.problem), causal,
                                       "manifest.json").shape, (3, 4, 8))

    def test_a_soft_cap_in_the_manifest_is_applied(self):
        # The manifest carries the cap now; an output capped at 2 is not the uncapped reference.
        import pathlib
        spec = importlib.util.spec_from_file_location("check_dump", SCRIPT)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        capped_manifest = dict(manifest(), soft_cap=2.0)
        capped = mod.attention(np, pathlib.Path(self.problem), capped_manifest, "manifest.json")
        self.assertGreater(float(np.abs(capped - self.expected).max()), 1e-3)
        self.write_manifest(capped_manifest)
        np.save(os.path.join(self.problem, "reference.npy"), capped.astype(np.float32))
        np.save(os.path.join(self.problem, "out_k_p2.npy"), capped.astype(np.float32))
        r = run(self.dump)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        np.save(os.path.join(self.problem, "out_k_p2.npy"), self.expected.astype(np.float32))
        self.assertEqual(run(self.dump).returncode, 1)

    def test_malformed_dumps_exit_2(self):
        np.save(os.path.join(self.problem, "out_k_p2.npy"), self.expected.astype(np.float32))
        m = manifest()
        del m["scale"]
        self.write_manifest(m)
        r = run(self.dump)
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn("scale: missing", r.stderr)
        self.write_manifest(manifest(outputs={}))
        r = run(self.dump)
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn("nothing was checked", r.stderr)
        self.write_manifest(manifest())
        os.remove(os.path.join(self.problem, "k.npy"))
        r = run(self.dump)
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn("k.npy", r.stderr)


if __name__ == "__main__":
    unittest.main()

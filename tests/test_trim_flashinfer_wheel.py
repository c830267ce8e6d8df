#!/usr/bin/env python3
"""scripts/peers/trim_flashinfer_wheel.py without FlashInfer: the re-packed wheel's RECORD lists
every file left with its sha256 and size (pip checks them), and bad input is refused with exit 2.
The trim itself needs torch, apache-tvm-ffi, nvcc and a FlashInfer wheel; docs/performance.md gives
its figures."""

import base64
import hashlib
import importlib.util
import os
import subprocess
import sys
import tempfile
import unittest
import zipfile

from mha_test_env import REPO  # noqa: E402

SCRIPT = os.path.join(REPO, "scripts", "peers", "trim_flashinfer_wheel.py")
spec = importlib.util.spec_from_file_location("trim", SCRIPT)
trim = importlib.util.module_from_spec(spec)
spec.loader.exec_module(trim)


class Repack(unittest.TestCase):
    def test_record_lists_what_is_left(self):
        with tempfile.TemporaryDirectory() as tmp:
            root = trim.pathlib.Path(tmp) / "w"
            (root / "flashinfer" / "data" / "include").mkdir(parents=True)
            (root / "flashinfer_python-9.dist-info").mkdir()
            (root / "flashinfer" / "__init__.py").write_text("x = 1\n")
            (root / "flashinfer" / "data" / "include" / "a.cuh").write_text("// a\n")
            (root / "flashinfer_python-9.dist-info" / "RECORD").write_text("stale,,\n")
            out = trim.repack(root, "flashinfer_python-9-py3-none-any.whl", trim.pathlib.Path(tmp))
            with zipfile.ZipFile(out) as z:
                names = sorted(z.namelist())
                record = z.read("flashinfer_python-9.dist-info/RECORD").decode().splitlines()
                self.assertEqual(names, ["flashinfer/__init__.py", "flashinfer/data/include/a.cuh",
                                         "flashinfer_python-9.dist-info/RECORD"])
                for line in record[:-1]:
                    path, digest, size = line.split(",")
                    data = z.read(path)
                    want = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
                    self.assertEqual(digest, "sha256=" + want.decode())
                    self.assertEqual(int(size), len(data))
                self.assertEqual(record[-1], "flashinfer_python-9.dist-info/RECORD,,")

    def test_refuses_what_is_not_a_flashinfer_wheel(self):
        with tempfile.TemporaryDirectory() as tmp:
            other = os.path.join(tmp, "numpy-1.0-py3-none-any.whl")
            open(other, "wb").close()
            for arg in (other, os.path.join(tmp, "absent.whl")):
                r = subprocess.run([sys.executable, SCRIPT, arg, "--out", tmp], capture_output=True,
                                   text=True)
                self.assertEqual(r.returncode, 2, r.stderr)
                self.assertIn("not a flashinfer_python-*.whl", r.stderr)


if __name__ == "__main__":
    unittest.main()

#!/usr/bin/env python3
"""scripts/peers/peer_wheels.sh install, offline, on stand-in wheels: the base folder's wheels go
into one site on PYTHONPATH, a second FlashInfer in a sub-folder (v072/) into a site of its own
named in MHA_FLASHINFER_SITE_ARGS for peers.py (and not on PYTHONPATH, where it would shadow the
first), and a FlashAttention-3 build archive is unpacked onto PYTHONPATH. Needs pip, not the
network."""

import io
import os
import subprocess
import sys
import tarfile
import tempfile
import unittest
import zipfile

from mha_test_env import REPO  # noqa: E402

SCRIPT = os.path.join(REPO, "scripts", "peers", "peer_wheels.sh")


def fake_wheel(folder, version):
    """A pure-Python flashinfer_python wheel whose package says its version."""
    name = f"flashinfer_python-{version}-py3-none-any.whl"
    info = f"flashinfer_python-{version}.dist-info"
    files = {"flashinfer/__init__.py": f"__version__ = {version!r}\n",
             f"{info}/METADATA": f"Metadata-Version: 2.1\nName: flashinfer-python\nVersion: {version}\n",
             f"{info}/WHEEL": "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\n"
                              "Tag: py3-none-any\n"}
    with zipfile.ZipFile(os.path.join(folder, name), "w") as z:
        for path, text in files.items():
            z.writestr(path, text)
        z.writestr(f"{info}/RECORD", "".join(f"{p},,\n" for p in files) + f"{info}/RECORD,,\n")


class InstallTest(unittest.TestCase):
    def test_two_flashinfers_and_fa3(self):
        with tempfile.TemporaryDirectory() as tmp:
            whl = os.path.join(tmp, "whl")
            os.makedirs(os.path.join(whl, "v072"))
            fake_wheel(whl, "0.5.3")
            fake_wheel(os.path.join(whl, "v072"), "0.7.2.post1")
            with tarfile.open(os.path.join(whl, "fa3_build.tar.gz"), "w:gz") as t:
                data = b"def flash_attn_with_kvcache(*a, **k):\n    pass\n"
                member = tarfile.TarInfo("flash_attn_interface.py")
                member.size = len(data)
                t.addfile(member, io.BytesIO(data))
            site = os.path.join(tmp, "site")
            script = (f"source {SCRIPT} install {whl} && echo \"PP=$PYTHONPATH\" && "
                      "echo \"ARGS=$MHA_FLASHINFER_SITE_ARGS\" && "
                      "python3 -c 'import flashinfer, flash_attn_interface; "
                      "print(\"V=\" + flashinfer.__version__)'")
            r = subprocess.run(["bash", "-c", script], capture_output=True, text=True,
                               env=dict(os.environ, MHA_PEER_SITE=site, PYTHONPATH=""))
            self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
            out = dict(line.split("=", 1) for line in r.stdout.splitlines() if "=" in line)
            self.assertEqual(out["V"], "0.5.3")  # the base one; the second only for its workers
            self.assertEqual(out["ARGS"].split(), ["--flashinfer-site", f"v072={site}-v072"])
            self.assertNotIn(f"{site}-v072", out["PP"].split(":"))
            self.assertEqual(out["PP"].split(":")[:2], [f"{site}-fa3", site])
            with open(os.path.join(f"{site}-v072", "flashinfer", "__init__.py")) as f:
                self.assertIn("0.7.2.post1", f.read())

    def test_no_wheels_leaves_peers_skipped(self):
        with tempfile.TemporaryDirectory() as tmp:
            r = subprocess.run(["bash", "-c", f"source {SCRIPT} install {tmp}/none; echo rc=$?"],
                               capture_output=True, text=True)
            self.assertIn("rc=0", r.stdout)
            self.assertIn("'skipped'", r.stderr)


if __name__ == "__main__":
    if subprocess.run(["python3", "-m", "pip", "--version"], capture_output=True).returncode != 0:
        print("python3 has no pip: peer_wheels.sh install not tested")
        sys.exit(77)
    unittest.main()

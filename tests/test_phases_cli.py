#!/usr/bin/env python3
"""`mha-tune phases` refuses what it cannot stamp before it looks for a GPU: a build without
phase stamps names the CMake option (exit 2), and no problem or a fused reduce are usage errors
(exit 2) in any build. Needs $MHA_BUILD_DIR/mha-tune (skipped when missing)."""

import subprocess
import unittest

from mha_test_env import MHA_TUNE, has_mha_tune  # noqa: E402

PROBLEM = ["--problem", "batch=1,heads=32,kv_heads=8,keys=512"]


def phases(*args):
    return subprocess.run([MHA_TUNE, "phases", *args], capture_output=True, text=True, timeout=60)


def is_phase_build():
    """Whether this build has stamps: only such a build gets past the stamps check to the others."""
    return "phase stamps" not in phases(*PROBLEM).stderr


@unittest.skipUnless(has_mha_tune(), f"mha-tune not built at {MHA_TUNE} (set MHA_BUILD_DIR): skipped")
class PhasesCliTest(unittest.TestCase):
    def test_a_build_without_stamps_names_the_option(self):
        if is_phase_build():
            self.skipTest("this build has phase stamps")
        r = phases(*PROBLEM)
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn("-DMHA_PHASE_CLOCK=ON", r.stderr)

    def test_usage_errors_of_a_phase_build(self):
        if not is_phase_build():
            self.skipTest("this build has no phase stamps: its refusal is the test above")
        for args, why in ((["--reduce", "fused", *PROBLEM], "no reduce launch"),
                          ([], "give the problems")):
            r = phases(*args)
            self.assertEqual(r.returncode, 2, r.stderr)
            self.assertIn(why, r.stderr)


if __name__ == "__main__":
    unittest.main()

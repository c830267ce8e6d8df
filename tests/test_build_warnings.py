#!/usr/bin/env python3
"""The CI build is warning-free and stays so: scripts/test.sh configures with -DMHA_WERROR=ON,
and in such a build every host C++ source of the project (src/, tests/, generated/) compiles with
-Werror, so that a new warning fails the build instead of scrolling by. The probe compiles a file
with a warning through the exact command of src/reports/report_json.cpp and expects it to fail.

Reads $MHA_BUILD_DIR/compile_commands.json (skipped when the build has none)."""

import json
import os
import re
import shlex
import subprocess
import tempfile
import unittest

from mha_test_env import REPO, BUILD_DIR  # noqa: E402
COMMANDS = os.path.join(BUILD_DIR, "compile_commands.json")


def cached(name):
    try:
        with open(os.path.join(BUILD_DIR, "CMakeCache.txt")) as f:
            for line in f:
                m = re.match(rf"{name}(:[A-Z]+)?=(.*)$", line.strip())
                if m:
                    return m.group(2)
    except OSError:
        pass
    return None


class CiBuildIsWarningFreeTest(unittest.TestCase):
    def test_ci_script_turns_warnings_into_errors(self):
        with open(os.path.join(REPO, "scripts", "test.sh")) as f:
            text = f.read()
        self.assertRegex(text, r"\nmha_setup build-ci configs/tiles/ci\.json .*-DMHA_WERROR=ON")

    @unittest.skipUnless(os.path.isfile(COMMANDS) and cached("MHA_WERROR") == "ON",
                         "not a -DMHA_WERROR=ON build with compile_commands.json")
    def test_every_host_source_compiles_with_werror(self):
        with open(COMMANDS) as f:
            entries = [e for e in json.load(f) if e["file"].endswith(".cpp")]
        ours = [e for e in entries
                if e["file"].startswith((os.path.join(REPO, "src") + os.sep,
                                         os.path.join(REPO, "tests") + os.sep,
                                         os.path.join(BUILD_DIR, "generated") + os.sep))]
        self.assertGreater(len(ours), 20)
        for e in ours:
            self.assertIn("-Werror", shlex.split(e["command"]), e["file"])

    @unittest.skipUnless(os.path.isfile(COMMANDS) and cached("MHA_WERROR") == "ON",
                         "not a -DMHA_WERROR=ON build with compile_commands.json")
    def test_a_warning_fails_the_compile(self):
        with open(COMMANDS) as f:
            entry = next(e for e in json.load(f) if e["file"].endswith("src/reports/report_json.cpp"))
        with tempfile.TemporaryDirectory(prefix="mha_werror_") as tmp:
            probe = os.path.join(tmp, "probe.cpp")
            with open(probe, "w") as f:
                f.write("int probe(int x) { int unused; return x; }\n")  # -Wunused-variable
            args = shlex.split(entry["command"])
            args[args.index("-o") + 1] = os.path.join(tmp, "probe.o")
            args[args.index("-c") + 1] = probe
            p = subprocess.run(args, cwd=entry["directory"], capture_output=True, text=True,
                               timeout=120)
        self.assertNotEqual(p.returncode, 0, "a warning did not fail the compile")
        self.assertIn("unused", p.stderr)


if __name__ == "__main__":
    unittest.main()

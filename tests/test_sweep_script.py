#!/usr/bin/env python3
"""scripts/sweep.sh builds the config it sweeps: configs/suites/default.json into build/, any other
config into build-<stem>/ (MHA_CONFIG=FILE or --config FILE), and sweeps with that config.

Runs the real scripts in a copy of scripts/ and configs/ with stand-ins for cmake, ninja and
dpkg-query on PATH: the stand-in cmake records how it was called and makes a build directory
whose mha-tune prints its arguments. Nothing is compiled."""

import os
import shutil
import subprocess
import tempfile
import unittest

from mha_test_env import REPO  # noqa: E402

FAKE_CMAKE = r"""#!/usr/bin/env bash
# Stand-in cmake: --version, configure (-S -B ...: records the arguments, makes B/mha-tune), build.
if [[ "$1" == --version ]]; then echo "cmake version 3.28.0"; exit 0; fi
echo "cmake $*" >> "$MHA_FAKE_LOG"
if [[ "$1" == --build ]]; then exit 0; fi
b=""; prev=""
for a in "$@"; do [[ "$prev" == -B ]] && b="$a"; prev="$a"; done
mkdir -p "$b"
for a in "$@"; do
  if [[ "$a" == -D*=* ]]; then n="${a#-D}"; echo "${n%%=*}=${n#*=}" >> "$b/CMakeCache.txt"; fi
done
printf '#!/usr/bin/env bash\necho "mha-tune in %s: $*"\n' "$b" > "$b/mha-tune"
chmod +x "$b/mha-tune"
"""


class SweepScriptTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="mha_sweep_sh_")
        self.addCleanup(shutil.rmtree, self.tmp)
        self.root = os.path.join(self.tmp, "repo")
        shutil.copytree(os.path.join(REPO, "scripts"), os.path.join(self.root, "scripts"))
        shutil.copytree(os.path.join(REPO, "configs"), os.path.join(self.root, "configs"))
        bin_dir = os.path.join(self.tmp, "bin")
        os.makedirs(bin_dir)
        fakes = {"cmake": FAKE_CMAKE, "ninja": "#!/bin/sh\nexit 0\n",
                 "dpkg-query": "#!/bin/sh\nprintf 'install ok installed'\n"}
        for name, text in fakes.items():
            path = os.path.join(bin_dir, name)
            with open(path, "w") as f:
                f.write(text)
            os.chmod(path, 0o755)
        self.log = os.path.join(self.tmp, "cmake.log")
        self.env = dict(os.environ, PATH=bin_dir + os.pathsep + os.environ["PATH"],
                        MHA_FAKE_LOG=self.log, MHA_JOBS="1", CUDACXX="/bin/true")
        for var in ("MHA_CONFIG", "MHA_CMAKE_ARGS", "MHA_KERNEL_FILTER"):
            self.env.pop(var, None)

    def sweep(self, *args, **env):
        p = subprocess.run([os.path.join(self.root, "scripts", "sweep.sh"), *args],
                           capture_output=True, text=True, timeout=60,
                           env=dict(self.env, **env))
        log = ""
        if os.path.exists(self.log):
            with open(self.log) as f:
                log = f.read()
        return p.returncode, p.stdout, p.stderr, log

    def assert_built_and_swept(self, result, build_dir, config, *sweep_args):
        rc, out, err, log = result
        self.assertEqual(rc, 0, out + err)
        self.assertIn(f"-B {build_dir} ", log)
        self.assertIn(f"-DMHA_CONFIG={os.path.join(self.root, config)}", log)
        self.assertIn(f"cmake --build {build_dir} ", log)
        self.assertEqual(out.strip(), " ".join([f"mha-tune in {build_dir}:", "sweep", "--config",
                                                config, *sweep_args]))

    def test_default_config_builds_into_build(self):
        self.assert_built_and_swept(self.sweep("--dry-run"), "build", "configs/suites/default.json",
                                    "--dry-run")

    def test_config_flag_builds_its_own_directory(self):
        self.assert_built_and_swept(self.sweep("--filter", "*bn64*", "--config",
                                               "configs/suites/paged.json"),
                                    "build-paged", "configs/suites/paged.json", "--filter", "*bn64*")
        self.assertFalse(os.path.exists(os.path.join(self.root, "build")))

    def test_environment_chooses_the_config(self):
        self.assert_built_and_swept(self.sweep(MHA_CONFIG="configs/tiles/features.json"),
                                    "build-features", "configs/tiles/features.json")

    def test_missing_config_is_a_usage_error(self):
        rc, out, err, _ = self.sweep("--config", "configs/nope.json")
        self.assertEqual(rc, 2, out + err)
        self.assertIn("configs/nope.json", err)


if __name__ == "__main__":
    unittest.main()

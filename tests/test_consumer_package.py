#!/usr/bin/env python3
"""mha-tune as a library: installs the build into a temporary prefix (`cmake --install`),
configures and builds examples/consumer against it with find_package(mha_tune) (the build's C++
compiler, CUDA toolkit and generator), and runs it. Its kernel list must equal `mha-tune list`'s
names, in order; without a GPU it must say that the decode was skipped, with one it must print a
checksum and an error against its CPU reference within verify's bf16 bound. Also checks the
package's layout and that it does not drag in CLI11.
Run: MHA_BUILD_DIR=build-ci python3 tests/test_consumer_package.py (ctest: label "host")."""

import json
import os
import re
import subprocess
import tempfile
import unittest

from mha_test_env import REPO, BUILD_DIR as BUILD, MHA_TUNE as BINARY, cmake_cached  # noqa: E402
CONSUMER = os.path.join(REPO, "examples", "consumer")


def cached(name):
    return cmake_cached(name, BUILD)


def run(cmd):
    # DESTDIR would move the install away from --prefix.
    env = {k: v for k, v in os.environ.items() if k != "DESTDIR"}
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                       timeout=300, env=env)
    if r.returncode != 0:
        raise AssertionError(f"exit {r.returncode}: {' '.join(cmd)}\n{r.stdout}")
    return r.stdout


@unittest.skipUnless(os.path.exists(BINARY), f"{BINARY} not built")
class ConsumerPackage(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory(prefix="mha_tune_consumer_")
        cls.prefix = os.path.join(cls.tmp.name, "prefix")
        build = os.path.join(cls.tmp.name, "build")
        cmake = cached("CMAKE_COMMAND") or "cmake"
        run([cmake, "--install", BUILD, "--prefix", cls.prefix])
        configure = [cmake, "-S", CONSUMER, "-B", build, "-G", cached("CMAKE_GENERATOR"),
                     f"-DCMAKE_PREFIX_PATH={cls.prefix}",
                     f"-DCMAKE_CXX_COMPILER={cached('CMAKE_CXX_COMPILER')}",
                     f"-DCMAKE_BUILD_TYPE={cached('CMAKE_BUILD_TYPE') or 'Release'}"]
        nvcc = cached("CMAKE_CUDA_COMPILER")
        if nvcc:  # the toolkit the kernels were compiled with
            configure.append(f"-DCUDAToolkit_ROOT={os.path.dirname(os.path.dirname(nvcc))}")
        run(configure)
        run([cmake, "--build", build])
        cls.output = run([os.path.join(build, "mha_consumer")])

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_lists_exactly_the_kernels_of_mha_tune_list(self):
        listed = [k["name"] for k in json.loads(run([BINARY, "list", "--json"]))]
        consumer = re.findall(r"^kernel: (\S+)$", self.output, re.M)
        self.assertTrue(listed)
        self.assertEqual(consumer, listed, self.output)
        self.assertIn(f"\n{len(listed)} kernel(s)\n", self.output)

    def test_chooses_a_listed_kernel_from_the_tuned_defaults(self):
        chosen = re.search(r"^choose: (\S+) partitions=(\d+) \((.+)\)$", self.output, re.M)
        self.assertIsNotNone(chosen, self.output)
        listed = re.findall(r"^kernel: (\S+)$", self.output, re.M)
        if chosen.group(1) != "none":
            self.assertIn(chosen.group(1), listed)
            self.assertGreaterEqual(int(chosen.group(2)), 1)

    def test_decodes_with_a_device_and_says_so_without(self):
        if "no CUDA device: decode skipped" in self.output:
            self.assertNotIn("checksum", self.output)
        else:
            m = re.search(r"^checksum: sum=(\S+) abs_sum=(\S+)$", self.output, re.M)
            self.assertIsNotNone(m, self.output)
            self.assertGreater(float(m.group(2)), 0)
            # The consumer exits 1 past this bound too; the line must be there.
            m = re.search(r"^rel_l2_error vs CPU reference: (\S+)$", self.output, re.M)
            self.assertIsNotNone(m, self.output)
            self.assertLess(float(m.group(1)), 1e-2)

    def test_package_reports_the_built_architectures(self):
        self.assertIn("built for CUDA architectures: "
                      f"{cached('CMAKE_CUDA_ARCHITECTURES')}\n", self.output)

    def test_package_layout_and_dependencies(self):
        cmakedir = None
        for libdir in ("lib", "lib64"):
            d = os.path.join(self.prefix, libdir, "cmake", "mha_tune")
            if os.path.isdir(d):
                cmakedir = d
        self.assertIsNotNone(cmakedir, "no lib/cmake/mha_tune in the prefix")
        for name in ("mha_tuneConfig.cmake", "mha_tuneConfigVersion.cmake",
                     "mha_tuneTargets.cmake"):
            self.assertTrue(os.path.isfile(os.path.join(cmakedir, name)), name)
        with open(os.path.join(cmakedir, "mha_tuneTargets.cmake")) as f:
            targets = f.read()
        self.assertIn("add_library(mha::kernels STATIC IMPORTED)", targets)
        self.assertIn("add_library(mha::decode STATIC IMPORTED)", targets)
        for private in ("CLI11", "fmt::", "nlohmann", "mha_warnings", "mha_nvtx", "mha::core"):
            self.assertNotIn(private, targets)
        include = os.path.join(self.prefix, "include", "mha_tune")
        for header in ("api/decode_api.h", "api/decode_plan.h", "registry/kernel_registry.h",
                       "common/result_row.h", "common/split_code.h",
                       "kernels/decode_params.cuh", "kernels/fast_divisor.cuh"):
            self.assertTrue(os.path.isfile(os.path.join(include, header)), header)
        self.assertTrue(os.path.isfile(os.path.join(self.prefix, "bin", "mha-tune")))


if __name__ == "__main__":
    unittest.main()

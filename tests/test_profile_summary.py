#!/usr/bin/env python3
"""scripts/profile_summary.py on a synthetic Nsight Compute raw CSV (the layout of
`ncu --import R --csv --page raw`: a header row, a units row, one row per kernel; ncu's own
messages unquoted): durations converted to µs, stall reasons ranked, other files refused (exit 2)."""

import os
import subprocess
import sys
import tempfile
import unittest

from mha_test_env import REPO  # noqa: E402
SCRIPT = os.path.join(REPO, "scripts", "profile_summary.py")

HEADER = ["ID", "Kernel Name", "gpu__time_duration.sum",
          "dram__throughput.avg.pct_of_peak_sustained_elapsed",
          "smsp__issue_active.avg.pct_of_peak_sustained_active",
          "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active",
          "sm__warps_active.avg.pct_of_peak_sustained_active", "launch__registers_per_thread",
          "launch__grid_size", "launch__block_size",
          "smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio",
          "smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio",
          "smsp__average_warps_issue_stalled_math_pipe_throttle_per_issue_active.ratio",
          "lts__throughput.avg.pct_of_peak_sustained_elapsed", "lts__t_sectors_srcunit_tex_op_read.sum",
          "smsp__inst_executed.sum"]
UNITS = ["", "", "nsecond", "%", "%", "%", "%", "register/thread", "", "", "ratio", "ratio", "ratio",
         "%", "sector", "inst"]
DECODE = ["0", "void mha::decode_kernel<mha::DecodeTraits<...>>(mha::DecodeParams)", "96,560",
          "61.2", "78.5", "20.1", "24.9", "124", "256", "128", "0.40", "1.85", "0.10",
          "71.5", "4,194,304", "7,134,208"]
REDUCE = ["1", "void mha::splitk_reduce_kernel(mha::DecodeParams, int)", "2,300",
          "5.0", "10.0", "0.0", "40.0", "32", "32", "128", "0.00", "0.90", "0.00", "3.0", "", ""]


def quoted(cells):
    return ",".join(f'"{c}"' for c in cells) + "\n"


class ProfileSummary(unittest.TestCase):
    def run_on(self, text, *args):
        with tempfile.NamedTemporaryFile("w", suffix=".csv", delete=False) as f:
            f.write(text)
        try:
            return subprocess.run([sys.executable, SCRIPT, f.name, *args], capture_output=True, text=True)
        finally:
            os.unlink(f.name)

    def test_table_of_the_kernels(self):
        p = self.run_on("==PROF== Disconnected\n" + quoted(HEADER) + quoted(UNITS) + quoted(DECODE) +
                        quoted(REDUCE), "--top", "2")
        self.assertEqual(p.returncode, 0, p.stderr)
        lines = p.stdout.splitlines()
        self.assertEqual(len(lines), 4, p.stdout)  # heading, rule, two kernels
        decode = lines[2]
        self.assertIn("`mha::decode_kernel<mha::DecodeTraits<...>>`", decode)
        self.assertIn("| 96.56 |", decode)  # 96,560 ns
        self.assertIn("| 61.2 | 78.5 | 20.1 | 24.9 | 124 | 71.5 | 134.2 | 7.13 |", decode)  # 32 B sectors
        self.assertIn("| 3.0 | — | — |", lines[3])  # a metric ncu left empty
        self.assertIn("256 × 128", decode)
        self.assertTrue(decode.endswith("| long_scoreboard 1.85, barrier 0.40 |"), decode)
        self.assertTrue(lines[3].endswith("| long_scoreboard 0.90 |"), lines[3])  # zeros left out

    def test_not_a_profile(self):
        p = self.run_on('"a","b"\n"1","2"\n"3","4"\n')
        self.assertEqual(p.returncode, 2)
        self.assertIn("not Nsight Compute raw CSV", p.stderr)
        p = self.run_on(quoted(HEADER) + quoted(UNITS))
        self.assertEqual(p.returncode, 2)
        self.assertIn("no kernel row", p.stderr)


if __name__ == "__main__":
    unittest.main()

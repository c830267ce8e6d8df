#!/usr/bin/env python3
"""scripts/fixed_cost.py on synthetic reports: a family timed as exactly F + bytes / R at three
lengths gives back F and R (and the read floor's own F and R beside them), the best split per
length is the one fitted, a family at one length is left out, and a report with no family to fit
(or an unreadable one) fails instead of printing an empty table."""

import os
import unittest

from mha_test_env import REPO, run_on_missing_report, run_on_report  # noqa: E402
SCRIPT = os.path.join(REPO, "scripts", "fixed_cost.py")


def row(name, us, nbytes, floor=None, partitions=1, status="passed"):
    r = {"kernel": "decode_a", "partitions": partitions, "status": status, "bytes": nbytes,
         "problem": {"name": name}, "time": {"median_us": us}}
    if floor is not None:
        r["floor_us"] = floor
    return r


def timed(fixed, gbps, nbytes):
    return fixed + nbytes / (gbps * 1e3)  # GB/s is 1e3 bytes per µs


class FixedCostTest(unittest.TestCase):
    def run_script(self, rows, gz=False):
        return run_on_report(SCRIPT, rows, gz=gz)

    def test_recovers_the_fixed_cost_and_the_rate(self):
        rows = []
        for keys in (512, 8192, 131072):
            nbytes = keys * 4096
            rows.append(row(f"fam_b1_n{keys}", timed(5.0, 4000, nbytes), nbytes,
                            floor=timed(1.5, 4400, nbytes)))
            # A slower split of the same problem, moving partials too: neither fitted nor the bytes.
            rows.append(row(f"fam_b1_n{keys}", timed(9.0, 2000, nbytes), nbytes + 10**6, partitions=4))
        rows.append(row("single_n512", 3.0, 2 * 10**6))
        r = self.run_script(rows, gz=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("| fam_b1 | 512–131072 (3) | 5.00 | 4000 | 0.0% | 1.50 | 4400 | +3.50 | 0.909 |",
                      r.stdout)
        self.assertNotIn("single", r.stdout)

    def test_without_read_floors_the_read_columns_are_empty(self):
        rows = [row(f"fam_n{k}", timed(2.0, 1000, k * 256), k * 256) for k in (2048, 32768)]
        r = self.run_script(rows)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("| fam | 2048–32768 (2) | 2.00 | 1000 | 0.0% | — | — | — | — |", r.stdout)

    def test_nothing_to_fit_is_a_failure_not_an_empty_table(self):
        r = self.run_script([row("fam_n512", 3.0, 10**6), row("fam_n8192", 0.0, 10**7, status="failed")])
        self.assertEqual(r.returncode, 1)
        self.assertIn("no family timed at two or more lengths", r.stderr)

    def test_unreadable_report_is_exit_2(self):
        r = run_on_missing_report(SCRIPT)
        self.assertEqual(r.returncode, 2)
        self.assertIn("missing.json", r.stderr)


if __name__ == "__main__":
    unittest.main()

#!/usr/bin/env python3
"""scripts/peers/ragged_vs_uniform.py on a synthetic report: each ragged batch pairs with its
`_uniform_equiv` twin by name, the ratio is best ragged / best uniform, plans print their label,
and a report without a twin (or an unreadable one) fails instead of printing an empty table."""

import os
import unittest

from mha_test_env import REPO, run_on_missing_report, run_on_report  # noqa: E402
SCRIPT = os.path.join(REPO, "scripts", "peers", "ragged_vs_uniform.py")


def row(name, partitions, us, status="passed"):
    return {"kernel": "decode_a", "partitions": partitions, "status": status,
            "problem": {"name": name}, "time": {"median_us": us}}


class RaggedVsUniformTest(unittest.TestCase):
    def run_script(self, rows):
        return run_on_report(SCRIPT, rows)

    def test_pairs_by_name_and_takes_the_best_of_each(self):
        plan = -((1 << 21) * 2 + 128)  # plan2x128
        r = self.run_script([row("mix_n100", 4, 120.0), row("mix_n100", plan, 110.0),
                             row("mix_n100_uniform_equiv_n50", 1, 100.0),
                             row("mix_n100_uniform_equiv_n50", 2, 105.0),
                             row("other_n7", 1, 9.0), row("failed_n1_uniform_equiv_n1", 1, 1.0)])
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("| mix_n100 | 110.00 (plan2x128) | 100.00 (1) | 1.100 |", r.stdout)
        self.assertIn("Geometric mean over 1: 1.100; worst 1.100", r.stdout)

    def test_no_twin_is_a_failure_not_an_empty_table(self):
        r = self.run_script([row("mix_n100", 4, 120.0),
                             row("mix_n100_uniform_equiv_n50", 1, 0.0, "failed")])
        self.assertEqual(r.returncode, 1)
        self.assertIn("no ragged batch with a timed `_uniform_equiv` twin", r.stderr)

    def test_unreadable_report_is_exit_2(self):
        r = run_on_missing_report(SCRIPT)
        self.assertEqual(r.returncode, 2)
        self.assertIn("missing.json", r.stderr)


if __name__ == "__main__":
    unittest.main()

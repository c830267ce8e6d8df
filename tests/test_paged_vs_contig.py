#!/usr/bin/env python3
"""scripts/paged_vs_contig.py on a synthetic report: a paged problem pairs with its contiguous twin
(the same problem but kv, page size and name), on the paged problem's best tile (the same traits
but kv and the shared memory the layout adds) and against the twin's best tile; page sizes are
separate layouts; a paged problem whose tile was never timed contiguous is left out; nothing to
pair fails, bad arguments are exit 2."""

import os
import unittest

from mha_test_env import REPO, run_on_missing_report, run_on_report  # noqa: E402
SCRIPT = os.path.join(REPO, "scripts", "paged_vs_contig.py")


def row(kv, page, keys, bm, partitions, us, status="passed", smem_bytes=None):
    name = f"p{'' if kv == 'contig' else kv + str(page)}_n{keys}"
    problem = {"name": name, "kv": kv, "page_size": page, "keys": keys, "batch": 1, "heads": 32,
               "kv_heads": 8}
    traits = {"kv": kv, "bm": bm, "bn": 64}
    if smem_bytes is not None:
        traits["smem_bytes"] = smem_bytes
    return {"kernel": f"decode_{kv}_bm{bm}", "partitions": partitions, "status": status,
            "problem": problem, "traits": traits, "time": {"median_us": us}}


class PagedVsContigTest(unittest.TestCase):
    def run_script(self, rows, *args):
        return run_on_report(SCRIPT, rows, *args)

    def test_same_tile_and_best_tile(self):
        r = self.run_script([
            row("contig", 0, 512, 16, 1, 5.0), row("contig", 0, 512, 16, 2, 4.8),  # BM 16's best: 4.8
            row("contig", 0, 512, 8, 1, 4.0),                                       # the twin's best tile
            row("paged", 16, 512, 16, 1, 5.28), row("paged", 16, 512, 8, 1, 5.5),   # paged best: BM 16
            row("paged", 128, 512, 8, 4, 4.1),                                      # its own layout
            row("paged", 16, 8192, 16, 1, 9.0),                                     # no contiguous twin
            row("contig", 0, 8192, 8, 1, 0.0, "failed")])
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("| ppaged16_n512 | 5.28 (decode_paged_bm16, 1) | 4.80 (2) | 1.100 **over** | 4.00 (1) | 1.320 |",
                      r.stdout)
        self.assertIn("| ppaged128_n512 | 4.10 (decode_paged_bm8, 4) | 4.00 (1) | 1.025 | 4.00 (1) | 1.025 |", r.stdout)
        self.assertNotIn("n8192", r.stdout)
        self.assertIn("- paged16: 1 problem(s), same tile geomean 1.100, worst 1.100, 1 above 1.05", r.stdout)
        self.assertIn("- paged128: 1 problem(s), same tile geomean 1.025, worst 1.025, 0 above 1.05", r.stdout)
        tight = self.run_script([row("contig", 0, 512, 8, 1, 4.0), row("paged", 128, 512, 8, 4, 4.1)],
                                "--limit", "1.01")
        self.assertIn("1.025 **over**", tight.stdout)

    def test_shared_memory_the_layout_adds_is_the_same_tile(self):
        # A paged kernel that stages page-table entries in shared memory is still its twin's tile.
        r = self.run_script([row("contig", 0, 512, 8, 1, 4.0, smem_bytes=102400),
                             row("paged", 16, 512, 8, 1, 4.4, smem_bytes=103424)])
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("| ppaged16_n512 | 4.40 (decode_paged_bm8, 1) | 4.00 (1) | 1.100 **over** |", r.stdout)

    def test_nothing_to_pair_fails(self):
        r = self.run_script([row("paged", 16, 512, 16, 1, 5.0), row("contig", 0, 512, 8, 1, 4.0)])
        self.assertEqual(r.returncode, 1)
        self.assertIn("no paged problem whose best tile was also timed", r.stderr)

    def test_bad_arguments_and_unreadable_report_are_exit_2(self):
        r = self.run_script([], "--limit", "x")
        self.assertEqual(r.returncode, 2)
        r = run_on_missing_report(SCRIPT)
        self.assertEqual(r.returncode, 2)
        self.assertIn("missing.json", r.stderr)


if __name__ == "__main__":
    unittest.main()

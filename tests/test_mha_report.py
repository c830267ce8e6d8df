#!/usr/bin/env python3
"""Tests of scripts/mha_report, the scripts' one reader of reports and defaults files: each way an
input is unusable is a ReportError naming the file and the fault; split_label and is_ragged
decode as mha-tune does (checked against the labels the committed reports carry); bucket_for
finds select's exact bucket; every committed report and defaults file loads; a peers.py report
reads back. Standard library only."""

import gzip
import json
import os
import sys
import tempfile
import unittest

from mha_test_env import REPO  # noqa: E402
sys.path[:0] = [os.path.join(REPO, "scripts"), os.path.join(REPO, "scripts", "peers")]
import mha_report  # noqa: E402
from mha_report import ReportError  # noqa: E402
from peerlib import report as peer_report, suite  # noqa: E402

RESULTS = os.path.join(REPO, "results")

PROBLEM = {"name": "p", "batch": 2, "heads": 32, "kv_heads": 8, "depth": 128, "dtype": "bf16",
           "kv": "paged", "mask": "null", "keys": 1000, "lengths": ""}
ROW = {"kernel": "decode_a", "problem": PROBLEM, "partitions": 4, "status": "passed",
       "time": {"median_us": 8.0}}
REPORT = {"schema_version": 1, "metadata": {}, "rows": [ROW]}
BUCKET = {"dtype": "bf16", "depth": 128, "group": 4, "kv": "paged", "mask": "null",
          "work_units": 16, "min_keys": 512, "max_keys": 1023, "kernel": "decode_a",
          "partitions": 4}
DEFAULTS = {"schema_version": 1, "buckets": [BUCKET]}


def plan_code(blocks_per_sm, min_chunk_keys):
    """As encode_split_plan in src/common/split_code.cpp."""
    return -(blocks_per_sm * (1 << 21) + min_chunk_keys)


class FileTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)

    def write(self, doc, name="x.json"):
        path = os.path.join(self.tmp.name, name)
        with open(path, "w") as f:
            f.write(doc if isinstance(doc, str) else json.dumps(doc))
        return path

    def assert_error(self, load, path, *texts):
        with self.assertRaises(ReportError) as ctx:
            load(path)
        message = str(ctx.exception)
        self.assertTrue(message.startswith(path + ": "), message)  # the file comes first
        for text in texts:
            self.assertIn(text, message)

    def test_valid_files_load(self):
        self.assertEqual(mha_report.load_report(self.write(REPORT)), REPORT)
        self.assertEqual(mha_report.load_defaults(self.write(DEFAULTS)), DEFAULTS)
        unversioned = dict(REPORT)  # hand-written files may leave the version out
        del unversioned["schema_version"]
        self.assertEqual(mha_report.load_report(self.write(unversioned)), unversioned)

    def test_unreadable_or_not_json(self):
        missing = os.path.join(self.tmp.name, "missing.json")
        self.assert_error(mha_report.load_report, missing, "cannot read the report",
                          "No such file")
        self.assert_error(mha_report.load_defaults, missing, "cannot read the defaults file")
        self.assert_error(mha_report.load_report, self.tmp.name, "cannot read")  # a directory
        self.assert_error(mha_report.load_report, self.write("{not json"), "not valid JSON")
        self.assert_error(mha_report.load_defaults, self.write(""), "not valid JSON")
        binary = os.path.join(self.tmp.name, "binary.json")
        with open(binary, "wb") as f:
            f.write(b"\xff\xfe\x00")
        self.assert_error(mha_report.load_report, binary, "not valid JSON")
        with self.assertRaises(ReportError) as ctx:  # `what` names the input
            mha_report.load_report(missing, "peers report")
        self.assertIn("the peers report", str(ctx.exception))

    def test_gzipped_reports_load(self):
        # Large reports travel gzipped; every script reads them as they are.
        path = os.path.join(self.tmp.name, "x.json.gz")
        with gzip.open(path, "wt") as f:
            json.dump(REPORT, f)
        self.assertEqual(mha_report.load_report(path), REPORT)
        self.assert_error(mha_report.load_report, self.write("{}", "plain.json.gz"),
                          "cannot read the report", "Not a gzipped file")

    def test_wrong_kind(self):
        self.assert_error(mha_report.load_report, self.write(DEFAULTS), "defaults file",
                          "arguments swapped")
        self.assert_error(mha_report.load_defaults, self.write(REPORT), "this is a report",
                          "arguments swapped")
        for doc in ([1, 2], {"rows": {}}, {"rows": []}, {"metadata": {}}):
            self.assert_error(mha_report.load_report, self.write(doc), "'rows' list",
                              "'metadata' object")
        for doc in ([], {"buckets": {}}, {"cost": 1}):
            self.assert_error(mha_report.load_defaults, self.write(doc), "no 'buckets' list")
        self.assert_error(mha_report.load_report, self.write(dict(REPORT, schema_version=2)),
                          "schema_version 2", "version 1")

    def test_rows_and_buckets_name_the_missing_field(self):
        no_status = {k: v for k, v in ROW.items() if k != "status"}
        path = self.write(dict(REPORT, rows=[ROW, no_status]))
        self.assert_error(mha_report.load_report, path, "rows[1].status: missing")
        self.assert_error(mha_report.load_report, self.write(dict(REPORT, rows=[ROW, 3])),
                          "rows[1]: not an object")
        nameless = dict(ROW, problem={k: v for k, v in PROBLEM.items() if k != "name"})
        self.assert_error(mha_report.load_report, self.write(dict(REPORT, rows=[nameless])),
                          "rows[0].problem.name: missing")
        # A script that reads more fields asks for them.
        self.assert_error(lambda p: mha_report.load_report(
            p, row_keys=mha_report.ROW_KEYS + ("achieved_gbps",)), self.write(REPORT),
            "rows[0].achieved_gbps: missing")
        no_max = {k: v for k, v in BUCKET.items() if k != "max_keys"}
        self.assert_error(mha_report.load_defaults,
                          self.write(dict(DEFAULTS, buckets=[BUCKET, no_max])),
                          "buckets[1].max_keys: missing")

    def test_peers_report_reads_back(self):
        """peerlib writes what mha_report reads: the writing and the reading side agree."""
        # A ragged problem as `sweep --dry-run --json` plans it (the peers take only plans).
        plan = {"problems": [{
            "name": "b2_h32_kv8_d128_n9_bf16_contig_null_ragged4-9", "batch": 2, "heads": 32,
            "kv_heads": 8, "depth": 128, "dtype": "bf16", "out_dtype": "bf16", "kv_dtype": "bf16",
            "kv_scale": "", "soft_cap": 0.0, "kv": "contig", "page_size": 0, "mask": "null",
            "window": 0, "chunk": 0, "has_sink": False, "sink_mean": 0.0, "q_std": 1.0,
            "scale": 0.08838834764831845, "keys": 9, "lengths": "ragged4-9",
            "ragged_lengths": [4, 9], "partitions": [1], "kernels": [], "points": 1,
            "bytes_per_step": 0.0, "estimated_s": 0.0}]}
        p = suite.problems_from_plan(plan, "plan")[0]
        rows = [peer_report.make_row("torch_flex", p, "not_supported", "why")]
        path = os.path.join(self.tmp.name, "peers.json")
        peer_report.write_report(path, peer_report.make_report(peer_report.make_metadata(), rows))
        rep = mha_report.load_report(path)
        self.assertEqual(rep["schema_version"], mha_report.SCHEMA_VERSION)
        self.assertEqual(mha_report.split_label(rep["rows"][0]), "1")
        self.assertTrue(mha_report.is_ragged(rep["rows"][0]["problem"]))


class CommittedResultsTest(unittest.TestCase):
    def committed(self, kind):
        for name in sorted(os.listdir(RESULTS)):
            if name.endswith(".json"):
                with open(os.path.join(RESULTS, name)) as f:
                    doc = json.load(f)
                if kind in doc and (kind == "rows" or name.endswith("defaults.json")):
                    yield os.path.join(RESULTS, name)

    def test_every_report_and_defaults_file_loads(self):
        reports = list(self.committed("rows"))
        self.assertGreater(len(reports), 5)
        for path in reports:
            mha_report.load_report(path)
        defaults = list(self.committed("buckets"))
        self.assertGreater(len(defaults), 0)
        for path in defaults:
            mha_report.load_defaults(path)
        with self.assertRaises(ReportError):  # mha-tune noise's buckets are not select's
            mha_report.load_defaults(os.path.join(RESULTS, "h200_2026-11-29_noise_floor.json"))

    def test_split_label_decodes_as_mha_tune_labels(self):
        """Rows of reports since the split plan carry mha-tune's own label; decoding the
        partitions without it gives the same text, plans included (cluster splits: RowTest)."""
        plans = 0
        for path in self.committed("rows"):
            for row in mha_report.load_report(path)["rows"]:
                if "split" in row:
                    bare = {k: v for k, v in row.items() if k != "split"}
                    self.assertEqual(mha_report.split_label(bare), row["split"], path)
                    plans += row["partitions"] < 0
        self.assertGreater(plans, 0)  # the committed reports include split plans


class RowTest(unittest.TestCase):
    def test_split_label(self):
        self.assertEqual(mha_report.split_label({"partitions": 16}), "16")
        self.assertEqual(mha_report.split_label({"partitions": (1 << 20) + 8}), "cluster8")
        self.assertEqual(mha_report.split_label({"partitions": 1}), "1")
        self.assertEqual(mha_report.split_label({"partitions": plan_code(2, 128)}), "plan2x128")
        self.assertEqual(mha_report.split_label({"partitions": plan_code(64, 1 << 20)}),
                         "plan64x1048576")
        # A label the report carries is taken as it is.
        self.assertEqual(mha_report.split_label({"partitions": -5, "split": "plan1x256"}),
                         "plan1x256")

    def test_is_ragged(self):
        self.assertFalse(mha_report.is_ragged(PROBLEM))
        self.assertTrue(mha_report.is_ragged(dict(PROBLEM, ragged_lengths=[4, 9])))
        # Equal lengths are uniform, whatever the lengths are named.
        self.assertFalse(mha_report.is_ragged(dict(PROBLEM, ragged_lengths=[7, 7],
                                                   lengths="ragged7-7")))
        # Without the list, a named length set counts as ragged.
        self.assertTrue(mha_report.is_ragged(dict(PROBLEM, lengths="lognormal24x4096s1")))
        self.assertTrue(mha_report.is_ragged(dict(PROBLEM, ragged_lengths=[],
                                                  lengths="ragged4-9")))

    def test_best_by_problem(self):
        rows = [dict(ROW, partitions=1, time={"median_us": 9.0}),
                dict(ROW, partitions=4, time={"median_us": 7.0}),
                dict(ROW, partitions=8, time={"median_us": 1.0}, status="incorrect"),
                dict(ROW, partitions=16, time={"median_us": 0.0}),
                dict(ROW, partitions=32, time={"median_us": "nan"})]
        self.assertEqual([mha_report.is_timed(r) for r in rows], [True, True, False, False, False])
        self.assertEqual(mha_report.best_by_problem(rows)["p"]["partitions"], 4)
        self.assertEqual(mha_report.best_by_problem(rows[2:]), {})

    def test_ratios_by_kernel_pair_the_points_timed_in_both(self):
        before = [dict(ROW, partitions=1, time={"median_us": 10.0}),
                  dict(ROW, partitions=4, time={"median_us": 8.0}),
                  dict(ROW, kernel="decode_b", partitions=4, time={"median_us": 5.0}),
                  dict(ROW, kernel="decode_b", partitions=8, time={"median_us": 5.0}),
                  dict(ROW, kernel="decode_c", partitions=4, time={"median_us": 5.0})]
        after = [dict(ROW, partitions=1, time={"median_us": 12.0}),
                 dict(ROW, partitions=4, time={"median_us": 6.0}),
                 dict(ROW, kernel="decode_b", partitions=4, time={"median_us": 4.0}),
                 dict(ROW, kernel="decode_b", partitions=8, time={"median_us": 1.0},
                      status="incorrect"),  # not timed: no pair
                 dict(ROW, kernel="decode_d", partitions=4, time={"median_us": 5.0})]
        self.assertEqual(mha_report.ratios_by_kernel(before, after),
                         {"decode_a": [1.2, 0.75], "decode_b": [0.8]})

    def test_bucket_for(self):
        self.assertIs(mha_report.bucket_for(DEFAULTS, PROBLEM), BUCKET)
        for change in ({"keys": 1024}, {"keys": 511}, {"batch": 4}, {"kv_heads": 4},
                       {"dtype": "fp16"}, {"mask": "causal"}, {"kv": "contig"}):
            self.assertIsNone(mha_report.bucket_for(DEFAULTS, dict(PROBLEM, **change)), change)
        # Buckets that know raggedness keep the two kinds apart; older ones hold either.
        ragged = dict(PROBLEM, ragged_lengths=[600, 1000])
        both = {"buckets": [dict(BUCKET, ragged=False, kernel="uniform"),
                            dict(BUCKET, ragged=True, kernel="ragged")]}
        self.assertEqual(mha_report.bucket_for(both, ragged)["kernel"], "ragged")
        self.assertEqual(mha_report.bucket_for(both, PROBLEM)["kernel"], "uniform")
        self.assertIs(mha_report.bucket_for(DEFAULTS, ragged), BUCKET)

    def test_bucket_for_several_query_tokens(self):
        """Multi-token buckets ("_mt" dtypes) hold their own q_len: the field, or the name's
        "_q<N>" in defaults written before it; one-token problems never take them."""
        named = dict(BUCKET, dtype="bf16_mt", bucket="bf16_mt_d128_g4_paged_null_wu16_n2^9_q4")
        counted = dict(BUCKET, dtype="bf16_mt", q_len=4)
        four = dict(PROBLEM, q_len=4)
        for bucket in (named, counted):
            defaults = {"buckets": [bucket]}
            self.assertIs(mha_report.bucket_for(defaults, four), bucket)
            self.assertIsNone(mha_report.bucket_for(defaults, dict(PROBLEM, q_len=2)))
            self.assertIsNone(mha_report.bucket_for(defaults, PROBLEM))
        self.assertIsNone(mha_report.bucket_for(DEFAULTS, four))  # a one-token bucket
        ragged = dict(PROBLEM, q_len=4, ragged_q_lens=[4, 0])  # ragged tokens: multi-token too
        self.assertIs(mha_report.bucket_for({"buckets": [counted]}, ragged), counted)


if __name__ == "__main__":
    unittest.main()

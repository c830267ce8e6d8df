#!/usr/bin/env python3
"""Fuzz test of every input mha-tune and scripts/gen_dispatch.py read: configs, problem files,
inline specs, flags and reports, malformed or hostile (truncated, wrong types, huge numbers,
NaN, negative, duplicate keys, deep nesting, empty, binary garbage), generated deterministically
from a seed. Each must end in exit 2 with a message on stderr: never a signal, a hang or exit 0.

Only paths where validation precedes device use are driven, so the test needs no GPU and a
GPU machine gives the same answers: `sweep --dry-run` (the plan needs no GPU), `verify` (it
builds every problem before it looks for a device), `compare`, `select` (with `--evaluate` and
`--suggest`), `merge`, `export`, `sweep --points` (no GPU at all) and the generator.

Run: MHA_BUILD_DIR=build-ci python3 tests/test_fuzz_inputs.py; MHA_FUZZ_SEED=N picks another
seed (ctest runs the fixed one, label "host")."""

import copy
import json
import os
import random
import subprocess
import sys
import tempfile
import unittest

from mha_test_env import REPO, MHA_TUNE as BINARY  # noqa: E402
GENERATOR = os.path.join(REPO, "scripts", "gen_dispatch.py")
SEED = int(os.environ.get("MHA_FUZZ_SEED", "20261129"))
TIMEOUT_S = 20  # a hang: every case takes well under a second
REPORT = os.path.join(REPO, "results", "h200_default.json")
CONFIG = os.path.join(REPO, "configs", "tiles", "ci.json")

HOSTILE_NUMBERS = ["", "-1", "0", "nan", "NaN", "inf", "-inf", "1e999", "1e-999", "2147483648",
                   "-2147483649", "99999999999999999999", "18446744073709551616", "1.5", "0x10",
                   " 512", "512 ", "+-1", "abc", "\u00e9", "\x01\x02", "1e6x", "--1"]
HOSTILE_LISTS = ["512:", ":512", "512::1024", "[512", "512]", "[]", "[:]", "1:8:x1", "1:8:x0",
                 "1:8:+0", "8:1:x2", "1:2000000000:+1", "x4", "pow2", "512:pow2", "3:3:pow2",
                 "1:3:pow3", "1:8:x-2", "0:8:x2", "-4:8:+2", "1:8:x99999999999999999999",
                 "auto:x2", "16777217", "16777216:16777217:+1", "[1:8:x2]]", "1,2"]
GARBAGE = [b"", b" ", b"\n\n", b"\x00\x01\x02\xff\xfe", b"\xef\xbb\xbf", b"null", b"true",
           b"42", b"\"text\"", b"[]", b"{}", b"{", b"}", b"[{]", b"{\"a\":}", b"{'a': 1}",
           b"\xc3\x28", b"{\"\\ud800\": 1}"]


def read_bytes(relative):
    with open(os.path.join(REPO, relative), "rb") as f:
        return f.read()


def deep(n, kind="["):
    close = "]" if kind == "[" else "}"
    opener = "[" if kind == "[" else "{\"a\":"
    return (opener * n + "0" + close * n).encode()


def dup_keys(obj_text, key, value):
    """Inserts `"key": value` again right after the first '{' of a serialized object."""
    return obj_text.replace("{", "{" + json.dumps(key) + ": " + value + ", ", 1)


class Case:
    def __init__(self, label, argv, files=None, run="tool"):
        self.label, self.argv, self.files, self.run = label, argv, files or {}, run


class FuzzInputs(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if not os.path.exists(BINARY):
            raise unittest.SkipTest(f"{BINARY} not built")
        cls._tmp = tempfile.TemporaryDirectory()
        cls.tmp = cls._tmp.name
        cls.rng = random.Random(SEED)
        with open(REPORT) as f:
            full = json.load(f)
        # A small valid report: a few rows of the committed H200 sweep.
        cls.report = {"schema_version": full["schema_version"], "metadata": full["metadata"],
                      "rows": full["rows"][:3]}
        cls.good_report = os.path.join(cls.tmp, "good_report.json")
        with open(cls.good_report, "w") as f:
            json.dump(cls.report, f)
        with open(CONFIG) as f:
            cls.config = json.load(f)
        # Its samples sidecar (sweep --samples), for compare --samples against hostile ones.
        with open(os.path.join(cls.tmp, "good_report.samples.jsonl"), "w") as f:
            for r in cls.report["rows"]:
                key = f"{r['kernel']}|{r['problem']['name']}|{r.get('split', r.get('partitions'))}"
                f.write(json.dumps({"point": key, "samples_us": [1.0, 1.1, 1.2]}) + "\n")

    @classmethod
    def tearDownClass(cls):
        cls._tmp.cleanup()

    # -- generators --------------------------------------------------------------------------

    def spec_cases(self):
        rng = self.rng
        base = {"batch": "1", "heads": "32", "kv_heads": "8", "keys": "512", "partitions": "1:4"}
        texts = []
        for key in ["batch", "heads", "kv_heads", "keys", "partitions", "depth", "page_size",
                    "window", "chunk", "q_std", "scale", "sink", "mask", "dtype", "lengths"]:
            for value in rng.sample(HOSTILE_NUMBERS, 3):
                if key == "sink" and value == "0":
                    continue  # sink takes true, false, 1 or 0
                if key in ("q_std", "scale", "page_size", "window", "chunk") and \
                        value in ("0", "1.5", "1e-999", "2147483648", "99999999999999999999",
                                  "18446744073709551616"):
                    continue  # valid there: any finite non-negative float; 0 means "unused"
                spec = dict(base, **{key: value})
                texts.append(",".join(f"{k}={v}" for k, v in spec.items()))
        for key in ["keys", "partitions", "lengths"]:
            for value in rng.sample(HOSTILE_LISTS, 6):
                spec = dict(base, **{key: value})
                texts.append(",".join(f"{k}={v}" for k, v in spec.items()))
        texts += [
            "batch=1", "keys=512,keys=1024", "keys=512,colour=red", "keys", "=512", "keys=512,=1",
            "keys=512,depth=64", "keys=512,heads=32,kv_heads=7", "keys=512,heads=30,kv_heads=8",
            "keys=512,dtype=fp32", "keys=512,mask=diagonal", "keys=512,q_std=-1",
            "keys=512,scale=-0.5", "keys=512,sink_mean=nan", "batch=65536,keys=16777216",
            "batch=65537,keys=1", "keys=512,partitions=1025", "keys=512,window=-1",
            "keys=512,batch=3,lengths=1:2", "lengths=0:5", "keys=512,partitions=",
            "keys=512,heads=65537", "keys=512,name=x,name=y", ",,,", "",
        ]
        for _ in range(12):
            n = rng.randint(1, 60)
            texts.append("".join(chr(rng.choice(list(range(1, 128)) + [0xe9, 0x4e2d, 0xfffd]))
                                 for _ in range(n)))
        cases = []
        for i, t in enumerate(texts):
            cmd = ["sweep", "--dry-run"] if i % 2 == 0 else ["verify"]
            cases.append(Case(f"spec {t!r} ({cmd[0]})", cmd + ["--problem", t]))
        return cases

    def flag_cases(self):
        ok = ["--problem", "keys=512"]
        rows = [
            ["sweep", "--dry-run", "--partitions", "0"] + ok,
            ["sweep", "--dry-run", "--partitions", "1:8:x1"] + ok,
            ["sweep", "--dry-run", "--partitions", "two"] + ok,
            ["sweep", "--dry-run", "--filter", "no_such_kernel_*"] + ok,
            ["sweep", "--dry-run", "--filter", "-*"] + ok,
            ["sweep", "--dry-run", "--filter", ""] + ok,
            ["sweep", "--dry-run", "--filter", "*,-"] + ok,
            ["sweep", "--dry-run", "--shard", "5/2"] + ok,
            ["sweep", "--dry-run", "--shard", "abc"] + ok,
            ["sweep", "--dry-run", "--shard", "-1/2"] + ok,
            ["sweep", "--dry-run", "--shard", "63/64"] + ok,  # more shards than points: empty
            ["sweep", "--dry-run", "--time-budget", "nan"] + ok,
            ["sweep", "--dry-run", "--time-budget", "-1"] + ok,
            ["sweep", "--dry-run", "--target-error", "0"] + ok,
            ["sweep", "--dry-run", "--timing", "never"] + ok,
            ["sweep", "--dry-run", "--reduce", "sideways"] + ok,
            ["sweep", "--json"] + ok,
            ["sweep", "--dry-run"],
            ["sweep", "--dry-run", "--problems", os.path.join(self.tmp, "missing.json")],
            ["sweep", "--dry-run", "--config", os.path.join(self.tmp, "missing.json")],
            ["sweep", "--dry-run", "--rule", os.path.join(self.tmp, "missing.json"),
             "--partitions", "auto"] + ok,
            ["verify", "--suite", "nonsense"],
            ["verify", "--filter", "nothing"],
            ["verify", "--reduce", "sideways"],
            ["verify", "--problem", "keys=512", "--seed", "-5"],
            ["list", "--filter", "nothing_matches"],
            ["list", "--filter", "-*"],
            ["export", "--format", "csv", self.good_report],
            ["export", self.good_report],
            ["compare", self.good_report, self.good_report, "--threshold", "-1"],
            ["compare", self.good_report, self.good_report, "--threshold", "nan"],
            ["compare", self.good_report],
            ["merge", self.good_report],
            ["select"],
            ["nonsense-command"],
            [],
        ]
        return [Case(f"flags {' '.join(a)!r}", a) for a in rows]

    def problem_file_docs(self):
        """(label, bytes) of malformed problem files."""
        rng = self.rng
        good = {"problems": [{"name": "p", "batch": 1, "heads": 32, "kv_heads": 8, "keys": [512, 1024],
                              "partitions": [1, 4]}]}
        text = json.dumps(good)
        docs = [(f"garbage {g!r}", g) for g in GARBAGE]
        docs += [(f"truncated at {n}", text[:n].encode())
                 for n in sorted(rng.sample(range(1, len(text) - 1), 10))]
        docs += [("empty list", b'{"problems": []}'), ("not a list", b'{"problems": {}}'),
                 ("number item", b'{"problems": [1]}'), ("empty item", b'{"problems": [{}]}'),
                 ("duplicate top key", dup_keys(text, "problems", "[]").encode()),
                 ("duplicate key in item",
                  text.replace('"name": "p"', '"keys": 5, "name": "p"').encode()),
                 ("NaN literal", text.replace("512", "NaN").encode()),
                 ("Infinity literal", text.replace("512", "Infinity").encode()),
                 ("1e400", text.replace("512", "1e400").encode()),
                 ("deep list", b'{"problems": ' + deep(200) + b"}"),
                 ("deep object", b'{"problems": [{"keys": ' + deep(100000, "{") + b"}]}"),
                 ("deep list 100k", deep(100000)),
                 ("suite without problems", b'{"suite": {}}'),
                 ("suite empty", b'{"suite": {"problems": []}}')]
        fields = ["batch", "heads", "kv_heads", "keys", "partitions", "depth", "lengths", "q_std",
                  "mask", "sink", "page_size", "window", "scale", "dtype", "name"]
        hostile_values = [None, True, "x", -1, 0, 2**31, 2**63, 2**64 + 1, 1.5, -0.5, [], [[1, 2], [3]],
                          [{"a": 1}], {"a": 1}, "1:8:x1", "512:pow3", 10**30, "nan", [0], [-8]]
        for field in fields:
            for value in rng.sample(hostile_values, 4):
                if field == "name" and isinstance(value, str):
                    continue  # any string is a usable name
                if field in ("page_size", "window") and value == 0:
                    continue  # 0 means "unused"
                if field in ("q_std", "scale") and value in (0, 1.5, 2**31, 2**63, 2**64 + 1, 10**30):
                    continue  # a finite non-negative float is valid there
                if field == "sink" and value in (True, 0):
                    continue
                doc = copy.deepcopy(good)
                doc["problems"][0][field] = value
                docs.append((f"{field}={json.dumps(value)}", json.dumps(doc).encode()))
        for i in range(6):
            docs.append((f"random bytes {i}", bytes(rng.randrange(256) for _ in range(rng.randint(1, 200)))))
        return docs

    def problem_file_cases(self):
        cases = []
        for i, (label, data) in enumerate(self.problem_file_docs()):
            name = f"problems_{i}.json"
            cmd = ["sweep", "--dry-run", "--problems"] if i % 2 == 0 else ["verify", "--problems"]
            cases.append(Case(f"problem file {label} ({cmd[0]})", cmd + ["{" + name + "}"],
                              {name: data}))
        return cases

    def config_docs(self):
        rng = self.rng
        cfg = self.config
        text = json.dumps(cfg)
        docs = [(f"garbage {g!r}", g) for g in GARBAGE[:10]]
        docs += [(f"truncated at {n}", text[:n].encode())
                 for n in sorted(rng.sample(range(1, len(text) - 1), 8))]
        docs += [("duplicate schema_version", dup_keys(text, "schema_version", "2").encode()),
                 ("deep", deep(100000)), ("deep families", b'{"families": ' + deep(300) + b"}"),
                 ("NaN", text.replace('"schema_version": 1', '"schema_version": NaN').encode())]
        mutations = [("schema_version", 2), ("schema_version", "1"), ("families", []),
                     ("families", {}), ("smem_limit_bytes", -1), ("smem_limit_bytes", 1e400 if False else 10**30),
                     ("tiles", []), ("tiles", {"bm": 16}), ("colour", "red"), ("suite", []),
                     ("suite", {"problems": []}), ("suite", {"problems": [{"keys": -1}]}),
                     ("suite", {"problems": [{"keys": [[512]]}]}), ("suite", {"problems": "all"})]
        for key, value in mutations:
            doc = copy.deepcopy(cfg)
            doc[key] = value
            docs.append((f"{key}={json.dumps(value)[:40]}", json.dumps(doc).encode()))
        fam_mutations = [("depth", 96), ("depth", "128"), ("group", 0), ("group", -4), ("dtype", "fp8"),
                         ("kv", None), ("mask", 1), ("sink", "no"), ("name", "a b"), ("name", ""),
                         ("tiles", {"bm": [], "bn": 64, "bk": 32, "wm": 16, "wn": 16,
                                    "threads": 128, "stages": 2, "warp_split_k": False}),
                         ("tiles", {"bm": 16, "bn": list(range(1, 40)), "bk": list(range(1, 40)),
                                    "wm": list(range(1, 40)), "wn": list(range(1, 40)),
                                    "threads": 128, "stages": 2, "warp_split_k": False}),
                         ("tiles", {"bm": 16, "bn": 64, "bk": 32, "wm": 16, "wn": 16,
                                    "threads": 2**40, "stages": 2, "warp_split_k": "yes"})]
        for key, value in fam_mutations:
            doc = copy.deepcopy(cfg)
            doc["families"][0][key] = value
            docs.append((f"families[0].{key}={json.dumps(value)[:40]}", json.dumps(doc).encode()))
        return docs

    def config_cases(self):
        cases = []
        for i, (label, data) in enumerate(self.config_docs()):
            name = f"config_{i}.json"
            # The generator copies "suite" into its manifest unread: mha-tune checks it.
            if not label.startswith("suite"):
                cases.append(Case(f"generator config {label}", [GENERATOR, "--config", "{" + name + "}",
                                                                 "--list"], {name: data}, run="python"))
            # mha-tune reads a config's "suite" only; mutations elsewhere are the generator's.
            if label.startswith(("garbage", "truncated", "duplicate", "deep", "NaN", "suite")):
                cases.append(Case(f"sweep config {label}",
                                  ["sweep", "--dry-run", "--config", "{" + name + "}"], {name: data}))
        return cases

    def report_docs(self):
        rng = self.rng
        rep = self.report
        text = json.dumps(rep)
        docs = [(f"garbage {g!r}", g) for g in GARBAGE]
        docs += [(f"truncated at {n}", text[:n].encode())
                 for n in sorted(rng.sample(range(1, len(text) - 1), 10))]
        docs += [("duplicate rows", dup_keys(text, "rows", "[]").encode()),
                 ("duplicate in row", text.replace('"kernel":', '"partitions": 9, "kernel":', 1).encode()),
                 ("deep rows", b'{"schema_version": 1, "rows": ' + deep(100000) + b"}"),
                 ("NaN median", text.replace('"median_us": ', '"median_us": NaN, "x": ', 1).encode()),
                 ("select defaults file", read_bytes("results/h200_2026-11-29_defaults.json"))]
        top = [("schema_version", 2), ("schema_version", "1"), ("rows", {}), ("rows", [1]),
               ("rows", None), ("metadata", []), ("metadata", None)]
        for key, value in top:
            doc = copy.deepcopy(rep)
            doc[key] = value
            docs.append((f"{key}={json.dumps(value)}", json.dumps(doc).encode()))
        for key in ["schema_version", "metadata", "rows"]:
            doc = copy.deepcopy(rep)
            del doc[key]
            docs.append((f"no {key}", json.dumps(doc).encode()))
        # The split as the report writes it: its text form, or the integer code of older reports.
        split_key = "split" if "split" in rep["rows"][0] else "partitions"
        row_paths = [("kernel",), (split_key,), ("status",), ("time", "median_us"), ("time", "samples"),
                     ("problem", "keys"), ("problem", "name"), ("traits", "bn"), ("bytes",),
                     ("throttled",), ("device",)]
        meta_keys = ["gpu_name", "sm_count", "seed", "timestamp", "l2_bytes", "peak_read_gbps"]
        hostile_values = [None, "x", [], {}, True, 4294967297, -(2**40), 2**64 + 1, 1.5, "NaN",
                          "partially", [[[]]]]
        for path in row_paths:
            for value in rng.sample(hostile_values, 3):
                doc = copy.deepcopy(rep)
                target = doc["rows"][rng.randrange(len(doc["rows"]))]
                for p in path[:-1]:
                    target = target[p]
                # A value of the field's own type is valid: skip those.
                old = target[path[-1]]
                if type(old) is type(value) and not isinstance(value, (list, dict)) and \
                        not (isinstance(value, int) and abs(value) > 2**31) and \
                        path[-1] != "status":
                    continue
                if path[-1] in ("bytes", "median_us") and isinstance(value, (int, float)) and \
                        not isinstance(value, bool):
                    continue
                target[path[-1]] = value
                docs.append((f"rows[].{'.'.join(path)}={json.dumps(value)}", json.dumps(doc).encode()))
            doc = copy.deepcopy(rep)
            target = doc["rows"][0]
            for p in path[:-1]:
                target = target[p]
            del target[path[-1]]
            if path[-1] in ("split", "partitions"):  # either one alone is the split
                target.pop("split", None)
                target.pop("partitions", None)
            docs.append((f"rows[0] without {'.'.join(path)}", json.dumps(doc).encode()))
        for key in meta_keys:
            doc = copy.deepcopy(rep)
            # Huge integers are errors where an int is read; a double field takes them.
            doc["metadata"][key] = rng.choice([None, [], {"a": 1}] +
                                              ([] if key == "peak_read_gbps" else [2**64 + 1]) +
                                              ([] if key in ("gpu_name", "timestamp") else ["x"]))
            docs.append((f"metadata.{key}={json.dumps(doc['metadata'][key])}", json.dumps(doc).encode()))
        for i in range(5):
            docs.append((f"random bytes {i}", bytes(rng.randrange(256) for _ in range(rng.randint(1, 300)))))
        return docs

    def report_cases(self):
        cases = []
        out = os.path.join(self.tmp, "out")
        points = os.path.join(self.tmp, "points.json")
        commands = [lambda f: ["compare", self.good_report, f], lambda f: ["compare", f, self.good_report],
                    lambda f: ["select", f], lambda f: ["merge", f, "--out", out],
                    lambda f: ["export", "--format", "googlebench", f],
                    lambda f: ["select", self.good_report, "--evaluate", f],
                    lambda f: ["select", "--suggest", "5", "--candidates", f, "--out-points", points]]
        for i, (label, data) in enumerate(self.report_docs()):
            name = f"report_{i}.json"
            cmd = commands[i % len(commands)]("{" + name + "}")
            cases.append(Case(f"report {label} ({cmd[0]})", cmd, {name: data}))
        # A report without rows gives select, merge and export nothing to work on. (compare
        # fails such a candidate with exit 1, "no pair matched": a failed gate, not bad usage.)
        empty = dict(self.report, rows=[])
        for i, cmd in enumerate(commands[2:5]):
            name = f"report_empty_{i}.json"
            argv = cmd("{" + name + "}")
            cases.append(Case(f"report without rows ({argv[0]})", argv,
                              {name: json.dumps(empty).encode()}))
        return cases

    def samples_cases(self):
        """`compare --samples`: the candidate's sidecar (PREFIX.samples.jsonl) hostile."""
        good = json.dumps(self.report).encode()
        sidecars = [(f"garbage {g!r}", g) for g in GARBAGE if g.strip()]
        sidecars += [(label, text.encode()) for label, text in [
            ("not an object", "[1, 2]\n"), ("no point", '{"samples_us": [1]}\n'),
            ("point not a string", '{"point": 1, "samples_us": [1]}\n'),
            ("samples not a list", '{"point": "a", "samples_us": 3}\n'),
            ("negative sample", '{"point": "a", "samples_us": [1, -1]}\n'),
            ("zero sample", '{"point": "a", "samples_us": [0]}\n'),
            ("string sample", '{"point": "a", "samples_us": ["1"]}\n'),
            ("huge sample", '{"point": "a", "samples_us": [1e400]}\n'),
            ("point twice", '{"point": "a", "samples_us": [1]}\n{"point": "a", "samples_us": [2]}\n'),
            ("too many samples", '{"point": "a", "samples_us": [' + ",".join(["1"] * 100001) + "]}\n"),
            ("deep", '{"point": "a", "samples_us": ' + "[" * 100000 + "]" * 100000 + "}\n")]]
        cases = [Case("samples sidecar missing", ["compare", self.good_report, "{cand_none.json}",
                                                  "--samples"], {"cand_none.json": good})]
        for i, (label, data) in enumerate(sidecars):
            name = f"cand_{i}.json"
            cases.append(Case(f"samples sidecar {label}",
                              ["compare", self.good_report, "{" + name + "}", "--samples"],
                              {name: good, f"cand_{i}.samples.jsonl": data}))
        return cases

    def point_list_cases(self):
        """`sweep --points FILE` (a `select --suggest` output) and the plan it restricts."""
        docs = [(f"garbage {g!r}", g) for g in GARBAGE]
        docs += [(label, json.dumps(doc).encode()) for label, doc in [
            ("points not a list", {"points": {}}), ("points empty", {"points": []}),
            ("entry not an object", {"points": [1]}), ("entry without key", {"points": [{"k": 1}]}),
            ("key not a string", {"points": [{"key": 7}]}),
            ("key of another plan", {"points": [{"key": "decode_x_bm16|nope|p1"}]})]]
        docs.append(("deep points", b'{"points": ' + deep(100000) + b"}"))
        cases = []
        for i, (label, data) in enumerate(docs):
            name = f"points_{i}.json"
            cases.append(Case(f"point list {label}",
                              ["sweep", "--dry-run", "--config", CONFIG, "--points", "{" + name + "}"],
                              {name: data}))
        return cases

    # -- the test ----------------------------------------------------------------------------

    def run_case(self, case):
        for name, data in case.files.items():
            with open(os.path.join(self.tmp, name), "wb") as f:
                f.write(data)
        argv = [a.replace("{" + n + "}", os.path.join(self.tmp, n)) for a in case.argv
                for n in [next(iter(case.files), "\0")]]
        cmd = [sys.executable] + argv if case.run == "python" else [BINARY] + argv
        try:
            r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=self.tmp,
                               timeout=TIMEOUT_S)
        except subprocess.TimeoutExpired:
            return f"hang (>{TIMEOUT_S}s)"
        if r.returncode < 0:
            return f"killed by signal {-r.returncode}"
        if r.returncode != 2:
            tail = (r.stderr or r.stdout).decode(errors="replace").strip().splitlines()[-1:]
            return f"exit {r.returncode} (want 2): {tail}"
        if not r.stderr.strip():
            return "exit 2 without a message on stderr"
        return None

    def test_every_hostile_input_exits_2_with_a_message(self):
        cases = (self.spec_cases() + self.flag_cases() + self.problem_file_cases() +
                 self.config_cases() + self.report_cases() + self.point_list_cases() +
                 self.samples_cases())
        self.assertGreaterEqual(len(cases), 200)
        failures = []
        for case in cases:
            problem = self.run_case(case)
            if problem:
                failures.append(f"{case.label}: {problem}")
        print(f"{len(cases)} cases (seed {SEED}), {len(failures)} failed", file=sys.stderr)
        self.assertEqual(failures, [], "\n" + "\n".join(failures[:60]))


if __name__ == "__main__":
    unittest.main()

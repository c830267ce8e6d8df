#!/usr/bin/env python3
"""How few points `select --suggest` needs: replays model-guided sweep rounds on a full sweep
report (each round's points are taken from the report instead of measured again), then prices the
defaults chosen from the sample on the whole report.

usage: suggest_study.py MHA_TUNE FULL_REPORT.json --fraction 0.25 [--rounds 3] [--work DIR]
Prints the sample's size per round and the last round's `select --evaluate` groups.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile


def point_key(row):
    return f"{row['kernel']}|{row['problem']['name']}|p{row['partitions']}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("mha_tune")
    ap.add_argument("report")
    ap.add_argument("--fraction", type=float, default=0.25)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--work", default=None)
    a = ap.parse_args()
    if not 0 < a.fraction <= 1 or a.rounds < 1:
        sys.exit("suggest_study.py: --fraction must be in (0, 1] and --rounds at least 1")
    work = a.work or tempfile.mkdtemp(prefix="suggest_study_")
    os.makedirs(work, exist_ok=True)
    with open(a.report) as f:
        full = json.load(f)
    by_key = {point_key(r): r for r in full["rows"]}
    budget = int(a.fraction * len(by_key))
    taken = []
    for rnd in range(a.rounds):
        want = (budget - len(taken)) // (a.rounds - rnd)
        out = os.path.join(work, f"round{rnd}.json")
        cmd = [a.mha_tune, "select"]
        if taken:
            cmd.append(os.path.join(work, f"sample{rnd - 1}.json"))
        cmd += ["--suggest", str(want), "--candidates", a.report, "--out-points", out]
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
        with open(out) as f:
            taken += [p["key"] for p in json.load(f)["points"]]
        sample = dict(full)
        sample["rows"] = [by_key[k] for k in taken]
        with open(os.path.join(work, f"sample{rnd}.json"), "w") as f:
            json.dump(sample, f)
        print(f"round {rnd}: {len(taken)} of {len(by_key)} points ({len(taken) / len(by_key):.1%})")
    last = os.path.join(work, f"sample{a.rounds - 1}.json")
    evaluation = os.path.join(work, "evaluation.json")
    subprocess.run([a.mha_tune, "select", last, "--evaluate", a.report,
                    "--evaluate-training-problems", "--json", evaluation],
                   check=True, stdout=subprocess.DEVNULL)
    with open(evaluation) as f:
        e = json.load(f)
    print("defaults from the sample, priced on the whole report (time / best of every point):")
    print("| group | problems | geomean | worst |\n|---|---:|---:|---:|")
    for g in [e["overall"]] + e["by_kind"] + e["by_batch"]:
        print(f"| {g['group']} | {g['problems']} | {g['geomean_cost']:.3f} | {g['worst_cost']:.3f} |")

if __name__ == "__main__":
    main()

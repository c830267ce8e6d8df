#!/usr/bin/env python3
"""Times the decode kernels that serving engines run (FlashInfer's FA2, tensor-core, XQA and cuDNN
paths, PyTorch SDPA's FlashAttention-2 and cuDNN backends, FlexAttention) on mha-tune's problems,
exactly as `mha-tune sweep` times its own, and writes PREFIX.json in mha-tune's report schema.
Steps of several query tokens per sequence (a speculative verify: q_len > 1, causal among the new
tokens or a draft tree) go to the paths that compute them: XQA's speculative mode (0.7's API),
FlashInfer's batch prefill wrapper (fa2 and fa3 backends), FlashAttention-3 and FlexAttention;
the single-token paths report them not_supported. Ragged counts (cu_seqlens_q) go to those that
take offsets (the prefill wrapper, XQA, FlashAttention-3).

  mha-tune sweep --config C --dry-run --json > plan.json
  peers.py --plan plan.json --out PREFIX
           [--peers all|flash,cudnn,flex,fi_fa2,fi_tc,fi_xqa,fi_cudnn] [--dry-run]

The problems are the plan's, taken verbatim (peerlib/suite.py): the binary's own expansion of the
suite's ranges, length mixes and names, so that the peers time exactly the problems the sweep
times and their rows join with the sweep's by name; nothing here parses a suite. Paged problems
get pages shuffled over the pool; contiguous ones a [batch, kv_heads, keys, d] cache, except for
FlashInfer's paged APIs, which split work at page granularity and get the cache as 128-key pages
in order (peerlib/backends.py). An fp8 cache (kv_dtype e4m3 or e5m2) holds per-head N(0, sigma^2)
values quantised with one scale per tensor or per head (kv_scale), as mha-tune's does.

Each peer is verified against an fp32 reference before timing (rel L2 < 2e-2; < 0.15 for XQA on
an fp8 cache, which rounds q and the softmax weights to e4m3 too; a wrong peer is `incorrect`,
never timed) and is timed with CUDA-graph replays over inputs rotated beyond 4x the L2, until the
median is known to 0.5% (peerlib/timing.py); then its kernel time, the sum of the step's kernel
intervals from CUPTI records through torch.profiler (peerlib/kernel_time.py), goes beside the step
time in each row (kernel_time_us, kernels_per_step, kernel_time_method). A problem a peer cannot compute is `not_supported`
with the reason; a peer package that does not import makes its rows `skipped`.
Each peer runs in its own worker process, its problems ordered so that those sharing compiled
kernels run back to back (a process per group paid the ~20 s start of torch and FlashInfer each
time: 5 of them for FlashInfer tc on configs/suites/fp8.json); a process that dies (e.g. a segfault)
marks the problem in flight `failed` with the signal, and one that stops after a sticky CUDA
error is replaced: the rest go on in a new process. The parent imports no torch.
"""
import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, os.path.dirname(HERE)]  # peerlib beside it, mha_report in scripts/
import mha_report  # noqa: E402
from peerlib import backends, flashinfer_sites, report, timing  # noqa: E402
from peerlib.worker import copy_bytes  # noqa: E402
from peerlib.suite import (PLAN_USAGE, UsageError, group_key, problems_from_plan,  # noqa: E402
                           step_bytes)


def plan(problems, peers, l2_bytes=timing.H200_L2_BYTES):
    """Per (problem, peer): None (to run) or the reason it is not supported; and plan text."""
    lines, cases = [], []
    for p in problems:
        lines.append(f"{p['name']}: {step_bytes(p) / 1e6:.2f} MB/step")
        for peer in peers:
            why = common_why_not(p) or tokens_why_not(p, peer) or peer.why_not(p)
            cases.append((p, peer, why))
            if why:
                lines.append(f"  {peer.name:<27} not_supported: {why}")
            else:
                layout = peer.layout(p)
                c = timing.rotation_copies(copy_bytes(p, layout), l2_bytes)
                lines.append(f"  {peer.name:<27} {layout.describe(p)}, {c} copies")
    runnable = sum(1 for c in cases if c[2] is None)
    lines.append(f"{len(problems)} problem(s) x {len(peers)} peer(s): {runnable} to time, "
                 f"{len(cases) - runnable} not supported")
    return cases, "\n".join(lines)


def common_why_not(p):
    if p["out_dtype"] != p["dtype"]:
        return f"peers write the output in the query's dtype ({p['dtype']}), not {p['out_dtype']}"
    if p["mask"] == "chunked":
        return "no peer here takes a chunked mask"
    if p["kv_dtype"] in ("bf16", "fp16") and p["kv_dtype"] != p["dtype"]:
        return (f"peers take a 16-bit K/V cache in the query's dtype ({p['dtype']}) only, "
                f"not {p['kv_dtype']}")
    return None


def tokens_why_not(p, peer):
    """Why a peer that computes one query token per sequence cannot take a step of several."""
    if p["ragged_q_lens"] and not peer.ragged_tokens:
        return (f"{peer.name} takes the same count of query tokens in every sequence, not ragged "
                "counts (cu_seqlens_q)")
    if p["q_len"] > 1 and not peer.query_tokens:
        return (f"{peer.name} computes one query token per sequence, not {p['q_len']} (its "
                "multi-token path is another peer, where it has one)")
    return None


def signal_text(rc):
    try:
        return f"killed by {signal.Signals(-rc).name}"
    except ValueError:
        return f"killed by signal {-rc}"


def ordered_by_kernels(problems):
    """The problems with those that share compiled kernels (suite.group_key) back to back, groups
    in order of first appearance, each group in its own order."""
    groups = {}
    for p in problems:
        groups.setdefault(group_key(p), []).append(p)
    return [p for group in groups.values() for p in group]


def worker_command(job_path):
    return [sys.executable, os.path.abspath(__file__), "--worker", job_path]


def run_worker(peer, problems, env, timeout_s, workdir, sites=None, deadline=None):
    """Runs `problems` for `peer` in child processes until each has a row; returns the rows.
    `sites`: the --flashinfer-site folders, which the worker registers to find its peer;
    `deadline` (time.time()): past it, the problems left are 'skipped' and no process starts."""
    rows, pending, attempt = [], list(problems), 0
    while pending:
        if deadline is not None and time.time() > deadline - 1:
            rows += [report.make_row(peer.name, p, "skipped", out_of_time_reason()) for p in pending]
            break
        if deadline is not None:
            timeout_s = max(1.0, min(timeout_s, deadline - time.time()))
        attempt += 1
        journal = os.path.join(workdir, f"{peer.name}_{attempt}.jsonl")
        job = os.path.join(workdir, f"{peer.name}_{attempt}.job.json")
        with open(job, "w") as f:
            json.dump({"peer": peer.name, "problems": pending, "env": env, "journal": journal,
                       "flashinfer_sites": sites or {}}, f)
        cmd = worker_command(job)
        err_path = job + ".stderr"
        with open(err_path, "w") as err:
            try:
                proc = subprocess.run(cmd, stdout=err, stderr=err, timeout=timeout_s,
                                      env=flashinfer_sites.worker_env(peer))
                rc, why = proc.returncode, ""
            except subprocess.TimeoutExpired:
                rc, why = None, f"timed out after {timeout_s:.0f} s"
        done, in_flight = {}, None
        if os.path.exists(journal):
            with open(journal) as f:
                for line in f:
                    entry = json.loads(line)
                    if "start" in entry:
                        in_flight = entry["start"]
                    else:
                        done[entry["row"]["problem"]["name"]] = entry["row"]
                        in_flight = None
        progressed = any(p["name"] in done for p in pending)
        for p in pending:
            if p["name"] in done:
                rows.append(done[p["name"]])
        pending = [p for p in pending if p["name"] not in done]
        if not pending:
            break
        with open(err_path) as f:
            tail = " | ".join(f.read().strip().splitlines()[-3:])[-400:]
        if rc is not None and rc < 0:
            why = signal_text(rc)
        elif not why:
            why = f"worker exited with {rc}"
        if in_flight is None:
            if progressed:  # it stopped between problems (a sticky CUDA error): a new process
                continue
            # It died before any problem (an import, a JIT build): the rest would too.
            rows += [report.make_row(peer.name, p, "failed", f"{why}: {tail}") for p in pending]
            break
        crashed = next(p for p in pending if p["name"] == in_flight)
        rows.append(report.make_row(peer.name, crashed, "failed", f"{why}: {tail}"))
        pending = [p for p in pending if p["name"] != in_flight]
    return rows


def out_of_time_reason():
    return "not run: the run's --stop-after time was spent before this problem"


def probe(workdir):
    out = os.path.join(workdir, "probe.json")
    r = subprocess.run([sys.executable, os.path.abspath(__file__), "--probe", out],
                       capture_output=True, text=True)
    if r.returncode != 0 or not os.path.exists(out):
        tail = (r.stderr or r.stdout).strip().splitlines()[-1:] or ["no output"]
        raise RuntimeError(f"the GPU probe failed ({r.returncode}): {tail[0]}")
    with open(out) as f:
        return json.load(f)


def probe_site(workdir, tag, site):
    """{version} or {error} of the FlashInfer in a --flashinfer-site folder, imported in a process
    of its own with the folder first on PYTHONPATH, as its workers will."""
    out = os.path.join(workdir, f"probe_{tag}.json")
    env = dict(os.environ)
    env["PYTHONPATH"] = site + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    r = subprocess.run([sys.executable, os.path.abspath(__file__), "--probe-flashinfer", out, site],
                       capture_output=True, text=True, env=env)
    if r.returncode != 0 or not os.path.exists(out):
        tail = (r.stderr or r.stdout).strip().splitlines()[-1:] or ["no output"]
        return {"error": f"probe exited with {r.returncode}: {tail[0][:300]}"}
    with open(out) as f:
        return json.load(f)


def git_commit():
    if os.environ.get("MHA_GIT_COMMIT"):
        return os.environ["MHA_GIT_COMMIT"]
    try:
        out = subprocess.run(["git", "rev-parse", "--short=12", "HEAD"], capture_output=True,
                             text=True, cwd=os.path.dirname(os.path.abspath(__file__))).stdout
        return out.strip() or "unknown"
    except OSError:
        return "unknown"


def resumed_rows(path):
    """The rows of an earlier, interrupted run's report, which must be this script's own."""
    rows = mha_report.load_report(path, "report to resume")["rows"]
    for i, r in enumerate(rows):
        if not r["kernel"].startswith("peer_"):
            raise mha_report.ReportError(f"{path}: rows[{i}] is mha-tune's {r['kernel']}, not a "
                                         "peer's: --resume takes the report peers.py wrote")
    return rows


def run(args, problems, peers):
    started = time.time()
    stop_after = getattr(args, "stop_after", 0)
    deadline = started + stop_after if stop_after > 0 else None
    rows, path, old_meta = [], args.out + ".json", {}
    if args.resume and os.path.exists(path):  # read first: a bad file fails before the GPU work
        try:
            rows = resumed_rows(path)
        except mha_report.ReportError as e:
            print(f"peers.py: {e}", file=sys.stderr)
            return 2
        with open(path) as f:
            old_meta = json.load(f).get("metadata", {})
        # A 'skipped' row measured nothing (a package that did not import, time that ran out):
        # it is timed again now.
        rows = [r for r in rows if r["status"] != "skipped"]
        print(f"resuming {path}: {len(rows)} row(s) kept", flush=True)
    workdir = tempfile.mkdtemp(prefix="mha_peers_")
    try:
        info = probe(workdir)
    except (RuntimeError, OSError) as e:
        print(f"peers.py: {e}", file=sys.stderr)
        return 3
    if "error" in info:
        print(f"peers.py: {info['error']}", file=sys.stderr)
        return 3
    for tag, site in args.sites.items():
        info["packages"][flashinfer_sites.package(tag)] = probe_site(workdir, tag, site)
    print(f"{info['gpu_name']}: peak read {info['peak_gbps']:.0f} GB/s ({info['peak_method']}); "
          f"L2 {info['l2_bytes'] / 1e6:.1f} MB; torch {info['torch']}; " +
          "; ".join(f"{k} {v.get('version', 'unavailable: ' + v.get('error', ''))}"
                    for k, v in info["packages"].items()), flush=True)
    meta = report.make_metadata(
        info["gpu_name"], info["sm_count"], info["l2_bytes"], info["peak_gbps"], " ".join(sys.argv),
        args.seed, info["driver_version"], info["cuda_version"], git_commit(),
        devices="0", config_file=args.plan, gpu_uuids=info.get("gpu_uuid", ""),
        gpu_pci_bus_ids=info.get("pci_bus_id", ""),
        nvidia_driver_version=info.get("nvidia_driver_version", ""))
    meta["peer_packages"] = {k: v.get("version", "unavailable") for k, v in info["packages"].items()}
    # Each peer's exact version (a package may be absent: its rows are then 'skipped').
    meta["peer_versions"] = {"peer_" + q.name: info["packages"].get(q.package, {}).get(
        "version", "unavailable") for q in peers}
    if args.sites:
        meta["flashinfer_sites"] = args.sites
    for key in ("peer_packages", "peer_versions", "flashinfer_sites"):  # a resumed run's too
        if isinstance(old_meta.get(key), dict):
            meta[key] = dict(old_meta[key], **meta.get(key, {}))
    env = {"l2_bytes": info["l2_bytes"], "peak_gbps": info["peak_gbps"], "seed": args.seed,
           "budget_s": args.time_budget, "target": args.target_error,
           "kernel_time": not args.no_kernel_time}
    cases, _ = plan(problems, peers, info["l2_bytes"])
    done = {(r["kernel"], r["problem"]["name"]) for r in rows}
    for peer in peers:
        mine = [(p, why) for p, q, why in cases
                if q is peer and ("peer_" + peer.name, p["name"]) not in done]
        missing = info["packages"].get(peer.package, {}).get("error")
        runnable = []
        for p, why in mine:
            if missing:
                rows.append(report.make_row(peer.name, p, "skipped",
                                            f"{peer.package} does not import: {missing}"))
            elif why:
                rows.append(report.make_row(peer.name, p, "not_supported", why))
            else:
                runnable.append(p)
        if runnable:
            t0 = time.time()
            timeout = args.worker_timeout + 60 * len(runnable)
            got = run_worker(peer, ordered_by_kernels(runnable), env, timeout, workdir, args.sites,
                             deadline)
            rows += got
            for r in got:
                print(f"  {r['problem']['name']:<44} {r['kernel']:<26} {r['status']:<13} "
                      f"{report.fmt_value(r['time']['median_us'], '.2f'):>9} us "
                      f"(kernels {report.fmt_value(r['kernel_time_us'], '.2f')} us)  "
                      f"{r['reason'][:120]}", flush=True)
            print(f"  ({peer.name}: {len(runnable)} problem(s) in {time.time() - t0:.0f} s)", flush=True)
        report.write_report(path, report.make_report(meta, rows))  # nothing measured is lost
    report.write_report(path, report.make_report(meta, rows))
    timed = sum(1 for r in rows if r["status"] == "passed")
    print(f"wrote {path}: {len(rows)} row(s), {timed} timed\n" + report.format_table(rows))
    if timed == 0:
        print("peers.py: no peer was timed on any problem", file=sys.stderr)
        return 1
    return 0


def read_plan(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        raise UsageError(f"--plan {path}: cannot read it as JSON: {e}") from None


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--worker"] and len(argv) == 2:
        from peerlib import worker
        return worker.main(argv[1])
    if argv[:1] == ["--probe"] and len(argv) == 2:
        from peerlib import worker
        return worker.probe(argv[1])
    if argv[:1] == ["--probe-flashinfer"] and len(argv) == 3:
        from peerlib import worker
        return worker.probe_flashinfer(argv[1], argv[2])
    ap = argparse.ArgumentParser(description="Time serving engines' decode kernels like mha-tune.",
                                 epilog=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True, help="report prefix: writes PREFIX.json")
    ap.add_argument("--plan", metavar="PLAN.json",
                    help=f"the problems, as `{PLAN_USAGE}` printed them (the binary's expansion: "
                         "the peers time what the sweep times); required")
    ap.add_argument("--peers", default="all", help="all, or a list of: " + ", ".join(backends.SHORT)
                    + " (and, per --flashinfer-site TAG, fi_..._TAG)")
    ap.add_argument("--flashinfer-site", action="append", default=[], metavar="TAG=DIR",
                    help="a FlashInfer of 0.7's API installed in DIR, timed beside the one on "
                         "PYTHONPATH as peers NAME_TAG (repeatable; peerlib/flashinfer_sites.py)")
    ap.add_argument("--time-budget", type=float, default=0.5, help="seconds per point (0.5)")
    ap.add_argument("--target-error", type=float, default=0.005, help="median rel. std error (0.005)")
    ap.add_argument("--worker-timeout", type=float, default=600,
                    help="seconds a worker may take beyond 60 per problem (600: JIT builds)")
    ap.add_argument("--no-kernel-time", action="store_true",
                    help="skip the kernel-time pass (torch.profiler's CUPTI records) after timing")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--resume", action="store_true",
                    help="keep the rows PREFIX.json already holds and time only the others "
                         "(its 'skipped' rows are timed again)")
    ap.add_argument("--stop-after", type=float, default=0, metavar="SECONDS",
                    help="start no worker after this many seconds: the problems left are "
                         "'skipped' with that reason (0: no limit); --resume times them later")
    ap.add_argument("--dry-run", action="store_true", help="print the plan; import no torch")
    gone = [a.partition("=")[0] for a in argv if a.partition("=")[0] in ("--suite", "--problems")]
    if gone:
        print(f"peers.py: {gone[0]} is gone: the problems come from the sweep's plan only; pass "
              f"--plan plan.json, written by `{PLAN_USAGE}`", file=sys.stderr)
        return 2
    args = ap.parse_args(argv)
    try:
        if not args.plan:
            raise UsageError(f"no problems: pass --plan plan.json, written by `{PLAN_USAGE}` "
                             "(the sweep's own problems, which the peers time)")
        problems = problems_from_plan(read_plan(args.plan), args.plan)
        args.sites = flashinfer_sites.parse(args.flashinfer_site)
        flashinfer_sites.register(args.sites)
        peers = backends.resolve(args.peers)
    except (UsageError, ValueError) as e:
        print(f"peers.py: {e}", file=sys.stderr)
        return 2
    if args.dry_run:
        print(plan(problems, peers)[1] + f"\nwould write {args.out}.json")
        return 0
    try:
        import importlib.util
        if importlib.util.find_spec("torch") is None:
            raise ImportError
    except ImportError:
        print("peers.py: PyTorch is not installed (needed to time peers; --dry-run needs none)",
              file=sys.stderr)
        return 3
    return run(args, problems, peers)


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""The PyTorch package (python/, `import mha_tune`): installs the build into a temporary prefix
(`cmake --install`), pip-installs python/ against it into a temporary target directory (offline:
--no-build-isolation --no-deps --no-index, this interpreter's torch and scikit-build-core), and
imports it.

Host part (no GPU): the kernel list equals `mha-tune list`'s, plans made with an explicit SM count
have a compiled kernel, a split and a workspace of the right size, bad arguments raise ValueError
or NotImplementedError naming the argument, and `run`'s fake kernel is registered.
GPU part (only with a CUDA device the build's architectures run on): `run` against a float32
torch reference on contiguous, paged NHD and HND caches, the vLLM and FlashInfer combined caches,
a ragged batch with a split plan, an fp8 cache with per-head scales, and every family the build
compiled, with the log-sum-exp checked against torch.logsumexp; a CUDA graph replayed after a
re-plan with new lengths; torch.compile(fullgraph=True). A case whose kernel this build lacks
skips with a message.

Exits 77 (ctest: skipped) when this Python has no torch or scikit-build-core (CI's python3 has
neither). Run:
  MHA_BUILD_DIR=build-ci python3 tests/test_python_package.py          # build, install, all
  python3 tests/test_python_package.py --gpu-only --build-dir build-paged_layouts   # GPU cases
  python3 tests/test_python_package.py --installed [--gpu-only]   # the mha_tune importable now
"""

import importlib.util
import json
import math
import os
import re
import subprocess
import sys
import tempfile
import unittest

from mha_test_env import REPO, BUILD_DIR, cmake_cached  # noqa: E402

SKIP = 77
PYTHON_PACKAGE = os.path.join(REPO, "python")
SPLIT_LABEL = re.compile(r"^(\d+|plan\d+x\d+|cluster[2-8])$")

# Set by main(): the build to install from, or None to import the installed mha_tune.
OPTIONS = {"build_dir": BUILD_DIR, "installed": False}
torch = None
mha_tune = None


def cached(build, name):
    return cmake_cached(name, build)


def run(cmd, **kwargs):
    env = {k: v for k, v in os.environ.items() if k != "DESTDIR"}
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                       timeout=900, env=env, **kwargs)
    if r.returncode != 0:
        raise AssertionError(f"exit {r.returncode}: {' '.join(cmd)}\n{r.stdout}")
    return r.stdout


def install_package(build, tmp):
    """cmake --install BUILD into tmp/prefix, pip install python/ into tmp/site; returns site."""
    prefix, site = os.path.join(tmp, "prefix"), os.path.join(tmp, "site")
    cmake = cached(build, "CMAKE_COMMAND") or "cmake"
    run([cmake, "--install", build, "--prefix", prefix])
    cmd = [sys.executable, "-m", "pip", "install", "--no-build-isolation", "--no-deps",
           "--no-index", "--target", site, f"-Cbuild-dir={os.path.join(tmp, 'build')}",
           f"-Ccmake.define.CMAKE_PREFIX_PATH={prefix}",
           f"-Ccmake.define.CMAKE_CXX_COMPILER={cached(build, 'CMAKE_CXX_COMPILER')}",
           PYTHON_PACKAGE]
    nvcc = cached(build, "CMAKE_CUDA_COMPILER")
    if nvcc:  # the toolkit the kernels were compiled with
        cmd.insert(-1, f"-Ccmake.define.CUDAToolkit_ROOT={os.path.dirname(os.path.dirname(nvcc))}")
    run(cmd)
    return site


def setUpModule():
    global mha_tune
    if not OPTIONS["installed"]:
        setUpModule.tmp = tempfile.TemporaryDirectory(prefix="mha_tune_python_")
        sys.path.insert(0, install_package(OPTIONS["build_dir"], setUpModule.tmp.name))
    import mha_tune as module
    mha_tune = module


def tearDownModule():
    if hasattr(setUpModule, "tmp"):
        setUpModule.tmp.cleanup()


def plan_kwargs(family, **overrides):
    """Plan arguments of a small problem of a kernel's family (2 KV heads)."""
    kw = dict(heads=2 * family["group"], kv_heads=2, depth=family["depth"],
              dtype=family["dtype"], out_dtype=family["out_dtype"], kv=family["kv"],
              page_size=16 if family["kv"] != "contig" else 0, mask=family["mask"],
              window=100 if family["mask"] == "window" else 0,
              chunk=64 if family["mask"] == "chunked" else 0, has_sink=family["has_sink"],
              soft_cap=family["soft_cap"], batch=4, max_keys=4096, sm_count=132,
              q_len=4 if family.get("multi_token") else 1)
    if family["kv_dtype"] != family["dtype"]:
        kw["kv_dtype"] = family["kv_dtype"]
    kw.update(overrides)
    return kw


def partials_bytes(batch, heads, depth, partitions):
    return batch * heads * partitions * (depth + 2) * 4 if partitions > 1 else 0


class PackageHost(unittest.TestCase):
    def setUp(self):
        self.kernels = mha_tune.kernels()
        self.assertTrue(self.kernels, "the build compiled no kernel")

    def test_kernels_match_mha_tune_list(self):
        binary = os.path.join(OPTIONS["build_dir"], "mha-tune")
        if OPTIONS["installed"] or not os.access(binary, os.X_OK):
            self.skipTest("no build's mha-tune to compare with")
        listed = [k["name"] for k in json.loads(run([binary, "list", "--json"]))]
        self.assertEqual([k["name"] for k in self.kernels], listed)
        for k in self.kernels:
            self.assertIn(k["kv"], ("contig", "paged", "paged_hnd"))
            self.assertGreater(k["depth"], 0)

    def test_build_info(self):
        info = mha_tune.build_info()
        self.assertTrue(info["config"])
        if not OPTIONS["installed"]:
            self.assertEqual(info["cuda_architectures"],
                             cached(OPTIONS["build_dir"], "CMAKE_CUDA_ARCHITECTURES"))

    def test_default_plan_of_every_family(self):
        names = {k["name"]: k for k in self.kernels}
        for k in self.kernels:
            with self.subTest(kernel=k["name"]):
                kw = plan_kwargs(k)
                plan = mha_tune.Plan(**kw)
                chosen = names.get(plan.kernel)
                self.assertIsNotNone(chosen, plan.kernel)
                for trait in ("dtype", "kv_dtype", "out_dtype", "depth", "group", "kv", "mask",
                              "has_sink", "soft_cap", "multi_token"):
                    self.assertEqual(chosen[trait], k[trait], trait)
                self.assertRegex(plan.split, SPLIT_LABEL)
                self.assertTrue(plan.reason)
                if plan.split.isdigit():
                    self.assertGreaterEqual(plan.workspace_bytes, partials_bytes(
                        kw["batch"], kw["heads"], kw["depth"], int(plan.split)))
                    self.assertFalse(plan.needs_lengths)
                elif plan.split.startswith("cluster"):
                    self.assertEqual(plan.workspace_bytes, 0)
                else:
                    self.assertTrue(plan.needs_lengths)
                    self.assertGreater(plan.workspace_bytes, 0)

    def test_explicit_split_and_kernel(self):
        k = self.kernels[0]
        kw = plan_kwargs(k, batch=8, max_keys=2048)
        four = mha_tune.Plan(**kw, split="4")
        self.assertEqual(four.split, "4")
        self.assertFalse(four.needs_lengths)
        self.assertEqual(four.workspace_bytes, partials_bytes(8, kw["heads"], kw["depth"], 4))
        one = mha_tune.Plan(**kw, split="1")
        self.assertEqual(one.workspace_bytes, 0)
        planned = mha_tune.Plan(**kw, split="plan2x128")
        self.assertEqual(planned.split, "plan2x128")
        self.assertTrue(planned.needs_lengths)
        self.assertGreater(planned.workspace_bytes, 0)
        self.assertEqual(planned.workspace_bytes % 16, 0)
        cluster = mha_tune.Plan(**kw, split="cluster4")
        self.assertEqual((cluster.split, cluster.workspace_bytes), ("cluster4", 0))
        named = mha_tune.Plan(**kw, kernel=k["name"])
        self.assertEqual(named.kernel, k["name"])
        self.assertIn("caller", named.reason)
        self.assertEqual(named.info()["kernel"], k["name"])

    def assertRaisesNaming(self, error, text, fn, *args, **kwargs):
        with self.assertRaises(error) as cm:
            fn(*args, **kwargs)
        self.assertIn(text, str(cm.exception))

    def test_bad_plan_arguments(self):
        k = self.kernels[0]
        plan = lambda **o: mha_tune.Plan(**plan_kwargs(k, **o))  # noqa: E731
        self.assertRaisesNaming(ValueError, "kv_heads", plan, heads=7, kv_heads=2)
        self.assertRaisesNaming(ValueError, "dtype", plan, dtype=torch.float64)
        self.assertRaisesNaming(ValueError, "out_dtype", plan, out_dtype=torch.int8)
        self.assertRaisesNaming(ValueError, "kv:", plan, kv="ring")
        self.assertRaisesNaming(ValueError, "mask", plan, mask="banded")
        self.assertRaisesNaming(ValueError, "split", plan, split="banana")
        self.assertRaisesNaming(ValueError, "max_keys", plan, max_keys=0)
        self.assertRaisesNaming(ValueError, "page_size", plan, kv="paged", page_size=0)
        self.assertRaisesNaming(ValueError, "window", plan, mask="window", window=0)
        # NotImplementedError is a RuntimeError: no kernel of this build computes it.
        self.assertRaisesNaming(NotImplementedError, "decode_not_a_kernel", plan,
                                kernel="decode_not_a_kernel")
        self.assertTrue(issubclass(NotImplementedError, RuntimeError))
        self.assertRaisesNaming(NotImplementedError, "make_plan", plan, heads=2 * 61)
        other = next((o for o in self.kernels if o["depth"] != k["depth"]), None)
        if other is not None:
            self.assertRaisesNaming(ValueError, "does not compute", plan, kernel=other["name"])

    def test_query_token_plans(self):
        """Several tokens, and ragged counts of any most, plan a multi-token kernel; a one-token
        plan never does. q_len past 16, or below 1, is refused naming it."""
        k = next((k for k in self.kernels if k["multi_token"]), None)
        if k is None:
            self.skipTest("no multi-token kernel in this build")
        names = {x["name"]: x for x in self.kernels}
        for q_len, ragged in ((4, False), (2, False), (8, True), (1, True)):
            with self.subTest(q_len=q_len, ragged=ragged):
                plan = mha_tune.Plan(**plan_kwargs(k, q_len=q_len, ragged_q_len=ragged))
                self.assertTrue(names[plan.kernel]["multi_token"], plan.kernel)
                self.assertEqual((plan.q_len, plan.ragged_q_len), (q_len, ragged))
        plan = lambda **o: mha_tune.Plan(**plan_kwargs(k, **o))  # noqa: E731
        self.assertRaisesNaming(ValueError, "q_len", plan, q_len=17)
        self.assertRaisesNaming(ValueError, "q_len", plan, q_len=0)

    def test_freed_plans_and_defaults(self):
        plan = mha_tune.Plan(**plan_kwargs(self.kernels[0]))
        handle = plan.handle
        plan.free()
        plan.free()  # twice is harmless
        self.assertRaisesNaming(ValueError, f"no plan has handle {handle}",
                                mha_tune.ops.plan_info, handle)
        missing = os.path.join(REPO, "no_such_defaults.json")
        self.assertRaisesNaming(ValueError, missing, mha_tune.load_defaults, missing)
        if not os.environ.get("MHA_TUNE_DEFAULTS"):  # the compiled-in table stays in use
            self.assertEqual(mha_tune.defaults_origin(), "")

    def test_run_needs_cuda_tensors_and_a_cuda_workspace(self):
        k = next((k for k in self.kernels if k["kv"] == "contig"), None)
        if k is None:
            self.skipTest("no contiguous-cache kernel in this build")
        kw = plan_kwargs(k)
        plan = mha_tune.Plan(**kw)
        q = torch.zeros(1, kw["heads"], kw["depth"], dtype=torch.bfloat16)
        cache = torch.zeros(1, 16, 2, kw["depth"], dtype=torch.bfloat16)
        lens = torch.ones(1, dtype=torch.int32)
        self.assertRaisesNaming(ValueError, "q must be a CUDA tensor", mha_tune.ops.run,
                                plan.handle, q, cache, cache, lens, None, None, None, None, 0.0,
                                0.0, 0, 0, None, None, torch.zeros(16, dtype=torch.uint8), q,
                                None)
        self.assertRaisesNaming(ValueError, "workspace", mha_tune.BatchDecode,
                                torch.zeros(16, dtype=torch.uint8))

    def test_run_has_a_fake_kernel(self):
        from torch._subclasses.fake_tensor import FakeTensorMode
        with FakeTensorMode():
            q = torch.empty(2, 8, 128, dtype=torch.bfloat16)
            cache = torch.empty(2, 64, 2, 128, dtype=torch.bfloat16)
            result = mha_tune.ops.run(7, q, cache, cache, torch.empty(2, dtype=torch.int32),
                                      None, None, None, None, 0.0, 0.0, 0, 0, None, None,
                                      torch.empty(0, dtype=torch.uint8), torch.empty_like(q),
                                      None)
        self.assertIsNone(result)

    def test_install_script_names_what_is_missing(self):
        with tempfile.TemporaryDirectory() as tmp:
            fake = os.path.join(tmp, "python-without-torch")
            with open(fake, "w") as f:
                f.write("#!/bin/sh\nexit 1\n")
            os.chmod(fake, 0o755)
            r = subprocess.run([os.path.join(REPO, "scripts", "install_python.sh")],
                               env={**os.environ, "PYTHON": fake}, capture_output=True,
                               text=True, timeout=60)
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn("lacks: torch scikit-build-core pip", r.stderr)


# ---- GPU part -------------------------------------------------------------------------------

def gpu_skip_reason():
    if not torch.cuda.is_available():
        return "no CUDA device: GPU test skipped"
    major, minor = torch.cuda.get_device_capability()
    archs = [int(m) for m in re.findall(r"\d+", mha_tune.build_info()["cuda_architectures"])]
    if archs and all(a > major * 10 + minor for a in archs):  # older GPUs cannot run them
        return f"the kernels are built for sm_{archs}, the GPU is sm_{major}{minor}"
    return None


def gather(cache, b, n, kind, page_table, page_size):
    """Sequence b's first n keys of a cache as float32 [n, kv_heads, depth]."""
    if kind == "contig":
        return cache[b, :n].float()
    pages = page_table[b, :math.ceil(n / page_size)].long()
    # Indexed through bytes: gathers of fp8 tensors are not implemented everywhere.
    rows = cache.view(torch.uint8)[pages].view(cache.dtype).float() if cache.element_size() == 1 \
        else cache[pages].float()
    if kind == "paged_hnd":
        rows = rows.permute(0, 2, 1, 3)
    return rows.reshape(-1, rows.shape[2], rows.shape[3])[:n]


def reference(q, keys, values, lens, *, scale, soft_cap=0.0, sinks=None, mask="null", window=0,
              chunk=0):
    """float32 softmax attention of q [batch, heads, depth] over keys[b], values[b]
    [len_b, kv_heads, depth] (GQA: query head h reads KV head h // group); returns out, lse."""
    batch, heads, depth = q.shape
    out = torch.zeros(batch, heads, depth, dtype=torch.float32, device=q.device)
    lse = torch.full((batch, heads), -math.inf, dtype=torch.float32, device=q.device)
    for b, n in enumerate(lens):
        begin = 0
        if mask == "window":
            begin = max(0, n - window)
        elif mask == "chunked":
            begin = (n - 1) // chunk * chunk if n > 0 else 0
        group = heads // keys[b].shape[1]
        k = keys[b][begin:n].repeat_interleave(group, dim=1)
        v = values[b][begin:n].repeat_interleave(group, dim=1)
        s = torch.einsum("hd,lhd->hl", q[b].float(), k) * scale
        if soft_cap:
            s = soft_cap * torch.tanh(s / soft_cap)
        logits = s if sinks is None else torch.cat([s, sinks.float()[:, None]], dim=1)
        if logits.shape[1] == 0:
            continue
        lse[b] = torch.logsumexp(logits, dim=1)
        out[b] = torch.einsum("hl,lhd->hd", torch.exp(s - lse[b][:, None]), v)
    return out, lse


def rel_l2(x, ref):
    return float((x.float() - ref).norm() / ref.norm().clamp_min(1e-12))


class Problem:
    """Random inputs of one kernel family: caches in the layout asked for, lengths, pages."""

    def __init__(self, kernel, lens, *, layout=None, page_size=16, kv_heads=2, seed=0,
                 combined=False):
        g = torch.Generator(device="cuda").manual_seed(seed)
        self.kernel, self.lens = kernel, list(lens)
        self.kind = layout or kernel["kv"]
        self.kv_heads, self.heads, self.depth = kv_heads, kv_heads * kernel["group"], \
            kernel["depth"]
        self.page_size = page_size if self.kind != "contig" else 0
        self.dtype = mha_tune.plan.torch_dtype(kernel["dtype"])
        self.out_dtype = mha_tune.plan.torch_dtype(kernel["out_dtype"])
        self.cache_dtype = mha_tune.plan.torch_dtype(kernel["kv_dtype"])
        batch, d, h = len(lens), self.depth, kv_heads
        self.q = torch.randn(batch, self.heads, d, device="cuda", generator=g).to(self.dtype)
        if self.kind == "contig":
            shape = (batch, max(lens), h, d)
            self.page_table = None
        else:
            per_seq = [math.ceil(n / page_size) for n in lens]
            pages = sum(per_seq) + 3  # a few pages nobody reads
            order = torch.randperm(pages, device="cuda", generator=g).int()
            self.page_table = torch.zeros(batch, max(per_seq), dtype=torch.int32, device="cuda")
            at = 0
            for b, n in enumerate(per_seq):
                self.page_table[b, :n] = order[at:at + n]
                at += n
            page = (page_size, h) if self.kind == "paged" else (h, page_size)
            shape = (pages, *page, d)
        fp8 = kernel["kv_dtype"] in ("e4m3", "e5m2")
        if combined:  # [pages, 2, ...]: K and V interleaved page by page
            both = torch.randn(shape[0], 2, *shape[1:], device="cuda", generator=g)
            self.storage = both.to(self.cache_dtype)
            self.k, self.v = self.storage.select(1, 0), self.storage.select(1, 1)
        else:
            self.k = torch.randn(shape, device="cuda", generator=g).to(self.cache_dtype)
            self.v = torch.randn(shape, device="cuda", generator=g).to(self.cache_dtype)
        self.k_scale = self.v_scale = None
        if fp8:
            self.k_scale = torch.rand(h, device="cuda", generator=g) + 0.5
            self.v_scale = torch.rand(h, device="cuda", generator=g) + 0.5
        self.sinks = torch.randn(self.heads, device="cuda", generator=g) if \
            kernel["has_sink"] else None

    def reference(self, *, scale=None, soft_cap=0.0, window=0, chunk=0, lens=None):
        lens = self.lens if lens is None else lens
        keys, values = [], []
        for b, n in enumerate(lens):
            k = gather(self.k, b, n, self.kind, self.page_table, self.page_size)
            v = gather(self.v, b, n, self.kind, self.page_table, self.page_size)
            if self.k_scale is not None:
                k, v = k * self.k_scale[None, :, None], v * self.v_scale[None, :, None]
            keys.append(k)
            values.append(v)
        return reference(self.q, keys, values, lens,
                         scale=scale or 1 / math.sqrt(self.depth), soft_cap=soft_cap,
                         sinks=self.sinks, mask=self.kernel["mask"], window=window, chunk=chunk)

    def plan(self, wrapper, **kw):
        k = self.kernel
        kw.setdefault("window", 64 if k["mask"] == "window" else 0)
        kw.setdefault("chunk", 48 if k["mask"] == "chunked" else 0)
        kw.setdefault("soft_cap", 30.0 if k["soft_cap"] else 0.0)
        kw.setdefault("kernel", k["name"])
        return wrapper.plan(
            self.lens, self.page_table, num_qo_heads=self.heads, num_kv_heads=self.kv_heads,
            head_dim=self.depth, page_size=self.page_size,
            kv_layout="HND" if self.kind == "paged_hnd" else "NHD", q_dtype=self.dtype,
            kv_dtype=self.cache_dtype if k["kv_dtype"] != k["dtype"] else None,
            out_dtype=self.out_dtype, mask=k["mask"], has_sink=k["has_sink"], **kw)


class PackageGpu(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        reason = gpu_skip_reason()
        if reason:
            raise unittest.SkipTest(reason)
        cls.kernels = mha_tune.kernels()
        cls.workspace = torch.empty(256 << 20, dtype=torch.uint8, device="cuda")

    def find(self, what, **traits):
        """The first compiled kernel with these traits (16-bit cache, no mask, sink or cap unless
        asked); skips the case when the build has none."""
        want = dict(mask="null", has_sink=False, soft_cap=False)
        want.update(traits)
        for k in self.kernels:
            if "kv_dtype" not in traits and k["kv_dtype"] != k["dtype"]:
                continue
            if all(k[t] == v for t, v in want.items()):
                return k
        self.skipTest(f"{what}: no kernel with {want} in this build "
                      f"({mha_tune.build_info()['config']})")

    def check(self, problem, wrapper, out, lse=None, **ref_kw):
        ref_out, ref_lse = problem.reference(**ref_kw)
        err = rel_l2(out, ref_out)
        self.assertLess(err, 2e-2, f"{problem.kernel['name']}: rel L2 error {err:.3g}")
        if lse is not None:
            lse_err = float((lse - ref_lse).abs().max())
            self.assertLess(lse_err, 2e-2, f"{problem.kernel['name']}: lse error {lse_err:.3g}")

    def decode(self, problem, cache=None, *, return_lse=True, **plan_kw):
        wrapper = mha_tune.BatchDecode(self.workspace)
        problem.plan(wrapper, **plan_kw)
        result = wrapper.run(problem.q, cache if cache is not None else (problem.k, problem.v),
                             return_lse=return_lse, sinks=problem.sinks,
                             k_scale=problem.k_scale, v_scale=problem.v_scale)
        torch.cuda.synchronize()
        return wrapper, result

    def test_stream_is_torchs_current_stream(self):
        t = torch.empty(1, device="cuda")
        side = torch.cuda.Stream()
        with torch.cuda.stream(side):
            self.assertEqual(mha_tune.ops.current_stream(t), side.cuda_stream)
        self.assertEqual(mha_tune.ops.current_stream(t), torch.cuda.current_stream().cuda_stream)

    def test_contiguous_with_strided_views_and_lse(self):
        k = self.find("contiguous", kv="contig")
        p = Problem(k, [1, 37, 300, 1000])
        # q and out as views with a head stride of twice the depth: strides go through as is.
        wide = torch.randn(len(p.lens), p.heads, 2 * p.depth, device="cuda").to(p.dtype)
        p.q = wide[:, :, :p.depth]
        out = torch.zeros(len(p.lens), p.heads, 2 * p.depth, device="cuda",
                          dtype=p.out_dtype)[:, :, p.depth:]
        wrapper = mha_tune.BatchDecode(self.workspace)
        p.plan(wrapper)
        got, lse = wrapper.run(p.q, (p.k, p.v), out=out, return_lse=True)
        torch.cuda.synchronize()
        self.assertEqual(got.data_ptr(), out.data_ptr())
        self.check(p, wrapper, got, lse)

    def test_paged_nhd(self):
        p = Problem(self.find("paged NHD", kv="paged"), [5, 64, 333, 17])
        _, (out, lse) = self.decode(p)
        self.check(p, None, out, lse)

    def test_paged_hnd(self):
        p = Problem(self.find("paged HND", kv="paged_hnd"), [5, 64, 333, 17])
        _, (out, lse) = self.decode(p)
        self.check(p, None, out, lse)

    def test_vllm_combined_cache(self):
        p = Problem(self.find("vLLM [pages, 2, page, heads, depth]", kv="paged"), [9, 200, 70],
                    combined=True)
        self.assertEqual(p.k.stride(0), 2 * p.page_size * p.kv_heads * p.depth)
        _, (out, lse) = self.decode(p, p.storage)
        self.check(p, None, out, lse)

    def test_flashinfer_hnd_combined_cache(self):
        p = Problem(self.find("FlashInfer HND [pages, 2, heads, page, depth]", kv="paged_hnd"),
                    [9, 200, 70], combined=True)
        _, (out, lse) = self.decode(p, p.storage)
        self.check(p, None, out, lse)

    def test_flashinfer_page_lists(self):
        p = Problem(self.find("paged from indptr/indices", kv="paged"), [9, 200, 70])
        counts = [math.ceil(n / p.page_size) for n in p.lens]
        indptr = [0]
        for n in counts:
            indptr.append(indptr[-1] + n)
        indices = torch.cat([p.page_table[b, :n] for b, n in enumerate(counts)])
        last = [n - (c - 1) * p.page_size for n, c in zip(p.lens, counts)]
        wrapper = mha_tune.BatchDecode(self.workspace)
        k = p.kernel
        wrapper.plan(indptr=indptr, indices=indices, last_page_len=last, num_qo_heads=p.heads,
                     num_kv_heads=p.kv_heads, head_dim=p.depth, page_size=p.page_size,
                     q_dtype=p.dtype, out_dtype=p.out_dtype, kernel=k["name"])
        out = wrapper.run(p.q, (p.k, p.v))
        torch.cuda.synchronize()
        self.assertEqual(wrapper.seq_lens[:3].tolist(), p.lens)
        self.check(p, None, out)

    def test_ragged_batch_with_a_split_plan(self):
        k = self.find("split plan", kv="contig")
        p = Problem(k, [3, 1500, 64, 700, 1, 2048])
        wrapper, (out, lse) = self.decode(p, split="plan2x128")
        self.assertEqual(wrapper.plan_info["split"], "plan2x128")
        self.assertTrue(wrapper.plan_info["needs_lengths"])
        self.check(p, None, out, lse)
        # The defaults' own choice for the ragged batch.
        _, (out, lse) = self.decode(p)
        self.check(p, None, out, lse)

    def test_fixed_partitions(self):
        k = self.find("4 partitions", kv="contig")
        p = Problem(k, [100, 2000, 513])
        wrapper, (out, lse) = self.decode(p, split="4")
        self.assertEqual(wrapper.plan_info["split"], "4")
        self.check(p, None, out, lse)

    def test_fp8_cache_with_per_head_scales(self):
        k = next((k for k in self.kernels if k["kv_dtype"] == "e4m3" and k["mask"] == "null"
                  and not k["has_sink"]), None)
        if k is None:
            self.skipTest("fp8 e4m3: no such kernel in this build "
                          f"({mha_tune.build_info()['config']})")
        p = Problem(k, [33, 700, 260])
        _, (out, lse) = self.decode(p)
        self.check(p, None, out, lse, soft_cap=30.0 if k["soft_cap"] else 0.0)
        # One scale for every head (per tensor) as a float.
        wrapper = mha_tune.BatchDecode(self.workspace)
        p.plan(wrapper)
        out = wrapper.run(p.q, (p.k, p.v), k_scale=0.75, v_scale=1.25)
        p.k_scale = torch.full((p.kv_heads,), 0.75, device="cuda")
        p.v_scale = torch.full((p.kv_heads,), 1.25, device="cuda")
        torch.cuda.synchronize()
        self.check(p, None, out, soft_cap=30.0 if k["soft_cap"] else 0.0)
        # A float scale is kept while it stays: a step captured after it holds the op's kernels
        # alone (a fill kernel in every step cost e4m3 steps 2.2 us).
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            wrapper.run(p.q, (p.k, p.v), out=out, k_scale=0.75, v_scale=1.25)
        from torch.profiler import ProfilerActivity, profile
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            graph.replay()
            torch.cuda.synchronize()
        names = [e.name for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA]
        self.assertTrue(names and all("mha::" in n for n in names), names)
        self.check(p, None, out, soft_cap=30.0 if k["soft_cap"] else 0.0)

    def test_every_compiled_family(self):
        seen = set()
        for k in self.kernels:
            family = tuple(k[t] for t in ("dtype", "kv_dtype", "out_dtype", "depth", "group",
                                          "kv", "mask", "has_sink", "soft_cap"))
            if family in seen:
                continue
            seen.add(family)
            with self.subTest(kernel=k["name"]):
                p = Problem(k, [1, 77, 500])
                window = 64 if k["mask"] == "window" else 0
                chunk = 48 if k["mask"] == "chunked" else 0
                _, (out, lse) = self.decode(p, kernel=None)
                self.check(p, None, out, lse, soft_cap=30.0 if k["soft_cap"] else 0.0,
                           window=window, chunk=chunk)

    def test_cuda_graph_replays_new_lengths(self):
        k = self.find("CUDA graph", kv="contig")
        p = Problem(k, [3, 1500, 64, 700], seed=3)
        wrapper = mha_tune.BatchDecode(self.workspace)
        caps = dict(max_batch=4, max_keys=1500, ragged=True, split="plan2x128")
        p.plan(wrapper, **caps)
        out = torch.empty(4, p.heads, p.depth, dtype=p.out_dtype, device="cuda")
        lse = torch.empty(4, p.heads, dtype=torch.float32, device="cuda")
        wrapper.run(p.q, (p.k, p.v), out=out, lse=lse)  # warm-up outside the capture
        torch.cuda.synchronize()
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            wrapper.run(p.q, (p.k, p.v), out=out, lse=lse)
        for lens in ([3, 1500, 64, 700], [1500, 1, 999, 128], [20, 30, 40, 50]):
            p.lens = lens
            p.plan(wrapper, **caps)  # same plan: new lengths into the same buffers
            out.zero_()
            graph.replay()
            torch.cuda.synchronize()
            self.check(p, None, out, lse)

    def test_torch_compile_fullgraph(self):
        k = self.find("torch.compile", kv="contig")
        p = Problem(k, [10, 300, 1000])
        wrapper = mha_tune.BatchDecode(self.workspace)
        p.plan(wrapper)

        @torch.compile(fullgraph=True)
        def step(q, k_cache, v_cache):
            out, lse = wrapper.run(q * 1.0, (k_cache, v_cache), return_lse=True)
            return out.float() + 0.0, lse

        out, lse = step(p.q, p.k, p.v)
        torch.cuda.synchronize()
        self.check(p, None, out, lse)

    def test_query_tokens_through_the_op(self):
        """Several tokens a sequence and ragged counts (cu_seqlens_q) through Plan and ops.run,
        against float32 attention that masks each token at its own position: token t of a
        sequence of m tokens and n keys sees keys 0 .. n - m + t (none before the first key)."""
        k = next((k for k in self.kernels if k["multi_token"] and k["mask"] == "causal" and
                  k["kv"] == "contig" and k["kv_dtype"] == k["dtype"] and not k["has_sink"] and
                  not k["soft_cap"]), None)
        if k is None:
            self.skipTest("no contiguous causal multi-token kernel in this build")
        g = torch.Generator(device="cuda").manual_seed(5)
        lens, kv_heads, d = [3, 900, 130, 1], 2, k["depth"]
        heads, group = kv_heads * k["group"], k["group"]
        dtype, out_dtype = (mha_tune.plan.torch_dtype(k[t]) for t in ("dtype", "out_dtype"))
        k_cache, v_cache = (torch.randn(len(lens), max(lens), kv_heads, d, device="cuda",
                                        generator=g).to(dtype) for _ in range(2))
        seq_lens = torch.tensor(lens, dtype=torch.int32, device="cuda")
        for counts in ([4, 4, 4, 4], [5, 0, 2, 1]):
            ragged = len(set(counts)) > 1
            starts = [0]
            for m in counts:
                starts.append(starts[-1] + m)
            q = torch.randn(starts[-1], heads, d, device="cuda", generator=g).to(dtype)
            ref = torch.zeros(starts[-1], heads, d, device="cuda")
            ref_lse = torch.full((starts[-1], heads), -math.inf, device="cuda")
            for b, (n, m) in enumerate(zip(lens, counts)):
                for t in range(m):
                    row, seen = starts[b] + t, max(0, n - m + t + 1)
                    if seen == 0:
                        continue
                    keys = k_cache[b, :seen].float().repeat_interleave(group, dim=1)
                    values = v_cache[b, :seen].float().repeat_interleave(group, dim=1)
                    scores = torch.einsum("hd,lhd->hl", q[row].float(), keys) / math.sqrt(d)
                    ref_lse[row] = torch.logsumexp(scores, dim=1)
                    ref[row] = torch.einsum("hl,lhd->hd",
                                            torch.exp(scores - ref_lse[row][:, None]), values)
            cu = torch.tensor(starts, dtype=torch.int32, device="cuda") if ragged else None
            for split in ("1", "4", "cluster4", "plan2x128"):
                with self.subTest(counts=counts, split=split):
                    plan = mha_tune.Plan(heads=heads, kv_heads=kv_heads, depth=d,
                                         batch=len(lens), max_keys=max(lens), dtype=dtype,
                                         out_dtype=out_dtype, mask="causal", kernel=k["name"],
                                         split=split, q_len=max(counts), ragged_q_len=ragged)
                    plan.set_lengths(lens, self.workspace)
                    out = torch.empty(starts[-1], heads, d, dtype=out_dtype, device="cuda")
                    lse = torch.empty(starts[-1], heads, dtype=torch.float32, device="cuda")
                    mha_tune.ops.run(plan.handle, q, k_cache, v_cache, seq_lens, None, None,
                                     None, None, 0.0, 0.0, 0, 0, cu, None, self.workspace, out,
                                     lse)
                    torch.cuda.synchronize()
                    self.assertLess(rel_l2(out, ref), 2e-2, f"{k['name']} split {split}")
                    seen = torch.isfinite(ref_lse)
                    self.assertTrue(bool(torch.isinf(lse[~seen]).all()))
                    self.assertLess(float((lse[seen] - ref_lse[seen]).abs().max()), 2e-2)

    def test_opcheck(self):
        k = self.find("opcheck", kv="contig")
        p = Problem(k, [10, 300])
        wrapper = mha_tune.BatchDecode(self.workspace)
        p.plan(wrapper, split="4")
        out = torch.empty(2, p.heads, p.depth, dtype=p.out_dtype, device="cuda")
        lse = torch.empty(2, p.heads, dtype=torch.float32, device="cuda")
        args = (wrapper._plan.handle, p.q, p.k, p.v, wrapper.seq_lens, None, None, None, None,
                0.0, 0.0, 0, 0, None, None, self.workspace, out, lse)
        torch.library.opcheck(mha_tune.ops.run.default, args,
                              test_utils=("test_schema", "test_faketensor"))

    def test_bad_run_arguments(self):
        k = self.find("argument checks", kv="contig")
        p = Problem(k, [10, 300])
        wrapper = mha_tune.BatchDecode(self.workspace)
        p.plan(wrapper)
        kv = (p.k, p.v)
        cases = [
            ("q has dtype", lambda: wrapper.run(p.q.float(), kv)),
            ("q must be contiguous in its last dimension",
             lambda: wrapper.run(torch.zeros(2, p.heads, 2 * p.depth, device="cuda",
                                             dtype=p.dtype)[:, :, ::2], kv)),
            ("k_cache", lambda: wrapper.run(p.q, (p.k[:, :, :1], p.v))),
            ("k_cache and v_cache", lambda: wrapper.run(p.q, (p.k, p.v.contiguous()[:, :200]))),
            ("out has dtype", lambda: wrapper.run(p.q, kv, out=torch.empty(
                2, p.heads, p.depth, dtype=torch.float64, device="cuda"))),
            ("lse", lambda: wrapper.run(p.q, kv, lse=torch.empty(2, p.heads + 1,
                                                                 device="cuda"))),
            ("sinks was given", lambda: wrapper.run(p.q, kv, sinks=torch.zeros(
                p.heads, device="cuda"))),
            ("q must be [batch", lambda: wrapper.run(p.q[:1], kv)),
            ("kv_cache must be", lambda: wrapper.run(p.q, p.k)),
        ]
        for text, call in cases:
            with self.subTest(text):
                with self.assertRaises(ValueError) as cm:
                    call()
                self.assertIn(text, str(cm.exception))
        small = mha_tune.BatchDecode(torch.empty(16, dtype=torch.uint8, device="cuda"))
        with self.assertRaises(ValueError) as cm:
            p.plan(small, split="4")
        self.assertIn("workspace", str(cm.exception))
        with self.assertRaises(RuntimeError):
            mha_tune.BatchDecode(self.workspace).run(p.q, kv)


def main():
    args = sys.argv[1:]
    gpu_only = "--gpu-only" in args
    OPTIONS["installed"] = "--installed" in args
    if "--build-dir" in args:
        OPTIONS["build_dir"] = os.path.abspath(args[args.index("--build-dir") + 1])
        del args[args.index("--build-dir"):args.index("--build-dir") + 2]
    args = [a for a in args if a not in ("--gpu-only", "--installed")]
    missing = [m for m in ("torch", "scikit_build_core")
               if importlib.util.find_spec(m) is None and not (m == "scikit_build_core" and
                                                               OPTIONS["installed"])]
    if missing:
        print(f"python package test skipped: {sys.executable} lacks {', '.join(missing)} "
              "(pip install torch scikit-build-core to run it)")
        sys.exit(SKIP)
    if not OPTIONS["installed"] and not os.path.exists(
            os.path.join(OPTIONS["build_dir"], "CMakeCache.txt")):
        print(f"python package test skipped: no build at {OPTIONS['build_dir']} "
              "(set MHA_BUILD_DIR or --build-dir)")
        sys.exit(SKIP)
    global torch
    import torch as torch_module
    torch = torch_module
    names = ["PackageGpu"] if gpu_only else ["PackageHost", "PackageGpu"]
    suite = unittest.TestSuite(unittest.defaultTestLoader.loadTestsFromTestCase(globals()[n])
                               for n in names)
    verbosity = 2 if "-v" in args else 1
    result = unittest.TextTestRunner(verbosity=verbosity).run(suite)
    sys.exit(0 if result.wasSuccessful() else 1)


if __name__ == "__main__":
    main()

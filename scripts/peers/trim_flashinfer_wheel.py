#!/usr/bin/env python3
"""A FlashInfer wheel cut down to its decode paths, small enough to carry to a GPU machine without
a package registry. flashinfer-python 0.7.x is a 62 MB wheel (427 MB unpacked); 340 MB of it is
flashinfer/data: the CUDA sources, CUTLASS and CCCL that its just-in-time builds compile from.
Decode compiles a handful of them. This script finds which, from FlashInfer itself: it asks the
package's own JIT generators for the decode paths' build specs (the batch-decode module, the
tensor-core decode's batch-prefill modules in its FA2 and FA3 backends and its paged-only one,
XQA), records every file under flashinfer/data that they read, adds every header their sources
include (`nvcc -M` with the package's own include directories), deletes the rest of
flashinfer/data and re-packs the wheel under its own name. The Python package stays whole:
`import flashinfer` loads nearly all of it.

  python3 scripts/peers/trim_flashinfer_wheel.py flashinfer_python-0.7.2.post1-py3-none-any.whl \\
      --out .whl

Needs, where it runs: torch and apache-tvm-ffi importable (FlashInfer imports them), nvcc on
PATH. Prints the kept and removed sizes; exit 2 on bad input, 3 when a prerequisite is missing."""

import argparse
import base64
import hashlib
import json
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile
import zipfile

# Run inside the unpacked wheel: the decode paths' specs and the data files their generators read.
SPEC_PROBE = r"""
import builtins, io, json, os, shutil, sys
seen = set()
_open, _copy = builtins.open, shutil.copyfile
def logged_open(file, *a, **k):
    try:
        seen.add(os.path.realpath(os.fspath(file)))
    except TypeError:
        pass
    return _open(file, *a, **k)
def logged_copy(src, dst, *a, **k):
    seen.add(os.path.realpath(os.fspath(src)))
    return _copy(src, dst, *a, **k)
builtins.open = io.open = logged_open
shutil.copyfile = logged_copy
import torch
import tvm_ffi
import flashinfer.jit.attention.modules as m
from flashinfer.jit import env, xqa
bf16, fp16, e4m3 = torch.bfloat16, torch.float16, torch.float8_e4m3fn
specs = [m.gen_batch_decode_module(bf16, bf16, bf16, torch.int32, 128, 128, 0, False, False),
         m.gen_batch_decode_module(fp16, e4m3, fp16, torch.int32, 64, 64, 0, True, True)]
for backend in ("fa2", "fa3"):
    specs.append(m.gen_batch_prefill_module(backend, bf16, bf16, bf16, torch.int32, 128, 128, 0,
                                            False, False, False))
# 0.7.x: the tensor-core decode on a paged cache with independent strides builds a paged-only
# prefill module of its own (batch_prefill_paged.cu).
paged_only = getattr(m, "_gen_batch_prefill_independent_paged_module", None)
if paged_only is not None:
    specs.append(paged_only("fa2", bf16, bf16, bf16, torch.int32, 128, 128, 0, False, False,
                            False))
specs.append(xqa.gen_xqa_module(bf16, bf16, 16, 128, 4, False, bf16))
includes = [env.FLASHINFER_INCLUDE_DIR, env.FLASHINFER_CSRC_DIR, *env.CUTLASS_INCLUDE_DIRS,
            env.SPDLOG_INCLUDE_DIR, *env.CCCL_INCLUDE_DIRS, tvm_ffi.libinfo.find_include_path(),
            tvm_ffi.libinfo.find_dlpack_include_path()]
json.dump({"sources": [str(s) for spec in specs for s in spec.sources],
           "includes": [os.path.realpath(str(p)) for p in includes],
           "read": sorted(seen)}, sys.stdout)
"""


def fail(message, code=2):
    print(f"trim_flashinfer_wheel.py: {message}", file=sys.stderr)
    sys.exit(code)


def probe_specs(root):
    # The unpacked wheel first; torch and apache-tvm-ffi may come from the caller's PYTHONPATH.
    path = os.pathsep.join(p for p in (str(root), os.environ.get("PYTHONPATH", "")) if p)
    env = dict(os.environ, PYTHONPATH=path, FLASHINFER_WORKSPACE_BASE=str(root.parent / "ws"),
               FLASHINFER_CUDA_ARCH_LIST="9.0")
    r = subprocess.run([sys.executable, "-c", SPEC_PROBE], capture_output=True, text=True, env=env)
    if r.returncode != 0:
        tail = "\n".join(r.stderr.strip().splitlines()[-5:])
        fail(f"FlashInfer's JIT generators failed in the unpacked wheel:\n{tail}", 3)
    return json.loads(r.stdout)


def included_files(spec):
    """Every file the sources read while preprocessing, from nvcc -M (g++ -M for C++ sources)."""
    flags = [f"-I{p}" for p in spec["includes"]]
    files = set()
    for src in spec["sources"]:
        cmd = (["g++", "-M", "-std=c++17", *flags, "-I/usr/local/cuda/include", src]
               if src.endswith(".cpp") else
               ["nvcc", "-M", "-std=c++17", "-arch=sm_90a", "-DNDEBUG", *flags, src])
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            fail(f"{' '.join(cmd[:2])} {src}: {r.stderr.strip()[-400:]}", 3)
        for token in r.stdout.replace("\\\n", " ").split():
            if os.path.isfile(token):
                files.add(os.path.realpath(token))
    return files


def record_line(root, path):
    data = path.read_bytes()
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{path.relative_to(root).as_posix()},sha256={digest},{len(data)}"


def repack(root, wheel_name, out_dir):
    """The tree as a wheel again: a RECORD of what is left, every file deflated."""
    dist_info = next(root.glob("*.dist-info"))
    record = dist_info / "RECORD"
    files = sorted(p for p in root.rglob("*") if p.is_file() and p != record)
    lines = [record_line(root, p) for p in files] + [f"{record.relative_to(root).as_posix()},,"]
    record.write_text("\n".join(lines) + "\n")
    out = out_dir / wheel_name
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
        for p in files + [record]:
            z.write(p, p.relative_to(root).as_posix())
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("wheel", help="a flashinfer-python wheel")
    ap.add_argument("--out", default=".whl", help="folder for the trimmed wheel (default .whl)")
    args = ap.parse_args()
    wheel = pathlib.Path(args.wheel)
    if not wheel.is_file() or not wheel.name.startswith("flashinfer_python-") or wheel.suffix != ".whl":
        fail(f"{wheel}: not a flashinfer_python-*.whl file")
    if shutil.which("nvcc") is None:
        fail("nvcc is not on PATH: the headers decode includes come from `nvcc -M`", 3)
    out_dir = pathlib.Path(args.out)
    out_dir.mkdir(parents=True, exist_ok=True)
    if (out_dir / wheel.name).resolve() == wheel.resolve():
        fail(f"--out {out_dir}: would replace the input wheel")
    with tempfile.TemporaryDirectory() as tmp:
        root = pathlib.Path(tmp) / "wheel"
        with zipfile.ZipFile(wheel) as z:
            z.extractall(root)
        data = (root / "flashinfer" / "data").resolve()
        if not data.is_dir():
            fail(f"{wheel}: no flashinfer/data in it")
        spec = probe_specs(root)
        keep = {p for p in spec["read"] if p.startswith(str(data) + os.sep)}
        keep |= {p for p in included_files(spec) if p.startswith(str(data) + os.sep)}
        keep |= {os.path.realpath(s) for s in spec["sources"] if s.startswith(str(data) + os.sep)}
        # FlashInfer's own headers and spdlog are small and every module includes from them.
        keep |= {str(p.resolve()) for d in ("include", "spdlog") for p in (data / d).rglob("*")
                 if p.is_file()}
        kept = removed = 0
        for p in sorted(data.rglob("*")):
            if not p.is_file():
                continue
            if str(p.resolve()) in keep:
                kept += p.stat().st_size
            else:
                removed += p.stat().st_size
                p.unlink()
        out = repack(root, wheel.name, out_dir)
    print(f"kept {kept / 1e6:.1f} MB of flashinfer/data ({len(keep)} files), removed "
          f"{removed / 1e6:.1f} MB; {out}: {out.stat().st_size / 1e6:.1f} MB "
          f"(was {wheel.stat().st_size / 1e6:.1f} MB)")


if __name__ == "__main__":
    main()

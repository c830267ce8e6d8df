#!/usr/bin/env python3
"""One decode step of a ragged batch through mha_tune's PyTorch ops, checked against attention
computed in float32 torch: plan once on the host, run on the GPU, then the same step replayed
from a CUDA graph. Needs the package (./scripts/install_python.sh) and a CUDA device:
    python3 examples/pytorch/decode.py
It uses the first compiled kernel with a contiguous bf16 or fp16 cache and no mask, sink or soft
cap (a kernel set is a build's config: configs/tiles/default.json has them)."""

import math
import sys

import torch

import mha_tune


def reference(q, k_cache, v_cache, seq_lens):
    """float32 softmax(q k^T / sqrt(d)) v per sequence; query head h reads KV head h // group."""
    out = torch.empty(q.shape, dtype=torch.float32, device=q.device)
    group = q.shape[1] // k_cache.shape[2]
    for b, n in enumerate(seq_lens):
        k = k_cache[b, :n].float().repeat_interleave(group, dim=1)  # [n, heads, depth]
        v = v_cache[b, :n].float().repeat_interleave(group, dim=1)
        scores = torch.einsum("hd,nhd->hn", q[b].float(), k) / math.sqrt(q.shape[2])
        out[b] = torch.einsum("hn,nhd->hd", torch.softmax(scores, dim=1), v)
    return out


def main():
    if not torch.cuda.is_available():
        print("no CUDA device: the example needs one")
        return 0
    kernel = next((k for k in mha_tune.kernels() if k["kv"] == "contig" and k["mask"] == "null"
                   and not k["has_sink"] and not k["soft_cap"] and k["kv_dtype"] == k["dtype"]),
                  None)
    if kernel is None:
        print("this build compiled no contiguous null-mask kernel: nothing to run")
        return 0
    dtype = {"bf16": torch.bfloat16, "fp16": torch.float16}[kernel["dtype"]]
    out_dtype = {"bf16": torch.bfloat16, "fp16": torch.float16,
                 "fp32": torch.float32}[kernel["out_dtype"]]
    kv_heads, depth = 8, kernel["depth"]
    heads = kv_heads * kernel["group"]
    seq_lens = [1000, 37, 4096, 512]  # ragged: the defaults may pick a split plan
    max_keys = 4096

    torch.manual_seed(0)
    q = torch.randn(len(seq_lens), heads, depth, device="cuda", dtype=dtype)
    k_cache = torch.randn(len(seq_lens), max_keys, kv_heads, depth, device="cuda", dtype=dtype)
    v_cache = torch.randn_like(k_cache)

    wrapper = mha_tune.BatchDecode(torch.empty(128 << 20, dtype=torch.uint8, device="cuda"))
    # max_batch, max_keys and ragged fixed: later plan() calls keep this plan (graph replays).
    wrapper.plan(seq_lens, num_qo_heads=heads, num_kv_heads=kv_heads, head_dim=depth,
                 q_dtype=dtype, out_dtype=out_dtype, max_batch=len(seq_lens),
                 max_keys=max_keys, ragged=True)
    info = wrapper.plan_info
    print(f"kernel {info['kernel']}, split {info['split']}: {info['reason']}")

    out, lse = wrapper.run(q, (k_cache, v_cache), return_lse=True)
    ref = reference(q, k_cache, v_cache, seq_lens)
    err = float((out.float() - ref).norm() / ref.norm())
    print(f"rel L2 error vs torch: {err:.2e}; lse[0, 0] = {lse[0, 0].item():.4f}")

    # The same step from a CUDA graph, replayed after plan() gave new lengths.
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        wrapper.run(q, (k_cache, v_cache), out=out)
    seq_lens = [17, 4000, 256, 3000]
    wrapper.plan(seq_lens, num_qo_heads=heads, num_kv_heads=kv_heads, head_dim=depth,
                 q_dtype=dtype, out_dtype=out_dtype, max_batch=len(seq_lens),
                 max_keys=max_keys, ragged=True)
    graph.replay()
    ref = reference(q, k_cache, v_cache, seq_lens)
    graph_err = float((out.float() - ref).norm() / ref.norm())
    print(f"graph replay with new lengths: rel L2 error {graph_err:.2e}")
    return 0 if max(err, graph_err) < 1e-2 else 1


if __name__ == "__main__":
    sys.exit(main())

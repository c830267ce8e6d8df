"""mha_tune for PyTorch: mha-tune's tuned flash-decoding kernels as torch custom ops.

    import mha_tune
    wrapper = mha_tune.BatchDecode(torch.empty(64 << 20, dtype=torch.uint8, device="cuda"))
    wrapper.plan([1000, 37], num_qo_heads=32, num_kv_heads=8, head_dim=128)
    out = wrapper.run(q, (k_cache, v_cache))

The ops themselves are torch.ops.mha_tune.* (make_plan, plan_info, set_lengths, run, ...): `run`
is capturable in a CUDA graph and traceable by torch.compile. Which kernels exist is decided when
the C++ library is built (its config); kernels() lists them."""

import json

from ._ops import ops
from .batch_decode import BatchDecode
from .plan import Plan

__version__ = "0.1.0"


def kernels():
    """The kernels compiled into the installed library: dicts of name and traits (dtype,
    out_dtype, kv_dtype, depth, group, kv, mask, has_sink, soft_cap, the tile)."""
    return json.loads(ops.kernels())


def load_defaults(path):
    """Loads a defaults table (`mha-tune select --out-defaults F`) that plans choose from first.
    Raises ValueError naming the file when it cannot be read or parsed."""
    ops.load_defaults(str(path))


def defaults_origin():
    """The loaded defaults table's file, or "" for the one compiled into the library."""
    return ops.defaults_origin()


def build_info():
    """What the installed kernels were built from and for: {"config", "cuda_architectures"}."""
    config, archs = ops.build_info()
    return {"config": config, "cuda_architectures": archs}


__all__ = ["BatchDecode", "Plan", "kernels", "load_defaults", "defaults_origin", "build_info",
           "ops"]

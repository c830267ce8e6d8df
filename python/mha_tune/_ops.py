"""Loads _C.so, which registers the torch.ops.mha_tune ops (python/src/library.cpp), and gives
`run` its fake kernel: torch.compile traces the op on fake tensors, and a mutating op that returns
nothing has nothing to compute there. The C++ library names this module (set_python_module), so
torch imports it when it needs the fake kernel before mha_tune was imported."""

import os

import torch

_LIBRARY = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_C.so")
if not os.path.exists(_LIBRARY):
    raise ImportError(f"mha_tune: {_LIBRARY} is missing: the package was not built "
                      "(scripts/install_python.sh builds and installs it)")
torch.ops.load_library(_LIBRARY)

ops = torch.ops.mha_tune


@torch.library.register_fake("mha_tune::run")
def _run_fake(plan, q, k_cache, v_cache, seq_lens, page_table, sinks, k_scale, v_scale, scale,
              soft_cap, window, chunk, cu_seqlens_q, tree_mask, workspace, out, lse):
    # Writes out, lse and the workspace in place (the schema's alias annotations say so).
    return None

"""A second FlashInfer beside the one on PYTHONPATH, in one run: `--flashinfer-site TAG=DIR` names a
folder a FlashInfer of 0.7's API is installed in (pip install --target DIR). Its peers are the
FlashInfer peers again, named NAME_TAG (flashinfer_xqa_v072), plus the paths 0.7 added: the
tensor-core wrapper on its FA3 backend (flashinfer_tc_fa3_TAG) and trtllm-gen
(flashinfer_trtllm_TAG). Each runs in worker processes whose PYTHONPATH starts with DIR, so the two
versions never meet in one process (both are `import flashinfer`); their JIT caches are kept apart
by FlashInfer itself, under a folder per version. The folder's own probe (peers.py) records the
exact version and checks that `import flashinfer` came from DIR."""
import copy
import os
import re

from . import backends

# The peers a site repeats (0.5.3's paths) and those only 0.7's API has.
REPEATED = ("flashinfer_fa2", "flashinfer_tc", "flashinfer_prefill_fa2", "flashinfer_prefill_fa3",
            "flashinfer_xqa", "flashinfer_cudnn")


def api07_only():
    return [backends.FlashInferWrapperPeer(True, "fa3"), backends.FlashInferTrtllmPeer()]


def parse(specs):
    """['v072=/tmp/fi072', ...] -> {'v072': '/tmp/fi072'}; ValueError naming a bad one."""
    sites = {}
    for spec in specs or []:
        tag, sep, site = spec.partition("=")
        if not sep or not re.fullmatch(r"[a-z0-9]+", tag) or not site:
            raise ValueError(f"--flashinfer-site {spec}: give TAG=DIR, TAG in [a-z0-9]+ "
                             "(e.g. v072=/tmp/fi072)")
        if tag in sites:
            raise ValueError(f"--flashinfer-site: tag {tag} given twice")
        sites[tag] = os.path.abspath(site)
    return sites


def package(tag):
    """The key of a site's FlashInfer in the probe's packages and the report's peer_packages."""
    return f"flashinfer@{tag}"


def register(sites):
    """Adds each site's peers to backends.PEERS and their short names (fi_xqa_v072) to
    backends.SHORT; returns the new peers. Registering a site again changes nothing."""
    added = []
    for tag, site in sites.items():
        bases = [backends.PEERS[n] for n in REPEATED] + api07_only()
        for base in bases:
            name = f"{base.name}_{tag}"
            if name in backends.PEERS:
                continue
            peer = copy.copy(base)
            peer.name, peer.package, peer.site, peer.api07 = name, package(tag), site, True
            backends.PEERS[name] = peer
            short = next((k for k, v in backends.SHORT.items() if v == base.name),
                         base.name.replace("flashinfer_", "fi_"))
            backends.SHORT[f"{short}_{tag}"] = name
            added.append(peer)
    return added


def worker_env(peer, environ=None):
    """The environment of the peer's worker process: its site first on PYTHONPATH."""
    env = dict(os.environ if environ is None else environ)
    if peer.site:
        env["PYTHONPATH"] = peer.site + (os.pathsep + env["PYTHONPATH"]
                                         if env.get("PYTHONPATH") else "")
    return env

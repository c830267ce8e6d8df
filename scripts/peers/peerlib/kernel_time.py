"""Kernel time, the convention of FlashInfer's benchmarks and of published decode tables: the sum of
the step's kernel intervals on the device, from CUPTI activity records (through torch.profiler),
leaving out launch gaps and host work. A row's `time` stays the step under graph replay (what
mha-tune's sweep reports); this is the second number beside it. Memory copies and memsets are not
kernels and are left out, as CUPTI's kernel records leave them out. The reduction is pure Python;
the profiling takes torch as an argument, so importing this module needs no torch."""

REPLAYS = 5  # launches profiled; their kernels summed and divided by the steps they ran


def is_kernel(name):
    """Whether a device event is a kernel (not a copy or a memset, which CUPTI records apart)."""
    lowered = name.lower()
    return not (lowered.startswith("memcpy") or lowered.startswith("memset"))


def summarize(events, steps):
    """{kernel_us, kernels_per_step} per step from (name, duration_us) device events covering
    `steps` steps; None when no kernel is among them (the profiler saw nothing)."""
    kernels = [us for name, us in events if is_kernel(name)]
    if not kernels or steps <= 0:
        return None
    return {"kernel_us": sum(kernels) / steps, "kernels_per_step": len(kernels) / steps}


def device_events(prof, torch):
    """(name, duration us) of each device-side event a torch.profiler session recorded."""
    cuda = getattr(torch.autograd.DeviceType, "CUDA", None)
    out = []
    for e in prof.events():
        if getattr(e, "device_type", None) != cuda:
            continue
        tr = getattr(e, "time_range", None)
        us = tr.elapsed_us() if tr is not None else getattr(e, "device_time", 0.0)
        out.append((e.name, float(us)))
    return out


def measure(torch, launch, steps, replays=REPLAYS):
    """Per-step kernel time of `launch()` (which runs `steps` steps), after one unprofiled launch:
    a dict as summarize() gives, or None when the profiler recorded no kernel."""
    from torch.profiler import ProfilerActivity, profile
    launch()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(replays):
            launch()
        torch.cuda.synchronize()
    return summarize(device_events(prof, torch), steps * replays)


def measure_step(torch, graph_replay, stream_launch, steps, replays=REPLAYS):
    """Kernel time from graph replays, or from the same steps launched one by one where the
    profiler sees no kernel inside the graph; the dict says which ("method")."""
    if graph_replay is not None:
        got = measure(torch, graph_replay, steps, replays)
        if got:
            return dict(got, method="cupti via torch.profiler, graph replays")
    got = measure(torch, stream_launch, steps, replays)
    if got:
        return dict(got, method="cupti via torch.profiler, stream launches")
    return None

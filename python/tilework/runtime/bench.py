"""Timing GPU work: `do_bench` (CUDA events, the L2 flushed before every run) and
`do_bench_cudagraph` (one CUDA graph of many runs), with Triton's semantics.  Through torch when
it is importable, else through `cuda.bindings` (no torch needed).  `tilework.testing` exports
them; the autotuner times configs with `do_bench`."""
from __future__ import annotations

from .device import runtime_for

MODES = ("min", "max", "mean", "median", "all")
FLUSH_BYTES = 256 * 1024 * 1024  # larger than any L2: a write over it evicts the kernel's data


def summarize(times, quantiles=None, return_mode="mean"):
    """`times` (ms) reduced as do_bench returns them: the `quantiles` (linear interpolation,
    a single one as a float), else by `return_mode`."""
    if return_mode not in MODES:
        raise ValueError(f"return_mode must be one of {', '.join(MODES)}, got {return_mode!r}")
    if not times:
        raise ValueError("no timings to summarize")
    if quantiles is not None:
        s = sorted(times)
        out = []
        for q in quantiles:
            if not 0 <= q <= 1:
                raise ValueError(f"quantiles must lie in [0, 1], got {q!r}")
            pos = q * (len(s) - 1)
            lo = int(pos)
            hi = min(lo + 1, len(s) - 1)
            out.append(s[lo] + (s[hi] - s[lo]) * (pos - lo))
        return out[0] if len(out) == 1 else out
    if return_mode == "all":
        return list(times)
    import statistics  # here: it imports decimal and fractions, slow for `import tilework`
    return {"min": min, "max": max, "mean": statistics.mean,
            "median": statistics.median}[return_mode](times)


def _torch():
    try:
        import torch
    except ImportError:
        return None
    return torch


class _TorchDevice:
    """Events, flushes and graphs through torch (on its current stream)."""

    def __init__(self, torch):
        self.torch = torch

    def event(self):
        return self.torch.cuda.Event(enable_timing=True)

    def record(self, e):
        e.record()

    def elapsed(self, a, b):
        return a.elapsed_time(b)

    def synchronize(self):
        self.torch.cuda.synchronize()

    def flush_buffer(self):
        return self.torch.empty(FLUSH_BYTES // 4, dtype=self.torch.int32, device="cuda")

    def flush(self, buf):
        buf.zero_()

    def release(self, buf, events):
        pass  # torch frees them


class _CudaDevice:
    """The same through cuda.bindings, on the stream the runtime launches on (0 without
    torch)."""

    def __init__(self):
        self.rt = runtime_for(None)  # creates or joins the context
        self.cu = self.rt.cu

    def _ok(self, res, what):
        err = res[0] if isinstance(res, tuple) else res
        if int(err) != 0:
            raise RuntimeError(f"{what} failed: {err}")
        return res[1] if isinstance(res, tuple) and len(res) > 1 else None

    def event(self):
        return self._ok(self.cu.cuEventCreate(0), "cuEventCreate")

    def record(self, e):
        self._ok(self.cu.cuEventRecord(e, self.rt.stream()), "cuEventRecord")

    def elapsed(self, a, b):
        return self._ok(self.cu.cuEventElapsedTime(a, b), "cuEventElapsedTime")

    def synchronize(self):
        self._ok(self.cu.cuCtxSynchronize(), "cuCtxSynchronize")

    def flush_buffer(self):
        return self._ok(self.cu.cuMemAlloc(FLUSH_BYTES), "cuMemAlloc")

    def flush(self, buf):
        self._ok(self.cu.cuMemsetD32Async(buf, 0, FLUSH_BYTES // 4, self.rt.stream()),
                 "cuMemsetD32Async")

    def release(self, buf, events):
        self._ok(self.cu.cuMemFree(buf), "cuMemFree")
        for e in events:
            self._ok(self.cu.cuEventDestroy(e), "cuEventDestroy")


def _device():
    torch = _torch()
    if torch is not None and torch.cuda.is_available():
        return _TorchDevice(torch)
    return _CudaDevice()


def _clear_grads(grad_to_none):
    for x in grad_to_none or ():
        x.grad = None


def do_bench(fn, warmup=25, rep=100, grad_to_none=None, quantiles=None, return_mode="mean"):
    """Runs `fn` for about `warmup` ms, then times about `rep` ms of runs, each one alone
    between two CUDA events with the L2 cache flushed (a 256 MB write) before it; returns
    the `quantiles` of the times (ms), else their `return_mode` (mean, median, min, max,
    all)."""
    if return_mode not in MODES:
        raise ValueError(f"return_mode must be one of {', '.join(MODES)}, got {return_mode!r}")
    dev = _device()
    fn()
    dev.synchronize()
    buf = dev.flush_buffer()
    start, end = dev.event(), dev.event()
    dev.record(start)
    for _ in range(5):  # an estimate of one run, flush included
        dev.flush(buf)
        fn()
    dev.record(end)
    dev.synchronize()
    estimate = dev.elapsed(start, end) / 5
    n_warmup = max(1, int(warmup / estimate)) if estimate > 0 else 1000
    n_repeat = max(1, int(rep / estimate)) if estimate > 0 else 1000
    starts = [dev.event() for _ in range(n_repeat)]
    ends = [dev.event() for _ in range(n_repeat)]
    for _ in range(n_warmup):
        fn()
    for s, e in zip(starts, ends):
        _clear_grads(grad_to_none)
        dev.flush(buf)
        dev.record(s)
        fn()
        dev.record(e)
    dev.synchronize()
    times = [dev.elapsed(s, e) for s, e in zip(starts, ends)]
    dev.release(buf, [start, end, *starts, *ends])
    return summarize(times, quantiles, return_mode)


def do_bench_cudagraph(fn, rep=20, grad_to_none=None, quantiles=None, return_mode="mean"):
    """Captures about `rep` ms of runs of `fn` in one CUDA graph (on a side stream) and times
    10 replays; returns the per-run time (ms) as `do_bench` does.  No L2 flush: a graph
    measures back-to-back runs without launch overhead.  Needs torch."""
    if return_mode not in MODES:
        raise ValueError(f"return_mode must be one of {', '.join(MODES)}, got {return_mode!r}")
    torch = _torch()
    if torch is None:
        raise RuntimeError("do_bench_cudagraph needs torch (CUDA graphs through "
                           "torch.cuda.CUDAGraph); use do_bench without it")
    with torch.cuda.stream(torch.cuda.Stream()):
        fn()
        _clear_grads(grad_to_none)
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(5):
            fn()
        end.record()
        torch.cuda.synchronize()
        estimate = start.elapsed_time(end) / 5
        n_repeat = 1000 if estimate == 0 else max(1, int(rep / estimate))
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            for _ in range(n_repeat):
                _clear_grads(grad_to_none)
                fn()
        torch.cuda.synchronize()
        times = []
        for _ in range(10):
            start.record()
            g.replay()
            end.record()
            torch.cuda.synchronize()
            times.append(start.elapsed_time(end) / n_repeat)
    return summarize(times, quantiles, return_mode)

"""A small kernel profiler: per kernel, launches, total and mean time, and (from the kernels'
`launch_metadata=` hooks) achieved GB/s and TFLOP/s against the card's peak.

    with tilework.profile() as prof:      # prints the table on exit (print_table=False: not)
        run_model()
    prof.stats()                          # {name: {"launches", "total_ms", ...}}

or `TILEWORK_PROFILE=1 python script.py`: everything launched, printed at exit.

It costs nothing when off: recording swaps the launch function that `kernel[grid](...)` calls
(`language.function.install_launcher`) for a timing wrapper, and puts the original back after,
so the launch path itself has no profiling branch.  GPU launches are timed with CUDA events on
torch's current stream (read when the table is made, so recording does not synchronize);
interpreted launches, or a GPU without torch, with the host clock (synchronizing the device).
Timed launches include any autotuning runs they trigger: warm up before recording.
"""
from __future__ import annotations

import atexit
import os
import sys
import time

from ..language.function import install_launcher, installed_launcher
from . import jit  # noqa: F401  (installs the launcher this module wraps)
from .launch_args import normalize_grid
from .launcher import bind

# card -> (memory bandwidth in bytes/s, {operand bits: dense tensor-core FLOP/s}); public
# datasheet figures (dense, no sparsity); "flops" without a width counts as 16-bit
PEAKS = {
    "H200": (4.8e12, {8: 1979e12, 16: 989e12, 32: 494e12, 64: 67e12}),
    "H100 SXM": (3.35e12, {8: 1979e12, 16: 989e12, 32: 494e12, 64: 67e12}),
    "H100 PCIe": (2.0e12, {8: 1513e12, 16: 756e12, 32: 378e12, 64: 51e12}),
    "A100": (2.039e12, {8: 624e12, 16: 312e12, 32: 156e12, 64: 19.5e12}),
}
FLOP_KEYS = {"flops8": 8, "flops16": 16, "flops": 16, "flops32": 32, "flops64": 64}


def card_peaks(name: str):
    """(table key, bandwidth, flops-by-width) of a device name, or (None, None, {})."""
    n = (name or "").upper()
    if "H200" in n:
        key = "H200"
    elif "H100" in n:
        key = "H100 PCIe" if "PCIE" in n else "H100 SXM"
    elif "A100" in n:
        key = "A100"
    else:
        return None, None, {}
    bw, flops = PEAKS[key]
    return key, bw, flops


def device_name() -> str:
    torch = sys.modules.get("torch")
    if torch is not None and torch.cuda.is_available():
        return torch.cuda.get_device_name()
    return "cpu (interpreter)"


def synchronize():
    """Waits for the device (torch's, else the CUDA driver's current context)."""
    torch = sys.modules.get("torch")
    if torch is not None and torch.cuda.is_available():
        torch.cuda.synchronize()
        return
    try:
        from cuda.bindings import driver
    except ImportError:
        return
    driver.cuCtxSynchronize()


class Record:
    __slots__ = ("name", "start", "end", "host_ms", "meta")

    def __init__(self, name, meta):
        self.name, self.meta = name, meta
        self.start = self.end = self.host_ms = None

    def ms(self) -> float:
        if self.host_ms is not None:
            return self.host_ms
        return self.start.elapsed_time(self.end)


class Profile:
    """Launch records while active; `stats()` and `table()` after."""

    def __init__(self, print_table=True, file=None):
        self.records: list[Record] = []
        self.print_table, self.file = print_table, file
        self._base = None

    # ---- recording ---------------------------------------------------------------------------
    def start(self):
        if self._base is not None:
            raise RuntimeError("this profile is already recording")
        self._base = installed_launcher()
        install_launcher(self._run)
        return self

    def stop(self):
        if self._base is not None:
            install_launcher(self._base)
            self._base = None

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()
        if self.print_table and exc[0] is None:
            print(self.table(), file=self.file or sys.stderr)
        return False

    def _run(self, fn, grid, args, kwargs, launch=True):
        base = self._base
        if not launch:
            return base(fn, grid, args, kwargs, launch)
        torch = sys.modules.get("torch")
        events = not fn.interpret and torch is not None and torch.cuda.is_available()
        rec = Record(fn.__name__, None)
        if events:
            rec.start = torch.cuda.Event(enable_timing=True)
            rec.end = torch.cuda.Event(enable_timing=True)
            rec.start.record()
            k = base(fn, grid, args, kwargs, launch)
            rec.end.record()
        else:
            t = time.perf_counter()
            k = base(fn, grid, args, kwargs, launch)
            if not fn.interpret:
                synchronize()
            rec.host_ms = (time.perf_counter() - t) * 1e3
        hook = fn.launch_metadata
        if hook is not None:
            values, _ = bind(fn, args, kwargs)
            named = dict(zip(fn.arg_names, values))
            meta = dict(hook(normalize_grid(fn, grid, values), k, named) or {})
            rec.meta = meta
            rec.name = meta.get("name", rec.name)
        self.records.append(rec)
        return k

    # ---- results -----------------------------------------------------------------------------
    def stats(self) -> dict:
        """{name: launches, total_ms, mean_ms, bytes, flops (by width), gbps, tflops, and the
        fractions of the card's peaks (None where unknown)}, in first-launch order."""
        torch = sys.modules.get("torch")
        if torch is not None and torch.cuda.is_available() and \
                any(r.host_ms is None for r in self.records):
            torch.cuda.synchronize()
        _, bw, peak = card_peaks(device_name())
        out: dict = {}
        for r in self.records:
            s = out.setdefault(r.name, {"launches": 0, "total_ms": 0.0, "bytes": 0,
                                        "flops": {}})
            s["launches"] += 1
            s["total_ms"] += r.ms()
            for k, v in (r.meta or {}).items():
                if k == "bytes":
                    s["bytes"] += v
                elif k in FLOP_KEYS:
                    s["flops"][FLOP_KEYS[k]] = s["flops"].get(FLOP_KEYS[k], 0) + v
        for s in out.values():
            sec = s["total_ms"] / 1e3
            s["mean_ms"] = s["total_ms"] / s["launches"]
            s["gbps"] = s["bytes"] / sec / 1e9 if s["bytes"] and sec > 0 else None
            s["bw_peak"] = s["gbps"] * 1e9 / bw if s["gbps"] and bw else None
            total = sum(s["flops"].values())
            s["tflops"] = total / sec / 1e12 if total and sec > 0 else None
            # against the peak of the widths used, weighted by their flops
            if total and sec > 0 and peak:
                s["flops_peak"] = sum(f / sec / peak[w] for w, f in s["flops"].items())
            else:
                s["flops_peak"] = None
        return out

    def table(self) -> str:
        name = device_name()
        key, bw, peak = card_peaks(name)
        head = f"tilework profile on {name}" + (
            f" (peaks: {bw / 1e12:.2f} TB/s, {peak[16] / 1e12:.0f} TFLOP/s 16-bit dense)"
            if key else " (peaks unknown)")
        rows = [("kernel", "launches", "total ms", "mean us", "GB/s", "%BW", "TFLOP/s",
                 "%peak")]

        def f(v, fmt, scale=1.0):
            return "-" if v is None else format(v * scale, fmt)
        for n, s in self.stats().items():
            rows.append((n, str(s["launches"]), f(s["total_ms"], ".3f"),
                         f(s["mean_ms"], ".1f", 1e3), f(s["gbps"], ".1f"),
                         f(s["bw_peak"], ".1f", 100), f(s["tflops"], ".2f"),
                         f(s["flops_peak"], ".1f", 100)))
        widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
        lines = [head] + ["  ".join(c.ljust(w) if i == 0 else c.rjust(w)
                                    for i, (c, w) in enumerate(zip(r, widths))) for r in rows]
        return "\n".join(lines)


def profile(print_table=True, file=None) -> Profile:
    """A context manager recording every kernel launch inside it (see the module doc)."""
    return Profile(print_table=print_table, file=file)


def _profile_at_exit():
    prof = Profile().start()

    def report():
        prof.stop()
        if prof.records:
            print(prof.table(), file=sys.stderr)
    atexit.register(report)
    return prof


# read once at import, like TILEWORK_INTERPRET
AT_EXIT = _profile_at_exit() if os.environ.get("TILEWORK_PROFILE", "0") not in ("", "0") \
    else None

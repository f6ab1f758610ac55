"""What the tutorials share: finding the example kernels, running kernels in the interpreter
when there is no GPU, building the same kernel source under Triton, timing, and the plot.

Each tutorial has `check_cpu()` (its kernels interpreted on a tiny size: test_tutorials.py
runs these), `check_gpu()` and `benchmark()` (on the GPU: tilework vs Triton vs torch, a PNG
in docs/tutorials/img/ with the card's name in its title).
"""
from __future__ import annotations

import importlib.util
import os
import pathlib
import sys
import tempfile

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parents[1]
IMG = HERE / "img"
sys.path.insert(0, str(ROOT / "examples"))

import tilework  # noqa: E402
from tilework.runtime.device import gpu_available  # noqa: E402


def gpu() -> bool:
    return gpu_available()


def device():
    return "cuda" if gpu() else "cpu"


INTERPRETED: list = []  # the kernels `interpret` switched (test_tutorials switches them back)


def interpret(*things):
    """Runs these kernels (JITFunctions, autotuned kernels, or whole modules: every kernel in
    them) in the CPU interpreter from now on."""
    for t in things:
        if isinstance(t, type(sys)):
            interpret(*[v for v in vars(t).values() if hasattr(v, "base_fn") or
                        isinstance(v, tilework.JITFunction)])
            continue
        fn = getattr(t, "base_fn", t)
        if not fn.interpret:
            fn.interpret = True
            INTERPRETED.append(fn)


def compiled_again():
    """Undoes `interpret`."""
    while INTERPRETED:
        INTERPRETED.pop().interpret = False


def triton_source(text: str) -> str:
    """A tilework module's source with its tilework imports made Triton's."""
    lines = []
    for line in text.splitlines():
        s = line.strip()
        if s == "import tilework":
            line = line.replace("import tilework", "import triton as tilework")
        elif s.startswith(("import tilework.", "from tilework")):
            line = line.replace("tilework", "triton", 1)
        lines.append(line)
    return "\n".join(lines) + "\n"


def triton_module(path, name=None):
    """The module at `path` (an examples/ name or a file) with its tilework imports made
    Triton's (`import triton as tilework`, `import triton.language as tl`, ...): the same
    kernel source compiled by Triton.  None when Triton is not installed or refuses it."""
    try:
        import triton  # noqa: F401
    except ImportError:
        return None
    path = pathlib.Path(path)
    if not path.suffix:
        path = ROOT / "examples" / f"{path}.py"
    name = name or f"triton_{path.stem.replace('-', '_')}"
    out = pathlib.Path(tempfile.mkdtemp()) / f"{name}.py"
    out.write_text(triton_source(path.read_text()))  # Triton reads kernel sources from files
    spec = importlib.util.spec_from_file_location(name, out)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    try:
        spec.loader.exec_module(mod)
    except Exception as e:  # a tilework-only API: no Triton series
        print(f"  (Triton cannot build {path.name}: {type(e).__name__}: {e})")
        return None
    return mod


def bench(fn) -> float:
    """Milliseconds per call (CUDA events, L2 flushed: tilework.testing.do_bench)."""
    from tilework.testing import do_bench
    return do_bench(fn, warmup=25, rep=100, return_mode="median")


def card() -> str:
    import torch
    return torch.cuda.get_device_name() if gpu() else "CPU"


def sweep(xs, providers, metric):
    """{provider label: [metric(ms, x) per x]} timing `providers[label](x) -> callable`; a
    provider that fails at a size (or is None) gets NaN there."""
    out = {}
    for label, make in providers.items():
        ys = []
        for x in xs:
            try:
                ms = bench(make(x)) if make is not None else float("nan")
                ys.append(metric(ms, x))
            except Exception as e:  # noqa: BLE001 (a provider failing at one size)
                print(f"  {label} at {x}: {type(e).__name__}: {e}")
                ys.append(float("nan"))
        out[label] = ys
    return out


def plot(name, title, xs, series, xlabel, ylabel, log_x=True, folder=None):
    """A line per provider; writes img/<name>.png (the card's name in the title); prints the
    table too.  Returns the path."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    folder = pathlib.Path(folder or IMG)
    folder.mkdir(parents=True, exist_ok=True)
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for label, ys in series.items():
        ax.plot(xs, ys, marker="o", label=label)
    if log_x:
        ax.set_xscale("log", base=2)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(f"{title} on {card()}")
    ax.grid(True, alpha=0.3)
    ax.legend()
    path = folder / f"{name}.png"
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    print(f"  {xlabel:>12} " + " ".join(f"{k:>12}" for k in series))
    for i, x in enumerate(xs):
        print(f"  {x!s:>12} " + " ".join(f"{series[k][i]:12.1f}" for k in series))
    print(f"  wrote {path.relative_to(ROOT) if path.is_relative_to(ROOT) else path}")
    return path


def main(module):
    """A tutorial's main: the CPU check without a GPU, else the GPU check and the benchmark
    (a check returning False has skipped: nothing more runs)."""
    name = pathlib.Path(module.__file__).stem
    if gpu():
        with tilework.profile():  # each check kernel's launches, time and rates
            skipped = module.check_gpu() is False
        if skipped:
            return
        print(f"{name}: correct on {card()}")
        if os.environ.get("TUTORIAL_NO_BENCH") in (None, "", "0"):
            module.benchmark()
    else:
        if module.check_cpu() is not False:
            print(f"{name}: correct in the interpreter (no GPU: no benchmark)")

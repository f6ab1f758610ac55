"""Deployable ahead-of-time kernels: a bundle is a folder with `manifest.json` and one binary
per kernel and target (cubin, PTX when no ptxas was found, or hsaco), plus a C header and
source per NVIDIA kernel (`bundle_c.py`).  `tilework compile --emit bundle` writes it
(`write`); `load(folder)` launches its kernels with only cuda-python or hip-python: nothing
here imports MLIR, llvmlite or the compiler.

    b = tilework.runtime.load("add_bundle")
    b.add_kernel[(n // 1024,)](x, y, out, n)   # the runtime parameters, in order
"""
from __future__ import annotations

import json
import os

from . import bundle_c
from .abi import param_kind, param_kinds
from .device import runtime_for
from .launch_args import normalize_grid
from .warm_cache import CachedKernel

FORMAT = "tilework-bundle"
VERSION = 1
MANIFEST = "manifest.json"


def binary_of(ck) -> tuple[str, bytes]:
    """(file extension, bytes) of what a runtime loads of a compiled kernel."""
    for stage in ("cubin", "hsaco"):
        if ck.asm.get(stage):
            return stage, ck.asm[stage]
    return "ptx", ck.asm["ptx"].encode() + b"\0"


def params_of(metadata: dict) -> list:
    """[(parameter name, kind)] of a kernel's launch parameters, in order (a descriptor's
    several as `<name>_<i>`; the global scratch buffer last)."""
    out = []
    for name, dtype in metadata.get("signature", {}).items():
        kinds = param_kind(dtype)
        out += [(name, kinds)] if len(kinds) == 1 else [(f"{name}_{i}", k)
                                                        for i, k in enumerate(kinds)]
    if metadata.get("global_scratch_size"):
        out.append(("global_scratch", "p"))
    return out


def write(kernels, folder: str) -> list:
    """Adds compiled kernels (one per kernel and target) to the bundle in `folder` (created,
    or merged into: a kernel compiled again for a target replaces its entry); returns the
    paths written."""
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, MANIFEST)
    manifest = {"format": FORMAT, "version": VERSION, "kernels": []}
    if os.path.exists(path):
        manifest = read_manifest(folder)
    written = []
    for ck in kernels:
        if ck.metadata.get("tma"):  # (the launchers here pass no tensor maps)
            raise ValueError(f"kernel {ck.name} loads host tensor descriptors by TMA (a "
                             f"tensor map per launch); bundles cannot pass tensor maps yet: "
                             f"compile it with tma=False")
        target = str(ck.target)
        ext, data = binary_of(ck)
        fname = f"{ck.name}.{target}.{ext}"
        _write(os.path.join(folder, fname), data)
        written.append(os.path.join(folder, fname))
        entry = {"name": ck.name, "target": target, "binary": fname,
                 "kinds": param_kinds(ck.metadata), "params": params_of(ck.metadata),
                 "metadata": ck.metadata}
        manifest["kernels"] = [e for e in manifest["kernels"]
                               if (e["name"], e["target"]) != (ck.name, target)] + [entry]
        if target.startswith("sm_"):
            for fn, text in bundle_c.sources(entry, data).items():
                _write(os.path.join(folder, fn), text.encode())
                written.append(os.path.join(folder, fn))
    _write(path, json.dumps(manifest, indent=1).encode())
    return [path] + written


def _write(path: str, data: bytes) -> None:
    tmp = f"{path}.tmp{os.getpid()}"
    with open(tmp, "wb") as f:
        f.write(data)
    os.replace(tmp, path)


def read_manifest(folder: str) -> dict:
    try:
        with open(os.path.join(folder, MANIFEST)) as f:
            manifest = json.load(f)
    except (OSError, ValueError) as e:
        raise ValueError(f"{folder} is not a tilework bundle: {e}") from None
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise ValueError(f"{folder} is not a tilework bundle (no '{FORMAT}' manifest)")
    if manifest.get("version") != VERSION:
        raise ValueError(f"{folder}: bundle version {manifest.get('version')} is not "
                         f"supported (this runtime reads version {VERSION})")
    return manifest


class Bundle:
    """A loaded bundle: its kernels as attributes (or `bundle["name"]`)."""

    def __init__(self, folder: str):
        self.folder = folder
        self.manifest = read_manifest(folder)
        self.kernels = {}
        for e in self.manifest["kernels"]:
            self.kernels.setdefault(e["name"], BundleKernel(self, e["name"]))
        for e in self.manifest["kernels"]:
            self.kernels[e["name"]].entries[e["target"]] = e

    def __getitem__(self, name):
        try:
            return self.kernels[name]
        except KeyError:
            raise KeyError(f"bundle {self.folder} has no kernel {name!r}; it has "
                           f"{', '.join(sorted(self.kernels))}") from None

    def __getattr__(self, name):
        if name.startswith("__") or name in ("kernels", "folder", "manifest"):
            raise AttributeError(name)
        try:
            return self[name]
        except KeyError as e:
            raise AttributeError(e.args[0]) from None


class BundleKernel:
    """One kernel of a bundle: `k[grid](*params)` launches the binary of the current device's
    target on the current stream (tensors pass their data pointer)."""

    def __init__(self, bundle: Bundle, name: str):
        self.bundle, self.name = bundle, name
        self.entries: dict = {}   # target -> manifest entry
        self.loaded: dict = {}    # target -> the runtime's loaded kernel

    def _kernel(self):
        rt = runtime_for(None)
        target = rt.target()
        k = self.loaded.get(target)
        if k is None:
            e = self.entries.get(target)
            if e is None:
                raise RuntimeError(f"bundle kernel {self.name} has no binary for this device "
                                   f"({target}); it has {', '.join(sorted(self.entries))}")
            with open(os.path.join(self.bundle.folder, e["binary"]), "rb") as f:
                data = f.read()
            stage = e["binary"].rsplit(".", 1)[1]
            asm = {stage: data if stage != "ptx" else data.rstrip(b"\0").decode()}
            k = self.loaded[target] = rt.load(CachedKernel(e["name"], target, None, asm,
                                                           e["metadata"], ""))
        return rt, k

    def __getitem__(self, grid):
        return lambda *args: self.launch(grid, *args)

    def launch(self, grid, *args):
        rt, k = self._kernel()
        if len(args) != len(k.kinds):
            names = ", ".join(n for n, _ in params_of(k.metadata))
            raise TypeError(f"bundle kernel {self.name} takes {len(k.kinds)} parameters "
                            f"({names}), got {len(args)}")
        params = [_pointer(a) if kind == "p" else a for kind, a in zip(k.kinds, args)]
        g = normalize_grid(self, grid, args)
        if g[0] and g[1] and g[2]:
            rt.launch(k, g, params)
        return k

    @property
    def fn(self):  # what `normalize_grid`'s messages locate (no source here)
        return None

    @property
    def __name__(self):
        return self.name

    @property
    def arg_names(self):
        return [n for n, _ in next(iter(self.entries.values()))["params"]]


def _pointer(a) -> int:
    if isinstance(a, int):
        return a
    if hasattr(a, "data_ptr"):
        return a.data_ptr()
    cai = getattr(a, "__cuda_array_interface__", None)
    if cai is not None:
        return cai["data"][0]
    raise TypeError(f"expected a GPU tensor or an address, got {type(a).__name__}")


def load(folder: str) -> Bundle:
    """The bundle `tilework compile --emit bundle` wrote to `folder`."""
    return Bundle(folder)

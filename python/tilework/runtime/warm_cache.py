"""A warm start's variant from the disk cache without the compiler: the cache key computed as
`compiler/driver.py` computes it (the compiler's sources, the specialization, the options,
the target), read with `FileCache`, so a process whose kernels are cached imports no MLIR
or LLVM.  `test_native_launch.py` checks the key equals the driver's; a key that ever
differs only misses (the driver then compiles or finds the entry itself).
"""
from __future__ import annotations

import hashlib
import importlib.util
import json
import os

from ..compiler.cache import FileCache
from ..compiler.kernel_stats import KernelMetadata, KernelStats
from ..language.tuples import spec_key
from ..version import __version__

BINARY_STAGES = ("cubin", "hsaco")
_COMPILER_HASH = None


def compiler_hash() -> str:
    """The driver's `compiler_hash`: every .py of the tilework package and of its
    dialects/lowering/backends subpackages, found without importing them."""
    global _COMPILER_HASH
    if _COMPILER_HASH is None:
        h = hashlib.sha256(__version__.encode())
        here = os.path.dirname(os.path.abspath(__file__))
        roots = [os.path.dirname(here)]  # tilework
        for sub in ("dialects", "lowering", "backends"):
            roots += list(importlib.util.find_spec(f"tilework.{sub}")
                          .submodule_search_locations)[:1]
        for root in roots:
            for d, dirs, files in sorted(os.walk(root)):
                dirs.sort()
                for f in sorted(files):
                    if f.endswith(".py"):
                        with open(os.path.join(d, f), "rb") as fh:
                            h.update(f.encode() + fh.read())
        _COMPILER_HASH = h.hexdigest()
    return _COMPILER_HASH


def cache_key(fn, signature, constants, attrs, options, target: str) -> str:
    """The disk cache key of this variant (the driver's `ASTSource.hash` and `compile`)."""
    spec = (sorted((k, spec_key(v)) for k, v in signature.items()),
            sorted((k, repr(v)) for k, v in constants.items()),
            sorted((k, sorted(v.items())) for k, v in attrs.items()))
    src_hash = hashlib.sha256((fn.cache_key + repr(spec)).encode()).hexdigest()
    return hashlib.sha256(
        f"{compiler_hash()}|{src_hash}|{options.key()}|{target}".encode()).hexdigest()


class CachedKernel(KernelStats):
    """What the runtimes load of a compiled kernel (`CompiledKernel`'s name, asm, metadata,
    key and binary), read from a cache entry."""
    __slots__ = ("name", "target", "options", "asm", "metadata", "key")

    def __init__(self, name, target, options, asm, metadata, key):
        self.name, self.target, self.options = name, target, options
        self.asm, self.metadata, self.key = asm, KernelMetadata(metadata), key

    @property
    def binary(self) -> bytes:
        b = self.asm.get("cubin") or self.asm.get("hsaco")
        if b:
            return b
        return self.asm["ptx"].encode() + b"\0"


def from_files(files: dict, target: str, options, key: str) -> CachedKernel | None:
    """The kernel of a cache entry's files (as the driver writes them), or None."""
    try:
        md = json.loads(files["metadata.json"])
        name = md["name"]
        asm = {s: files[f"{name}.{s}"] if s in BINARY_STAGES else files[f"{name}.{s}"].decode()
               for s in md["stages"]}
    except (KeyError, TypeError, ValueError):
        return None
    return CachedKernel(name, target, options, asm, md, key)


def lookup(fn, signature, constants, attrs, options, target: str) -> CachedKernel | None:
    """The cached variant, or None (not cached, or TILEWORK_WARM_CACHE=0)."""
    if os.environ.get("TILEWORK_WARM_CACHE", "1") == "0":
        return None
    key = cache_key(fn, signature, constants, attrs, options, target)
    files = FileCache().get(key)
    return from_files(files, target, options, key) if files is not None else None

"""The compile driver: runs a backend's ordered stage dictionary as a chain (each stage
function gets only its predecessor's output and the metadata), caches every stage and dumps
them as `<kernel>.<stage>`.

    tile -> tilegpu -> llvm -> llir -> ptx -> cubin        (NVIDIA)
    tile -> tilegpu -> llvm -> llir -> amdgcn -> hsaco     (AMD)

`compile()` starts from a @jit function (the `tile` stage is the frontend) or from the text of
any stage (`start=`), e.g. hand-edited tilegpu IR.
"""
from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass

import mlir.ir as ir

from tilework import backends, dialects, lowering
from tilework.backends import Target, get_backend, parse_target
from tilework.dialects import new_context, verify
from tilework.frontend.codegen import build_kernel
from tilework.version import __version__

from .cache import FileCache
from .options import CompileOptions

MLIR_STAGES = ("tile", "tilegpu", "llvm")
BINARY_STAGES = ("cubin", "hsaco")


@dataclass
class CompiledKernel:
    name: str
    target: Target
    options: CompileOptions
    asm: dict            # stage -> text (str) or binary (bytes)
    metadata: dict
    key: str = ""

    @property
    def binary(self) -> bytes:
        """What the runtime loads: the cubin/hsaco, or the PTX when no ptxas was found."""
        b = self.asm.get("cubin") or self.asm.get("hsaco")
        if b:
            return b
        return self.asm["ptx"].encode() + b"\0"


@dataclass
class ASTSource:
    """A @jit function with its specialization."""
    fn: object               # JITFunction
    signature: dict          # runtime param -> dtype
    constants: dict          # constexpr param -> value
    attrs: dict              # param -> {"tile.divisibility": 16}

    def hash(self) -> str:
        spec = (sorted((k, str(v)) for k, v in self.signature.items()),
                sorted((k, repr(v)) for k, v in self.constants.items()),
                sorted((k, sorted(v.items())) for k, v in self.attrs.items()))
        return hashlib.sha256((self.fn.cache_key + repr(spec)).encode()).hexdigest()


_COMPILER_HASH = None


def compiler_hash() -> str:
    """Hash of the compiler's own sources (every .py of the tilework package and its
    dialects/lowering/backends subpackages): part of the cache key, so a changed compiler never
    reads kernels an older one cached."""
    global _COMPILER_HASH
    if _COMPILER_HASH is None:
        h = hashlib.sha256(__version__.encode())
        roots = [os.path.dirname(os.path.dirname(os.path.abspath(__file__)))]  # tilework
        roots += [os.path.dirname(p.__file__) for p in (dialects, lowering, backends)]
        for root in roots:
            for d, dirs, files in sorted(os.walk(root)):
                dirs.sort()
                for f in sorted(files):
                    if f.endswith(".py"):
                        with open(os.path.join(d, f), "rb") as fh:
                            h.update(f.encode() + fh.read())
        _COMPILER_HASH = h.hexdigest()
    return _COMPILER_HASH


def _dump_dir() -> str | None:
    return os.environ.get("TILEWORK_DUMP_DIR") or None


def _as_text(x):
    if x is None:
        return None
    if isinstance(x, (bytes, str)):
        return x
    return str(x)


def compile(src, target: str | Target, options: CompileOptions | None = None,
            start: str | None = None, name: str | None = None,
            cache: FileCache | None | bool = None) -> CompiledKernel:
    """Compiles `src` (an ASTSource, or the text of stage `start`) for `target`."""
    options = options or CompileOptions()
    target = parse_target(target)  # an unknown target is refused before anything runs
    options.check_target(target)
    backend = get_backend(target)
    stages = backend.stages(options)
    order = ["tile"] + list(stages)
    if start is not None and start not in order:
        raise ValueError(f"unknown stage {start!r}; the stages for {target} are {order}")
    src_hash = src.hash() if isinstance(src, ASTSource) else hashlib.sha256(
        (start + "\0" + (src if isinstance(src, str) else src.decode("latin1"))).encode()).hexdigest()
    key = hashlib.sha256(
        f"{compiler_hash()}|{src_hash}|{options.key()}|{target}".encode()).hexdigest()
    fc = FileCache() if cache is None or cache is True else (cache or None)
    if fc is not None:
        files = fc.get(key)
        if files is not None:
            return _from_files(files, target, options, key)

    md = {}
    ctx = new_context()
    with ctx, ir.Location.unknown(ctx):
        if isinstance(src, ASTSource):
            cur = build_kernel(src.fn, src.signature, src.constants, src.attrs, ctx, name=name,
                               options=options)
            kname = name or src.fn.__name__
            first = 1
            asm = {"tile": str(cur)}
            verify(cur)
            # the kernel's runtime parameters, in order (the runtime derives its ABI from them)
            md["signature"] = {k: str(t) for k, t in src.signature.items()}
        else:
            asm = {}
            if start in MLIR_STAGES:
                cur = ir.Module.parse(src)
                verify(cur)
            else:
                cur = src
            asm[start] = _as_text(cur)
            kname = name or _kernel_name(asm[start]) or "kernel"
            first = order.index(start) + 1
        md.update(name=kname, target=target.arch, backend=target.backend,
                  num_warps=options.num_warps, warp_size=target.warp_size, shared=0)
        for stage in order[first:]:
            cur = stages[stage](cur, md)
            asm[stage] = _as_text(cur)
            if stage == "tilegpu":
                verify(cur)
    md = {k: v for k, v in md.items() if not k.startswith("_")}
    md["num_ctas"] = options.num_ctas  # for the launch (the stages do not read it)
    ck = CompiledKernel(kname, target, options, {k: v for k, v in asm.items() if v is not None},
                        md, key)
    if fc is not None:
        fc.put(key, _to_files(ck))
    dump = _dump_dir()
    if dump:
        dump_kernel(ck, dump)
    return ck


def _kernel_name(text) -> str | None:
    import re
    if isinstance(text, bytes):
        return None
    for pat in (r"func\.func @(\w+)", r"gpu\.func @(\w+)", r"llvm\.func @(\w+)",
                r"define \S* ?void @(\w+)", r"\.entry\s+(\w+)", r"\.amdhsa_kernel\s+(\w+)"):
        m = re.search(pat, text)
        if m:
            return m.group(1)
    return None


def _to_files(ck: CompiledKernel) -> dict:
    files = {f"{ck.name}.{s}": v for s, v in ck.asm.items()}
    files["metadata.json"] = json.dumps(dict(ck.metadata, stages=list(ck.asm)))
    return files


def _from_files(files, target, options, key) -> CompiledKernel:
    md = json.loads(files["metadata.json"])
    name = md["name"]
    asm = {}
    for s in md["stages"]:
        data = files[f"{name}.{s}"]
        asm[s] = data if s in BINARY_STAGES else data.decode()
    return CompiledKernel(name, target, options, asm, md, key)


def dump_kernel(ck: CompiledKernel, directory: str) -> list[str]:
    """Writes every stage of `ck` as `<directory>/<kernel>.<stage>`; returns the paths."""
    os.makedirs(directory, exist_ok=True)
    paths = []
    for s, v in ck.asm.items():
        p = os.path.join(directory, f"{ck.name}.{s}")
        with open(p, "wb") as f:
            f.write(v if isinstance(v, bytes) else v.encode())
        paths.append(p)
    return paths

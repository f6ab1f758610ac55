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
import re
from dataclasses import dataclass

import mlir.ir as ir

from tilework import backends, dialects, lowering
from tilework.backends import Target, get_backend, parse_target
from tilework.backends.common import TARGET_ATTR
from tilework.dialects import VerificationError, new_context, verify
from tilework.errors import StageError
from tilework.frontend.codegen import build_kernel
from tilework.language.tuples import flat_signature, spec_key
from tilework.lowering.registry import LoweringError
from tilework.version import __version__

from .cache import FileCache
from .kernel_stats import KernelMetadata, KernelStats
from .options import CompileOptions

MLIR_STAGES = ("tile", "tilegpu", "llvm")
BINARY_STAGES = ("cubin", "hsaco")
# stages whose IR is laid out for one target and warp count (recorded as module attributes)
LAYOUT_STAGES = ("tilegpu", "llvm")


@dataclass
class CompiledKernel(KernelStats):
    name: str
    target: Target
    options: CompileOptions
    asm: dict            # stage -> text (str) or binary (bytes)
    metadata: dict
    key: str = ""

    def __post_init__(self):
        if not isinstance(self.metadata, KernelMetadata):
            self.metadata = KernelMetadata(self.metadata)

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
        spec = (sorted((k, spec_key(v)) for k, v in self.signature.items()),
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
            ck = _from_files(files, target, options, key)
            if ck is not None:
                return ck
            fc.evict(key)  # checksums match but the contents are not an entry: rewrite it

    md = {}
    ctx = new_context()
    with ctx, ir.Location.unknown(ctx):
        if isinstance(src, ASTSource):
            cur = build_kernel(src.fn, src.signature, src.constants, src.attrs, ctx, name=name,
                               options=options, target=target)
            kname = name or src.fn.__name__
            first = 1
            asm = {"tile": str(cur)}
            verify(cur)
            # the kernel's runtime parameters, in order (the runtime derives its ABI from them)
            md["signature"] = {k: str(t) for k, t in flat_signature(src.signature)}
        else:
            asm = {}
            if start in MLIR_STAGES:
                cur = parse_stage_text(src, start, target)
                if start in LAYOUT_STAGES:
                    check_restart(cur, start, target, options)
            else:
                cur = src
            asm[start] = _as_text(cur)
            kname = name or _kernel_name(asm[start]) or "kernel"
            first = order.index(start) + 1
        md.update(name=kname, target=target.arch, backend=target.backend,
                  num_warps=options.num_warps, warp_size=target.warp_size, shared=0)
        for stage in order[first:]:
            try:
                cur = stages[stage](cur, md)
                if stage == "tilegpu":
                    verify(cur)
            except (LoweringError, VerificationError, ir.MLIRError) as e:
                if isinstance(src, ASTSource):
                    raise
                raise StageError(f"{stage} stage for {target.arch}, from the {start} text: "
                                 f"{_one_message(e)}", stage, target.arch) from None
            except RuntimeError as e:
                if isinstance(src, ASTSource) or not str(e).startswith("LLVM IR parsing error"):
                    raise
                raise StageError(f"the input is not valid {start} text (LLVM IR) for "
                                 f"{target.arch}: {_one_message(e)}", stage, target.arch) from None
            asm[stage] = _as_text(cur)
    md = {k: v for k, v in md.items() if not k.startswith("_")}
    md["num_ctas"] = options.num_ctas  # for the launch (the stages do not read it)
    md["launch_cooperative_grid"] = options.launch_cooperative_grid  # likewise
    ck = CompiledKernel(kname, target, options, {k: v for k, v in asm.items() if v is not None},
                        md, key)
    if fc is not None:
        fc.put(key, _to_files(ck))
    dump = _dump_dir()
    if dump:
        dump_kernel(ck, dump)
    return ck


def _one_message(e) -> str:
    """The first diagnostic of an MLIR/LLVM/lowering error, with its location, on one line."""
    diags = getattr(e, "error_diagnostics", None)
    if diags:
        return f"{diags[0].location}: {diags[0].message}"
    msg = str(e)
    if msg.startswith("LLVM IR parsing error"):
        msg = msg.split("\n", 1)[-1]
    return " ".join(msg.split("\n")[:1]).strip() or type(e).__name__


def parse_stage_text(text, stage: str, target: Target) -> ir.Module:
    """The module of an MLIR stage's text, checked to be that stage's IR; a StageError names
    the stage and the target otherwise (a truncated file, another stage's text)."""
    if isinstance(text, bytes):
        raise StageError(f"the input of stage {stage} is binary, not {stage} IR text", stage,
                         target.arch)
    if not text.strip():
        raise StageError(f"the {stage} input is empty", stage, target.arch)
    try:
        mod = ir.Module.parse(text)
    except ir.MLIRError as e:
        raise StageError(f"the input is not valid {stage} IR (for {target.arch}): "
                         f"{_one_message(e)}", stage, target.arch) from None
    try:
        verify(mod)
    except VerificationError as e:
        raise StageError(f"the {stage} input does not verify: {e}", stage, target.arch) from None
    has_layouts = "#tilegpu." in text or "tilegpu.num_warps" in text
    if stage == "tile" and has_layouts:
        raise StageError("the tile input carries layouts (#tilegpu...): it is tilegpu IR; "
                         "restart it with start='tilegpu'", stage, target.arch)
    if stage == "tilegpu" and "tensor<" in text and not has_layouts:
        raise StageError("the tilegpu input has no layouts: it looks like tile-stage IR; "
                         "restart it with start='tile'", stage, target.arch)
    if stage == "llvm" and "gpu.module" not in text:
        raise StageError("the llvm input has no gpu.module: it is not llvm-stage IR", stage,
                         target.arch)
    return mod


def recorded_config(mod: ir.Module) -> tuple:
    """(target arch or None, num_warps or None, warp size or None) recorded in a layout-bearing
    stage's module: `tilegpu.target` (tilegpu), the gpu.module's target chip (llvm)."""
    import re
    attrs = mod.operation.attributes
    arch = ir.StringAttr(attrs[TARGET_ATTR]).value if TARGET_ATTR in attrs else None
    if arch is None:
        m = re.search(r'#(?:nvvm|rocdl)\.target<[^>]*chip = "(\w+)"', str(mod))
        arch = m.group(1) if m else None
    nw = ir.IntegerAttr(attrs["tilegpu.num_warps"]).value if "tilegpu.num_warps" in attrs \
        else None
    ws = ir.IntegerAttr(attrs["tilegpu.warp_size"]).value if "tilegpu.warp_size" in attrs \
        else None
    return arch, nw, ws


def check_restart(mod: ir.Module, stage: str, target: Target, options: CompileOptions):
    """A layout-bearing stage restarts only for the target and warp count its layouts were
    made for: anything else would compile silently wrong code (64-lane shuffles on a 32-lane
    target, a block size the launcher does not use)."""
    arch, nw, ws = recorded_config(mod)
    if arch is not None and arch != target.arch:
        raise StageError(f"this {stage} IR was made for target {arch}, not {target.arch}: its "
                         f"layouts are {arch}'s; compile it for {arch} or restart from the tile "
                         f"stage", stage, target.arch)
    if arch is None and ws is not None and ws != target.warp_size:
        raise StageError(f"this {stage} IR was made for warps of {ws} threads; {target.arch}'s "
                         f"have {target.warp_size}: restart from the tile stage", stage,
                         target.arch)
    if nw is not None and nw != options.num_warps:
        raise StageError(f"this {stage} IR was made for num_warps={nw}, not "
                         f"num_warps={options.num_warps}: its layouts fix the warp count; pass "
                         f"num_warps={nw} or restart from the tile stage", stage, target.arch)


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


def _from_files(files, target, options, key) -> CompiledKernel | None:
    """The kernel of a cache entry's files, or None if they do not make one."""
    try:
        md = json.loads(files["metadata.json"])
        name = md["name"]
        asm = {}
        for s in md["stages"]:
            data = files[f"{name}.{s}"]
            asm[s] = data if s in BINARY_STAGES else data.decode()
    except (KeyError, TypeError, ValueError):  # ValueError: bad JSON or UTF-8
        return None
    return CompiledKernel(name, target, options, asm, md, key)


def dump_kernel(ck: CompiledKernel, directory: str) -> list[str]:
    """Writes every stage of `ck` as `<directory>/<kernel>.<stage>`; returns the paths.  All
    files are written under temporary names first and then renamed into place, so a failure
    (an unwritable directory, a full disk) leaves none of them, nor any temporary file."""
    import tempfile
    if os.path.exists(directory) and not os.path.isdir(directory):
        raise NotADirectoryError(f"{directory} exists and is not a directory")
    os.makedirs(directory, exist_ok=True)
    umask = os.umask(0)
    os.umask(umask)
    temps, paths = [], []
    try:
        for s, v in ck.asm.items():
            fd, tmp = tempfile.mkstemp(dir=directory, prefix=f".{ck.name}.{s}.", suffix=".tmp")
            temps.append(tmp)
            with os.fdopen(fd, "wb") as f:
                f.write(v if isinstance(v, bytes) else v.encode())
            os.chmod(tmp, 0o666 & ~umask)  # as open() would create it (mkstemp makes 0600)
            paths.append(os.path.join(directory, f"{ck.name}.{s}"))
        for tmp, p in zip(temps, paths):
            os.replace(tmp, p)
    except BaseException:
        for tmp in temps:
            if os.path.exists(tmp):
                os.unlink(tmp)
        raise
    return paths

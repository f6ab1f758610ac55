"""NVIDIA backend: llvm -> llir -> ptx (LLVM's NVPTX through llvmlite) -> cubin (ptxas)."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile

from tilework.errors import StageError

from .. import common
from ..common import Backend
from .ptxas_level import huge_tile_bounds, ptxas_opt_level


def find_ptxas() -> str | None:
    """ptxas from $TILEWORK_PTXAS, the CUDA toolkit ($CUDA_HOME, /usr/local/cuda), the
    nvidia-cuda-nvcc wheel, then PATH; None if there is none (the driver JITs the PTX)."""
    cands = []
    if os.environ.get("TILEWORK_PTXAS"):
        cands.append(os.environ["TILEWORK_PTXAS"])
    for var in ("CUDA_HOME", "CUDA_PATH"):
        if os.environ.get(var):
            cands.append(os.path.join(os.environ[var], "bin", "ptxas"))
    cands.append("/usr/local/cuda/bin/ptxas")
    try:
        import nvidia.cuda_nvcc as _nv  # the pip wheel
        for base in list(getattr(_nv, "__path__", [])):
            cands.append(os.path.join(base, "bin", "ptxas"))
    except ImportError:
        pass
    which = shutil.which("ptxas")
    if which:
        cands.append(which)
    for c in cands:
        if c and os.path.isfile(c) and os.access(c, os.X_OK):
            return c
    return None


def ptxas_version(ptxas: str) -> str:
    """'CUDA 13.0' (from `ptxas --version`), or 'version unknown'."""
    try:
        out = subprocess.run([ptxas, "--version"], capture_output=True, text=True,
                             timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        return "version unknown"
    m = re.search(r"release (\d+\.\d+)", out)
    return f"CUDA {m.group(1)}" if m else "version unknown"


def _ptxas_message(stderr: str) -> str:
    """ptxas's errors on one line, without the temporary file's path."""
    lines = [ln.strip() for ln in stderr.splitlines()
             if ln.strip() and "Ptx assembly aborted" not in ln]
    lines = [re.sub(r"^ptxas\s*(?:\S*k\.ptx,\s*)?", "", ln) for ln in lines]
    return "; ".join(lines[:3]) or "no message"


class NVIDIABackend(Backend):
    binary_stage = "cubin"

    def tilegpu_passes(self, options) -> list:
        passes = common.tile_cleanup_passes(options) + common.layout_passes()
        if self.target.capability >= 90:  # TMA copies kept where exact (before any cleanup)
            passes = ["tile-tma-guard"] + passes
        # architecture-specific passes, chosen from self.target (its capability and matrix
        # instructions), as Triton's make_ttgir does
        if self.target.has("wgmma"):  # dots of mma v3 layouts: operands to shared memory
            passes = passes + ["tilegpu-warpgroup-dot"]
        if self.target.capability >= 80:  # cp.async: pipeline the loads feeding dots
            passes = passes + ["tilegpu-pipeline", "canonicalize", "cse", "tile-cse"]
        # warp_specialize-marked loops' TMA loads to a producer warp group (sm_90a; elsewhere
        # the loops are noted as ignored), before the TMA pipeliner
        passes = passes + ["tilegpu-warp-specialize"]
        if self.target.capability >= 90:  # host descriptors' blocks by TMA
            passes = passes + ["tilegpu-pipeline-tma", "tilegpu-tma-loads", "tilegpu-tma-stores",
                               "tilegpu-tma-store-wait-later"]
        if self.target.has("wgmma") and options.overlap_dots:  # (off by default: its docstring)
            passes = passes + ["tilegpu-overlap-dots"]
        passes = passes + common.access_passes() + common.shared_memory_passes()
        if self.target.has("wgmma"):  # wgmma operands fenced where they are written
            passes = passes + ["tilegpu-proxy-fences"]
        return passes

    def gpu_target_attr(self, options) -> str:
        return (f'#nvvm.target<O = {options.llvm_opt_level}, chip = "{self.target.arch}", '
                f'features = "{self.target.features}">')

    def llvm_conversion(self, options) -> tuple:
        # wgmma.mma_async has no LLVM intrinsic: convert-nvvm-to-llvm makes it inline PTX
        nvvm = "convert-nvvm-to-llvm," if self.target.has("wgmma") else ""
        return (f"gpu.module(convert-gpu-to-nvvm{{index-bitwidth=32}},{nvvm}"
                f"convert-arith-to-llvm,convert-math-to-llvm)",)

    def to_llvm(self, mod, md, options, pctx):
        mod = super().to_llvm(mod, md, options, pctx)
        tensor_map_params(self.gpu_module(mod))
        return mod

    def to_llir(self, mod, md) -> str:
        mod = common.as_module(mod)
        tma = tensor_map_params(self.gpu_module(mod))  # (idempotent: from the llvm text too)
        if tma:
            md["tma"] = tma
        scratch = global_scratch_size(self.gpu_module(mod))
        if scratch:  # the launch passes `scratch` bytes per program as the last parameter
            md["global_scratch_size"], md["global_scratch_align"] = scratch, 128
        return super().to_llir(mod, md)

    def add_binary_stages(self, st, options):
        st["ptx"] = lambda llir, md: self.to_ptx(llir, md, options)
        st["cubin"] = lambda ptx, md: self.to_cubin(ptx, md, options)

    def to_ptx(self, llir: str, md, options) -> str:
        ptx = llir_to_ptx(llir, self.target, options.llvm_opt_level)
        bounded = huge_tile_bounds(ptx, options)  # (a huge tile's kernel: .minnctapersm 1)
        if bounded is not ptx:
            md["min_ctas_per_sm"] = 1
        return bounded

    def to_cubin(self, ptx: str, md, options) -> bytes | None:
        warps = ptx_block_warps(ptx)
        if warps and warps > md.get("num_warps", 0):  # warp specialization's producer warps,
            md["num_warps"] = warps  # also on a restart from the llvm, llir or ptx text
        ptxas = find_ptxas()
        if ptxas is None:
            md["cubin_note"] = "no ptxas found: the driver JITs the PTX"
            return None
        level = md["ptxas_opt_level"] = ptxas_opt_level(ptx, options)  # (huge kernels: 1)
        # `.minnctapersm` where registers, not shared memory, cap the programs per SM; a
        # tensor-core kernel (where that is common) is compiled both ways at once: the cold
        # compile waits for one ptxas, not two in a row
        want = None if options.maxnreg else wanted_ctas(ptx, md.get("shared", 0), self.target)
        with tempfile.TemporaryDirectory() as d:
            first = _Ptxas(ptxas, self.target.arch, level, d, "k", ptx)
            second = _Ptxas(ptxas, self.target.arch, level, d, "k2", with_min_ctas(ptx, want)) \
                if want and _TENSOR_CORE.search(ptx) else None
            r = first.wait()
            if r.returncode != 0:
                if second:
                    second.kill()
                raise StageError(f"ptxas failed for target {self.target.arch} ({ptxas}, "
                                 f"{ptxas_version(ptxas)}): {_ptxas_message(r.stderr)}",
                                 "cubin", self.target.arch)
            md["ptxas_info"] = r.stderr.strip()
            best = first
            k = occupancy_hint(ptx, r.stderr, md.get("shared", 0), self.target) if want \
                else None
            if k:
                second = second or _Ptxas(ptxas, self.target.arch, level, d, "k2",
                                          with_min_ctas(ptx, k))
                r2 = second.wait()
                if r2.returncode == 0 and not _SPILLS.search(r2.stderr):
                    md["ptxas_info"] = r2.stderr.strip()
                    md["min_ctas_per_sm"] = k
                    best = second  # else it would spill: keep the first cubin
            elif second:
                second.kill()
            with open(best.out, "rb") as f:
                return f.read()


class _Ptxas:
    """One ptxas process compiling `ptx` into `<d>/<stem>.cubin`, started at once."""

    def __init__(self, ptxas, arch, level, d, stem, ptx):
        src, self.out = os.path.join(d, stem + ".ptx"), os.path.join(d, stem + ".cubin")
        with open(src, "w") as f:
            f.write(ptx)
        self.proc = subprocess.Popen([ptxas, f"-arch={arch}", f"-O{level}", "-v", src, "-o",
                                      self.out], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     text=True)

    def wait(self) -> subprocess.CompletedProcess:
        out, err = self.proc.communicate()
        return subprocess.CompletedProcess(self.proc.args, self.proc.returncode, out, err)

    def kill(self):
        self.proc.kill()
        self.proc.communicate()


_TENSOR_CORE = re.compile(r"\b(wgmma\.mma_async|mma\.sync)\b")


REGS_PER_SM = 65536
_MAX_THREADS_PER_SM = {86: 1536, 87: 1536, 89: 1536, 120: 1536}  # others: 2048
_SPILLS = re.compile(r"[1-9]\d* bytes spill (stores|loads)")


TMA_ATTR = "tile.tma"  # (frontend/ops_descriptor.py, lowering/to_llvm.py)


def tensor_map_params(gpu_module) -> list:
    """Makes the kernels' tensor-map parameters (last, or before the global scratch) 128-byte, 64-aligned grid constants
    (`.param .align 64 .b8 [128]`: `byval([128 x i8]) align 64 "nvvm.grid_constant"`, which
    convert-gpu-to-nvvm does not carry over from the gpu.func) and returns their plans
    ([{"arg", "box", "swizzle"}], in parameter order) for the runtime, which appends an
    encoded tensor map per plan to the launch's parameters."""
    import mlir.ir as ir
    plans = []
    for op in gpu_module.regions[0].blocks[0].operations:
        op = op.operation
        if op.name != "llvm.func" or TMA_ATTR not in op.attributes:
            continue
        texts = [ir.StringAttr(a).value for a in ir.ArrayAttr(op.attributes[TMA_ATTR])]
        nargs = len(op.regions[0].blocks[0].arguments)
        attrs = list(ir.ArrayAttr(op.attributes["arg_attrs"])) if "arg_attrs" in op.attributes \
            else [ir.DictAttr.get({})] * nargs
        end = len(attrs) - (SCRATCH_ATTR in op.attributes)  # (the global scratch is last)
        for i in range(end - len(texts), end):
            d = {n.name: n.attr for n in ir.DictAttr(attrs[i])}
            d["llvm.byval"] = ir.TypeAttr.get(ir.Type.parse("!llvm.array<128 x i8>"))
            d["llvm.align"] = ir.IntegerAttr.get(ir.IntegerType.get_signless(64), 64)
            d["nvvm.grid_constant"] = ir.UnitAttr.get()
            attrs[i] = ir.DictAttr.get(d)
        op.attributes["arg_attrs"] = ir.ArrayAttr.get(attrs)
        for t in texts:
            kv = dict(p.split("=", 1) for p in t.split(";"))
            plans.append({"arg": kv["arg"], "box": [int(x) for x in kv["box"].split(",")],
                          "swizzle": int(kv["swizzle"])})
    return plans


SCRATCH_ATTR = "tile.global_scratch"  # (frontend/ops_descriptor.py, lowering/to_llvm.py)


def global_scratch_size(gpu_module) -> int:
    """The global scratch bytes a program of the module's kernel needs (tensor maps of
    descriptors made in the kernel, 128 bytes each), 0 if none."""
    import mlir.ir as ir
    for op in gpu_module.regions[0].blocks[0].operations:
        op = op.operation
        if op.name == "llvm.func" and SCRATCH_ATTR in op.attributes:
            return ir.IntegerAttr(op.attributes[SCRATCH_ATTR]).value
    return 0


def ptx_block_warps(ptx: str) -> int | None:
    """The warps of the block the PTX's first `.maxntid`/`.reqntid` asks for (None without
    one)."""
    m = re.search(r"\.(?:maxntid|reqntid)\s+(\d+)(?:,\s*(\d+))?(?:,\s*(\d+))?", ptx)
    if m is None:
        return None
    threads = 1
    for g in m.groups():
        threads *= int(g or 1)
    return -(-threads // 32)


def _block_threads(ptx: str) -> int | None:
    m = re.search(r"\.(?:maxntid|reqntid)\s+(\d+)(?:,\s*(\d+))?(?:,\s*(\d+))?", ptx)
    if m is None:
        return None
    threads = 1
    for g in m.groups():
        threads *= int(g or 1)
    return threads


def wanted_ctas(ptx: str, shared: int, target) -> int | None:
    """The programs per SM shared memory and the thread limit allow, at most 2 (more only
    shortens the tensor-core kernels' register budget for little gain); None where that is
    1, where the PTX names no block size, or where it already pins registers or programs."""
    threads = _block_threads(ptx)
    if threads is None or ".minnctapersm" in ptx or ".maxnreg" in ptx:
        return None
    warps = -(-threads // 32)
    by_smem = (target.shared_memory + 1024) // (shared + 1024)
    by_threads = _MAX_THREADS_PER_SM.get(target.capability, 2048) // (warps * 32)
    want = min(by_smem, by_threads, 2)
    return want if want >= 2 else None


def occupancy_hint(ptx: str, ptxas_info: str, shared: int, target) -> int | None:
    """How many programs per SM to ask ptxas for (`.minnctapersm`), when its register
    allocation lets fewer run at once than `wanted_ctas`; else None.  A GEMM on sm_90a with
    96 KiB of pipeline buffers and 168 registers runs one program per SM where two fit in
    shared memory: at 128 registers it runs two."""
    want = wanted_ctas(ptx, shared, target)
    regs = re.search(r"Used (\d+) registers", ptxas_info)
    if want is None or regs is None:
        return None
    per_warp = -(-int(regs.group(1)) // 8) * 8 * 32
    by_regs = REGS_PER_SM // (per_warp * (-(-_block_threads(ptx) // 32)))
    return want if by_regs < want else None


def with_min_ctas(ptx: str, k: int) -> str:
    """`ptx` with `.minnctapersm k` after each kernel's `.maxntid`/`.reqntid` directive."""
    return re.sub(r"^(\.(?:maxntid|reqntid)[^\n]*)$", rf"\1\n.minnctapersm {k}", ptx,
                  flags=re.M)


def llir_to_ptx(llir: str, target, opt_level: int = 3) -> str:
    """LLVM IR text -> PTX: LLVM's default module pipeline at `opt_level`, then NVPTX code
    generation, as MLIR's gpu-module-to-binary does (same target machine: cpu = the arch,
    features = the PTX version), so the PTX is the same."""
    if "llvm.amdgcn." in llir or "amdgpu_kernel" in llir:
        raise ValueError("this LLVM IR was generated for an AMD target; compile it for a "
                         "gfx target, or start from an earlier stage")
    import llvmlite.binding as llvm
    llvm.initialize_all_targets()
    llvm.initialize_all_asmprinters()
    mod = llvm.parse_assembly(llir)
    mod.triple = "nvptx64-nvidia-cuda"
    tm = llvm.Target.from_triple(mod.triple).create_target_machine(
        cpu=target.arch, features=ptx_features(llir, target.features), opt=opt_level)
    mod.data_layout = str(tm.target_data)
    pto = llvm.create_pipeline_tuning_options(speed_level=opt_level)
    pto.loop_unrolling = pto.loop_interleaving = True  # as MLIR's optimizing transformer
    pto.loop_vectorization = True
    pto.slp_vectorization = has_narrow_arithmetic(llir)
    pb = llvm.create_pass_builder(tm, pto)
    pb.getModulePassManager().run(mod, pb)
    return tm.emit_assembly(mod)


def ptx_features(llir: str, features: str) -> str:
    """The target's PTX version, or 8.3 where the module writes tensor maps in the kernel
    (`tensormap.replace`, `fence.proxy.tensormap`: PTX ISA 8.3, which ptxas 12.3+ reads), so
    every other kernel's PTX stays as it was."""
    m = re.search(r"\+ptx(\d+)", features)
    if "tensormap.replace" in llir and m and int(m.group(1)) < 83:
        return features.replace(m.group(0), "+ptx83")
    return features


# LLVM's SLP vectorizer took most of the O3 time (bias_gelu_rowsum: 268 of 331 ms) and gave the
# same PTX on every example kernel: NVPTX has 32-bit vector registers, so it can only pack
# 16- and 8-bit arithmetic (f16x2, bf16x2); wide loads and stores are ours (vector_width) and
# the backend's load/store vectorizer's.  It runs where such arithmetic is.
_NARROW_ARITH = re.compile(
    r"= (?:fadd|fsub|fmul|fdiv|frem|fneg|add|sub|mul|udiv|sdiv|urem|srem|and|or|xor|shl|lshr"
    r"|ashr|fcmp \w+|icmp \w+|select i1)(?: \w+)* (?:half|bfloat|i16|i8)\b"
    r"|call [^@\n]*@llvm\.[\w.]*\.(?:f16|bf16|i16|i8)\b")


def has_narrow_arithmetic(llir: str) -> bool:
    """The LLVM IR computes on 16- or 8-bit values (not only loads, stores, conversions)."""
    return _NARROW_ARITH.search(llir) is not None


def kernel_name(ptx: str) -> str | None:
    m = re.search(r"\.entry\s+(\w+)", ptx)
    return m.group(1) if m else None

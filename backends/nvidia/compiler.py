"""NVIDIA backend: llvm -> llir -> ptx (MLIR's NVPTX serializer) -> cubin (ptxas)."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile

import mlir.ir as ir

from tilework.lowering import PassContext, run_pipeline

from ..common import Backend

PTX_FEATURES = "+ptx80"


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


class NVIDIABackend(Backend):
    binary_stage = "cubin"

    def gpu_target_attr(self, options) -> str:
        return (f'#nvvm.target<O = {options.opt_level}, chip = "{self.target.arch}", '
                f'features = "{PTX_FEATURES}">')

    def llvm_conversion(self, options) -> tuple:
        return ("gpu.module(convert-gpu-to-nvvm{index-bitwidth=32},convert-arith-to-llvm,"
                "convert-math-to-llvm)",)

    def add_binary_stages(self, st, options):
        st["ptx"] = lambda src, md: self.to_ptx(src, md)
        st["cubin"] = lambda ptx, md: self.to_cubin(ptx, md, options)

    def to_ptx(self, src, md) -> str:
        """From the llvm stage: MLIR's gpu-module-to-binary{format=isa}.  From llir text (a
        restart at that stage): LLVM's NVPTX target through llvmlite."""
        mod = md.outputs.get("llvm")
        if mod is None:
            return _llir_to_ptx(src, self.target.arch)
        run_pipeline(mod, ("gpu-module-to-binary{format=isa}",), PassContext())
        for op in mod.body.operations:
            if op.operation.name == "gpu.binary":
                from mlir.dialects import gpu
                objs = ir.ArrayAttr(op.operation.attributes["objects"])
                return gpu.ObjectAttr(objs[0]).object.decode()
        raise RuntimeError("gpu-module-to-binary produced no gpu.binary")

    def to_cubin(self, ptx: str, md, options) -> bytes | None:
        ptxas = find_ptxas()
        if ptxas is None:
            md.metadata["cubin_note"] = "no ptxas found: the driver JIT-compiles the PTX"
            return None
        with tempfile.TemporaryDirectory() as d:
            src, out = os.path.join(d, "k.ptx"), os.path.join(d, "k.cubin")
            with open(src, "w") as f:
                f.write(ptx)
            cmd = [ptxas, f"-arch={self.target.arch}", f"-O{options.opt_level}", "-v", src,
                   "-o", out]
            r = subprocess.run(cmd, capture_output=True, text=True)
            if r.returncode != 0:
                raise RuntimeError(f"ptxas failed ({' '.join(cmd)}):\n{r.stderr}")
            md.metadata["ptxas_info"] = r.stderr.strip()
            with open(out, "rb") as f:
                return f.read()


def _llir_to_ptx(llir: str, arch: str) -> str:
    if "llvm.amdgcn." in llir or "amdgpu_kernel" in llir:
        raise ValueError("this LLVM IR was generated for an AMD target; compile it for a "
                         "gfx target, or start from an earlier stage")
    import llvmlite.binding as llvm
    llvm.initialize_all_targets()
    llvm.initialize_all_asmprinters()
    mod = llvm.parse_assembly(llir)
    mod.triple = "nvptx64-nvidia-cuda"
    tm = llvm.Target.from_triple(mod.triple).create_target_machine(
        cpu=arch, features=PTX_FEATURES, opt=3)
    return tm.emit_assembly(mod)


def kernel_name(ptx: str) -> str | None:
    m = re.search(r"\.entry\s+(\w+)", ptx)
    return m.group(1) if m else None

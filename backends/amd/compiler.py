"""AMD backend: llvm -> llir -> amdgcn (llvmlite's AMDGPU target) -> hsaco (ld.lld -shared).

MLIR's bundled LLVM has no AMDGPU target, so the LLVM IR is handed to llvmlite (LLVM 22).
Emitting mutates an llvmlite module, so the IR is parsed afresh for each emit."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile

from tilework.lowering.rules.debug import PRINTS_ATTR
from tilework.runtime import printbuf

from ..common import Backend

TRIPLE = "amdgcn-amd-amdhsa"


class LinkerNotFound(RuntimeError):
    pass


def find_lld() -> list[str]:
    """The command that runs ld.lld: from $ROCM_PATH (or /opt/rocm), then PATH, then the
    `ziglang` package (`python -m ziglang ld.lld`)."""
    rocm = os.environ.get("ROCM_PATH") or "/opt/rocm"
    for c in (os.path.join(rocm, "llvm", "bin", "ld.lld"), os.path.join(rocm, "bin", "ld.lld")):
        if os.path.isfile(c) and os.access(c, os.X_OK):
            return [c]
    which = shutil.which("ld.lld")
    if which:
        return [which]
    try:
        import ziglang  # noqa: F401
        return [sys.executable, "-m", "ziglang", "ld.lld"]
    except ImportError:
        pass
    raise LinkerNotFound(
        "no ld.lld found to link the AMD code object: looked in $ROCM_PATH/llvm/bin "
        f"({rocm}), on PATH, and for the `ziglang` Python package; install ROCm or "
        "`pip install ziglang`")


def _target_machine(arch: str, opt: int):
    import llvmlite.binding as llvm
    llvm.initialize_all_targets()
    llvm.initialize_all_asmprinters()
    return llvm.Target.from_triple(TRIPLE).create_target_machine(
        cpu=arch, features="", opt=opt, reloc="pic")


def _parse(llir: str):
    if "llvm.nvvm." in llir or "ptx_kernel" in llir or "nvvm.annotations" in llir:
        raise ValueError("this LLVM IR was generated for an NVIDIA target; compile it for an "
                         "sm_ target, or start from an earlier stage")
    import llvmlite.binding as llvm
    mod = llvm.parse_assembly(llir)
    mod.triple = TRIPLE
    mod.verify()
    return mod


class AMDBackend(Backend):
    binary_stage = "hsaco"

    def gpu_target_attr(self, options) -> str:
        return f'#rocdl.target<O = {options.opt_level}, chip = "{self.target.arch}">'

    def llvm_conversion(self, options) -> tuple:
        return (f"gpu.module(convert-gpu-to-rocdl{{chipset={self.target.arch} "
                f"index-bitwidth=32}},convert-arith-to-llvm,convert-math-to-llvm)",)

    def to_llir(self, mod, md) -> str:
        # device_print's descriptors, which the lowering left on the gpu.module, go into the
        # metadata: the runtime formats the print buffer's records with them
        import json
        import mlir.ir as ir
        attrs = self.gpu_module(mod).attributes
        if PRINTS_ATTR in attrs:
            formats = json.loads(ir.StringAttr(attrs[PRINTS_ATTR]).value)
            md.metadata["print"] = {"buffer": printbuf.SYMBOL, "formats": formats}
        return super().to_llir(mod, md)

    def add_binary_stages(self, st, options):
        st["amdgcn"] = lambda llir, md: self.to_amdgcn(llir, options)
        st["hsaco"] = lambda asm, md: self.to_hsaco(md.outputs["llir"], options)

    @staticmethod
    def check_resolved(llir: str):
        """No device-library calls may remain: nothing links ROCm's bitcode libraries here, and
        an hsaco with undefined symbols fails only when it is loaded."""
        import re
        missing = sorted(set(re.findall(r"^declare [^@]*@([\w.$]+)\(", llir, re.M))
                         - {n for n in re.findall(r"^declare [^@]*@(llvm\.[\w.]+)\(", llir, re.M)})
        if missing:
            raise ValueError(f"the AMD code calls functions that are not available without "
                             f"ROCm's device libraries: {', '.join(missing)}")

    def to_amdgcn(self, llir: str, options) -> str:
        self.check_resolved(llir)
        return _target_machine(self.target.arch, options.opt_level).emit_assembly(_parse(llir))

    def to_hsaco(self, llir: str, options) -> bytes:
        obj = _target_machine(self.target.arch, options.opt_level).emit_object(_parse(llir))
        lld = find_lld()
        with tempfile.TemporaryDirectory() as d:
            o, h = os.path.join(d, "k.o"), os.path.join(d, "k.hsaco")
            with open(o, "wb") as f:
                f.write(obj)
            r = subprocess.run(lld + ["-shared", o, "-o", h], capture_output=True, text=True)
            if r.returncode != 0:
                raise RuntimeError(f"ld.lld failed: {r.stderr}")
            with open(h, "rb") as f:
                return f.read()

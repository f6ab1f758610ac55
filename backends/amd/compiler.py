"""AMD backend: llvm -> llir -> amdgcn (llvmlite's AMDGPU target) -> hsaco (assembler + ld.lld).

MLIR's bundled LLVM has no AMDGPU target, so the LLVM IR is handed to llvmlite (LLVM 22).
llvmlite has no assembler: the hsaco stage assembles the amdgcn text with an LLVM assembler
(ROCm's, the `ziglang` package's clang, or llvm-mc on PATH) and links it with ld.lld."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile

import mlir.ir as ir

from tilework.lowering.rules.debug import PRINTS_ATTR
from tilework.runtime import printbuf

from .. import common
from ..common import Backend

TRIPLE = "amdgcn-amd-amdhsa"


class LinkerNotFound(RuntimeError):
    pass


class AssemblerNotFound(RuntimeError):
    pass


def find_assembler(arch: str) -> list[str]:
    """The command that assembles AMDGCN text into an object (input and `-o` appended):
    $ROCM_PATH's llvm-mc, the `ziglang` package's clang (`-cc1as`, LLVM 22 as llvmlite's),
    then llvm-mc on PATH (which must know `arch`)."""
    mc = ["-triple=" + TRIPLE, f"-mcpu={arch}", "-filetype=obj"]
    rocm = os.environ.get("ROCM_PATH") or "/opt/rocm"
    for c in (os.path.join(rocm, "llvm", "bin", "llvm-mc"), os.path.join(rocm, "bin", "llvm-mc")):
        if os.path.isfile(c) and os.access(c, os.X_OK):
            return [c] + mc
    try:
        import ziglang  # noqa: F401
        return [sys.executable, "-m", "ziglang", "clang", "-cc1as", "-triple", TRIPLE,
                "-target-cpu", arch, "-filetype", "obj", "-mrelocation-model", "pic"]
    except ImportError:
        pass
    which = shutil.which("llvm-mc")
    if which:
        return [which] + mc
    raise AssemblerNotFound(
        "no assembler found for the AMD code: looked for llvm-mc in $ROCM_PATH/llvm/bin "
        f"({rocm}), for the `ziglang` Python package and for llvm-mc on PATH; install ROCm or "
        "`pip install ziglang`")


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


def optimize(mod, tm, level: int):
    """LLVM's default module pipeline at `level` on `mod` (in place; returned), without loop
    unrolling: AMDGPU's thresholds fully unroll the FMA dot's K loop (512 v_fma for 16), and
    the MFMA/WMMA loops gain nothing from it (the same registers, no scratch either way)."""
    import llvmlite.binding as llvm
    mod.data_layout = str(tm.target_data)
    pto = llvm.create_pipeline_tuning_options(speed_level=level)
    pto.loop_unrolling = False
    pb = llvm.create_pass_builder(tm, pto)
    pb.getModulePassManager().run(mod, pb)
    return mod


def with_sched_strategy(llir: str, strategy: str) -> str:
    """`llir` with `"amdgpu-sched-strategy"=strategy` on its kernels' attribute groups: the
    iterative schedulers reschedule a region that needs more registers than the occupancy
    allows (gfx1100's attention dK/dV with buffer_ops: 160 bytes of scratch to none, 197
    VGPRs; they did not help the branchy body, 284 -> 260)."""
    import re
    groups = set(re.findall(r"^define\b[^\n]*\bamdgpu_kernel\b[^\n]*?\) #(\d+)\b", llir, re.M))
    return re.sub(r"^attributes #(\d+) = \{", lambda m: m.group(0) + (
        f' "amdgpu-sched-strategy"="{strategy}"' if m.group(1) in groups else ""), llir,
        flags=re.M)


def scratch_bytes(asm: str) -> int:
    """The private segment (scratch) bytes of the kernels in an amdgcn text: their spills and
    stack (`.amdhsa_private_segment_fixed_size`)."""
    import re
    return sum(int(n) for n in re.findall(r"\.amdhsa_private_segment_fixed_size\s+(\d+)", asm))


class AMDBackend(Backend):
    binary_stage = "hsaco"

    def tilegpu_passes(self, options) -> list:
        passes = common.tile_cleanup_passes(options) + common.layout_passes()
        # no cp.async on CDNA or RDNA: the dots' operands are prefetched through registers
        # into an LDS double buffer (`lowering/pipeline_amd.py`)
        passes = passes + ["tilegpu-stream-pipeline", "canonicalize", "cse", "tile-cse"]
        return passes + common.access_passes() + common.shared_memory_passes()

    def gpu_target_attr(self, options) -> str:
        return f'#rocdl.target<O = {options.llvm_opt_level}, chip = "{self.target.arch}">'

    def llvm_conversion(self, options) -> tuple:
        return (f"gpu.module(convert-gpu-to-rocdl{{chipset={self.target.arch} "
                f"index-bitwidth=32}},convert-arith-to-llvm,convert-math-to-llvm)",)

    def to_llvm(self, mod, md, options, pctx):
        """The common conversion, then what the code object needs: the code-object version
        (a module flag: LLVM 22 defaults to 6, ROCm 6 loads 5), `waves_per_eu` on the kernels
        (`amdgpu-waves-per-eu`; `amdgpu-flat-work-group-size` comes from known_block_size) and
        `amdgpu-no-implicitarg-ptr` where the kernel reads no hidden argument."""
        mod = super().to_llvm(mod, md, options, pctx)
        gm = self.gpu_module(mod)
        block = gm.regions[0].blocks[0]
        version = self.target.code_object or 5
        flags = ir.Operation.parse(f'llvm.module_flags [#llvm.mlir.module_flag<error, '
                                   f'"amdhsa_code_object_version", {version * 100} : i32>]')
        ir.InsertionPoint.at_block_begin(block).insert(flags)
        for op in block.operations:
            op = op.operation
            if op.name != "llvm.func" or "rocdl.kernel" not in op.attributes:
                continue
            if options.waves_per_eu:
                op.attributes["rocdl.waves_per_eu"] = ir.IntegerAttr.get(
                    ir.IntegerType.get_signless(32), options.waves_per_eu)
            if "implicitarg" not in str(op):
                # no hidden arguments (what LLVM's AMDGPU attributor would infer): the kernarg
                # segment is the launcher's packed arguments alone
                old = (list(ir.ArrayAttr(op.attributes["passthrough"]))
                       if "passthrough" in op.attributes else [])
                op.attributes["passthrough"] = ir.ArrayAttr.get(
                    old + [ir.StringAttr.get("amdgpu-no-implicitarg-ptr")])
        return mod

    def to_llir(self, mod, md) -> str:
        # device_print's descriptors, which the lowering left on the gpu.module, go into the
        # metadata: the runtime formats the print buffer's records with them
        attrs = self.gpu_module(mod).attributes
        if PRINTS_ATTR in attrs:
            formats = json.loads(ir.StringAttr(attrs[PRINTS_ATTR]).value)
            md["print"] = {"buffer": printbuf.SYMBOL, "formats": formats}
        return super().to_llir(mod, md)

    def add_binary_stages(self, st, options):
        st["amdgcn"] = lambda llir, md: self.to_amdgcn(llir, options)
        st["hsaco"] = lambda asm, md: self.to_hsaco(asm)

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
        """LLVM's default module pipeline at `opt_level` (as the NVIDIA backend runs; on gfx942
        it takes the 64x64 GEMM from 136 to 95 VGPRs and the attention forward from 96 bytes
        of scratch to none), then AMDGPU code generation.  Where the optimised code needs
        scratch (spills), the unoptimised module is compiled too and the one with less scratch
        kept: sharing common subexpressions can lengthen live ranges past the register file
        (the 512-thread prefetching softmax on wave32 RDNA: 76 bytes, none without)."""
        self.check_resolved(llir)
        tm = _target_machine(self.target.arch, options.llvm_opt_level)
        if not options.llvm_opt_level:
            return tm.emit_assembly(_parse(llir))
        asm = tm.emit_assembly(optimize(_parse(llir), tm, options.llvm_opt_level))
        if scratch_bytes(asm):
            plain = tm.emit_assembly(_parse(llir))
            if scratch_bytes(plain) < scratch_bytes(asm):
                asm = plain
        if scratch_bytes(asm):  # still spilling: LLVM's register-minimising scheduler too
            minreg = tm.emit_assembly(optimize(_parse(with_sched_strategy(
                llir, "iterative-minreg")), tm, options.llvm_opt_level))
            if scratch_bytes(minreg) < scratch_bytes(asm):
                asm = minreg
        return asm

    def to_hsaco(self, asm: str) -> bytes:
        """AMDGCN assembly -> object (assembler) -> code object (ld.lld -shared)."""
        if not isinstance(asm, str) or ".amdhsa_kernel" not in asm:
            raise ValueError("the hsaco stage takes the amdgcn stage's assembly (no "
                             "`.amdhsa_kernel` in its input)")
        cmd = find_assembler(self.target.arch)
        lld = find_lld()
        with tempfile.TemporaryDirectory() as d:
            s, o, h = (os.path.join(d, n) for n in ("k.s", "k.o", "k.hsaco"))
            with open(s, "w") as f:
                f.write(asm)
            r = subprocess.run(cmd + [s, "-o", o], capture_output=True, text=True)
            if r.returncode != 0:
                raise RuntimeError(f"assembling the amdgcn stage failed ({' '.join(cmd)}):\n"
                                   f"{r.stderr.strip()}")
            r = subprocess.run(lld + ["-shared", o, "-o", h], capture_output=True, text=True)
            if r.returncode != 0:
                raise RuntimeError(f"ld.lld failed: {r.stderr}")
            with open(h, "rb") as f:
                return f.read()

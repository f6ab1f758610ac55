"""Stages form a chain: each stage function reads only its predecessor's output and restarts
from that stage's text; one PTX path (llir text -> llvmlite, LLVM's O3 pipeline, NVPTX) that
gives MLIR's gpu-module-to-binary's PTX; the hsaco assembled from the amdgcn text; the
parameter ABI in the runtime."""
import os
import re
import subprocess
import sys

import mlir.ir as ir
import pytest

import tilework
import tilework.language as tl
from tilework import CompileOptions
from tilework.backends import get_backend
from tilework.compiler import driver
from tilework.compiler.driver import ASTSource, compile
from tilework.dialects import new_context
from softmax import softmax_kernel
from vector_add import add_kernel

P, H = tl.pointer_type(tl.float32), tl.pointer_type(tl.float16)


def vector_add():
    sig = {"x_ptr": P, "y_ptr": P, "out_ptr": P, "n_elements": tl.int32}
    return ASTSource(add_kernel, sig, {"BLOCK_SIZE": 1024},
                     {k: {"tile.divisibility": 16} for k in sig})


def softmax():
    sig = {"out_ptr": H, "in_ptr": H, "in_stride": tl.int32, "out_stride": tl.int32,
           "n_rows": tl.int32, "n_cols": tl.int32}
    return ASTSource(softmax_kernel, sig, {"BLOCK_N": 1024, "ROWS": 4},
                     {k: {"tile.divisibility": 16} for k in sig if k != "n_rows"})


@tilework.jit
def half_fma_kernel(x_ptr, y_ptr, z_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x, y, z = tl.load(x_ptr + offs), tl.load(y_ptr + offs), tl.load(z_ptr + offs)
    tl.store(out_ptr + offs, x * y + z)  # fp16 arithmetic: packed f16x2 by the SLP vectorizer


def half_fma():
    sig = {"x_ptr": H, "y_ptr": H, "z_ptr": H, "out_ptr": H}
    return ASTSource(half_fma_kernel, sig, {"BLOCK": 1024},
                     {k: {"tile.divisibility": 16} for k in sig})


def _text(x):
    return x if isinstance(x, (str, bytes)) else str(x)


@pytest.mark.parametrize("target", ["sm_90a", "gfx942"])
def test_each_stage_function_restarts_from_its_predecessors_text(target):
    """Every stage function, handed only the previous stage's text and a fresh metadata dict,
    reproduces the stage (the hsaco byte for byte; a cubin is an ELF)."""
    opts = CompileOptions(num_warps=8)
    ck = compile(softmax(), target, opts, cache=False)
    stages = get_backend(target).stages(opts)
    order = ["tile"] + list(stages)
    assert list(ck.asm)[:-1] == order[:-1]
    for prev, stage in zip(order, order[1:]):
        with new_context() as ctx, ir.Location.unknown(ctx):
            out = _text(stages[stage](ck.asm[prev], {}))
        if stage == "cubin":
            assert out[:4] == b"\x7fELF"
        else:
            assert out == ck.asm[stage], stage


def test_the_driver_hands_each_stage_only_its_predecessors_output(monkeypatch):
    seen = []
    real = driver.get_backend

    def spying(target):
        b = real(target)
        stages = b.stages

        def wrapped(options):
            st = stages(options)
            for name, fn in list(st.items()):
                def spy(src, md, name=name, fn=fn):
                    out = fn(src, md)
                    seen.append((name, src, out, sorted(md)))
                    return out
                st[name] = spy
            return st
        b.stages = wrapped
        return b
    monkeypatch.setattr(driver, "get_backend", spying)
    ck = compile(vector_add(), "gfx942", cache=False)
    assert [s[0] for s in seen] == ["tilegpu", "llvm", "llir", "amdgcn", "hsaco"]
    for (_, _, out, _), (name, src, _, _) in zip(seen, seen[1:]):
        assert src is out, name  # exactly the predecessor's output, nothing else
    # the metadata a stage sees holds facts, never another stage's output
    assert all(set(keys) <= {"signature", "name", "target", "backend", "num_warps",
                             "warp_size", "shared", "print"} for *_, keys in seen)
    assert ck.asm["hsaco"] == seen[-1][2]


@pytest.mark.parametrize("target", ["sm_80", "sm_90a"])
@pytest.mark.parametrize("make", [vector_add, softmax, half_fma])
def test_ptx_is_the_same_as_mlirs_gpu_module_to_binary(target, make):
    """The one PTX path (llir text through llvmlite at O3) against MLIR's serializer run on the
    llvm stage (which optimizes at O3 before emitting): the same text."""
    from mlir.dialects import gpu
    from tilework.lowering import run_pipeline
    from tilework.lowering.pass_base import PassContext
    from tilework.backends import parse_target
    ck = compile(make(), target, CompileOptions(num_warps=8), cache=False)
    with new_context() as ctx, ir.Location.unknown(ctx):
        mod = ir.Module.parse(ck.asm["llvm"])
        run_pipeline(mod, ("gpu-module-to-binary{format=isa}",),
                     PassContext(parse_target(target), CompileOptions()))
        binary = next(op.operation for op in mod.body.operations
                      if op.operation.name == "gpu.binary")
        objs = ir.ArrayAttr(binary.attributes["objects"])
        mlir_ptx = gpu.ObjectAttr(objs[0]).object.decode()
    assert ck.asm["ptx"] == mlir_ptx


def test_binary_stages_restart_from_assembly():
    ck = compile(vector_add(), "gfx942", cache=False)
    ck2 = compile(ck.asm["amdgcn"], "gfx942", start="amdgcn", cache=False)
    assert list(ck2.asm) == ["amdgcn", "hsaco"] and ck2.name == "add_kernel"
    assert ck2.asm["hsaco"] == ck.asm["hsaco"]
    ck = compile(vector_add(), "sm_90a", cache=False)
    ck2 = compile(ck.asm["ptx"], "sm_90a", start="ptx", cache=False)
    assert ck2.name == "add_kernel"
    assert ck2.asm.get("cubin", b"\x7fELF")[:4] == b"\x7fELF"


def test_hsaco_stage_takes_only_amdgcn_assembly():
    ck = compile(vector_add(), "gfx942", cache=False)
    with pytest.raises(ValueError) as e:
        compile(ck.asm["llir"], "gfx942", start="amdgcn", cache=False)
    assert str(e.value) == ("the hsaco stage takes the amdgcn stage's assembly (no "
                            "`.amdhsa_kernel` in its input)")
    broken = ck.asm["amdgcn"].replace("s_endpgm", "s_no_such_instruction", 1)
    with pytest.raises(RuntimeError, match=r"(?s)^assembling the amdgcn stage failed \(.*\):\n"
                                           r".*invalid instruction.*s_no_such_instruction"):
        compile(broken, "gfx942", start="amdgcn", cache=False)


def test_assembler_not_found(monkeypatch, tmp_path):
    from tilework.backends.amd import compiler as amd
    monkeypatch.setenv("ROCM_PATH", str(tmp_path))
    monkeypatch.setitem(sys.modules, "ziglang", None)  # `import ziglang` fails
    monkeypatch.setattr(amd.shutil, "which", lambda name: None)
    with pytest.raises(amd.AssemblerNotFound) as e:
        amd.find_assembler("gfx942")
    assert str(e.value) == (
        "no assembler found for the AMD code: looked for llvm-mc in $ROCM_PATH/llvm/bin "
        f"({tmp_path}), for the `ziglang` Python package and for llvm-mc on PATH; install "
        "ROCm or `pip install ziglang`")
    llvm_mc = tmp_path / "llvm" / "bin" / "llvm-mc"
    llvm_mc.parent.mkdir(parents=True)
    llvm_mc.write_text("#!/bin/sh\n")
    llvm_mc.chmod(0o755)
    assert amd.find_assembler("gfx90a") == [str(llvm_mc), "-triple=amdgcn-amd-amdhsa",
                                            "-mcpu=gfx90a", "-filetype=obj"]


def test_ptx_opt_level_reaches_the_pipeline():
    """opt_level 0 runs LLVM's O0 pipeline: no optimization, more instructions than at O3."""
    o0 = compile(vector_add(), "sm_90a", CompileOptions(opt_level=0), cache=False).asm["ptx"]
    o3 = compile(vector_add(), "sm_90a", cache=False).asm["ptx"]
    assert len(o0.splitlines()) > len(o3.splitlines())


# ---- the parameter ABI belongs to the runtime ------------------------------------------------

def test_param_kinds_from_the_compiled_signature():
    from tilework.runtime.abi import param_kind, param_kinds, struct_format
    assert [param_kind(t) for t in ("*fp32", "*fp8e4nv", "int32", "int64", "uint64", "fp32",
                                    "int1")] == ["p", "p", "i", "l", "L", "f", "b"]
    with pytest.raises(ValueError) as e:  # (fp16 and the other scalars have one: issue 12)
        param_kind("fp8e4nv")
    assert str(e.value) == ("no kernel parameter ABI for dtype 'fp8e4nv': expected a pointer "
                            "or one of int32, int64, uint64, fp32, int1, int8, int16, uint8, "
                            "uint16, uint32, fp64, fp16, bf16")
    ck = compile(vector_add(), "sm_90a", cache=False)
    assert ck.metadata["signature"] == {"x_ptr": "*fp32", "y_ptr": "*fp32",
                                        "out_ptr": "*fp32", "n_elements": "int32"}
    assert param_kinds(ck.metadata) == "pppi"
    assert struct_format("pppi") == "@PPPi"
    assert param_kinds({}) == ""
    assert "param_kinds" not in ck.metadata
    assert not hasattr(driver, "param_kind")


def test_cuda_parameter_slots_follow_the_signature():
    """The CUDA runtime's per-kernel parameter storage (built without a GPU)."""
    import ctypes
    from tilework.runtime.cuda import LoadedKernel
    src = ASTSource(add_kernel, {"x_ptr": P, "y_ptr": P, "out_ptr": P, "n_elements": tl.int64},
                    {"BLOCK_SIZE": 1024}, {})
    k = LoadedKernel(compile(src, "sm_90a", cache=False), None, None, 128, 0)
    assert k.kinds == "pppl"
    assert [type(s) for s in k.slots] == [ctypes.c_void_p] * 3 + [ctypes.c_int64]


def test_the_compiler_imports_no_runtime_and_the_abi_no_compiler():
    code = ("import sys, tilework.runtime.abi; "
            "print(sorted(m for m in sys.modules if m.startswith(('tilework.compiler', "
            "'tilework.backends', 'mlir'))))")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    # (the disk cache's reader: a warm process finds its kernels without the compiler; the
    # cached kernel answers n_regs from kernel_stats, which imports no MLIR)
    assert r.stdout.strip() == ("['tilework.compiler', 'tilework.compiler.cache', "
                                "'tilework.compiler.kernel_stats', 'tilework.compiler.options']")
    root = os.path.dirname(driver.__file__)
    for f in os.listdir(root):
        if f.endswith(".py"):
            src = open(os.path.join(root, f)).read()
            assert not re.search(r"^\s*(from|import)\s+\S*runtime", src, re.M), f


def test_slp_vectorizer_runs_only_on_narrow_arithmetic():
    """It packs 16-/8-bit arithmetic (f16x2); elsewhere it cost most of O3 for the same PTX."""
    from tilework.backends.nvidia.compiler import has_narrow_arithmetic as narrow
    assert narrow("%5 = fadd contract half %3, %4") and narrow("%5 = add nsw i16 %1, %2")
    assert narrow("%9 = call bfloat @llvm.fma.bf16(bfloat %a, bfloat %b, bfloat %c)")
    assert not narrow("%5 = fpext half %3 to float") and not narrow("%2 = load half, ptr %1")
    assert not narrow("%3 = fadd float %1, %2") and not narrow("%9 = call float @llvm.fma.f32(")
    for make, packed in ((vector_add, False), (softmax, False), (half_fma, True)):
        ck = compile(make(), "sm_90a", cache=False)
        assert narrow(ck.asm["llir"]) is packed, make.__name__
    assert re.search(r"\bfma\.rn\.f16x2\b", compile(half_fma(), "sm_90a", cache=False).asm["ptx"])

"""Ahead-of-time compilation for sm_80, sm_90a and gfx942: runs everywhere (no GPU)."""
import os
import re
import subprocess
import sys

import pytest

import tilework
import tilework.language as tl
from tilework.compiler.driver import ASTSource, compile
from vector_add import add_kernel

TARGETS = ["sm_80", "sm_90a", "gfx942"]
DTYPES = {"fp32": tl.float32, "fp16": tl.float16, "bf16": tl.bfloat16}


def vector_add_source(dt, aligned=True):
    p = tl.pointer_type(dt)
    sig = {"x_ptr": p, "y_ptr": p, "out_ptr": p, "n_elements": tl.int32}
    names = ("x_ptr", "y_ptr", "out_ptr", "n_elements") if aligned else ()
    attrs = {k: {"tile.divisibility": 16} for k in names}
    return ASTSource(add_kernel, sig, {"BLOCK_SIZE": 1024}, attrs)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("dtype", list(DTYPES))
def test_vector_add_compiles_vectorized(target, dtype):
    ck = compile(vector_add_source(DTYPES[dtype]), target, cache=False)
    if target.startswith("sm_"):
        assert list(ck.asm) == ["tile", "tilegpu", "llvm", "llir", "ptx", "cubin"] or \
            list(ck.asm) == ["tile", "tilegpu", "llvm", "llir", "ptx"]
        ptx = ck.asm["ptx"]
        assert f".target {target}" in ptx
        assert re.search(r"ld\.global\.v4\.b32", ptx), ptx
        assert re.search(r"st\.global\.v4\.b32", ptx), ptx
        assert ".entry add_kernel" in ptx
    else:
        assert list(ck.asm) == ["tile", "tilegpu", "llvm", "llir", "amdgcn", "hsaco"]
        asm = ck.asm["amdgcn"]
        assert ".amdhsa_kernel add_kernel" in asm
        # fp32: 4 per thread = 16 bytes; 16-bit types: 4 per thread = 8 bytes (a 1024 tile
        # over 256 lanes), so dwordx2
        want = "global_load_dwordx4" if dtype == "fp32" else "global_load_dwordx2"
        assert want in asm, asm
        assert ck.asm["hsaco"][:4] == b"\x7fELF"


def test_gfx942_fp16_gets_dwordx4_with_bigger_tiles():
    p = tl.pointer_type(tl.float16)
    src = ASTSource(add_kernel, {"x_ptr": p, "y_ptr": p, "out_ptr": p, "n_elements": tl.int32},
                    {"BLOCK_SIZE": 2048},
                    {k: {"tile.divisibility": 16} for k in ("x_ptr", "y_ptr", "out_ptr",
                                                              "n_elements")})
    asm = compile(src, "gfx942", cache=False).asm["amdgcn"]
    assert "global_load_dwordx4" in asm


def test_unaligned_length_falls_back_to_scalar_accesses():
    """n not known divisible by 16: the mask can change inside a vector, so accesses are
    scalar (and correct for any n)."""
    ck = compile(vector_add_source(tl.float32, aligned=False), "sm_90a", cache=False)
    assert "ld.global.v4" not in ck.asm["ptx"]
    assert "ld.global.b32" in ck.asm["ptx"]


def test_each_stage_text_restarts_the_pipeline():
    ck = compile(vector_add_source(tl.float32), "sm_90a", cache=False)
    for stage in ("tile", "tilegpu", "llvm", "llir"):
        ck2 = compile(ck.asm[stage], "sm_90a", start=stage, cache=False)
        assert ck2.name == "add_kernel"
        assert "ld.global.v4.b32" in ck2.asm["ptx"], stage
    ck = compile(vector_add_source(tl.float32), "gfx942", cache=False)
    for stage in ("tile", "tilegpu", "llvm", "llir"):
        ck2 = compile(ck.asm[stage], "gfx942", start=stage, cache=False)
        assert "global_load_dwordx4" in ck2.asm["amdgcn"], stage


def test_unknown_start_stage_and_target():
    with pytest.raises(ValueError, match="unknown stage 'ptx'.*gfx942"):
        compile("x", "gfx942", start="ptx")
    with pytest.raises(ValueError, match="unknown target 'sm9x'"):
        compile(vector_add_source(tl.float32), "sm9x")
    with pytest.raises(ValueError, match="from sm_70"):
        compile(vector_add_source(tl.float32), "sm_60")


def test_wrong_target_llir_is_an_error_not_a_crash():
    ck = compile(vector_add_source(tl.float32), "gfx942", cache=False)
    with pytest.raises(ValueError, match="generated for an AMD target"):
        compile(ck.asm["llir"], "sm_90a", start="llir", cache=False)
    ck = compile(vector_add_source(tl.float32), "sm_90a", cache=False)
    with pytest.raises(ValueError, match="generated for an NVIDIA target"):
        compile(ck.asm["llir"], "gfx942", start="llir", cache=False)


def test_disk_cache_hit_and_key(tmp_path, monkeypatch):
    from tilework.compiler import driver
    monkeypatch.setenv("TILEWORK_CACHE_DIR", str(tmp_path))
    ck = compile(vector_add_source(tl.float32), "sm_90a")
    entries = [d for d, _, files in os.walk(tmp_path) if "manifest.json" in files]
    assert len(entries) == 1
    assert not any(n.startswith(".tmp-") for n in os.listdir(os.path.dirname(entries[0])))
    calls = []
    monkeypatch.setattr(driver, "get_backend", lambda t: calls.append(t) or
                        __import__("tilework.backends", fromlist=["x"]).get_backend(t))
    ck2 = compile(vector_add_source(tl.float32), "sm_90a")
    assert ck2.asm == ck.asm and ck2.key == ck.key
    # other options, other variant
    ck3 = compile(vector_add_source(tl.float32), "sm_90a",
                  tilework.CompileOptions(num_warps=8))
    assert ck3.key != ck.key
    assert ".maxntid 256" in ck3.asm["ptx"] or ".reqntid 256" in ck3.asm["ptx"]


def test_dump_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("TILEWORK_DUMP_DIR", str(tmp_path / "dump"))
    compile(vector_add_source(tl.float32), "gfx942", cache=False)
    names = sorted(os.listdir(tmp_path / "dump"))
    assert names == sorted(f"add_kernel.{s}" for s in
                           ("tile", "tilegpu", "llvm", "llir", "amdgcn", "hsaco"))


def test_dump_passes_prints_ir_after_each_pass(capfd, monkeypatch):
    monkeypatch.setenv("TILEWORK_DUMP_PASSES", "1")
    compile(vector_add_source(tl.float32), "sm_90a", cache=False)
    err = capfd.readouterr().err
    for p in ("tile-combine", "tilegpu-assign-layouts", "tilegpu-vector-width",
              "tilegpu-to-llvm", "convert-gpu-to-nvvm"):
        assert re.search(rf"IR Dump After .*{p}", err, re.I), p


def test_cli_compile(tmp_path):
    out = tmp_path / "out"
    r = subprocess.run([sys.executable, "-m", "tilework.tools.cli", "compile",
                        os.path.join(os.path.dirname(__file__), "..", "..", "examples",
                                     "vector_add.py") + ":add_kernel",
                        "--target", "sm_90a", "--signature", "*fp32:16,*fp32:16,*fp32:16,i32:16",
                        "--constexpr", "BLOCK_SIZE=1024", "--emit", "tile,ptx", "-o", str(out)],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert sorted(os.listdir(out)) == ["add_kernel.ptx", "add_kernel.tile"]
    assert "ld.global.v4.b32" in (out / "add_kernel.ptx").read_text()


@pytest.mark.parametrize("args, message", [
    (["--signature", "*fp32"], "has 4 runtime parameters"),
    (["--signature", "*fp32,*fp32,*fp32,q8"], "unknown type 'q8'"),
    (["--signature", "*fp32,*fp32,*fp32,i32:8"], "only the hint ':16'"),
    (["--signature", "*fp32,*fp32,*fp32,i32", "--constexpr", "BLOCK_SIZE=1000"],
     "not a power of two"),
    (["--signature", "*fp32,*fp32,*fp32,i32", "--constexpr", "BLOCK_SIZE=64", "--constexpr",
      "NOPE=1"], "has no parameter NOPE"),
])
def test_cli_errors(tmp_path, args, message):
    base = [sys.executable, "-m", "tilework.tools.cli", "compile",
            os.path.join(os.path.dirname(__file__), "..", "..", "examples", "vector_add.py")
            + ":add_kernel", "--target", "sm_90a", "-o", str(tmp_path)]
    if "--constexpr" not in args:
        args = args + ["--constexpr", "BLOCK_SIZE=1024"]
    r = subprocess.run(base + args, capture_output=True, text=True)
    assert r.returncode != 0
    assert message in r.stderr, r.stderr
    assert "Traceback" not in r.stderr


def test_import_needs_no_gpu_libraries():
    code = ("import sys, tilework, tilework.language as tl; "
            "bad = [m for m in ('cuda', 'cuda.bindings', 'hip', 'torch', 'llvmlite', 'mlir') "
            "if m in sys.modules]; print(bad)")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "[]"


@tilework.jit
def _num_programs_kernel(out_ptr):
    tl.store(out_ptr + tl.program_id(0), tl.num_programs(0) * 2 + tl.num_programs(1))


@pytest.mark.parametrize("target", TARGETS)
def test_num_programs_in_arithmetic(target):
    """gfx942 reads the grid from the dispatch packet (no device-library call, no abort)."""
    ck = compile(ASTSource(_num_programs_kernel, {"out_ptr": tl.pointer_type(tl.int32)}, {},
                           {}), target, cache=False)
    if target == "gfx942":
        assert "llvm.amdgcn.dispatch.ptr" in ck.asm["llir"]
        assert "__ockl" not in ck.asm["llir"]


def test_amd_rejects_unresolved_library_calls():
    from tilework.backends.amd.compiler import AMDBackend
    with pytest.raises(ValueError, match="not available without ROCm's device libraries: "
                                         "__ocml_exp_f32"):
        AMDBackend.check_resolved("declare float @__ocml_exp_f32(float)\n"
                                  "declare i32 @llvm.amdgcn.workitem.id.x()\n")
    AMDBackend.check_resolved("declare i32 @llvm.amdgcn.workitem.id.x()\n")


def test_maxnreg_caps_registers_on_nvidia_only():
    """`maxnreg` (as Triton's) reaches ptxas as `.maxnreg`, and is part of the cache key;
    AMD ignores it."""
    from tilework import CompileOptions
    src = vector_add_source(tl.float32)
    ck = compile(src, "sm_90a", CompileOptions(maxnreg=24), cache=False)
    assert ".maxnreg 24" in ck.asm["ptx"]
    regs = int(re.search(r"Used (\d+) registers", ck.metadata["ptxas_info"]).group(1))
    assert regs <= 24
    assert ".maxnreg" not in compile(src, "sm_90a", cache=False).asm["ptx"]
    assert CompileOptions(maxnreg=24).key() != CompileOptions().key()
    assert compile(src, "gfx942", CompileOptions(maxnreg=24), cache=False).asm["amdgcn"]

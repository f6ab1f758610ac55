"""The NVIDIA backend's occupancy hint: `.minnctapersm` where ptxas's register allocation lets
fewer programs share an SM than shared memory and the thread limit would (backends/nvidia/
compiler.py occupancy_hint), kept only when ptxas then spills nothing."""
import re
import shutil

import pytest

import tilework.language as tl
from tilework import CompileOptions
from tilework.backends import parse_target
from tilework.backends.nvidia.compiler import occupancy_hint, with_min_ctas
from tilework.compiler.driver import ASTSource, compile

from dot_kernels import matmul_kernel
from test_dot import matmul_signature

SM90A, SM80, SM86 = (parse_target(a) for a in ("sm_90a", "sm_80", "sm_86"))
PTX = ".visible .entry k(\n)\n.maxntid 256, 1, 1\n{\n ret;\n}\n"


def info(regs):
    return f"ptxas info    : Used {regs} registers, used 1 barriers\n" \
           "    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads"


@pytest.mark.parametrize("target, regs, smem, want", [
    (SM90A, 168, 96 * 1024, 2),     # registers allow 1, shared memory 2: ask for 2
    (SM90A, 128, 96 * 1024, None),  # already 2
    (SM90A, 168, 144 * 1024, None),  # shared memory allows only 1
    (SM90A, 40, 0, None),           # registers allow 6: more than 2 is never asked for
    (SM80, 168, 82 * 1024, None),   # 2 x (82 + 1) KiB > 164 KiB on sm_80
    (SM80, 168, 72 * 1024, 2),
    (SM86, 255, 0, 2),              # 1536 threads per SM: 6 programs of 256 fit; ask for 2
])
def test_hint(target, regs, smem, want):
    assert occupancy_hint(PTX, info(regs), smem, target) == want


def test_no_hint_over_a_user_cap_or_an_existing_one():
    assert occupancy_hint(PTX.replace(".maxntid 256, 1, 1", ".maxntid 256, 1, 1\n.maxnreg 200"),
                          info(168), 0, SM90A) is None
    assert occupancy_hint(with_min_ctas(PTX, 2), info(168), 0, SM90A) is None
    assert occupancy_hint(PTX.replace(".maxntid 256, 1, 1", ""), info(168), 0, SM90A) is None


def test_with_min_ctas():
    assert with_min_ctas(PTX, 2).splitlines()[2:4] == [".maxntid 256, 1, 1", ".minnctapersm 2"]


@pytest.mark.skipif(shutil.which("ptxas") is None, reason="needs ptxas")
def test_sm90a_gemm_gets_two_programs_per_sm():
    """The masked 128x128x64 wgmma GEMM with 3 stages (96 KiB of buffers; 168 registers left to
    itself): 2 programs per SM at <= 128 registers and no spills; under a user's maxnreg no
    hint is added."""
    sig = matmul_signature("fp16_acc32")
    cons = dict(BLOCK_M=128, BLOCK_N=128, BLOCK_K=64, ACC=tl.float32, PLUS_EQ=False)
    for p in ("stride_ak", "stride_bn", "stride_cn"):  # unit strides (specialized as 1)
        sig.pop(p)
        cons[p] = 1
    attrs = {p: {"tile.divisibility": 16} for p in sig}
    src = ASTSource(matmul_kernel, sig, cons, attrs)
    ck = compile(src, "sm_90a", CompileOptions(num_warps=8, num_stages=3), cache=False)
    assert ck.metadata["min_ctas_per_sm"] == 2
    regs = int(re.search(r"Used (\d+) registers", ck.metadata["ptxas_info"]).group(1))
    assert regs <= 128 and "0 bytes spill stores" in ck.metadata["ptxas_info"]
    assert ".minnctapersm" not in ck.asm["ptx"]  # (the ptx stage is LLVM's output, unchanged)
    ck = compile(src, "sm_90a", CompileOptions(num_warps=8, num_stages=3, maxnreg=168),
                 cache=False)
    assert "min_ctas_per_sm" not in ck.metadata

"""The NVIDIA backend's occupancy hint: `.minnctapersm` where ptxas's register allocation lets
fewer programs share an SM than shared memory and the thread limit would (backends/nvidia/
compiler.py occupancy_hint), kept only when ptxas then spills nothing."""
import re
import shutil

import pytest

import tilework
import tilework.language as tl
from tilework import CompileOptions
from tilework.backends import parse_target
from tilework.backends.nvidia.compiler import occupancy_hint, with_min_ctas
from tilework.compiler.driver import ASTSource, compile


SM90A, SM80, SM86 = (parse_target(a) for a in ("sm_90a", "sm_80", "sm_86"))


@tilework.jit
def grouped_matmul(a_ptr, b_ptr, c_ptr, M, N, K, sam, sbk, scm, BM: tl.constexpr,
                   BN: tl.constexpr, BK: tl.constexpr, GROUP_M: tl.constexpr):
    """The Triton tutorial's matmul: grouped program order, wrap-around offsets, masked K."""
    pid = tl.program_id(0)
    num_m, num_n = tl.cdiv(M, BM), tl.cdiv(N, BN)
    group = GROUP_M * num_n
    first_m = (pid // group) * GROUP_M
    gsize = min(num_m - first_m, GROUP_M)
    pid_m = first_m + ((pid % group) % gsize)
    pid_n = (pid % group) // gsize
    offs_m = (pid_m * BM + tl.arange(0, BM)) % M
    offs_n = (pid_n * BN + tl.arange(0, BN)) % N
    offs_k = tl.arange(0, BK)
    a_ptrs = a_ptr + offs_m[:, None] * sam + offs_k[None, :]
    b_ptrs = b_ptr + offs_k[:, None] * sbk + offs_n[None, :]
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BK)):
        a = tl.load(a_ptrs, mask=offs_k[None, :] < K - k * BK, other=0.0)
        b = tl.load(b_ptrs, mask=offs_k[:, None] < K - k * BK, other=0.0)
        acc = tl.dot(a, b, acc)
        a_ptrs += BK
        b_ptrs += BK * sbk
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    tl.store(c_ptr + rm[:, None] * scm + rn[None, :], acc.to(tl.float16),
             mask=(rm[:, None] < M) & (rn[None, :] < N))


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
def _gemm(dt, bm, bn, bk, stages, **opts):
    P = tl.pointer_type(dt)
    sig = dict(a_ptr=P, b_ptr=P, c_ptr=tl.pointer_type(tl.float16))
    sig.update({p: tl.int32 for p in ("M", "N", "K", "sam", "sbk", "scm")})
    attrs = {p: {"tile.divisibility": 16} for p in sig}
    src = ASTSource(grouped_matmul, sig, dict(BM=bm, BN=bn, BK=bk, GROUP_M=8), attrs)
    return compile(src, "sm_90a", CompileOptions(num_warps=8, num_stages=stages, **opts),
                   cache=False)


def _regs(ck):
    return int(re.search(r"Used (\d+) registers", ck.metadata["ptxas_info"]).group(1))


def test_sm90a_gemm_runs_two_programs_per_sm():
    """The grouped 128x128x64 wgmma GEMM with 3 stages (96 KiB of buffers): 2 programs per SM
    need <= 128 registers and no spills; since its loads take layouts of their own (no
    copies) it gets there without the hint (it used 168 before, 128 with it).  Under a
    user's maxnreg no hint is added."""
    ck = _gemm(tl.float16, 128, 128, 64, 3)
    info = ck.metadata["ptxas_info"]
    assert _regs(ck) <= 128 and "0 bytes spill stores" in info, info
    assert ck.metadata.get("min_ctas_per_sm", 2) == 2
    assert ".minnctapersm" not in ck.asm["ptx"]  # (the ptx stage is LLVM's output, unchanged)
    ck = _gemm(tl.float16, 128, 128, 64, 3, maxnreg=168)
    assert "min_ctas_per_sm" not in ck.metadata


def test_hint_that_would_spill_is_dropped():
    """The tf32 128x128x32 GEMM needs about 150 registers: the hint for 2 programs per SM
    (128) makes ptxas spill, so the cubin is the one without it."""
    ck = _gemm(tl.float32, 128, 128, 32, 3)
    info = ck.metadata["ptxas_info"]
    assert _regs(ck) > 128 and "0 bytes spill stores" in info, info
    assert occupancy_hint(ck.asm["ptx"], info, ck.metadata["shared"],
                          SM90A) == 2  # (asked for, then dropped)
    assert "min_ctas_per_sm" not in ck.metadata


FAKE_PTXAS = r'''#!/bin/sh
# a fake ptxas: 168 registers, or 128 under .minnctapersm (spilling when SPILL is set);
# each run logs its start and end, and sleeps so that runs at once overlap
src=""; out=""
while [ $# -gt 0 ]; do case "$1" in -o) out="$2"; shift;; *.ptx) src="$1";; esac; shift; done
echo "start $src" >> "$LOG"; sleep 0.3
if grep -q minnctapersm "$src"; then r=128; s=${SPILL:-0}; else r=168; s=0; fi
printf 'cubin of %s' "$src" > "$out"
echo "ptxas info    : Used $r registers, used 1 barriers" >&2
echo "    0 bytes stack frame, $s bytes spill stores, $s bytes spill loads" >&2
echo "end $src" >> "$LOG"
'''


@pytest.mark.parametrize("mma, spill", [(True, 0), (True, 8), (False, 0)])
def test_hint_runs_beside_the_first_ptxas(tmp_path, monkeypatch, mma, spill):
    """A tensor-core kernel is compiled with and without the hint at once (the second run
    starts before the first ends); other kernels ask for the hint after the first run.  The
    hinted cubin is kept unless it spills; never a third run."""
    from tilework.backends import get_backend
    fake = tmp_path / "ptxas"
    fake.write_text(FAKE_PTXAS)
    fake.chmod(0o755)
    log = tmp_path / "log"
    monkeypatch.setenv("TILEWORK_PTXAS", str(fake))
    monkeypatch.setenv("LOG", str(log))
    monkeypatch.setenv("SPILL", str(spill))
    ptx = PTX.replace("ret;", "wgmma.mma_async.sync.aligned;\n ret;" if mma else "ret;")
    md = {"shared": 96 * 1024}
    cubin = get_backend(SM90A).to_cubin(ptx, md, CompileOptions())
    events = [l.split()[0] + (" hinted" if "k2" in l else "") for l in log.read_text().split("\n")
              if l]
    assert len(events) == 4
    if mma:
        assert events[:2] == ["start", "start hinted"] or events[:2] == ["start hinted", "start"]
    else:
        assert events == ["start", "end", "start hinted", "end hinted"]
    assert cubin.endswith(b"k2.ptx" if not spill else b"k.ptx")
    assert md.get("min_ctas_per_sm") == (None if spill else 2)

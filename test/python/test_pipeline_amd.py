"""AMD's stream pipelining (`tilegpu-stream-pipeline`, lowering/pipeline_amd.py): the K loop's
operand loads prefetched one iteration ahead into registers and stored to an LDS double buffer
after the MFMAs, one barrier per iteration.  Values: the lowered code on the SIMT emulator
against numpy (K tails, one iteration, none); the tilegpu form; the ISA's order in the loop."""
import re

import numpy as np
import pytest

from tilework import CompileOptions
from tilework.compiler.driver import ASTSource, compile

from dot_kernels import matmul_kernel
from simt_emulator import Emulator
from test_dot import CASES, _operands, cdiv, check_matmul, matmul_signature


@pytest.fixture
def rng(request):
    return np.random.default_rng(abs(hash(request.node.name)) % 2**32)


def _compile(case, target, bm, bn, bk, warps, stages):
    consts = dict(BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, ACC=CASES[case][1], PLUS_EQ=False)
    return compile(ASTSource(matmul_kernel, matmul_signature(case), consts, {}), target,
                   CompileOptions(num_warps=warps, num_stages=stages), cache=False)


def _loop_body(tilegpu: str) -> str:
    """The text of the (one) scf.for's body with a dot."""
    start = tilegpu.index("scf.for")
    depth, i = 0, tilegpu.index("{", start)
    for j in range(i, len(tilegpu)):
        depth += {"{": 1, "}": -1}.get(tilegpu[j], 0)
        if depth == 0:
            return tilegpu[i:j]
    raise AssertionError("unbalanced scf.for")


@pytest.mark.parametrize("target, case, stages, m, n, k, bm, bn, bk, warps", [
    ("gfx942", "fp16_acc32", 2, 70, 90, 100, 64, 64, 32, 4),   # K tail, 4 iterations
    ("gfx942", "fp16_acc32", 3, 40, 40, 20, 32, 32, 32, 4),    # one iteration
    ("gfx942", "fp16_acc32", 2, 40, 40, 0, 32, 32, 32, 4),     # none: the prologue masked
    ("gfx90a", "int8", 2, 50, 70, 130, 32, 64, 32, 4),
    ("gfx950", "bf16", 2, 64, 64, 96, 32, 32, 32, 2),
    ("gfx1100", "fp16_acc32", 2, 70, 40, 50, 32, 32, 16, 4),   # WMMA, wave32
])
def test_pipelined_matmul_emulated(target, case, stages, m, n, k, bm, bn, bk, warps, rng):
    ck = _compile(case, target, bm, bn, bk, warps, stages)
    body = _loop_body(ck.asm["tilegpu"])
    assert body.count('tilegpu.stream_slot = "read"') == 2
    assert body.count('tilegpu.stream_slot = "write"') == 2
    assert body.count('"tilegpu.barrier"') == 1  # one per iteration, before the reads
    assert body.index('"tile.load"') < body.index('"tilegpu.barrier"') < \
        body.index('"tile.dot"') < body.index('"tilegpu.local_store"')
    emu = Emulator.from_tilegpu(ck.asm["tilegpu"], target, warps)
    a, b, a64, b64 = _operands(rng, case, m, k, n)
    c = np.full((m, n), 7, CASES[case][4])
    emu.run((cdiv(m, bm), cdiv(n, bn)), a, b, c, m, n, k, k, 1, n, 1, n, 1)
    if k == 0:
        assert (c == 0).all()
    else:
        check_matmul(c, a64, b64, case, bk)


def test_num_stages_1_leaves_the_loop():
    ck = _compile("fp16_acc32", "gfx942", 64, 64, 32, 4, 1)
    assert "tilegpu.stream_slot" not in ck.asm["tilegpu"]
    assert "tilegpu.local_store" not in ck.asm["tilegpu"]


# ---- the ISA: in the loop, the next iteration's global loads come before the MFMAs ----------

def _blocks(asm: str):
    """[(label, lines)] of the kernel's basic blocks, in text order, and their successors."""
    blocks, cur, lines = [], "entry", []
    for line in asm.splitlines():
        m = re.match(r"^(\.LBB\w+):", line)
        if m:
            blocks.append((cur, lines))
            cur, lines = m.group(1), []
        else:
            lines.append(line.strip())
    blocks.append((cur, lines))
    succ = {}
    for i, (label, lines) in enumerate(blocks):
        s = [m.group(2) for x in lines for m in [re.match(r"^s_(c?branch\w*)\s+(\.LBB\w+)", x)]
             if m]
        ends = any(x.startswith(("s_branch", "s_endpgm")) for x in lines)
        if not ends and i + 1 < len(blocks):
            s.append(blocks[i + 1][0])
        succ[label] = s
    return dict(blocks), succ


@pytest.mark.parametrize("target, mfma", [("gfx942", "v_mfma_"), ("gfx90a", "v_mfma_"),
                                          ("gfx950", "v_mfma_"), ("gfx1100", "v_wmma_"),
                                          ("gfx1201", "v_wmma_")])
def test_isa_loads_before_the_matrix_instructions(target, mfma):
    warps = 4
    ck = _compile("fp16_acc32", target, 64, 64, 32, warps, 2)
    blocks, succ = _blocks(ck.asm["amdgcn"])
    compute = [b for b, ls in blocks.items() if any(x.startswith(mfma) for x in ls)]
    assert len(compute) == 1, compute  # the loop's body: barrier, LDS reads, MFMAs, LDS writes
    body = blocks[compute[0]]
    first = next(i for i, x in enumerate(body) if x.startswith(mfma))
    barrier = [re.match(r"s_barrier(_wait)?\b", x) is not None for x in body]  # (gfx12: split)
    assert any(barrier[:first]) and sum(barrier) == 1
    assert any(x.startswith("ds_read") or x.startswith("ds_load") for x in body[:first])
    last = max(i for i, x in enumerate(body) if x.startswith(mfma))
    assert any(x.startswith(("ds_write", "ds_store")) for x in body[last - 8:])
    # the prefetch: a block of global loads that branches into the compute block, and which the
    # compute block reaches again (the loop) without passing through the prefetch
    loads = [b for b, ls in blocks.items() if b != compute[0] and compute[0] in succ[b]
             and any(x.startswith("global_load") for x in ls)]
    assert loads, "no block of global loads runs into the MFMAs"

    def reaches(a, b, avoid):
        seen, stack = set(), list(succ[a])
        while stack:
            x = stack.pop()
            if x == b:
                return True
            if x in seen or x == avoid:
                continue
            seen.add(x)
            stack.extend(succ[x])
        return False

    assert reaches(compute[0], loads[0], None)  # a loop: the compute block leads back
    assert not any(x.startswith("global_load") for x in body)  # no global load waits on MFMAs
    assert not re.search(r"^\s*(scratch|buffer)_(load|store)", ck.asm["amdgcn"], re.M)

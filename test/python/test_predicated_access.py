"""Masked loads and stores on NVIDIA are predicated inline PTX (`lowering/rules/memory_ptx.py`):
`@p ld.global` with the words tied to `other`, `@p st.global`; a mask compared before a loop
and used in it is compared again beside each access (`pinned_compare`).  The compiled code
(llir through gpu_sim, one OS thread per GPU thread; the SIMT emulator for the loop) against
numpy on random inputs, for every access width the lowering picks (v4.b32, b32, b16, u8 in a
16-bit register, v2.b64), large tiles and 1 to 8 accesses a thread, tails included, `other` of
every dtype; the PTX has no branch per access."""
import re

import numpy as np
import pytest

import gpu_sim
from simt_emulator import Emulator
import tilework.language as tl
from tilework import CompileOptions
from tilework.compiler.driver import ASTSource, compile
from tilework import jit

rng = np.random.default_rng(7)
BLOCK = 8192  # 256 elements per thread of one warp: 16 (int8, 16 bytes) to 256 accesses per op


@jit
def scale_masked(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m, other=3)
    tl.store(out_ptr + offs, x + x, mask=m)


DTYPES = {"f32": (tl.float32, np.float32), "f16": (tl.float16, np.float16),
          "i8": (tl.int8, np.int8), "f64": (tl.float64, np.float64), "i16": (tl.int16, np.int16)}


def _compile(ty, divisible):
    P = tl.pointer_type(ty)
    sig = {"x_ptr": P, "out_ptr": P, "n": tl.int32}
    attrs = {"x_ptr": {"tile.divisibility": 16}, "out_ptr": {"tile.divisibility": 16}}
    if divisible:
        attrs["n"] = {"tile.divisibility": 16}
    return compile(ASTSource(scale_masked, sig, {"BLOCK": BLOCK}, attrs), "sm_90a",
                   CompileOptions(num_warps=1), cache=False)


@pytest.mark.parametrize("divisible", [True, False])
@pytest.mark.parametrize("name", list(DTYPES))
def test_predicated_masked_load_and_store(name, divisible):
    ty, dt = DTYPES[name]
    ck = _compile(ty, divisible)
    ptx = ck.asm["ptx"]
    assert "@%p" in ptx and " ld.global" in ptx
    assert ptx.count("bra") <= 2, "a branch per masked access"
    n = BLOCK + (1008 if divisible else 1005)  # a tail in the second program
    if dt in (np.float32, np.float16, np.float64):
        x = rng.standard_normal(2 * BLOCK).astype(dt)
    else:
        x = rng.integers(-50, 50, 2 * BLOCK).astype(dt)
    out = np.full(2 * BLOCK, 77, dt)
    gpu_sim.run(ck, (2,), x, out, n)
    want = np.where(np.arange(2 * BLOCK) < n, x + x, 77).astype(dt)
    np.testing.assert_array_equal(out, want)


def test_widths_of_the_ptx():
    """16 bytes a thread's access where n is divisible by 16 (v4.b32; v2.b64 for fp64); one
    element (b32, b16, u8) where the mask may change inside a group."""
    assert "ld.global.v4.b32" in _compile(tl.float16, True).asm["ptx"]
    assert "ld.global.v2.b64" in _compile(tl.float64, True).asm["ptx"]
    assert "@%p1 ld.global.u8" in _compile(tl.int8, False).asm["ptx"]
    assert "ld.global.b16" in _compile(tl.float16, False).asm["ptx"]
    assert "st.global.u8" in _compile(tl.int8, False).asm["ptx"]


def _fill_kernel():
    @jit
    def copy_fill(x_ptr, out_ptr, n, OTHER: tl.constexpr, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + offs, mask=offs < n, other=OTHER)
        tl.store(out_ptr + offs, x)  # unmasked: `other` lands where the mask was false
    return copy_fill


copy_fill = _fill_kernel()

# dtype -> (tl type, numpy type, `other`, numpy bits of `other` (None: the value itself))
FILLS = {"f32": (tl.float32, np.float32, float("-inf"), None),
         "f16": (tl.float16, np.float16, float("-inf"), None),
         "bf16": (tl.bfloat16, np.uint16, -2.5, 0xC020),
         "f64": (tl.float64, np.float64, 1e300, None),
         "i8": (tl.int8, np.int8, -7, None), "u8": (tl.uint8, np.uint8, 200, None),
         "i16": (tl.int16, np.int16, -300, None), "i32": (tl.int32, np.int32, -2**31 + 5, None),
         "i64": (tl.int64, np.int64, 2**40 + 3, None)}


def _compile_fill(ty, other, block, warps, divisible):
    P = tl.pointer_type(ty)
    sig = {"x_ptr": P, "out_ptr": P, "n": tl.int32}
    attrs = {"x_ptr": {"tile.divisibility": 16}, "out_ptr": {"tile.divisibility": 16}}
    if divisible:
        attrs["n"] = {"tile.divisibility": 16}
    return compile(ASTSource(copy_fill, sig, {"OTHER": other, "BLOCK": block}, attrs),
                   "sm_90a", CompileOptions(num_warps=warps), cache=False)


@pytest.mark.parametrize("divisible", [True, False])
@pytest.mark.parametrize("name", list(FILLS))
def test_other_of_every_dtype_few_accesses(name, divisible):
    """256 elements, 4 warps: 2 elements a thread, one access or two; the tail inside the
    second program's block; `other` kept bit for bit where the mask is false."""
    ty, dt, other, bits = FILLS[name]
    ck = _compile_fill(ty, other, 256, 4, divisible)
    ptx = ck.asm["ptx"]
    assert "@%p" in ptx and ptx.count("bra") == 0, "a branch around an access"
    n = 256 + (96 if divisible else 77)
    if dt in (np.float32, np.float16, np.float64):
        x = rng.standard_normal(512).astype(dt)
    else:
        x = rng.integers(0, 100, 512).astype(dt)
    out = np.zeros(512, dt)
    gpu_sim.run(ck, (2,), x, out, n)
    fill = np.array(bits if bits is not None else other).astype(dt)
    np.testing.assert_array_equal(out, np.where(np.arange(512) < n, x, fill))


@pytest.mark.parametrize("name,block,warps,accesses", [
    ("f32", 512, 4, 1), ("f32", 4096, 4, 8), ("f16", 1024, 1, 4), ("f16", 4096, 2, 8),
    ("i8", 4096, 1, 8)])
def test_tails_at_few_accesses(name, block, warps, accesses):
    """1 to 8 (16-byte) accesses a thread, every tail length class: predicated, no branch,
    the values against numpy."""
    ty, dt = DTYPES[name]
    P = tl.pointer_type(ty)
    sig = {"x_ptr": P, "out_ptr": P, "n": tl.int32}
    attrs = {k: {"tile.divisibility": 16} for k in sig}
    ck = compile(ASTSource(scale_masked, sig, {"BLOCK": block}, attrs), "sm_90a",
                 CompileOptions(num_warps=warps), cache=False)
    ptx = ck.asm["ptx"]
    assert ptx.count("ld.global.v4.b32") == accesses and "bra" not in ptx
    for tail in (16, block // 2 + 48, block - 16):
        n = block + tail
        x = (rng.standard_normal(2 * block) * 20).astype(dt)
        out = np.full(2 * block, 77, dt)
        gpu_sim.run(ck, (2,), x, out, n)
        want = np.where(np.arange(2 * block) < n, x + x, 77).astype(dt)
        np.testing.assert_array_equal(out, want)


@jit
def rows_loop(x_ptr, out_ptr, n_rows, n_cols, BLOCK: tl.constexpr):
    # each program walks rows pid, pid + nprog, ...; `cmask` is compared before the loop, `inner`
    # in it: the first is compared again beside each access, the second is a plain predicate
    cols = tl.arange(0, BLOCK)
    cmask = cols < n_cols
    for r in range(tl.program_id(0), n_rows, tl.num_programs(0)):
        x = tl.load(x_ptr + r * BLOCK + cols, mask=cmask, other=-1.0)
        inner = cols < n_cols - r
        y = tl.load(x_ptr + r * BLOCK + cols, mask=inner, other=5.0)
        tl.store(out_ptr + r * BLOCK + cols, x * 2 + y, mask=cmask | (cols < 8))


def _compile_rows(block, warps):
    P = tl.pointer_type(tl.float32)
    sig = {"x_ptr": P, "out_ptr": P, "n_rows": tl.int32, "n_cols": tl.int32}
    attrs = {"x_ptr": {"tile.divisibility": 16}, "out_ptr": {"tile.divisibility": 16},
             "n_cols": {"tile.divisibility": 16}}
    return compile(ASTSource(rows_loop, sig, {"BLOCK": block}, attrs), "sm_90a",
                   CompileOptions(num_warps=warps), cache=False)


def _rows_want(x, n_rows, n_cols, block):
    cols = np.arange(block)
    want = np.full((n_rows, block), 77, np.float32)
    for r in range(n_rows):
        xv = np.where(cols < n_cols, x[r], -1.0)
        yv = np.where(cols < n_cols - r, x[r], 5.0)
        keep = (cols < n_cols) | (cols < 8)
        want[r] = np.where(keep, xv * 2 + yv, 77)
    return want


def test_loop_invariant_mask_compared_beside_each_access():
    """The loop's load under `cmask` (made before the loop: 4 bits of 2 operands) compares
    again in the loop, one `setp` asm per access; the in-loop mask is an ordinary predicate."""
    ck = _compile_rows(2048, 4)  # 16 fp32 a thread: 4 accesses per tile op
    ptx = ck.asm["ptx"]
    assert "bra" in ptx  # (the loop)
    pinned = [ln for ln in ptx.splitlines() if "setp.lt.s32" in ln and "{" in ln]
    assert len(pinned) == 4, pinned  # the load's 4 accesses; the store's mask is an `or`
    # x 16 bytes an access; y one element (n_cols - r is not known divisible by 16)
    assert ptx.count("ld.global.v4.b32") == 4 and ptx.count("ld.global.b32") == 16
    assert ptx.count("st.global.v4.b32") == 4
    n_rows, n_cols = 7, 2048 - 48
    x = rng.standard_normal((n_rows, 2048)).astype(np.float32)
    for run in ("gpu_sim", "emulator"):
        out = np.full((n_rows, 2048), 77, np.float32)
        if run == "gpu_sim":
            gpu_sim.run(ck, (3,), x, out, n_rows, n_cols)
        else:
            emu = Emulator.from_tilegpu(ck.asm["tilegpu"], "sm_90a", 4)
            emu.run((3,), x, out, n_rows, n_cols)
        np.testing.assert_array_equal(out, _rows_want(x, n_rows, n_cols, 2048), err_msg=run)


@pytest.mark.parametrize("pred,bound,other", [("<", 1000, 3.0), (">=", 24, -2.0),
                                              ("!=", 37, 0.5)])
def test_pinned_compare_predicates(pred, bound, other):
    """Other comparisons of a loop-invariant mask, against numpy in the SIMT emulator and
    gpu_sim (the asm's setp and its add of the element's constant)."""
    src = f"""
@jit
def k(x_ptr, out_ptr, n_rows, b, BLOCK: tl.constexpr):
    cols = tl.arange(0, BLOCK)
    m = cols {pred} b
    for r in range(tl.program_id(0), n_rows, tl.num_programs(0)):
        v = tl.load(x_ptr + r * BLOCK + cols, mask=m, other={other})
        tl.store(out_ptr + r * BLOCK + cols, v + 1, mask=m)
"""
    import types
    mod = types.ModuleType("pinned_k")
    path = f"/tmp/pinned_k_{abs(hash(src))}.py"
    with open(path, "w") as f:
        f.write("import tilework.language as tl\nfrom tilework import jit\n" + src)
    import importlib.util
    spec = importlib.util.spec_from_file_location("pinned_k", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    P = tl.pointer_type(tl.float32)
    sig = {"x_ptr": P, "out_ptr": P, "n_rows": tl.int32, "b": tl.int32}
    attrs = {"x_ptr": {"tile.divisibility": 16}, "out_ptr": {"tile.divisibility": 16}}
    ck = compile(ASTSource(mod.k, sig, {"BLOCK": 1024}, attrs), "sm_90a",
                 CompileOptions(num_warps=4), cache=False)
    assert "setp." in ck.asm["llir"] and "asm sideeffect \"{" in ck.asm["llir"]
    x = rng.standard_normal((5, 1024)).astype(np.float32)
    cols = np.arange(1024)
    m = {"<": cols < bound, ">=": cols >= bound, "!=": cols != bound}[pred]
    want = np.where(m, x + 1, 77).astype(np.float32)
    out = np.full((5, 1024), 77, np.float32)
    gpu_sim.run(ck, (2,), x, out, 5, bound)
    np.testing.assert_array_equal(out, want)
    out = np.full((5, 1024), 77, np.float32)
    Emulator.from_tilegpu(ck.asm["tilegpu"], "sm_90a", 4).run((2,), x, out, 5, bound)
    np.testing.assert_array_equal(out, want)


def test_softmax_prefetch_predicated_without_spills():
    """softmax_prefetch (32768 fp16 a row, 16 warps: 128 registers, 8 accesses a tile op):
    predicated with its 8 loop-invariant masks compared beside each access, no spill (they
    were 8 predicates live across the row loop: 28 bytes spilled)."""
    import os
    import sys
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "examples"))
    from softmax import softmax_prefetch_kernel
    sig = {"out_ptr": "*fp16", "in_ptr": "*fp16", "in_stride": "i32", "out_stride": "i32",
           "n_rows": "i32", "n_cols": "i32"}
    ck = compile(ASTSource(softmax_prefetch_kernel, {k: tl.str_to_ty(v) for k, v in sig.items()},
                           {"BLOCK_N": 32768}, {k: {"tile.divisibility": 16} for k in sig}),
                 "sm_90a", CompileOptions(num_warps=16), cache=False)
    ptx = ck.asm["ptx"]
    assert ptx.count("@%p") >= 24 and ptx.count("bra") <= 2
    if ck.n_spills is None:
        pytest.skip("no ptxas")
    assert ck.n_spills == 0, ck.metadata["ptxas_info"]


@jit
def widen(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=1.0)  # 8 fp16 (16 bytes) an access
    tl.store(out_ptr + offs, x.to(tl.float32) * 3, mask=offs < n)  # two v4 stores per 8


@pytest.mark.parametrize("cap", [False, True])
def test_stores_under_one_mask_bit_not_adjacent(cap, monkeypatch):
    """A thread's 8 contiguous fp32 under one mask bit are two v4 stores: issued round-robin
    over the mask bits, so no two stores in a row share a predicate (ptxas makes a branch
    around such a run); the values against numpy with tails.  The fp16 load would give 8 a
    thread; the fp32 store caps the layout at 4 (`layout_hints.store_run_cap`: one v4 store
    per mask bit), so the 8-a-thread case is made with the cap switched off."""
    from tilework.lowering import layout_hints
    if not cap:
        monkeypatch.setattr(layout_hints, "store_run_cap", lambda an, op: None)
    sig = {"x_ptr": tl.pointer_type(tl.float16), "out_ptr": tl.pointer_type(tl.float32),
           "n": tl.int32}
    attrs = {k: {"tile.divisibility": 16} for k in sig}
    ck = compile(ASTSource(widen, sig, {"BLOCK": 2048}, attrs), "sm_90a",
                 CompileOptions(num_warps=2), cache=False)
    preds = re.findall(r"@(%p\d+) st\.global\.v4\.b32", ck.asm["ptx"])
    # 32 elements a thread: 8 v4 stores under 4 mask bits (8 a thread) or 8 (4 a thread)
    assert len(preds) == 8 and len(set(preds)) == (8 if cap else 4), preds
    assert all(a != b for a, b in zip(preds, preds[1:])), preds
    for tail in (16, 1040, 2032):
        n = 2048 + tail
        x = rng.standard_normal(4096).astype(np.float16)
        out = np.full(4096, 77, np.float32)
        gpu_sim.run(ck, (2,), x, out, n)
        want = np.where(np.arange(4096) < n, x.astype(np.float32) * 3, 77)
        np.testing.assert_array_equal(out, want)

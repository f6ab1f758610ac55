"""Linear layouts (dialects/linear_layout.py) and the encodings' maps (dialects/layout*.py):
the algebra against brute-force enumeration, Blocked/Slice against the index formulas the
lowering used before linear layouts, the MMA/WGMMA/MFMA/WMMA/dot-operand/shared maps against
the PTX ISA and AMD ISA fragment tables, the conversion planner's paths, and conversions
between those layouts run by the SIMT emulator."""
import itertools
import math
import random
import re

import numpy as np
import pytest

from tilework.dialects.layout import Blocked, DotOperand, Slice, parse_layout
from tilework.dialects.layout_amd import AmdMfma, AmdWmma
from tilework.dialects.layout_nvidia import NvidiaMma, NvmmaShared, SwizzledShared
from tilework.dialects.linear_layout import (LinearLayout, SharedSwizzle, plan_conversion,
                                             wavefronts)


# ---- random layouts ------------------------------------------------------------------------------

def rand_layout(rnd, ins=None, outs=None, zero=0.2):
    ins = ins or {d: rnd.randrange(0, 4) for d in ("register", "lane", "warp")}
    outs = outs or [(f"dim{i}", 1 << rnd.randrange(0, 4)) for i in range(rnd.randrange(1, 4))]
    bases = {d: [tuple(0 if rnd.random() < zero else rnd.randrange(s) for _, s in outs)
                 for _ in range(n)] for d, n in ins.items()}
    return LinearLayout.make(bases, outs)


def brute(lin):
    return lin.table()


def xor_apply(lin, **x):
    """apply() by definition: the XOR of the bases of the set bits."""
    out = [0] * len(lin.outs)
    for d, vs in lin.bases:
        for i, v in enumerate(vs):
            if x.get(d, 0) >> i & 1:
                out = [a ^ b for a, b in zip(out, v)]
    return tuple(out)


@pytest.mark.parametrize("seed", range(20))
def test_compose(seed):
    rnd = random.Random(seed)
    inner = rand_layout(rnd)
    outer = rand_layout(rnd, ins={n: (s.bit_length() - 1) for n, s in inner.outs})
    both = outer.compose(inner)
    for xs, y in brute(inner).items():
        x = dict(zip(inner.in_dims, xs))
        assert both.apply(**x) == outer.apply(**dict(zip(inner.out_dims, y)))
        assert inner.apply(**x) == xor_apply(inner, **x)


def rand_bijective(rnd, outs):
    """A random invertible map: random elementary row operations on the identity."""
    nbits = sum(s.bit_length() - 1 for _, s in outs)
    cols = [1 << i for i in range(nbits)]
    for _ in range(3 * nbits):
        i, j = rnd.randrange(nbits), rnd.randrange(nbits)
        if i != j:
            cols[i] ^= cols[j]
    rnd.shuffle(cols)
    tmp = LinearLayout.make({}, outs)
    split = rnd.randrange(nbits + 1)
    vecs = [tmp.unflatten(c) for c in cols]
    return LinearLayout.make({"register": vecs[:split], "lane": vecs[split:]}, outs)


@pytest.mark.parametrize("seed", range(20))
def test_invert(seed):
    rnd = random.Random(seed)
    outs = [("dim0", 1 << rnd.randrange(0, 4)), ("dim1", 1 << rnd.randrange(0, 4))]
    lin = rand_bijective(rnd, outs)
    inv = lin.invert()
    seen = set()
    for xs, y in brute(lin).items():
        assert inv.apply(**dict(zip(lin.out_dims, y))) == xs
        seen.add(y)
    assert len(seen) == lin.total_out()
    assert lin.is_injective() and lin.is_surjective()


@pytest.mark.parametrize("seed", range(20))
def test_pseudo_invert_and_free_variables(seed):
    """Surjective maps with copies: lin(pinv(y)) = y; the free bits are exactly what copies:
    with them zero the map is still onto, and 2^(bits - free) distinct elements are held."""
    rnd = random.Random(seed)
    outs = [("dim0", 1 << rnd.randrange(0, 3)), ("dim1", 1 << rnd.randrange(0, 3))]
    lin = rand_bijective(rnd, outs)
    extra = {d: list(vs) + [tuple(rnd.randrange(s) if rnd.random() < 0.5 else 0 for _, s in outs)
                            for _ in range(rnd.randrange(3))]
             for d, vs in lin.bases}
    extra["warp"] = [tuple(rnd.randrange(s) for _, s in outs) for _ in range(rnd.randrange(3))]
    lin = LinearLayout.make(extra, outs)
    pinv = lin.pseudo_invert()
    for y in itertools.product(*[range(s) for _, s in outs]):
        x = dict(zip(pinv.out_dims, pinv.apply(**dict(zip(lin.out_dims, y)))))
        assert lin.apply(**x) == y
    masks = lin.free_variable_masks()
    nfree = sum(bin(m).count("1") for m in masks.values())
    table = brute(lin)
    assert len(set(table.values())) == 1 << (sum(lin.in_bits(d) for d in lin.in_dims) - nfree)
    owners = {y for xs, y in table.items()
              if all(x & masks[d] == 0 for d, x in zip(lin.in_dims, xs))}
    assert len(owners) == len(set(table.values()))
    assert not lin.is_injective() or nfree == 0


def test_invert_rejects():
    lin = LinearLayout.make({"lane": [(1,), (0,)]}, [("dim0", 2)])
    with pytest.raises(ValueError, match="invert needs a bijective layout"):
        lin.invert()
    with pytest.raises(ValueError, match="pseudo_invert needs a surjective layout"):
        LinearLayout.make({"lane": [(1,)]}, [("dim0", 4)]).pseudo_invert()
    with pytest.raises(ValueError, match="outside dim0 < 2"):
        LinearLayout.make({"lane": [(2,)]}, [("dim0", 2)])


@pytest.mark.parametrize("seed", range(10))
def test_product_reshape_transpose_sublayout(seed):
    rnd = random.Random(seed)
    a = rand_layout(rnd, outs=[("dim0", 4), ("dim1", 2)])
    b = rand_layout(rnd, outs=[("dim0", 2), ("dim1", 4)])
    p = a * b
    assert p.outs == (("dim0", 8), ("dim1", 8))
    for xa in brute(a):
        for xb in brute(b):
            x = {d: xa[i] | (xb[b.in_dims.index(d)] << a.in_bits(d) if d in b.in_dims else 0)
                 for i, d in enumerate(a.in_dims)}
            ya, yb = a.apply(**dict(zip(a.in_dims, xa))), b.apply(**dict(zip(b.in_dims, xb)))
            assert p.apply(**x) == (ya[0] ^ yb[0] * 4, ya[1] ^ yb[1] * 2)
    r = a.reshape_outs([("x", 8)])
    t = a.transpose_outs(["dim1", "dim0"])
    s = a.sublayout(["lane"], ["dim1"])
    for xs, y in brute(a).items():
        x = dict(zip(a.in_dims, xs))
        assert r.apply(**x) == (y[0] * 2 + y[1],)
        assert t.apply(**x) == (y[1], y[0])
    for lane in range(a.in_size("lane")):
        assert s.apply(lane=lane) == (a.apply(lane=lane)[1],)


# ---- Blocked and Slice: the index formulas of the lowering before linear layouts ---------------

def old_blocked_index(b, shape, lane, warp, coord):
    """tilework's former `logical_index`: rep * cta_tile + thread_offset + e, wrapped modulo
    the tile when it is smaller than the CTA tile."""
    out = []
    for d, k in enumerate(coord):
        lane_stride = math.prod(b.threads_per_warp[o] for o in b.order[:b.order.index(d)])
        warp_stride = math.prod(b.warps_per_cta[o] for o in b.order[:b.order.index(d)])
        ld = (lane // lane_stride) % b.threads_per_warp[d]
        wd = (warp // warp_stride) % b.warps_per_cta[d]
        toff = (ld + wd * b.threads_per_warp[d]) * b.size_per_thread[d]
        cta = b.size_per_thread[d] * b.threads_per_warp[d] * b.warps_per_cta[d]
        spt = min(b.size_per_thread[d], shape[d])
        rep, e = divmod(k, spt)
        v = rep * cta + toff + e
        out.append(v % shape[d] if shape[d] < cta else v)
    return tuple(out)


def old_index(lay, shape, lane, warp, coord):
    if isinstance(lay, Slice):
        pshape = lay.parent_shape(shape)
        pc = list(coord)
        pc.insert(lay.dim, 0)
        idx = list(old_index(lay.parent, pshape, lane, warp, tuple(pc)))
        del idx[lay.dim]
        return tuple(idx)
    return old_blocked_index(lay, shape, lane, warp, coord)


def old_per_thread(lay, shape):
    if isinstance(lay, Slice):
        e = list(old_per_thread(lay.parent, lay.parent_shape(shape)))
        del e[lay.dim]
        return tuple(e)
    reps = [max(1, math.ceil(n / c)) for n, c in zip(shape, lay.cta_tile())]
    return tuple(r * min(s, n) for r, s, n in zip(reps, lay.size_per_thread, shape))


def split_pow2(total, rank, rnd):
    out = [1] * rank
    while total > 1:
        out[rnd.randrange(rank)] *= 2
        total //= 2
    return tuple(out)


def random_blocked(rnd, rank, warp_size, warps):
    return Blocked(tuple(rnd.choice([1, 1, 2, 4, 8]) for _ in range(rank)),
                   split_pow2(warp_size, rank, rnd), split_pow2(warps, rank, rnd),
                   tuple(rnd.sample(range(rank), rank)))


@pytest.mark.parametrize("seed", range(60))
def test_blocked_and_slice_match_the_former_index_math(seed):
    rnd = random.Random(seed)
    ws, warps = rnd.choice([32, 64]), rnd.choice([1, 2, 4, 8])
    rank = rnd.randrange(1, 4)
    lay = random_blocked(rnd, rank + (1 if seed % 2 else 0), ws, warps)
    if seed % 2:
        lay = Slice(rnd.randrange(rank + 1), lay)
        if seed % 4 == 1 and rank > 1:
            lay = Slice(rnd.randrange(rank), lay)
            rank -= 1
    shape = tuple(1 << rnd.randrange(0, 7) for _ in range(rank))
    while math.prod(shape) > 4096:
        shape = tuple(max(1, s // 2) for s in shape)
    lin = lay.linear(shape)
    per_thread = old_per_thread(lay, shape)
    assert lay.elems_per_thread(shape) == per_thread
    assert lin.in_size("register") == math.prod(per_thread)
    assert lin.in_size("lane") == ws and lin.in_size("warp") == warps
    for lane in range(ws):
        for warp in range(warps):
            for r, coord in enumerate(itertools.product(*[range(n) for n in per_thread])):
                assert lin.apply(register=r, lane=lane, warp=warp) == \
                    old_index(lay, shape, lane, warp, coord), (lay, shape, lane, warp, coord)
    assert lin.is_surjective()
    assert parse_layout(lay.text()) == lay


# ---- hardware fragments --------------------------------------------------------------------------

def thread_sets(lin):
    """{(lane, warp): set of elements} from a linear map."""
    out = {}
    for (r, lane, warp), y in lin.table().items():
        out.setdefault((lane, warp), set()).add(y)
    return out


def formula_sets(nlanes, nwarps, elems):
    """{(lane, warp): set(elems(lane, warp))}."""
    return {(lane, warp): set(elems(lane, warp)) for lane in range(nlanes)
            for warp in range(nwarps)}


def reps(shape, tile):
    return [(a * tile[0], b * tile[1]) for a in range(max(1, shape[0] // tile[0]))
            for b in range(max(1, shape[1] // tile[1]))]


def wrap(shape, elems):
    return {(r % shape[0], c % shape[1]) for r, c in elems}


@pytest.mark.parametrize("wm, wn, shape", [(2, 2, (32, 16)), (4, 1, (128, 32)), (1, 4, (16, 64)),
                                          (2, 2, (16, 8))])
def test_mma_v2_accumulator(wm, wn, shape):
    """PTX ISA, mma.m16n8k16 D fragment: group = lane / 4, t = lane % 4; c_i at row
    group + 8 (i >= 2), column 2t + i % 2; warps along N first."""
    lay = NvidiaMma(2, (wm, wn), (16, 8))

    def elems(lane, w):
        g, t = lane // 4, lane % 4
        base = ((w // wn) * 16, (w % wn) * 8)
        return wrap(shape, {(R + base[0] + g + 8 * (i >= 2), C + base[1] + 2 * t + i % 2)
                            for i in range(4) for R, C in reps(shape, (16 * wm, 8 * wn))})
    assert thread_sets(lay.linear(shape)) == formula_sets(32, wm * wn, elems)


@pytest.mark.parametrize("wm, wn, n, shape", [(4, 1, 64, (64, 64)), (8, 1, 32, (128, 64)),
                                             (4, 2, 16, (64, 32)), (4, 1, 128, (128, 128))])
def test_wgmma_accumulator(wm, wn, n, shape):
    """PTX ISA, wgmma .m64nNk16 D fragments: warp w of a warpgroup holds rows 16w..16w+15; d_i
    at row group + 8 (i % 4 >= 2), column 8 (i / 4) + 2t + i % 2."""
    lay = NvidiaMma(3, (wm, wn), (64, n, 16))

    def elems(lane, w):
        g, t = lane // 4, lane % 4
        wg = w // 4
        base = ((wg % (wm // 4)) * 64 + 16 * (w % 4), (wg // (wm // 4)) * n)
        return wrap(shape, {(R + base[0] + g + 8 * (i % 4 >= 2),
                             C + base[1] + 8 * (i // 4) + 2 * t + i % 2)
                            for i in range(n // 2) for R, C in reps(shape, (64 * (wm // 4),
                                                                            n * wn))})
    assert thread_sets(lay.linear(shape)) == formula_sets(32, wm * wn, elems)


@pytest.mark.parametrize("version, kw", [(2, 2), (2, 4), (3, 2)])
@pytest.mark.parametrize("op_idx", [0, 1])
def test_mma_dot_operands(version, kw, op_idx):
    """PTX ISA, mma.m16n8k16 (16-bit, k_width 2) / m16n8k32 (8-bit, 4) A and B fragments:
    A: row group (+8), column t * k_width + j (+4 k_width); B: row t * k_width + j
    (+4 k_width), column group.  wgmma's A (registers) stacks the warps of a warpgroup."""
    if version == 3 and op_idx == 1:
        with pytest.raises(ValueError, match="wgmma reads operand B from shared memory"):
            DotOperand(1, NvidiaMma(3, (4, 1), (64, 64, 16)), 2).linear((64, 64))
        return
    wm, wn = (2, 2) if version == 2 else (4, 1)
    parent = NvidiaMma(version, (wm, wn), (16, 8) if version == 2 else (64, 64, 16))
    k = 8 * kw
    shape = (16 * wm, 2 * k) if op_idx == 0 else (2 * k, 8 * wn * 2)
    lin = DotOperand(op_idx, parent, kw).linear(shape)

    def elems(lane, w):
        g, t = lane // 4, lane % 4
        mw = (w // wn) if version == 2 else w
        nw = (w % wn) if version == 2 else 0
        out = set()
        for half in range(2):
            for j in range(kw):
                kk = t * kw + j + 4 * kw * half
                for rep in range(shape[1 - op_idx] // k if op_idx == 0 else shape[0] // k):
                    if op_idx == 0:
                        for h in range(2):
                            out.add((16 * mw + g + 8 * h, kk + rep * k))
                    else:
                        for nrep in range(shape[1] // (8 * wn)):
                            out.add((kk + rep * k, 8 * nw + g + nrep * 8 * wn))
        return out
    assert thread_sets(lin) == formula_sets(32, wm * wn, elems)
    assert lin.is_surjective()


@pytest.mark.parametrize("instr", [32, 16])
@pytest.mark.parametrize("transposed", [False, True])
@pytest.mark.parametrize("shape", [(64, 64), (128, 64), (32, 32)])
def test_mfma_accumulator(instr, transposed, shape):
    """CDNA3 ISA MFMA D layouts: 32x32: column lane % 32, row 8 (i / 4) + 4 (lane / 32) + i % 4
    (16 values); 16x16: column lane % 16, row 4 (lane / 16) + i (4 values); transposed swaps."""
    wm, wn = 2, 2
    lay = AmdMfma((wm, wn), (instr, instr), transposed)

    def elems(lane, w):
        base = ((w // wn) * instr, (w % wn) * instr)
        if instr == 32:
            frag = [(8 * (i // 4) + 4 * (lane // 32) + i % 4, lane % 32) for i in range(16)]
        else:
            frag = [(4 * (lane // 16) + i, lane % 16) for i in range(4)]
        if transposed:
            frag = [(c, r) for r, c in frag]
        return wrap(shape, {(R + base[0] + r, C + base[1] + c) for r, c in frag
                            for R, C in reps(shape, (instr * wm, instr * wn))})
    assert thread_sets(lay.linear(shape)) == formula_sets(64, 4, elems)


@pytest.mark.parametrize("instr, kw", [(32, 4), (16, 4), (16, 8)])
@pytest.mark.parametrize("op_idx", [0, 1])
def test_mfma_operands(instr, kw, op_idx):
    """A (M x K): row lane % 32 (% 16), K elements k_width (lane / 32) (lane / 16) + j; B is the
    transpose (column lane % 32)."""
    lay = DotOperand(op_idx, AmdMfma((2, 2), (instr, instr), False), kw)
    k = kw * 64 // instr
    shape = (2 * instr, 2 * k) if op_idx == 0 else (2 * k, 2 * instr)

    def elems(lane, w):
        mn = (w // 2 if op_idx == 0 else w % 2) * instr + lane % instr
        out = set()
        for rep in range(2):
            for j in range(kw):
                kk = kw * (lane // instr) + j + rep * k
                out.add((mn, kk) if op_idx == 0 else (kk, mn))
        return out
    assert thread_sets(lay.linear(shape)) == formula_sets(64, 4, elems)


@pytest.mark.parametrize("version", [1, 2])
@pytest.mark.parametrize("what", ["acc", 0, 1])
def test_wmma(version, what):
    """RDNA3 (v1): accumulator value i of lane l at row 2i + l / 16, column l % 16; operands
    hold a whole K row per lane, lanes 16-31 copying 0-15.  RDNA4 (v2): row i + 8 (l / 16);
    operands split K between the lane halves."""
    parent = AmdWmma(version, (2, 2))
    shape = (32, 32)
    if what == "acc":
        lin = parent.linear(shape)

        def frag(lane):
            return [((2 * i + lane // 16) if version == 1 else (i + 8 * (lane // 16)), lane % 16)
                    for i in range(8)]
    else:
        kw = 16 if version == 1 else 8
        lin = DotOperand(what, parent, kw).linear(shape)

        def frag(lane):
            ks = range(16) if version == 1 else range(8 * (lane // 16), 8 * (lane // 16) + 8)
            return [(lane % 16, k) if what == 0 else (k, lane % 16) for k in ks]

    def elems(lane, w):
        wm_, wn_ = w // 2, w % 2
        base = (wm_ * 16 if what != 1 else 0, wn_ * 16 if what != 0 else 0)
        tile = (32 if what != 1 else 16, 32 if what != 0 else 16)
        return {(R + base[0] + r, C + base[1] + c) for r, c in frag(lane)
                for R, C in reps(shape, tile)}
    assert thread_sets(lin) == formula_sets(32, 4, elems)
    with pytest.raises(ValueError, match="operands hold"):
        DotOperand(0, parent, 4).linear(shape)


@pytest.mark.parametrize("vec, per_phase, max_phase, order, shape",
                         [(4, 1, 8, (1, 0), (16, 32)), (2, 2, 4, (0, 1), (16, 8)),
                          (8, 1, 1, (1, 0), (4, 64)), (1, 1, 4, (2, 0, 1), (2, 4, 8))])
def test_swizzled_shared(vec, per_phase, max_phase, order, shape):
    """offset -> element: in a row (order[1:] flattened), vec-groups xor (row / per_phase) %
    max_phase."""
    lay = SwizzledShared(vec, per_phase, max_phase, order)
    lin = lay.linear(shape)
    rows = list(reversed(order[1:]))
    for coord in itertools.product(*[range(s) for s in shape]):
        r = 0
        for d in rows:
            r = r * shape[d] + coord[d]
        c = coord[order[0]]
        off = r * shape[order[0]] + ((c // vec) ^ (r // per_phase % max_phase)) * vec + c % vec
        assert lin.apply(offset=off) == coord
    assert parse_layout(lay.text()) == lay


@pytest.mark.parametrize("swizzle, bits, transposed, shape",
                         [(128, 16, False, (16, 64)), (64, 16, False, (8, 64)),
                          (32, 8, True, (64, 16)), (128, 32, False, (8, 64)), (0, 16, False, (8, 64))])
def test_nvmma_shared(swizzle, bits, transposed, shape):
    """The wgmma/TMA swizzles: 16-byte chunk j of row r of a swizzle-wide column block is
    stored at chunk j ^ ((r / (128 / swizzle)) % (swizzle / 16))."""
    lin = NvmmaShared(swizzle, transposed, bits).linear(shape)
    eb = bits // 8
    width = (swizzle or 128) // eb
    col, row = (0, 1) if transposed else (1, 0)
    for coord in itertools.product(*[range(s) for s in shape]):
        r, k = coord[row], coord[col]
        blk, k = divmod(k, width)
        chunk, e = divmod(k * eb, 16)
        phase = (r // (128 // (swizzle or 128))) % max(1, swizzle // 16)
        byte = blk * shape[row] * width * eb + r * width * eb + (chunk ^ phase) * 16 + e
        assert lin.apply(offset=byte // eb) == coord


def test_layout_rejections():
    with pytest.raises(ValueError, match="mma v2 instr_shape"):
        NvidiaMma(2, (2, 2), (16, 16)).linear((32, 32))
    with pytest.raises(ValueError, match="whole warpgroups"):
        NvidiaMma(3, (2, 2), (64, 64, 16)).linear((64, 64))
    with pytest.raises(ValueError, match="mfma instr_shape"):
        AmdMfma((2, 2), (8, 8), False).linear((64, 64))
    with pytest.raises(ValueError, match="nvmma_shared swizzle"):
        NvmmaShared(16, False, 16).linear((8, 64))
    with pytest.raises(ValueError, match="narrower than"):
        NvmmaShared(128, False, 16).linear((8, 32))
    with pytest.raises(ValueError, match="wider than the contiguous dim"):
        SwizzledShared(8, 1, 8, (1, 0)).linear((8, 32))
    with pytest.raises(ValueError, match="not an MMA layout"):
        DotOperand(0, Blocked((1, 1), (4, 8), (2, 2), (1, 0)), 2).linear((16, 16))
    with pytest.raises(ValueError, match="unknown layout encoding"):
        parse_layout("#tilegpu.foo<1 : i32>")
    with pytest.raises(ValueError, match="malformed #tilegpu.mma attribute"):
        parse_layout("#tilegpu.mma<2 : i32, array<i32: 2, 2>>")


def test_parse_round_trip_and_cache():
    for lay in [NvidiaMma(2, (2, 2), (16, 8)), NvidiaMma(3, (4, 1), (64, 128, 16)),
                DotOperand(0, NvidiaMma(2, (2, 2), (16, 8)), 2), AmdMfma((2, 2), (32, 32), True),
                DotOperand(1, AmdWmma(2, (2, 2)), 8), NvmmaShared(128, True, 16),
                SwizzledShared(8, 1, 8, (1, 0)), Slice(1, NvidiaMma(2, (4, 1), (16, 8)))]:
        assert parse_layout(lay.text()) == lay
        assert parse_layout(lay.text()) is parse_layout(lay.text())


# ---- the conversion planner ----------------------------------------------------------------------

def check_plan(src, dst, plan):
    """The plan moves every element where dst wants it (brute force over all positions)."""
    ts, td = src.table(), dst.table()
    if plan.kind in ("none", "registers"):
        for (r, lane, warp), y in td.items():
            assert src.apply(register=plan.registers[r], lane=lane, warp=warp) == y
    elif plan.kind == "shuffle":
        for (r, lane, warp), y in td.items():
            sr, sl = plan.source.apply(register=r, lane=lane, warp=warp)
            assert src.apply(register=sr, lane=sl, warp=warp) == y
    else:
        shape = tuple(s for _, s in src.outs)
        offs = plan.swizzle.offset_map(shape)
        got = {offs.apply(**dict(zip(offs.in_dims, y))) for y in ts.values()}
        assert len(got) == math.prod(shape)  # a bijection: every element its own slot
    del ts


@pytest.mark.parametrize("seed", range(40))
def test_plan_random_blocked(seed):
    rnd = random.Random(seed)
    ws, warps = 32, rnd.choice([1, 2, 4])
    rank = rnd.choice([1, 2])
    shape = tuple(1 << rnd.randrange(1, 6) for _ in range(rank))
    a, b = random_blocked(rnd, rank, ws, warps), random_blocked(rnd, rank, ws, warps)
    if seed % 3 == 0:  # same warps: shuffles may do
        b = Blocked(b.size_per_thread, b.threads_per_warp, a.warps_per_cta, a.order)
    src, dst = a.linear(shape), b.linear(shape)
    plan = plan_conversion(src, dst, shape)
    check_plan(src, dst, plan)
    if src.equivalent(dst) and src.basis("register") == dst.basis("register"):
        assert plan.kind == "none"


def test_plan_paths():
    # the same map under two encodings: nothing moves
    two = Slice(0, Blocked((1, 4), (1, 32), (1, 4), (1, 0)))
    one = Blocked((4,), (32,), (4,), (0,))
    assert plan_conversion(two.linear((512,)), one.linear((512,))).kind == "none"
    # register bases permuted: a register permutation
    src = LinearLayout.make({"register": [(1,), (2,)], "lane": [(4,)]}, [("dim0", 8)])
    dst = LinearLayout.make({"register": [(2,), (1,)], "lane": [(4,)]}, [("dim0", 8)])
    p = plan_conversion(src, dst)
    assert p.kind == "registers" and p.registers == (0, 2, 1, 3)
    # lanes exchange elements within the warp
    a, b = Blocked((4,), (32,), (1,), (0,)), Blocked((1,), (32,), (1,), (0,))
    p = plan_conversion(a.linear((128,)), b.linear((128,)))
    assert p.kind == "shuffle"
    check_plan(a.linear((128,)), b.linear((128,)), p)
    # elements change warps: shared memory
    m = NvidiaMma(2, (2, 2), (16, 8)).linear((32, 16))
    bl = Blocked((1, 4), (8, 4), (4, 1), (1, 0)).linear((32, 16))
    p = plan_conversion(m, bl, elem_bytes=4)
    assert p.kind == "shared"
    check_plan(m, bl, p)


def test_plan_swizzle_avoids_bank_conflicts():
    """mma accumulator -> row-major blocked, f32 64x64: the chosen swizzle needs no more
    wavefronts than row-major, and fewer on the store side (the columns pairs of 8 rows land
    in the same banks without a swizzle)."""
    shape = (64, 64)
    m = NvidiaMma(2, (2, 2), (16, 8)).linear(shape)
    bl = Blocked((1, 4), (1, 32), (4, 1), (1, 0)).linear(shape)
    p = plan_conversion(m, bl, shape, 4)
    plain = SharedSwizzle(p.swizzle.vec, 1, 1, p.swizzle.order).offset_map(shape)
    assert p.store_wavefronts + p.load_wavefronts < \
        wavefronts(m, plain, p.store_vec, 4) + wavefronts(bl, plain, p.load_vec, 4)
    assert p.swizzle.max_phase > 1


def test_plan_ldmatrix():
    """Row-major f16 blocked -> mma A operand: the load side is ldmatrix's fragment."""
    shape = (32, 32)
    bl = Blocked((1, 8), (8, 4), (4, 1), (1, 0)).linear(shape)
    a = DotOperand(0, NvidiaMma(2, (2, 2), (16, 8)), 2).linear(shape)
    p = plan_conversion(bl, a, shape, 2)
    assert p.kind == "shared" and p.ldmatrix and not p.stmatrix
    assert not plan_conversion(bl, a, shape, 4).ldmatrix  # 32-bit elements: no


# ---- conversions run by the SIMT emulator ----------------------------------------------------------

COPY_SRC = '''
import tilework
import tilework.language as tl


@tilework.jit
def copy2d(x, o, BM: tl.constexpr, BN: tl.constexpr):
    offs = tl.arange(0, BM)[:, None] * BN + tl.arange(0, BN)[None, :]
    tl.store(o + offs, tl.load(x + offs))
'''


def _copy_kernel():
    import importlib.util
    import sys
    import tempfile
    path = tempfile.NamedTemporaryFile("w", suffix="_copy2d.py", delete=False)
    path.write(COPY_SRC)
    path.close()
    spec = importlib.util.spec_from_file_location("ll_copy2d", path.name)
    mod = importlib.util.module_from_spec(spec)
    sys.modules["ll_copy2d"] = mod
    spec.loader.exec_module(mod)
    return mod.copy2d


def through(chain, ety="f32"):
    """A rewrite of the tilegpu text: the loaded tile goes through the layouts of `chain`
    (convert_layout each) and back to its own before the store."""
    def rewrite(text):
        m = re.search(r'"tile.store"\((%\d+), (%\d+)\).*: \(.*, (tensor<(\d+)x(\d+)x'
                      + ety + r', (.*)>)\) -> \(\)', text)
        assert m, text
        ptrs, val, ty, bm, bn, enc = m.groups()
        lines, prev, prev_ty = [], val, ty
        for i, lay in enumerate(list(chain) + [None]):
            t = ty if lay is None else f"tensor<{bm}x{bn}x{ety}, {lay.text()}>"
            lines.append(f'    %cv{i} = "tilegpu.convert_layout"({prev}) : ({prev_ty}) -> {t}')
            prev, prev_ty = f"%cv{i}", t
        store = m.group(0).replace(f"({ptrs}, {val})", f"({ptrs}, {prev})")
        return text.replace(m.group(0), "\n".join(lines) + "\n    " + store.strip())
    return rewrite


def emulate_roundtrip(chain, shape, target, warps, dtype=np.float32):
    from simt_emulator import Emulator
    import tilework.language as tl
    byte = dtype == np.uint8
    P = tl.pointer_type(tl.uint8 if byte else tl.float32)
    emu = Emulator.from_kernel(_copy_kernel(), {"x": P, "o": P},
                               {"BM": shape[0], "BN": shape[1]}, target, warps,
                               rewrite=through(chain, "i8" if byte else "f32"))
    rng = np.random.default_rng(0)
    x = rng.integers(0, 256, shape, dtype=np.uint8) if byte else \
        rng.standard_normal(shape).astype(np.float32)
    out = np.zeros(shape, dtype)
    with emu.context:
        emu.run((1,), x, out)
    np.testing.assert_array_equal(out, x, err_msg=f"{chain} {shape} {target}")
    return emu


MMA2 = NvidiaMma(2, (2, 2), (16, 8))
WGMMA = NvidiaMma(3, (4, 1), (64, 32, 16))
MFMA32 = AmdMfma((2, 2), (32, 32), False)
MFMA16T = AmdMfma((2, 2), (16, 16), True)


@pytest.mark.parametrize("chain, shape, target", [
    ([MMA2], (32, 16), "sm_80"),
    ([MMA2], (64, 64), "sm_80"),
    ([MMA2], (16, 8), "sm_80"),                 # smaller than the warps' tile: copies
    ([WGMMA], (64, 32), "sm_90a"),
    ([WGMMA], (128, 64), "sm_90a"),
    ([DotOperand(0, MMA2, 2)], (32, 32), "sm_80"),
    ([DotOperand(1, MMA2, 2)], (32, 32), "sm_80"),
    ([DotOperand(0, WGMMA, 2)], (64, 32), "sm_90a"),
    ([MMA2, DotOperand(0, MMA2, 2), Blocked((4, 1), (4, 8), (1, 4), (0, 1))], (32, 32), "sm_80"),
    ([MFMA32], (64, 64), "gfx942"),
    ([MFMA16T], (32, 64), "gfx942"),
    ([DotOperand(0, MFMA32, 4), DotOperand(1, MFMA16T, 4)], (64, 32), "gfx942"),
    ([AmdWmma(1, (2, 2))], (32, 32), "sm_80"),
    ([AmdWmma(2, (2, 2)), DotOperand(0, AmdWmma(2, (2, 2)), 8)], (32, 32), "sm_80"),
    ([DotOperand(1, AmdWmma(1, (2, 2)), 16)], (32, 32), "sm_80"),
])
def test_roundtrip_emulated(chain, shape, target):
    """blocked -> chain -> blocked keeps every value (the emulator also checks the shared
    memory accesses for races)."""
    emulate_roundtrip(chain, shape, target, 4)


@pytest.mark.parametrize("seed", range(12))
def test_random_blocked_conversions_emulated(seed):
    """Random blocked layouts of the same warps (shuffles or registers) and of other warps
    (shared memory)."""
    rnd = random.Random(seed)
    target = rnd.choice(["sm_80", "gfx942"])
    ws = 64 if target == "gfx942" else 32
    shape = (1 << rnd.randrange(0, 6), 1 << rnd.randrange(1, 7))
    a = random_blocked(rnd, 2, ws, 4)
    b = random_blocked(rnd, 2, ws, 4)
    if seed % 2:
        b = Blocked(b.size_per_thread, b.threads_per_warp, a.warps_per_cta, a.order)
    emulate_roundtrip([a, b], shape, target, 4)


@pytest.mark.parametrize("seed", range(8))
def test_random_8_bit_conversions_emulated(seed):
    """8-bit tiles between random blocked layouts of the same warps on sm_90a: those within
    warps move as 32-bit words (word exchanges where one fits: word_exchange.py), every byte
    kept."""
    rnd = random.Random(100 + seed)
    a = random_blocked(rnd, 2, 32, 4)
    b = random_blocked(rnd, 2, 32, 4)
    b = Blocked(b.size_per_thread, b.threads_per_warp, a.warps_per_cta, a.order)
    emulate_roundtrip([a, b], (64, 64), "sm_90a", 4, np.uint8)


def test_word_exchange_emulated():
    """A blocked pair a word exchange moves (one shuffle a dst word), emulated."""
    a = Blocked((1, 4), (8, 4), (4, 1), (1, 0))
    b = Blocked((2, 2), (4, 8), (4, 1), (1, 0))
    src, dst = a.linear((64, 64)), b.linear((64, 64))
    plan = plan_conversion(src, dst, (64, 64), 1)
    assert plan.exchange is not None and plan.shuffles == dst.in_size("register") // 4 == 8
    text = str(emulate_roundtrip([a, b], (64, 64), "sm_90a", 4, np.uint8).module)
    assert "llvm.nvvm.prmt" in text


def _lowered(chain, shape, target):
    emu = emulate_roundtrip(chain, shape, target, 4)
    return str(emu.module)


def test_paths_in_lowered_code():
    """Within a warp: shuffles (idx), no barrier; across warps: shared memory and barriers."""
    # the loaded tile is blocked<[1, 4], [8, 4], [4, 1], [1, 0]>: warps step rows 8 and 16
    b = Blocked((2, 2), (4, 8), (4, 1), (1, 0))  # the same warps, other lanes and registers
    ir_text = _lowered([b], (32, 16), "sm_80")
    assert "gpu.shuffle  idx" in ir_text and "gpu.barrier" not in ir_text
    ir_text = _lowered([MMA2], (32, 16), "sm_80")
    assert "gpu.barrier" in ir_text and "gpu.shuffle" not in ir_text


def test_axis_queries():
    """What reductions and scans ask: the lane/warp bits along a dim, and the blocked-like order
    (chunk, lanes, warps) with its rejections."""
    from tilework.dialects.layout import axis_geometry, chunk, dim_bits
    lin = Blocked((1, 4), (8, 4), (2, 2), (1, 0)).linear((64, 32))
    assert dim_bits(lin, "lane", 0) == [2, 3, 4] and dim_bits(lin, "warp", 1) == [0]
    assert axis_geometry(lin, 1) == (4, 4, 1, 2, 1) and chunk(lin, 1) == 4
    assert axis_geometry(lin, 0) == (1, 8, 4, 2, 2)
    mixed = LinearLayout.make({"register": [], "lane": [(1, 1)], "warp": []},
                              [("dim0", 2), ("dim1", 2)])
    with pytest.raises(ValueError, match="lane bit 0 of .* moves along several dims"):
        dim_bits(mixed, "lane", 0)
    with pytest.raises(ValueError, match="warps along dim 0 of .* do not follow the thread's "
                                         "chunk"):
        axis_geometry(MMA2.linear((32, 16)), 0)
    gaps = LinearLayout.make({"lane": [(1,), (0,), (2,)]}, [("dim0", 4)])
    with pytest.raises(ValueError, match="lanes along dim 0 of .* are not consecutive bits"):
        axis_geometry(gaps, 0)

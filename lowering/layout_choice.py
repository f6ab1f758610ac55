"""Layout choices that tilegpu-assign-layouts makes and the rules of join, split and cat
(`rules/shape_join.py`) rely on, and the checks (on the layouts' linear maps) of when those
ops move no data.  A leaf (layouts only), so that the pass does not import the rules."""
from __future__ import annotations

from tilework.dialects.layout import Blocked


def join_layout(src: Blocked) -> Blocked:
    """`src` plus a fastest last dimension of size 2 held by each thread."""
    r = src.rank
    return Blocked(src.size_per_thread + (2,), src.threads_per_warp + (1,),
                   src.warps_per_cta + (1,), (r,) + tuple(src.order))


def split_layout(src) -> Blocked | None:
    """`src` without its last dimension, if every thread holds both elements along it (no
    lanes or warps laid along it); else None."""
    if not isinstance(src, Blocked) or src.rank < 2:
        return None
    last = src.rank - 1
    if src.threads_per_warp[last] != 1 or src.warps_per_cta[last] != 1:
        return None
    return Blocked(src.size_per_thread[:-1], src.threads_per_warp[:-1], src.warps_per_cta[:-1],
                   tuple(o for o in src.order if o != last))


def cat_in_registers(src, shape) -> bool:
    """Whether cat of two [n] tiles in `src` is, thread by thread, the concatenation of the
    registers: the top register bit of the [2n] map steps by n and the rest is the [n] map."""
    whole, half = src.linear(shape), src.linear((shape[0] // 2,))
    regs = whole.basis("register")
    return (bool(regs) and regs[-1] == (shape[0] // 2,) and regs[:-1] == half.basis("register")
            and all(whole.basis(d) == half.basis(d) for d in ("lane", "warp")))


def join_in_registers(src, src_shape, dst, dst_shape) -> bool:
    """Whether joining two tiles of layout `src` into `dst` interleaves the registers: the
    [.., 2] map is the [..] map plus a lowest register bit along the new last dimension."""
    s, d = src.linear(src_shape), dst.linear(dst_shape)
    rank = len(src_shape)
    want = {"register": ((0,) * rank + (1,),) + tuple(v + (0,) for v in s.basis("register")),
            "lane": tuple(v + (0,) for v in s.basis("lane")),
            "warp": tuple(v + (0,) for v in s.basis("warp"))}
    return all(d.basis(k) == v for k, v in want.items())

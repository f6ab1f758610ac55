"""Layout choices that tilegpu-assign-layouts makes and the rules of join, split and cat
(`rules/shape_join.py`) rely on.  A leaf (layouts only), so that the pass does not import
the rules."""
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
    registers (n a multiple of the CTA tile: no thread holds wrapped-around copies)."""
    return isinstance(src, Blocked) and shape[0] // 2 >= src.cta_tile()[0]

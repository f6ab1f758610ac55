"""dialects/word_exchange.py: 8-bit conversions within warps by one 32-bit shuffle a dst word.
Each plan's tables are run here as the lowering runs them (src words packed by word_bits, a
prmt of two of them a round by the sender, a shuffle, a prmt of two received words a dst
word), on every lane, and every dst byte must be the src element the shuffle map names."""
import itertools
import time

import pytest

from tilework.dialects.layout import DotOperand, NvidiaMma, parse_layout
from tilework.dialects.linear_layout import plan_conversion, shuffle_map
from tilework.dialects.word_exchange import (exchange_tables, min_word_shuffles,
                                             plan_word_exchange)


def prmt(a, b, sel):
    """PTX prmt.b32 (default mode) on 4-element lists: nibble k of sel picks byte k."""
    both = a + b
    return [both[sel >> 4 * k & 7] for k in range(4)]


def run_exchange(m, ex):
    """Every lane's dst registers after the exchange, as (src register, src lane) names."""
    tabs = exchange_tables(m, ex)
    nl, nr = m.in_bits("lane"), m.in_bits("register")
    wb = ex.word_bits

    def src_word(lane, w):
        return [(w | sum((j >> i & 1) << b for i, b in enumerate(wb)), lane) for j in range(4)]
    got = []
    for ws, sels, lanes in tabs.rounds:
        sent = [prmt(src_word(s, ws[0]), src_word(s, ws[-1]), sels[s]) for s in range(1 << nl)]
        got.append([sent[lanes[lane]] for lane in range(1 << nl)])
    out = [[None] * (1 << nr) for _ in range(1 << nl)]
    for wd, (ts, sels) in enumerate(tabs.words):
        for lane in range(1 << nl):
            out[lane][4 * wd:4 * wd + 4] = prmt(got[ts[0]][lane], got[ts[-1]][lane], sels[lane])
    return out, len(tabs.rounds)


def check(m, ex):
    out, shuffles = run_exchange(m, ex)
    for lane, regs in enumerate(out):
        for r, got in enumerate(regs):
            assert got == m.apply(register=r, lane=lane), (lane, r)
    assert shuffles == m.in_size("register") // 4 == min_word_shuffles(m)


@pytest.mark.parametrize("wm, m, k", [(4, 64, 32), (4, 64, 64), (4, 64, 128), (8, 128, 128)])
def test_accumulator_to_fp8_a_fragment(wm, m, k):
    """wgmma's accumulator to the next wgmma's 8-bit register A (the attention's P)."""
    acc = NvidiaMma(3, (wm, 1), (64, k, 32))
    a = DotOperand(0, NvidiaMma(3, (wm, 1), (64, 64, 32)), 4)
    sm = shuffle_map(acc.linear((m, k)), a.linear((m, k)))[0]
    ex = plan_word_exchange(sm)
    assert ex is not None and ex.word_bits == (0, 1)
    check(sm, ex)


def _blocked(spt, tpw, order):
    return parse_layout(f"#tilegpu.blocked<array<i32: {spt[0]}, {spt[1]}>, array<i32: "
                        f"{tpw[0]}, {tpw[1]}>, array<i32: 4, 1>, array<i32: {order[0]}, "
                        f"{order[1]}>>").linear((64, 64))


BLOCKED = [_blocked(s, t, o) for s in ([1, 4], [4, 1], [2, 2], [1, 8], [4, 4], [2, 8])
           for t in ([4, 8], [8, 4], [1, 32], [32, 1]) for o in ([1, 0], [0, 1])]


def test_blocked_8_bit_conversions():
    """Blocked -> blocked 8-bit conversions within warps: every exchange found moves every
    byte right in the fewest shuffles, and the plan says so; a map none fits is answered
    quickly (the search is bounded)."""
    found = 0
    for a, b in itertools.combinations(BLOCKED, 2):
        sh = shuffle_map(a, b)
        if sh is None:
            continue
        t = time.perf_counter()
        ex = plan_word_exchange(sh[0])
        assert time.perf_counter() - t < 2.0
        if ex is None:
            continue
        found += 1
        check(sh[0], ex)
        plan = plan_conversion(a, b, (64, 64), 1)
        if plan.kind == "shuffle":
            assert plan.exchange == ex and plan.shuffles == b.in_size("register") // 4
    assert found >= 10


def test_no_exchange_across_warps_or_with_few_registers():
    """An exchange stays within a warp, and needs a dst word (4 registers a thread)."""
    acc = NvidiaMma(3, (4, 1), (64, 64, 32))
    a = DotOperand(0, NvidiaMma(3, (4, 1), (64, 64, 32)), 4)
    sm = shuffle_map(acc.linear((64, 64)), a.linear((64, 64)))[0]
    warped = sm.__class__.make({d: (list(sm.basis(d)) if d != "warp" else
                                    [(1, 0)] + list(sm.basis(d))[1:]) for d in sm.in_dims},
                               sm.outs)
    assert plan_word_exchange(warped) is None
    small = sm.__class__.make({d: (list(sm.basis(d))[:1] if d == "register" else
                                   list(sm.basis(d))) for d in sm.in_dims}, sm.outs)
    assert plan_word_exchange(small) is None

"""Word exchanges: an 8-bit layout conversion within warps by the fewest 32-bit shuffles.

`m` is a shuffle map (linear_layout.shuffle_map: dst (register r, lane l) -> src (register R,
lane L), linear).  A dst word is 4 consecutive dst registers (register bits 0-1).  A shuffle
gives each lane one word, so a lane holding none of its own bytes (the usual case) needs as
many shuffles as it holds dst words (`min_word_shuffles`).  An exchange takes exactly that
many, each delivering 4 useful bytes to every lane: round t's word that lane l receives holds,
at byte v, dst register T t ^ H l ^ V v, where
- V (`byte_regs`, 2 dst register vectors) has no src lane part: the 4 bytes share a sender;
- H (`lane_regs`, a dst register vector a lane bit: where the receiver puts what it gets) makes
  A = M_L(H l) ^ M_L(l) invertible: a sender has one receiver a round and, knowing it from its
  own lane, sends it the src registers M_R(T t ^ H l ^ V v) (its lane selects them);
- T (`round_regs`) completes V to the dst register space.
The sender picks its 4 bytes from at most two src words (src registers packed by `word_bits`,
as `packed_shuffles`) by one prmt whose selector its lane XORs; a receiver assembles each dst
word from at most two received words by one prmt likewise (`exchange_tables` checks both and
that the selectors are linear in the lane).  Triton moves this conversion in as many shuffles
(a select of the sender's word by its lane, then a prmt).
"""
from __future__ import annotations

import functools
from dataclasses import dataclass


@dataclass(frozen=True)
class WordExchange:
    word_bits: tuple   # src register bits packed into a src word (byte position bit i)
    byte_regs: tuple   # V
    lane_regs: tuple   # H, one a lane bit
    round_regs: tuple  # T


def _span(vs):
    s = [0]
    for v in vs:
        s += [x ^ v for x in s]
    return s


def _independent(vs) -> bool:
    return len(set(_span(vs))) == 1 << len(vs)


def _xor_of(vs, x: int) -> int:
    r = 0
    for i, v in enumerate(vs):
        if x >> i & 1:
            r ^= v
    return r


def _linear(vals) -> bool:
    """vals[x] == vals[0] ^ xor of (vals[2^i] ^ vals[0]) over x's bits."""
    d = [vals[1 << i] ^ vals[0] for i in range(len(vals).bit_length() - 1)]
    return all(vals[x] == vals[0] ^ _xor_of(d, x) for x in range(len(vals)))


@functools.lru_cache(maxsize=64)
def _apply_tables(m):
    """m over every register and every lane, as ints src register << 16 | src lane (m is linear:
    a (register, lane) maps to the XOR of the two)."""
    def tab(d):
        imgs = [m.apply(**{d: 1 << i}) for i in range(m.in_bits(d))]
        out = [0]
        for R, L in imgs:
            out += [x ^ (R << 16 | L) for x in out]
        return out
    return tab("register"), tab("lane")


@dataclass(frozen=True)
class ExchangeTables:
    """rounds: per round (the src word bases the sender's prmt takes (1 or 2), its selector per
    sender lane, the sender lane per receiving lane); words: per dst word (the rounds whose
    received words its prmt takes (1 or 2), its selector per lane)."""
    rounds: tuple
    words: tuple


def exchange_tables(m, ex: WordExchange, only_first: bool = False):
    """The sends and receives of `ex` on map m, or None where a rule of the module's docstring
    fails (a sender with no or two receivers, more than two words to a prmt, a selector not
    linear in the lane).  `only_first`: round 0 and dst word 0 alone (the planner's test:
    another round or word is theirs shifted by a constant, the same rules holding)."""
    nr, nl = m.in_bits("register"), m.in_bits("lane")
    pmask = sum(1 << b for b in ex.word_bits)
    regs, lanes = _apply_tables(m)

    def apply(r, lane):
        x = regs[r] ^ lanes[lane]
        return x >> 16, x & 0xFFFF

    def pos(reg):
        return sum((reg >> b & 1) << i for i, b in enumerate(ex.word_bits))

    def hl(lane):
        return _xor_of(ex.lane_regs, lane)
    rounds = []
    for t in range(1 if only_first else 1 << len(ex.round_regs)):
        rt = _xor_of(ex.round_regs, t)
        by_sender, src_lane = {}, []
        for lane in range(1 << nl):
            got = [apply(rt ^ hl(lane) ^ _xor_of(ex.byte_regs, v), lane) for v in range(4)]
            if len({L for _, L in got}) != 1 or got[0][1] in by_sender:
                return None
            by_sender[got[0][1]] = [R for R, _ in got]
            src_lane.append(got[0][1])
        words = sorted({R & ~pmask for regs in by_sender.values() for R in regs})
        if len(words) > 2:
            return None
        sels = [sum((4 * words.index(R & ~pmask) + pos(R)) << 4 * v
                    for v, R in enumerate(by_sender[s])) for s in range(1 << nl)]
        if not _linear(sels) or not _linear(src_lane):
            return None
        rounds.append((tuple(words), tuple(sels), tuple(src_lane)))
    where = {}
    for t in range(1 << len(ex.round_regs)):
        for v in range(4):
            where[_xor_of(ex.round_regs, t) ^ _xor_of(ex.byte_regs, v)] = (t, v)
    words = []
    for wd in range(0, 4 if only_first else 1 << nr, 4):
        per_lane = [[where[(wd | q) ^ hl(lane)] for q in range(4)] for lane in range(1 << nl)]
        used = sorted({t for tv in per_lane for t, _ in tv})
        if len(used) > 2:
            return None
        sels = [sum((4 * used.index(t) + v) << 4 * q for q, (t, v) in enumerate(tv))
                for tv in per_lane]
        if not _linear(sels):
            return None
        words.append((tuple(used), tuple(sels)))
    return ExchangeTables(tuple(rounds), tuple(words))


def min_word_shuffles(m) -> int:
    """The fewest 32-bit shuffles that can move m's bytes: a lane receives 4 bytes a shuffle,
    and needs the ones other lanes hold (as many rounds as the neediest lane)."""
    nr, nl = m.in_bits("register"), m.in_bits("lane")
    regs, lanes = _apply_tables(m)
    need = max(sum(1 for r in range(1 << nr) if (regs[r] ^ lanes[lane]) & 0xFFFF != lane)
               for lane in range(1 << nl))
    return -(-need // 4)


def _lane_choices(m, nr, nl, per_image: int = 2, nodes: int = 2048):
    """H candidates, lane bit by lane bit, keeping A = M_L(H l) ^ M_L(l) invertible: 0 where
    the lane's own src lane part is new, else dst register vectors that make it new (only A
    needs the vector's src lane part: `per_image` vectors of each, fewest bits first; at most
    `nodes` steps of the search)."""
    regs, lanes = _apply_tables(m)
    by_image = {}
    for r in sorted(range(1, 1 << nr), key=lambda r: (bin(r).count("1"), r)):
        reps = by_image.setdefault(regs[r] & 0xFFFF, [])
        if len(reps) < per_image:
            reps.append(r)
    cands = [r for reps in by_image.values() for r in reps]
    cands.sort(key=lambda r: (bin(r).count("1"), r))
    budget = [nodes]

    def rec(i, hs, span):
        if i == nl:
            yield tuple(hs)
            return
        own = lanes[1 << i] & 0xFFFF
        for h in [0] + cands:
            budget[0] -= 1
            if budget[0] < 0:
                return
            img = (regs[h] & 0xFFFF) ^ own
            if img not in span:
                yield from rec(i + 1, hs + [h], span | {x ^ img for x in span})
                if h == 0:
                    return  # (the lane's own bit is new: no receiver offset needed)
    yield from rec(0, [], frozenset([0]))


def plan_word_exchange(m, limit: int = 96):
    """The first valid WordExchange of m (the fewest shuffles: one a dst word), or None: also
    when warps or blocks move src registers or lanes (an exchange stays within a warp), when
    every lane holds some of its own bytes (fewer shuffles could do), and after `limit`
    candidates (the search is a compile-time cost)."""
    nr, nl = m.in_bits("register"), m.in_bits("lane")
    src_bits = m.out_size("register").bit_length() - 1
    if nr < 2 or src_bits < 2 or nl < 1:
        return None
    for d in ("warp", "block"):
        if d in m.in_dims and any(v != (0, 0) for v in m.basis(d)):
            return None
    if min_word_shuffles(m) < 1 << (nr - 2):
        return None  # (every lane holds some of its bytes: a shuffle a dst word is not the least)
    regs, _ = _apply_tables(m)
    same_lane = [r for r in range(1, 1 << nr) if regs[r] & 0xFFFF == 0]
    same_lane.sort(key=lambda r: (bin(r).count("1"), r))
    # V: two distinct (so independent) such vectors, the fewest bits first
    vs = [(a, b) for i, a in enumerate(same_lane[:16]) for b in same_lane[i + 1:16]]
    if not vs:
        return None
    # (word bits 0, 1 first: a tile's own packing, rules/fp8.py's, which LLVM then folds)
    pairs = [(i, j) for i in range(src_bits) for j in range(i + 1, src_bits)]
    tried = 0
    for hs in _lane_choices(m, nr, nl):
        tried += 1
        for v in vs:
            rest, ts = list(v), []
            for b in range(nr):
                if _independent(rest + [1 << b]):
                    rest.append(1 << b)
                    ts.append(1 << b)
            for p in pairs:
                ex = WordExchange(p, v, hs, tuple(ts))
                if exchange_tables(m, ex, True) is not None and \
                        exchange_tables(m, ex) is not None:
                    return ex
                tried += 1
                if tried >= limit:
                    return None
    return None

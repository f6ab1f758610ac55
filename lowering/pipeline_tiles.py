"""The TMA ring of a persistent loop (`tl.range(..., flatten=True)` around a pipelined K loop,
NVIDIA sm_90): tilegpu-pipeline-tma's rings and barriers live across the tiles' loop, and the
copies of the next tile's first S-1 iterations are issued during this tile's last ones, so a
tile does not start from an empty pipeline (Triton flattens the two loops for the same end).

A K loop L directly in the body of an outer scf.for O takes this form when

* O carries `tile.flatten` (the user's word that the next tile's loads may be issued before
  this tile's stores), and neither loop `tile.warp_specialize` (there a producer runs ahead
  already);
* L's bounds and step, and the loads' tensor maps, come from outside O; O's induction variable
  is i32;
* what the copies' coordinates need from O's body (the tile's position: `pid_m`, `pid_n` from
  the tile id; a carried offset's start) is computed there by side-effect-free ops from O's
  induction variable and values from outside O (`tile_slice`).

With n = L's trip count (invariant) and t = the tile's index in O, iteration k of L is global
iteration g = t * n + k: slot g % S, phase (g / S) % 2, continuously over the tiles.  Before O
the rings, the barriers' init, and the copies of global iterations 0 .. S-2 (each (t, k) =
divmod(g, n)); in L the copies of g + S - 1: tile t + j for the largest j with
k >= j * n - (S-1) (thresholds computed once; any n >= 1 works), a select chain over the
next tiles' coordinates (computed once a tile), predicated on that tile being in O's range;
after O the barriers' inval and the deallocs.  A copy past the last tile is never
issued, so nothing is in flight after O.  The tile's coordinates for a copy not issued are
computed from a tile in range (the current one), not from past the end.
"""
from __future__ import annotations

import mlir.ir as ir

from .pipeline_common import arith, clone_slice, cmpi, int_const

FLATTEN = "tile.flatten"
WARP_SPECIALIZE = "tile.warp_specialize"
ACROSS_ATTR = "tilegpu.ring_across_tiles"  # on O, once the form applies (tests, dumps)


class Tiles:
    """A persistent loop around a pipelined loop: `loop` (O), the ops of O's body the copies'
    coordinates need (`ops`, in program order), and, once built, the values the rewrite uses:
    the trip count `n` of the inner loop (before O), and `t` (the tile's index) in O's body."""

    def __init__(self, loop, ops, needed):
        self.loop, self.ops = loop, ops
        self.needed = needed  # what the copies read of O's slice (the K loop selects these)
        self.n = self.t = None
        self.ahead = []  # prepare's: (env, predicate) of each of the next tiles
        self.steps = []  # thresholds': (from which k, what to add to k) of each

    @property
    def iv(self):
        return self.loop.regions[0].blocks[0].arguments[0]



def _defined_in(v, block) -> bool:
    owner = v.owner
    if isinstance(owner, ir.Block):
        return owner == block
    op = owner.operation if hasattr(owner, "operation") else owner
    return op.block == block


def outer_tiles(loop, values, pure_op):
    """The `Tiles` of `loop` (the K loop) if it sits directly in a persistent loop this form
    applies to and `values` (what its copies read from outside it: coordinates' operands,
    carried offsets' starts, tensor maps) are computable for any tile; else None."""
    outer = loop.parent
    if outer is None or outer.name != "scf.for" or FLATTEN not in outer.attributes or \
            WARP_SPECIALIZE in outer.attributes or WARP_SPECIALIZE in loop.attributes:
        return None
    obody = outer.regions[0].blocks[0]
    if loop.block != obody or str(obody.arguments[0].type) != "i32":
        return None
    if any(_defined_in(v, obody) for v in list(loop.operands)[:3]):
        return None  # the trip count must not depend on the tile
    ops, seen = [], set()
    if not _slice(obody, values, pure_op, ops, seen):
        return None
    order = {o.operation: i for i, o in enumerate(obody.operations)}
    ops.sort(key=lambda o: order[o])
    mine = {r for o in ops for r in o.results}
    needed = []
    for v in values:
        if v in mine and v not in needed:
            needed.append(v)
    return Tiles(outer, ops, needed)


def _slice(obody, values, pure_op, out, seen) -> bool:
    iv = obody.arguments[0]
    for v in values:
        if not _defined_in(v, obody):
            continue  # from outside O
        if isinstance(v.owner, ir.Block):
            if v != iv:
                return False  # one of O's carried values
            continue
        op = v.owner.operation if hasattr(v.owner, "operation") else v.owner
        if op in seen:
            continue
        if not pure_op(op):
            return False
        seen.add(op)
        out.append(op)
        if not _slice(obody, list(op.operands), pure_op, out, seen):
            return False
    return True


def _select(c, a, b):
    return ir.Operation.create("arith.select", results=[a.type], operands=[c, a, b]).results[0]


def trip_count(lb, ub, step):
    """max(0, ceil((ub - lb) / step)) of an scf.for with a positive step (at the insertion
    point)."""
    i32 = lb.type
    span = arith("arith.subi", ub, lb)
    n = arith("arith.divsi", arith("arith.addi", span, arith("arith.subi", step,
                                                              int_const(i32, 1))), step)
    return arith("arith.maxsi", n, int_const(i32, 0))


def tile_value(tiles, t):
    """O's induction variable for tile index `t` (at the insertion point)."""
    o = tiles.loop
    return arith("arith.addi", o.operands[0], arith("arith.muli", t, o.operands[2]))


def tile_env(tiles, oiv) -> dict:
    """The copies' tile part for the tile whose O induction variable is `oiv`: O's ops cloned
    at the insertion point, as a map from O's values to theirs."""
    env = {tiles.iv: oiv}
    clone_slice(tiles.ops, env)
    return env


def prologue_iteration(tiles, g: int):
    """(the tile's env, the inner index k, predicate) of global iteration `g` (a constant),
    before O."""
    i32 = tiles.n.type
    n1 = arith("arith.maxsi", tiles.n, int_const(i32, 1))
    t = arith("arith.divsi", int_const(i32, g), n1)
    k = arith("arith.remsi", int_const(i32, g), n1)
    o = tiles.loop
    oiv = tile_value(tiles, t)
    pred = arith("arith.andi", cmpi("sgt", tiles.n, int_const(i32, 0)),
                 cmpi("slt", oiv, o.operands[1]))
    return tile_env(tiles, _select(pred, oiv, o.operands[0])), k, pred


def prepare(tiles, distance: int):
    """In O's body before the K loop (at the insertion point): the tile's index `t`, and the
    tile part of the coordinates of the `distance` tiles after it (a tile past the end takes
    the current one's: its copies are not issued), so the K loop only selects among them."""
    tiles.loop.attributes[ACROSS_ATTR] = ir.UnitAttr.get()
    tiles.t = arith("arith.divsi", arith("arith.subi", tiles.iv, tiles.loop.operands[0]),
                    tiles.loop.operands[2])
    tiles.ahead = []
    for d in range(1, distance + 1):
        oiv = tile_value(tiles, arith("arith.addi", tiles.t, int_const(tiles.t.type, d)))
        pred = cmpi("slt", oiv, tiles.loop.operands[1])
        tiles.ahead.append((tile_env(tiles, _select(pred, oiv, tiles.iv)), pred))


def thresholds(tiles, distance: int):
    """Before O, with `tiles.n` known: for j = 1 .. distance, the inner index from which the
    copies `distance` iterations ahead are tile t + j's (j * n - distance), and what to add to
    k for their inner index (distance - j * n)."""
    i32 = tiles.n.type
    tiles.steps = []
    for j in range(1, distance + 1):
        jn = arith("arith.muli", tiles.n, int_const(i32, j))
        tiles.steps.append((arith("arith.subi", jn, int_const(i32, distance)),
                            arith("arith.subi", int_const(i32, distance), jn)))


def ahead(tiles, k, distance: int):
    """(the tile's env for `tiles.needed`, the inner index, predicate) of the
    iteration `distance` after inner iteration `k` of the current tile (in L's body): tile
    t + j for the largest j whose threshold k reaches (`thresholds`; none: this tile), chosen
    by a select chain over `prepare`'s tiles (any n >= 1: k + distance passes at most
    `distance` tiles' ends)."""
    i32 = k.type
    kn = arith("arith.addi", k, int_const(i32, distance))
    env = {v: v for v in tiles.needed}
    pred = int_const(ir.IntegerType.get_signless(1), 1)
    for (thr, add), (tenv, p) in zip(tiles.steps, tiles.ahead):
        past = cmpi("sge", k, thr)
        kn = _select(past, arith("arith.addi", k, add), kn)
        env = {v: _select(past, tenv[v], x) for v, x in env.items()}
        pred = _select(past, p, pred)
    return env, kn, pred

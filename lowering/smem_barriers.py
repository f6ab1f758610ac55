"""`tilegpu-insert-barriers`: `tilegpu.barrier` where shared-memory accesses of different ops
could race.

Runs after tilegpu-allocate-shared, from the byte intervals it assigned.  Each op's accesses:

| op | accesses |
| --- | --- |
| with scratch (`SCRATCH`) | writes its interval, a barrier of its own (`smem_publish`), reads it |
| `local_alloc` with a value, `local_store` | writes the buffer |
| `local_load` | reads the buffer |
| `warpgroup_dot` | reads its operand buffers (wgmma, through the async proxy: its rule fences) |
| `async_copy` | writes the buffer, asynchronously: the bytes land when an `async_wait` |
|              | completes its group, and count as written there |
| `mbarrier_init` | writes the barrier (one thread), then a barrier of its own (its rule's): |
|                  | every thread may wait on it after, whichever path it takes |
| `mbarrier_inval` | writes the barrier (one thread; after every wait on it) |
| `mbarrier_wait` | reads the barrier; each waiting thread sees the TMA copies it completes |
| `mbarrier_arrive` | reads the barrier (an atomic update: arrivals do not race, an inval after |
|                   | them does) |
| `tma_load` | writes its buffer (through the async proxy): ordered after earlier reads and |
|            | writes like a write, but its bytes are never "written since the last barrier": |
|            | every reader waited on the mbarrier itself |
| `tma_store` | a barrier of its own (its rule's, after every thread's proxy fence), then |
|             | reads its buffer (one thread, through the async proxy, done within the op: |
|             | it waits for the bulk group's reads), so a later writer of the bytes waits |
| `tma_store_wait` | a barrier of its own (after the issuing thread's read wait of the stores |
|                  | marked `tilegpu.wait_later`, whose buffers only it precedes the writes of) |
| asynchronous `warpgroup_dot` | reads both buffers when issued and again when the |
|              | `warpgroup_wait` that completes its wgmma group runs (until then the tensor |
|              | cores may read them: other threads must not write them before a barrier after it) |

The state is what was read and written since the last barrier.  A barrier goes before an op
that writes bytes read or written since then (WAR, WAW) or reads bytes written since then
(RAW); it empties the state (an op with scratch leaves its own reads in it).  Copies in flight
are not finished by a barrier, only by `async_wait` (which leaves its `num` newest committed
groups pending); the bytes of the groups it completes become writes, so a read by other
threads gets a barrier after the wait.  A `memdesc_trans` is the bytes of its buffer (an access
through it is an access of the buffer).  A `memdesc_index` with a constant index is that one
buffer, any other index the whole allocation; two such indices marked as slots of different
roles (`tilegpu.stream_slot`: read, write) are different buffers within one iteration of their
loop, and the roles are forgotten at the loop's back edge.

Control flow, conservatively: both sides of an `scf.if` start from the state before it and
the state after it is their union; a loop body starts from the state before the loop joined
with the state at the end of the body (the previous iteration), iterated to a fixed point,
and the state after the loop is the join of those (it may run zero times).  Barriers sit
before the op that needs them (the rule of an op with scratch emits it where it starts
touching shared memory).  The pass first removes the barriers it placed before, so it can run
again.

Hook for the async proxy (TMA, wgmma operands): an op that reads shared memory through the
async proxy after generic-proxy writes (or writes it before generic reads) needs a
`fence.proxy.async` after the barrier.  Such ops go in `ASYNC_PROXY_OPS` with their accesses
in `accesses`; `_needs_proxy_fence` is where the fence op will be placed (none exists yet).
"""
from __future__ import annotations

import mlir.ir as ir

from tilework.dialects import builders as B
from tilework.dialects import tile as T

from tilework.dialects.opdefs.wgmma import is_async

from .layout_passes import kernels
from .pass_base import Pass, register
from .shared_memory import OFFSET_ATTR, SCRATCH, align, alloc_bytes, buffer_bytes, scratch_bytes

BARRIER = "tilegpu.barrier"
# a non-constant memdesc_index with this attribute ("read", "write") is a slot that, within one
# iteration of its loop, is not the slot of another role (AMD's stream pipelining, which sets it)
SLOT_ATTR = "tilegpu.stream_slot"
ASYNC_PROXY_OPS: frozenset = frozenset()  # ops accessing shared memory through the async proxy
_MAX_GROUPS = 16  # older committed groups than this are merged (only more conservative)


# ---- intervals -----------------------------------------------------------------------------

def _offset(op) -> int:
    if OFFSET_ATTR not in op.attributes:
        raise ValueError(f"'{op.name}' has no tilegpu.smem_offset; run "
                         "tilegpu-allocate-shared first")
    return ir.IntegerAttr(op.attributes[OFFSET_ATTR]).value


def memdesc_interval(v: ir.Value) -> tuple[int, int]:
    """The bytes [lo, hi) of the kernel's shared memory that the memdesc `v` covers."""
    owner = v.owner
    if isinstance(owner, ir.Block) or owner.name not in ("tilegpu.local_alloc",
                                                           "tilegpu.memdesc_index",
                                                           "tilegpu.memdesc_trans"):
        raise ValueError(f"cannot tell which shared buffer {v} is")
    if owner.name == "tilegpu.memdesc_trans":  # the same bytes (slot role included)
        return memdesc_interval(owner.operands[0])
    if owner.name == "tilegpu.local_alloc":
        off = _offset(owner)
        return off, off + alloc_bytes(T.memdesc_of(v.type))
    lo, hi = memdesc_interval(owner.operands[0])[:2]
    idx = owner.operands[1].owner
    if not isinstance(idx, ir.Block) and idx.name == "arith.constant":
        md = T.memdesc_of(owner.operands[0].type)
        i = ir.IntegerAttr(idx.attributes["value"]).value
        start = lo + i * align(buffer_bytes(md))
        return start, start + buffer_bytes(md)
    if SLOT_ATTR in owner.attributes:  # the whole buffer, in the role its slot has
        return lo, hi, ir.StringAttr(owner.attributes[SLOT_ATTR]).value
    return lo, hi


def accesses(op) -> list:
    """The op's shared-memory accesses in order: ("r"|"w"|"async", (lo, hi)), ("barrier",),
    ("commit",), ("wait", num)."""
    name = op.name
    if name == "tilegpu.local_alloc":
        return [("w", memdesc_interval(op.results[0]))] if len(op.operands) else []
    if name == "tilegpu.local_store":
        return [("w", memdesc_interval(op.operands[1]))]
    if name == "tilegpu.local_load":
        return [("r", memdesc_interval(op.operands[0]))]
    if name == "tilegpu.async_copy":
        return [("async", memdesc_interval(op.operands[1]))]
    if name == "tilegpu.warpgroup_dot":  # (its proxy fence: the rule's, before the barrier)
        reads = [("r", memdesc_interval(v)) for v in list(op.operands)[:2]
                 if T.is_memdesc(v.type)]  # (a may be in registers)
        return reads + ([("wgmma", frozenset(r[1] for r in reads))] if is_async(op) else [])
    if name == "tilegpu.warpgroup_wait":
        return [("wgwait", ir.IntegerAttr(op.attributes["num"]).value)]
    if name == "tilegpu.mbarrier_init":
        return [("w", memdesc_interval(op.operands[0])), ("barrier",)]
    if name == "tilegpu.mbarrier_inval":
        return [("w", memdesc_interval(op.operands[0]))]
    if name in ("tilegpu.mbarrier_wait", "tilegpu.mbarrier_arrive"):  # (atomic: no race)
        return [("r", memdesc_interval(op.operands[0]))]
    if name == "tilegpu.tma_load":
        return [("tma", memdesc_interval(op.operands[1]))]
    if name == "tilegpu.tma_store":
        return [("barrier",), ("r", memdesc_interval(op.operands[1]))]
    if name == "tilegpu.tma_store_wait":
        return [("barrier",)]
    if name == "tilegpu.async_commit_group":
        return [("commit",)]
    if name == "tilegpu.async_wait":
        return [("wait", ir.IntegerAttr(op.attributes["num"]).value)]
    if name in SCRATCH:
        n = scratch_bytes(op)
        if not n:
            return []
        iv = (_offset(op), _offset(op) + n)
        return [("w", iv), ("barrier",), ("r", iv)]
    return []


def _overlaps(iv, ivs) -> bool:
    return any(iv[0] < o[1] and o[0] < iv[1] and not _other_slot(iv, o) for o in ivs)


def _other_slot(a, b) -> bool:
    """Slots of one buffer in different roles (`SLOT_ATTR`) of the same loop iteration."""
    return len(a) == 3 and len(b) == 3 and a[:2] == b[:2] and a[2] != b[2]


def _untag(ivs):
    return frozenset(iv[:2] for iv in ivs)


# ---- state ---------------------------------------------------------------------------------

class State:
    """Accesses since the last barrier, asynchronous copies in flight, and the reads of
    asynchronous wgmma groups in flight."""

    def __init__(self, reads=(), writes=(), groups=(), open_=(), wg=()):
        self.reads, self.writes = frozenset(reads), frozenset(writes)
        self.groups = tuple(frozenset(g) for g in groups)  # committed, oldest first
        self.open = frozenset(open_)                       # issued, not yet committed
        self.wg = tuple(frozenset(g) for g in wg)          # wgmma groups, oldest first

    def key(self):
        return (self.reads, self.writes, self.groups, self.open, self.wg)

    def _with(self, **kw):
        d = dict(reads=self.reads, writes=self.writes, groups=self.groups, open_=self.open,
                 wg=self.wg)
        d.update(kw)
        return State(**d)

    def __eq__(self, other):
        return self.key() == other.key()

    def join(self, other: "State") -> "State":
        return State(self.reads | other.reads, self.writes | other.writes,
                     _join_groups(self.groups, other.groups), self.open | other.open,
                     _join_groups(self.wg, other.wg))

    def untagged(self) -> "State":
        """The state as the next iteration sees it: slot roles hold within one iteration."""
        return State(_untag(self.reads), _untag(self.writes), [_untag(g) for g in self.groups],
                     _untag(self.open), [_untag(g) for g in self.wg])

    def synced(self) -> "State":
        return self._with(reads=(), writes=())

    def conflicts(self, kind, iv) -> bool:
        if kind == "r":
            return _overlaps(iv, self.writes)
        return _overlaps(iv, self.writes) or _overlaps(iv, self.reads)

    def apply(self, acc) -> "State":
        kind = acc[0]
        if kind == "barrier":
            return self.synced()
        if kind == "r":
            return self._with(reads=self.reads | {acc[1]})
        if kind == "w":
            return self._with(writes=self.writes | {acc[1]})
        if kind == "async":
            return self._with(open_=self.open | {acc[1]})
        if kind == "tma":  # complete for each thread at its own mbarrier wait
            return self
        if kind == "commit":
            return self._with(groups=_push(self.groups, self.open), open_=())
        if kind == "wgmma":
            return self._with(wg=_push(self.wg, acc[1]))
        if kind in ("wait", "wgwait"):  # all but the `num` newest committed groups complete
            groups = self.groups if kind == "wait" else self.wg
            done = groups[:max(0, len(groups) - acc[1])]
            ivs = frozenset().union(*done) if done else frozenset()
            if kind == "wait":  # the copies land: writes
                return self._with(writes=self.writes | ivs, groups=groups[len(done):])
            return self._with(reads=self.reads | ivs, wg=groups[len(done):])  # wgmma reads
        raise ValueError(kind)


def _push(groups, g):
    groups = groups + (frozenset(g),)
    if len(groups) > _MAX_GROUPS:
        groups = (groups[0] | groups[1],) + groups[2:]
    return groups


def _join_groups(a, b):
    """Groups aligned at the newest (the older of two paths' are merged where they differ)."""
    n = max(len(a), len(b))
    a = (frozenset(),) * (n - len(a)) + a
    b = (frozenset(),) * (n - len(b)) + b
    return tuple(x | y for x, y in zip(a, b))


# ---- the walk ------------------------------------------------------------------------------

class _Walk:
    def __init__(self):
        self.needs = set()  # ops that get a barrier before them

    def op(self, op, state: State) -> State:
        if op.name == "scf.if":
            then = self.block(op.regions[0].blocks[0], state)
            els = self.block(op.regions[1].blocks[0], state) \
                if len(op.regions) > 1 and len(op.regions[1].blocks) else state
            return then.join(els)
        if op.name == "scf.for":
            return self.loop([op.regions[0].blocks[0]], state)
        if op.name == "scf.while":
            return self.loop([op.regions[0].blocks[0], op.regions[1].blocks[0]], state)
        if len(op.regions):  # any other region op: each region as a loop
            for region in op.regions:
                state = self.loop(list(region.blocks), state)
            return state
        accs = accesses(op)
        # the accesses before the op's own barrier (if any) decide the barrier before it
        lead = [a for a in accs[:next((i for i, a in enumerate(accs) if a[0] == "barrier"),
                                      len(accs))] if a[0] in ("r", "w", "async", "tma")]
        if lead:
            if op in self.needs or any(state.conflicts("r" if a[0] == "r" else "w", a[1])
                                       for a in lead):
                self.needs.add(op)
                state = state.synced()
        for a in accs:
            state = state.apply(a)
        return state

    def block(self, block, state: State) -> State:
        for op in block.operations:
            state = self.op(op.operation, state)
        return state

    def loop(self, blocks, entry: State) -> State:
        """Blocks run in sequence, then again from the first: a fixed point of the state at
        the back edge (states and barriers only grow, so it ends)."""
        back = State()
        while True:
            before = len(self.needs)
            state = entry.join(back)
            first_out = None
            for i, b in enumerate(blocks):
                state = self.block(b, state)
                if i == 0:
                    first_out = state  # scf.while exits after its condition region
            new_back = back.join(state.untagged())
            if new_back == back and len(self.needs) == before:
                return entry.join(first_out if len(blocks) > 1 else state)
            back = new_back


def _needs_proxy_fence(op, state: State) -> bool:
    """Where TMA / wgmma ops will ask for `fence.proxy.async` (see the module docstring)."""
    del state  # no op in ASYNC_PROXY_OPS yet: TMA adds its check and fence here
    return False


def insert_barriers(module_op, pctx=None):
    for f in kernels(module_op):
        for op in T.walk_ops(f):
            if op.name == BARRIER:
                op.erase()
        walk = _Walk()
        walk.block(f.regions[0].blocks[0], State())
        for op in walk.needs:
            with ir.InsertionPoint(op), op.location:
                B.build_barrier(None)


register(Pass("tilegpu-insert-barriers",
              "Place tilegpu.barrier between ops whose shared-memory accesses could race",
              run=insert_barriers))

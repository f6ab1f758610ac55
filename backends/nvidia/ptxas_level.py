"""The ptxas optimization level and launch bounds of a kernel, read from its PTX.

A huge tile's straight-line code (a vector add at BLOCK 32K, 4 warps: 256 sums a thread, all
computed before the first store, since the stores may alias the loads) pins more data than a
thread has registers.  There `ptxas -O3` settles on 32 registers and spills nearly everything
(32K: 5.8 KB of spill stores, 1,053 STL; 128K: 24 KB) and its time grows ~4-5x per doubling;
`-O1` takes 255 registers, spills 2-5x less, issues half the instructions and compiles about
twice as fast.  Below the limit `-O3` is kept, byte for byte, and so is a kernel whose big tile
feeds only arithmetic (a row sum: `-O3` interleaves the loads with the adds and spills
nothing, `-O1` spills) or is pinned by reductions (a softmax's row: `-O1` spills as much and
compiles no faster), which is why the measure counts globally loaded data live across a
store, not pressure in the text's order.  An explicit `CompileOptions.opt_level` always
wins.  A pure function of the PTX, so the disk cache's key
(which determines the PTX) determines it too.

The 32 registers are ptxas's occupancy heuristic, not the level's: given `.maxntid` (which
every kernel has) and no `.minnctapersm`, a kernel whose live data cannot fit 255 registers
is often (not always: its choice flips with small changes of the text; Triton's own vector
add at 32K gets 32 too) compiled for the most programs per SM, 32 registers at 128 threads,
spilling nearly all of it.  `.minnctapersm 1` (one program per SM, which any launch needs
anyway) removes that target: the 32K softmax of 4 warps gets 255 registers and spills 216
bytes instead of 3,460 (Triton: 520).  `huge_tile_bounds` adds it to a kernel whose loaded
data live across a store or barrier exceed LIVE_LIMIT registers (`live_registers`), and
only there: below, ptxas's choice is kept, since the directive shifts it slightly (a 16K
vector add: 229 registers without, 254 and a 24-byte spill with).
"""
from __future__ import annotations

import re

# 32-bit registers of data pinned across one store above which ptxas gets -O1.  Measured
# (sm_90a): the ~250 kernels of the example and code-generation tests pin at most 92 (an
# attention forward); a 4-warp vector add 124 at 16K (-O3: 229 registers, no spill) and 252
# at 32K (-O3 collapses to 32 registers); a two-output one 188 at 8K (-O3 fine).
PINNED_LIMIT = 200
HUGE_KERNEL_LEVEL = 1
# 32-bit registers of loaded data live across a store or barrier above which a kernel gets
# `.minnctapersm 1`.  Measured (sm_90a, 4 warps): a softmax's row 128 at 16K (146 registers,
# no spill) and 256 at 32K (32 registers without the directive); a vector add 124 at 16K,
# 252 at 32K.
LIVE_LIMIT = 224

_REG_DECL = re.compile(r"^\s*\.reg\s+\.([a-z])(\d+)\s+%(\w+)<\d+>", re.M)
_ENTRY = re.compile(r"^\.(?:visible\s+\.|weak\s+\.)?(?:entry|func)\b", re.M)
_REG = re.compile(r"%([a-z]+)(\d+)\b")
_LABEL = re.compile(r"^\$?[\w$]+:")
_GUARD = re.compile(r"^@!?%p\d+\s+")
_ENDS_BLOCK = re.compile(r"^(?:bra|ret|exit|brx)\b")  # (guard removed)
_BARRIER = re.compile(r"^(?:bar|barrier)\b")
_HOLDS = re.compile(r"^(?:st|atom|red|call|membar|fence|cp|bar|barrier)\b")
_BOUNDS = re.compile(r"^(\.(?:maxntid|reqntid)[^\n]*)$", re.M)
_ORDERS = re.compile(r"^(?:st|atom|red|call|membar|fence|cp)\b")
_MAKES_DATA = re.compile(r"(?:ldu?\.(?:[a-z]+\.)*global|tex|tld|suld)\.")  # global loads
_NO_DEST = ("st.", "red.", "bar", "barrier", "fence", "membar", "cp.", "prefetch", "bra", "ret",
            "exit", "call", "mbarrier.arrive", "wgmma.fence", "wgmma.commit", "wgmma.wait")


def ptxas_opt_level(ptx: str, options) -> int:
    """`options.opt_level` where given; else 1 for a kernel that pins more than
    PINNED_LIMIT registers' worth of loaded data across a store, else 3."""
    if options.opt_level is not None:
        return options.opt_level
    return HUGE_KERNEL_LEVEL if pinned_registers(ptx) > PINNED_LIMIT else 3


def pinned_registers(ptx: str) -> int:
    """The most 32-bit registers' worth of data live across one store (or atomic, call,
    fence, cp.async) of a stretch of code: a basic block cut at barriers.  Data: what a
    global load of the stretch defines and what is computed from it there, which the stores
    after the loads cannot overtake (they may alias); not addresses, indices or predicates
    computed from the parameters, which ptxas recomputes (a GEMM's epilogue holds 256 store
    addresses next to its 128 values), and not values from before a barrier or read from
    shared memory (a softmax's row, pinned by its reductions: there -O1 spills as much as -O3
    and compiles no faster).  A value counts from its definition, or the stretch's start
    when it is used there first, to its last use in the stretch.  Linear in the PTX's length:
    the guard must not itself be superlinear."""
    halves, blocks = _blocks(ptx)
    return max((_stretch_pinned(st, halves, _ORDERS) for b in blocks
                for st in _cut_at_barriers(b)), default=0) // 2


def live_registers(ptx: str) -> int:
    """The most 32-bit registers' worth of data live across one store or barrier of a basic
    block: `pinned_registers`, with barriers as ordering points instead of cuts, so a row
    that a reduction's shared-memory exchange pins counts too (a softmax of BLOCK columns
    over T threads: BLOCK / T), and with data from any block (a loop's prefetched row, live
    into its body).  Data live where ptxas could reorder (loads feeding adds) count only
    across the stores after them: a 16K vector add's 128 of its 256.  Not counted: rows
    read from shared memory (a cp.async-pipelined loop's), as in `pinned_registers`."""
    halves, blocks = _blocks(ptx)
    data = _kernel_data(blocks)
    return max((_stretch_pinned(b, halves, _HOLDS, data) for b in blocks), default=0) // 2


def _kernel_data(blocks: list) -> set:
    """The registers holding data anywhere: what global loads define and what is computed
    from it, through the loops' back edges (to a fixed point)."""
    data: set = set()
    size = -1
    while size != len(data):
        size = len(data)
        for b in blocks:
            for _, dests, srcs, loads in b:
                if dests and (loads or any(r in data for r in srcs)):
                    data.update(dests)
    return data


def huge_tile_bounds(ptx: str, options) -> str:
    """`ptx` with `.minnctapersm 1` after each kernel's `.maxntid`/`.reqntid` where its live
    data exceed LIVE_LIMIT registers (see the module's docstring), unless
    `options.huge_tile_bounds` is off or the PTX already bounds the registers or programs
    (`.maxnreg`, `.minnctapersm`); else `ptx` itself."""
    if (not options.huge_tile_bounds or ".maxnreg" in ptx or ".minnctapersm" in ptx
            or live_registers(ptx) <= LIVE_LIMIT):
        return ptx
    return _BOUNDS.sub(r"\1\n.minnctapersm 1", ptx)


_PARSED: tuple = ("", ({}, []))  # the last PTX parsed: the ptx and cubin stages ask of one


def _blocks(ptx: str) -> tuple:
    """(16-bit units of each register prefix, the basic blocks): each kernel's instructions,
    cut at labels and branches, as (text without its guard, the data registers it defines,
    those it reads, whether it loads global memory)."""
    global _PARSED
    last = _PARSED  # (read once: compile threads may replace it meanwhile)
    if last[0] == ptx:
        return last[1]
    halves = {pre: 0 if kind == "p" else max(1, int(bits) // 16)  # 16-bit units
              for kind, bits, pre in _REG_DECL.findall(ptx)}
    out = []
    for body in _ENTRY.split(ptx)[1:]:
        block: list = []
        for line in body.splitlines():
            s = line.strip()
            if _LABEL.match(s) or s.startswith("}"):
                out.append(block)
                block = []
            elif s and not s.startswith(("//", ".", "{")):
                s = _GUARD.sub("", s)
                dests, srcs = _operands(s)
                block.append((s, [r for r in dests if halves.get(_prefix(r))],
                              [r for r in srcs if halves.get(_prefix(r))],
                              bool(_MAKES_DATA.match(s))))
                if _ENDS_BLOCK.match(s):
                    out.append(block)
                    block = []
        out.append(block)
    _PARSED = (ptx, (halves, out))
    return halves, out


def _cut_at_barriers(block: list) -> list:
    """The block's stretches between barriers (each barrier ends its stretch)."""
    out, cur = [], []
    for inst in block:
        cur.append(inst)
        if _BARRIER.match(inst[0]):
            out.append(cur)
            cur = []
    out.append(cur)
    return out


def _stretch_pinned(insts: list, halves: dict, at, data=None) -> int:
    """The most 16-bit units of data live across an instruction `at` matches; `data`: the
    data registers (None: what the stretch's own global loads define and what it computes
    from them)."""
    first: dict[str, int] = {}
    last: dict[str, int] = {}
    own = data is None
    if own:
        data = set()
    for i, (s, dests, srcs, loads) in enumerate(insts):
        for r in srcs:
            first.setdefault(r, -1)  # used before defined here: live into the stretch
            last[r] = i
        if own and (loads or any(r in data for r in srcs)):
            data.update(dests)
        for r in dests:
            first.setdefault(r, i)
            last[r] = i
    across = [0] * (len(insts) + 1)  # data live strictly across each instruction
    for r, a in first.items():
        if r in data and last[r] > a + 1:
            w = halves[_prefix(r)]
            across[a + 1] += w
            across[last[r]] -= w
    live = best = 0
    for i, (s, _, _, _) in enumerate(insts):
        live += across[i]
        if at.match(s):
            best = max(best, live)
    return best


def _operands(s: str) -> tuple:
    """The registers an instruction (guard removed) defines, its first operand (a register or
    a `{...}` vector; none for stores, barriers and the like), and those it reads."""
    parts = s.split(None, 1)
    if len(parts) < 2:
        return [], []
    if parts[0].startswith(_NO_DEST):
        return [], [a + b for a, b in _REG.findall(parts[1])]
    m = re.match(r"\{[^}]*\}|[^,;]+", parts[1])
    head, rest = (m.group(), parts[1][m.end():]) if m else ("", parts[1])
    return [a + b for a, b in _REG.findall(head)], [a + b for a, b in _REG.findall(rest)]


def _prefix(reg: str) -> str:
    return reg.rstrip("0123456789")

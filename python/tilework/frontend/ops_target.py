"""Implementations of `tl.target_info` (language/target_info.py), `tl.condition` and the
compilation queries of `tl.extra.cuda` / `tl.extra.hip` (`num_warps`, `num_threads`,
`memrealtime`).

The target is the code generator's `Target` (`Builder.target`: the compile target, None when
generating target-neutral IR) or the one the interpreter stands in for; every answer is a
constexpr."""
from __future__ import annotations

from ..language import core
from ..language.core import constexpr
from ..language.target_info import GPUTarget
from .ops_core import IMPLS, const, impl
from .semantic import SemanticError


def _target(b):
    return getattr(b, "target", None)


def _backend(b):
    t = _target(b)
    return None if t is None else t.backend


@impl
def current_target(b):
    t = _target(b)  # (a plain value: its fields are read at compile time)
    if t is None:
        return None
    if t.backend == "nvidia":
        return GPUTarget("cuda", t.capability, t.warp_size)
    return GPUTarget("hip", t.arch, t.warp_size)


@impl
def is_cuda(b):
    return constexpr(_backend(b) == "nvidia")


@impl
def cuda_capability_geq(b, major, minor=0):
    major, minor = const(major, "major"), const(minor, "minor")
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in (major, minor)):
        raise SemanticError(f"tl.target_info.cuda_capability_geq takes int constants, got "
                            f"{major!r}, {minor!r}")
    t = _target(b)
    return constexpr(t is not None and t.backend == "nvidia" and
                     t.capability >= major * 10 + minor)


@impl
def is_hip(b):
    return constexpr(_backend(b) == "amd")


@impl
def is_hip_cdna3(b):
    t = _target(b)
    return constexpr(t is not None and t.arch == "gfx942")


@impl
def is_hip_cdna4(b):
    t = _target(b)
    return constexpr(t is not None and t.arch == "gfx950")


@impl
def condition(b, arg1, disable_licm=False):
    """`while tl.condition(c, disable_licm=...)`: the condition itself.  No pass reads loop
    hints, so `disable_licm` is checked and ignored (LLVM may still hoist invariants)."""
    if not isinstance(const(disable_licm, "disable_licm"), bool):
        raise SemanticError(f"tl.condition: disable_licm must be a constexpr bool, got "
                            f"{const(disable_licm, 'disable_licm')!r}")
    return arg1


def _num_warps(b) -> int:
    opts = getattr(b, "options", None)  # CompileOptions; the interpreter's launch options
    n = getattr(opts, "num_warps", None) or getattr(b, "launch_options", {}).get("num_warps")
    return n or 4  # (the default of both)


@impl
def num_warps(b):
    return constexpr(_num_warps(b))


@impl
def num_threads(b):
    return constexpr(_num_warps(b) * 32)  # (Triton's: 32 whatever the target)


@impl
def memrealtime(b):
    t = _target(b)
    if t is None or t.backend != "amd":
        raise SemanticError("tl.extra.hip.memrealtime is AMDGCN assembly: it needs an AMD "
                            "target")
    if t.arch.startswith(("gfx11", "gfx12")):
        asm = "s_sendmsg_rtn_b64 $0, sendmsg(MSG_RTN_GET_REALTIME)\ns_waitcnt lgkmcnt(0)"
    else:
        asm = "s_memrealtime $0\ns_waitcnt vmcnt(0)"
    return IMPLS["inline_asm_elementwise"](b, asm, "=r", [], core.int64, False, 1)

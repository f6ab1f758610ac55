"""`tl.extra.hip`, as Triton's: `libdevice` (target-independent here: see
`tl.extra.libdevice`) and `memrealtime()`, the 64-bit real-time counter (AMDGCN asm: AMD
targets only, not interpreted)."""
from .. import libdevice  # noqa: F401
from ...core import builtin

__all__ = ["libdevice", "memrealtime"]


@builtin
def memrealtime():
    """The 64-bit real-time counter (int64): `s_memrealtime` (gfx9), `s_sendmsg_rtn_b64`'s
    REALTIME (gfx11, gfx12)."""

"""The AMD backend's architectures.  CDNA (gfx9xx) runs 64-wide wavefronts, RDNA (gfx11xx,
gfx12xx) 32-wide ones (its default mode).  Shared memory is the LDS one workgroup may use.
Matrix instructions: MFMA shapes (f16/bf16 `mfma_MxNxK`; `_fp8` ones from gfx942; the K-doubled
f16 shapes from gfx950) and RDNA's WMMA (`wmma_v1` on gfx11, `wmma_v2` on gfx12: 16x16x16,
different operand layouts)."""
from tilework.lowering.target import Target, arch_capability

from ..registry import register_backend
from .compiler import AMDBackend

KIB = 1024
_MFMA = ("mfma_32x32x8", "mfma_16x16x16")
_MFMA_FP8 = ("mfma_32x32x16_fp8", "mfma_16x16x32_fp8")
_TABLE = [  # arch, wavefront, LDS per workgroup, matrix instructions
    ("gfx90a", 64, 64 * KIB, _MFMA),
    ("gfx942", 64, 64 * KIB, _MFMA + _MFMA_FP8),
    ("gfx950", 64, 160 * KIB, _MFMA + _MFMA_FP8 + ("mfma_32x32x16", "mfma_16x16x32")),
    ("gfx1100", 32, 64 * KIB, ("wmma_v1",)),
    ("gfx1101", 32, 64 * KIB, ("wmma_v1",)),
    ("gfx1200", 32, 64 * KIB, ("wmma_v2",)),
    ("gfx1201", 32, 64 * KIB, ("wmma_v2",)),
]
ARCHS = {a: Target("amd", a, arch_capability(a), ws, lds, mx) for a, ws, lds, mx in _TABLE}


def _load():
    return AMDBackend


register_backend("amd", ARCHS, _load)

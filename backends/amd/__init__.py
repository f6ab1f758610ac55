"""The AMD backend's architectures.  CDNA (gfx9xx) runs 64-wide wavefronts, RDNA (gfx11xx,
gfx12xx) 32-wide ones (its default mode).  Shared memory is the LDS one workgroup may use.
Matrix instructions: MFMA shapes (f16/bf16 `mfma_MxNxK`; `_fp8` ones from gfx942; the K-doubled
f16 shapes from gfx950) and RDNA's WMMA (`wmma_v1` on gfx11, `wmma_v2` on gfx12: 16x16x16,
different operand layouts).  fp8: the formats its matrix instructions read (gfx942: the
"fnuz" variants, no negative zero, bias +1; gfx950 and RDNA4: OCP e4m3fn/e5m2).  Every hsaco
is code-object version 5 (what ROCm 6 loads; `amdhsa.version` [1, 2] in its note).  Waves
per EU: the waves one SIMD holds, the bound of the `waves_per_eu` option (CDNA 8, RDNA 16).
Which MFMA/WMMA `tl.dot` uses per element type is `lowering/dot_amd_layout.py`'s table."""
from tilework.lowering.target import Target, arch_capability

from ..registry import register_backend
from .compiler import AMDBackend

KIB = 1024
_MFMA = ("mfma_32x32x8", "mfma_16x16x16")
_MFMA_FP8 = ("mfma_32x32x16_fp8", "mfma_16x16x32_fp8")
CODE_OBJECT_VERSION = 5
_TABLE = [  # arch, wavefront, LDS per workgroup, matrix instructions, fp8 formats, waves/EU
    ("gfx90a", 64, 64 * KIB, _MFMA, (), 8),
    ("gfx942", 64, 64 * KIB, _MFMA + _MFMA_FP8, ("fnuz",), 8),
    ("gfx950", 64, 160 * KIB, _MFMA + _MFMA_FP8 + ("mfma_32x32x16", "mfma_16x16x32"),
     ("ocp",), 8),
    ("gfx1100", 32, 64 * KIB, ("wmma_v1",), (), 16),
    ("gfx1101", 32, 64 * KIB, ("wmma_v1",), (), 16),
    ("gfx1200", 32, 64 * KIB, ("wmma_v2",), ("ocp",), 16),
    ("gfx1201", 32, 64 * KIB, ("wmma_v2",), ("ocp",), 16),
]
ARCHS = {a: Target("amd", a, arch_capability(a), ws, lds, mx, fp8=f8,
                   code_object=CODE_OBJECT_VERSION, max_waves_per_eu=w)
         for a, ws, lds, mx, f8, w in _TABLE}


def _load():
    return AMDBackend


register_backend("amd", ARCHS, _load)

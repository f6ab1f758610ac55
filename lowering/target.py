"""What passes and rules may know about the compile target.

A `Target` is a fact sheet of one GPU architecture; the table of the known ones is in
`tilework.backends` (each backend registers its own).  This module has no MLIR and no table:
lowering code reads a Target, it never decides which targets exist.
"""
from __future__ import annotations

import functools
import re
from dataclasses import dataclass

_SM = re.compile(r"^sm_(\d+)a?$")
_GFX = re.compile(r"^gfx([0-9a-f]{3,4})$")


@dataclass(frozen=True)
class Target:
    backend: str           # the registered backend: "nvidia" | "amd"
    arch: str              # "sm_90a", "gfx942", ...
    capability: int        # sm_90a -> 90; gfx942 -> 0x942 (the gfx number read as hex)
    warp_size: int         # threads per warp (wavefront)
    shared_memory: int     # bytes of shared memory (LDS) one block may use, opted in
    matrix: tuple = ()     # matrix instructions: "mma_v2", "wgmma", "mfma_32x32x8", "wmma_v1"
    features: str = ""     # LLVM target features (NVIDIA: the PTX ISA version)
    fp8: tuple = ()        # fp8 formats of its matrix instructions: "ocp" (e4m3fn/e5m2), "fnuz"
    code_object: int = 0   # AMD: the code-object version of its hsaco (0: not AMD)
    max_waves_per_eu: int = 0  # AMD: waves one SIMD holds (the bound of waves_per_eu)

    def __str__(self):
        return self.arch

    def has(self, instruction: str) -> bool:
        return instruction in self.matrix


@functools.lru_cache(maxsize=None)
def arch_capability(arch: str) -> int:
    """The number rules' arch ranges compare: `sm_90a` -> 90, `gfx90a` -> 0x90a, `gfx1201` ->
    0x1201 (reading the gfx number as hex keeps the families ordered: gfx9xx < gfx11xx)."""
    m = _SM.match(arch)
    if m:
        return int(m.group(1))
    m = _GFX.match(arch)
    if m:
        return int(m.group(1), 16)
    raise ValueError(f"architecture {arch!r} is neither sm_NN[a] nor gfxNNN")

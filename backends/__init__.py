"""Backends: each fills an ordered dictionary of stages for its targets.

    tile -> tilegpu -> llvm -> llir -> ptx -> cubin        (NVIDIA)
    tile -> tilegpu -> llvm -> llir -> amdgcn -> hsaco     (AMD)

A new target plugs in as a `Backend` subclass registered in `BACKENDS`.
"""
from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Target:
    backend: str      # "nvidia" | "amd"
    arch: str         # "sm_90a", "gfx942", ...
    warp_size: int

    def __str__(self):
        return self.arch


_NV = re.compile(r"^sm_(\d+)(a?)$")
_AMD = re.compile(r"^gfx[0-9a-f]+$")


def parse_target(name: str) -> Target:
    """`sm_80`, `sm_90a`, `gfx942`, ... -> Target; ValueError names the accepted forms."""
    name = str(name).strip()
    if _NV.match(name):
        if int(_NV.match(name).group(1)) < 70:
            raise ValueError(f"target {name!r}: NVIDIA targets from sm_70 are supported")
        return Target("nvidia", name, 32)
    if _AMD.match(name):
        # CDNA (gfx9xx) runs 64-wide wavefronts; RDNA (gfx10+) defaults to 32
        return Target("amd", name, 64 if name.startswith("gfx9") else 32)
    raise ValueError(f"unknown target {name!r}: expected an NVIDIA sm_XX[a] (e.g. sm_80, "
                     f"sm_90a) or an AMD gfxNNN (e.g. gfx942)")


def get_backend(target: Target):
    if target.backend == "nvidia":
        from .nvidia.compiler import NVIDIABackend
        return NVIDIABackend(target)
    from .amd.compiler import AMDBackend
    return AMDBackend(target)

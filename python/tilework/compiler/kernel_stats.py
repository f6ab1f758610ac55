"""What a compiled kernel reports of itself, shared by the driver's `CompiledKernel` and the
runtime's `CachedKernel` (a kernel read from the disk cache), so both answer Triton's
`kernel.n_regs`/`n_spills` and `kernel.metadata.shared`.  No MLIR: the warm-cache path
imports it."""
from __future__ import annotations

import re


def asm_count(text, pattern) -> int | None:
    m = re.search(pattern, text or "")
    return int(m.group(1)) if m else None


class KernelMetadata(dict):
    """The metadata dict, whose keys read as attributes too (`k.metadata.shared`, as
    Triton's metadata tuple)."""

    def __getattr__(self, name):
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None


class KernelStats:
    """Mixin over `self.asm` (stage -> text) and `self.metadata` (with `ptxas_info`)."""
    __slots__ = ()

    @property
    def n_regs(self) -> int | None:
        """Registers per thread (ptxas's report; AMD: VGPRs), None when unknown (no ptxas)."""
        if "amdgcn" in self.asm:
            return asm_count(self.asm["amdgcn"], r"\.vgpr_count:\s*(\d+)")
        return asm_count(self.metadata.get("ptxas_info"), r"Used (\d+) registers")

    @property
    def n_spills(self) -> int | None:
        """Spilled 4-byte words per thread (Triton's count; AMD: spilled VGPRs), None when
        unknown."""
        if "amdgcn" in self.asm:
            return asm_count(self.asm["amdgcn"], r"\.vgpr_spill_count:\s*(\d+)")
        n = asm_count(self.metadata.get("ptxas_info"), r"(\d+) bytes spill stores")
        return None if n is None else n // 4

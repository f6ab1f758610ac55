"""The one options object.  Every compile option lives here; it is part of the cache key.
Environment variables only fill defaults (`CompileOptions.from_env`)."""
from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass

from ..errors import OptionError


def cache_dir() -> str:
    """Where compiled kernels and autotuning choices are kept: TILEWORK_CACHE_DIR (default
    ~/.cache/tilework).  Here, not in cache.py, so the runtime reads it without the cache."""
    return os.environ.get("TILEWORK_CACHE_DIR") or os.path.join(
        os.path.expanduser("~"), ".cache", "tilework")


@dataclass(frozen=True)
class CompileOptions:
    target: str | None = None    # "sm_80", "sm_90a", "gfx942", ...; None: from the device
    num_warps: int = 4           # warps per program
    num_stages: int = 3          # software-pipelining depth (passes read pctx.num_stages)
    num_ctas: int = 1            # CTAs per program: a thread block cluster (NVIDIA sm_90+)
    debug: bool = False          # enables tl.device_assert
    # LLVM/ptxas optimization level; None: 3, except that ptxas gets -O1 for a kernel whose
    # PTX holds more loaded data across a store than registers (backends/nvidia/ptxas_level.py)
    opt_level: int | None = None
    enable_fp_fusion: bool = True  # a * b + c may become one fma (as in Triton)
    maxnreg: int | None = None   # NVIDIA: cap on registers per thread (more programs per SM)
    # NVIDIA: `.minnctapersm 1` for a kernel whose live loaded data exceed the registers, so
    # ptxas does not spill it all for occupancy (backends/nvidia/ptxas_level.py)
    huge_tile_bounds: bool = True
    waves_per_eu: int = 0        # AMD: occupancy hint (waves per SIMD; 0: the compiler's choice)
    matrix_instr_nonkdim: int = 0  # AMD CDNA: MFMA M=N, 16 or 32 (0: chosen per dot)
    kpack: int = 1               # AMD CDNA: 2 gives each lane 2x the MFMA's K elements per load
    tma: bool = True             # NVIDIA sm_90: host tensor descriptors load by TMA where legal
    tma_store: bool | str = False  # ... and store by TMA where safe ("unguarded": everywhere)
    # ... where only the coordinates' signs are unproven: a run-time branch, TMA where all are
    # >= 0, the block-pointer store else (False: always the block-pointer store there)
    tma_store_guard: bool = True
    speculate_loads: bool = False  # tile-speculate-loads (off until timed: more registers)
    # NVIDIA sm_90: fence.proxy.async for the pipeliner's cp.async copies that wgmma reads
    # (False: none, as Triton and CUTLASS; on until timed and checked on a GPU)
    wgmma_cp_async_fence: bool = True
    # NVIDIA sm_90: a pipelined ring slot's wgmma K steps as descriptor additions (Triton's
    # code); off until timed (ptxas allocates worse for attention at D=128 causal)
    wgmma_ring_k_step: bool = False
    # NVIDIA sm_90: tilegpu-overlap-dots, a multi-dot loop's last wgmma (attention's P v) in
    # flight across the back edge (FA3's intra-warpgroup overlap; lowering/dot_overlap.py)
    overlap_dots: bool = False
    # NVIDIA sm_90: a TMA load's copies issued by the lane `elect.sync` picks in warp 0 (a
    # warp-uniform predicate, Triton's form) instead of under thread 0's predicate, which ptxas
    # turns into a loop over the active lanes per copy (rules/tma.py); off until timed
    tma_elect: bool = False
    # NVIDIA sm_90: 16-bit tiles written to swizzled shared memory (convert_layout's round trip,
    # a TMA store's buffer) by stmatrix.x4 where their 8x8 fragments fit (4x fewer stores;
    # rules/layout.py `stmatrix_plan`); off until run and timed on a GPU (emulator-checked only)
    stmatrix: bool = False
    # AMD gfx9/gfx11: masked loads/stores of a scalar pointer + i32 offsets as buffer ops (no
    # branch per access); off: assumes offsets in [0, 2 GiB) where the mask holds, unchecked
    buffer_ops: bool = False
    # a cooperative launch (Triton's `launch_cooperative_grid`): every program of the grid
    # resident at once, so programs may wait on each other; a launch attribute only (the code
    # is the same), kept in the metadata and, as Triton keys it, in the cache key
    launch_cooperative_grid: bool = False

    def __post_init__(self):
        nw = self.num_warps
        if not isinstance(nw, int) or nw <= 0 or nw & (nw - 1) or nw > 32:
            raise OptionError(f"num_warps must be a power of 2 between 1 and 32, got {nw!r}")
        if not isinstance(self.num_stages, int) or self.num_stages < 1:
            raise ValueError(f"num_stages must be a positive int, got {self.num_stages!r}")
        nc = self.num_ctas
        if not isinstance(nc, int) or nc <= 0 or nc & (nc - 1) or nc > 16:
            raise ValueError(f"num_ctas must be a power of two between 1 and 16, got {nc!r}")
        if self.maxnreg is not None and (not isinstance(self.maxnreg, int)
                                         or not 16 <= self.maxnreg <= 255):
            raise ValueError(f"maxnreg must be an int between 16 and 255, got {self.maxnreg!r}")
        if not isinstance(self.waves_per_eu, int) or not 0 <= self.waves_per_eu <= 16:
            raise ValueError(f"waves_per_eu must be an int between 0 (no hint) and 16, got "
                             f"{self.waves_per_eu!r}")
        if self.matrix_instr_nonkdim not in (0, 16, 32):
            raise ValueError(f"matrix_instr_nonkdim must be 0 (chosen per dot), 16 or 32, got "
                             f"{self.matrix_instr_nonkdim!r}")
        if self.kpack not in (1, 2):
            raise ValueError(f"kpack must be 1 or 2, got {self.kpack!r}")
        if not isinstance(self.tma, bool):
            raise ValueError(f"tma must be a bool, got {self.tma!r}")
        if not isinstance(self.tma_store, bool) and self.tma_store != "unguarded":
            raise ValueError(f"tma_store must be a bool or 'unguarded', got "
                             f"{self.tma_store!r}")
        if not isinstance(self.tma_store_guard, bool):
            raise ValueError(f"tma_store_guard must be a bool, got {self.tma_store_guard!r}")
        if not isinstance(self.speculate_loads, bool):
            raise ValueError(f"speculate_loads must be a bool, got {self.speculate_loads!r}")
        if not isinstance(self.wgmma_cp_async_fence, bool):
            raise ValueError(f"wgmma_cp_async_fence must be a bool, got "
                             f"{self.wgmma_cp_async_fence!r}")
        if not isinstance(self.wgmma_ring_k_step, bool):
            raise ValueError(f"wgmma_ring_k_step must be a bool, got "
                             f"{self.wgmma_ring_k_step!r}")
        if not isinstance(self.overlap_dots, bool):
            raise ValueError(f"overlap_dots must be a bool, got {self.overlap_dots!r}")
        if not isinstance(self.stmatrix, bool):
            raise ValueError(f"stmatrix must be a bool, got {self.stmatrix!r}")
        if not isinstance(self.tma_elect, bool):
            raise ValueError(f"tma_elect must be a bool, got {self.tma_elect!r}")
        if not isinstance(self.huge_tile_bounds, bool):
            raise ValueError(f"huge_tile_bounds must be a bool, got {self.huge_tile_bounds!r}")
        if not isinstance(self.buffer_ops, bool):
            raise ValueError(f"buffer_ops must be a bool, got {self.buffer_ops!r}")
        if not isinstance(self.launch_cooperative_grid, bool):
            raise ValueError(f"launch_cooperative_grid must be a bool, got "
                             f"{self.launch_cooperative_grid!r}")
        if self.opt_level not in (None, 0, 1, 2, 3):
            raise ValueError(f"opt_level must be 0..3, got {self.opt_level!r}")

    @property
    def llvm_opt_level(self) -> int:
        """The level LLVM runs at (and ptxas, unless chosen per kernel): opt_level, else 3."""
        return 3 if self.opt_level is None else self.opt_level

    @classmethod
    def from_env(cls, **overrides) -> "CompileOptions":
        env = {}
        if os.environ.get("TILEWORK_TARGET"):
            env["target"] = os.environ["TILEWORK_TARGET"]
        if os.environ.get("TILEWORK_DEBUG", "") not in ("", "0"):
            env["debug"] = True
        if os.environ.get("TILEWORK_FP_FUSION", "") in ("0", "1"):
            env["enable_fp_fusion"] = os.environ["TILEWORK_FP_FUSION"] == "1"
        if os.environ.get("TILEWORK_TMA", "") in ("0", "1"):
            env["tma"] = os.environ["TILEWORK_TMA"] == "1"
        if os.environ.get("TILEWORK_TMA_STORE", "") in ("0", "1", "unguarded"):
            v = os.environ["TILEWORK_TMA_STORE"]
            env["tma_store"] = v if v == "unguarded" else v == "1"
        if os.environ.get("TILEWORK_TMA_STORE_GUARD", "") in ("0", "1"):
            env["tma_store_guard"] = os.environ["TILEWORK_TMA_STORE_GUARD"] == "1"
        if os.environ.get("TILEWORK_SPECULATE_LOADS", "") in ("0", "1"):
            env["speculate_loads"] = os.environ["TILEWORK_SPECULATE_LOADS"] == "1"
        if os.environ.get("TILEWORK_WGMMA_CP_ASYNC_FENCE", "") in ("0", "1"):
            env["wgmma_cp_async_fence"] = os.environ["TILEWORK_WGMMA_CP_ASYNC_FENCE"] == "1"
        if os.environ.get("TILEWORK_WGMMA_RING_K_STEP", "") in ("0", "1"):
            env["wgmma_ring_k_step"] = os.environ["TILEWORK_WGMMA_RING_K_STEP"] == "1"
        if os.environ.get("TILEWORK_OVERLAP_DOTS", "") in ("0", "1"):
            env["overlap_dots"] = os.environ["TILEWORK_OVERLAP_DOTS"] == "1"
        if os.environ.get("TILEWORK_TMA_ELECT", "") in ("0", "1"):
            env["tma_elect"] = os.environ["TILEWORK_TMA_ELECT"] == "1"
        if os.environ.get("TILEWORK_STMATRIX", "") in ("0", "1"):
            env["stmatrix"] = os.environ["TILEWORK_STMATRIX"] == "1"
        if os.environ.get("TILEWORK_BUFFER_OPS", "") in ("0", "1"):
            env["buffer_ops"] = os.environ["TILEWORK_BUFFER_OPS"] == "1"
        if os.environ.get("TILEWORK_HUGE_TILE_BOUNDS", "") in ("0", "1"):
            env["huge_tile_bounds"] = os.environ["TILEWORK_HUGE_TILE_BOUNDS"] == "1"
        if os.environ.get("TILEWORK_OPT_LEVEL"):
            env["opt_level"] = int(os.environ["TILEWORK_OPT_LEVEL"])
        env.update({k: v for k, v in overrides.items() if v is not None})
        names = {f.name for f in dataclasses.fields(cls)}
        unknown = set(env) - names
        if unknown:
            raise TypeError(f"unknown compile option(s): {', '.join(sorted(unknown))}")
        return cls(**env)

    def check_target(self, target) -> None:
        """Refuses options the target (a `Target`) cannot honour."""
        if self.num_ctas > 1 and not (target.backend == "nvidia" and target.capability >= 90):
            raise ValueError(f"num_ctas={self.num_ctas} needs thread block clusters (NVIDIA "
                             f"sm_90 or newer); target {target.arch} has none: use num_ctas=1")
        if target.backend != "amd":
            return  # the AMD options are ignored elsewhere (one autotune list for both), as in Triton
        rdna = not any(m.startswith("mfma") for m in target.matrix)
        if rdna and self.matrix_instr_nonkdim == 32:
            raise ValueError(f"matrix_instr_nonkdim=32 needs MFMA (CDNA); {target.arch} has "
                             f"WMMA, 16x16 only: use 0 or 16")
        if rdna and self.kpack != 1:
            raise ValueError(f"kpack={self.kpack} applies to MFMA (CDNA); {target.arch} has "
                             f"WMMA: use kpack=1")
        if target.max_waves_per_eu and self.waves_per_eu > target.max_waves_per_eu:
            raise ValueError(f"waves_per_eu={self.waves_per_eu}: {target.arch} runs at most "
                             f"{target.max_waves_per_eu} waves per EU")

    def key(self) -> str:
        return repr(dataclasses.astuple(self))

"""Progressive lowerings: tile -> tilegpu (layouts) -> per-thread gpu/llvm code.

Importing this package registers every pass in `pass_base.PASSES`."""
from . import (dot_overlap, dot_wgmma, layout_passes, loop_converts, pipeline,  # noqa: F401
               pipeline_amd, pipeline_tma, proxy_fences, sink, smem_alloc, smem_barriers,
               speculate, tile_passes, tma, tma_guard, tma_store, to_llvm, warp_specialize)
from .pass_base import PASSES, Pass, PassContext, run_pipeline  # noqa: F401
from .registry import LoweringError, lower  # noqa: F401

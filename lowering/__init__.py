"""Progressive lowerings: tile -> tilegpu (layouts) -> per-thread gpu/llvm code.

Importing this package registers every pass in `pass_base.PASSES`."""
from . import layout_passes, pipeline, smem_alloc, smem_barriers, tile_passes, to_llvm  # noqa: F401
from .pass_base import PASSES, Pass, PassContext, run_pipeline  # noqa: F401
from .registry import LoweringError, lower  # noqa: F401

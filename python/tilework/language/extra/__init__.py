"""`tl.extra`, as in Triton: `libdevice` (the same functions under `cuda.libdevice` and
`hip.libdevice`), written in the tile language, so kernels importing
`triton.language.extra.libdevice` (or the cuda/hip one) run unchanged on both targets."""
from . import cuda, hip, libdevice  # noqa: F401

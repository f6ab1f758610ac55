"""`tl.extra.cuda`: `libdevice` (target-independent here: see `tl.extra.libdevice`)."""
from .. import libdevice  # noqa: F401

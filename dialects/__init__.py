"""Dialect definitions: `tile` (frontend form) and `tilegpu` (layouts), loaded through IRDL."""
from .tile import load, new_context  # noqa: F401
from .verify import VerificationError, verify  # noqa: F401

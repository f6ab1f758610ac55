"""Backends: each registers its known architectures and a `Backend` class whose ordered
dictionary of stages compiles for them.

    tile -> tilegpu -> llvm -> llir -> ptx -> cubin        (NVIDIA)
    tile -> tilegpu -> llvm -> llir -> amdgcn -> hsaco     (AMD)

A new target plugs in with `register_backend(name, archs, load)`: `archs` maps each
architecture name to its `Target` (the facts passes and rules may read), `load()` returns the
`Backend` subclass (imported only when a kernel is compiled).  `parse_target` accepts exactly
the registered architectures, so an unknown one is refused before LLVM sees it.
"""
from __future__ import annotations

from tilework.lowering.target import Target, arch_capability  # noqa: F401

from .registry import (BACKENDS, BackendEntry, get_backend, known_targets,  # noqa: F401
                       parse_target, register_backend)

# each registers itself (NVIDIA first: the order `known_targets` lists)
from . import nvidia  # noqa: E402,F401,I001
from . import amd  # noqa: E402,F401

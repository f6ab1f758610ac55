"""The backend registry: `register_backend`, `parse_target`, `get_backend` (a leaf the
backends' tables import, so that the package imports them without a cycle)."""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable

from tilework.lowering.target import Target, arch_capability  # noqa: F401


@dataclass(frozen=True)
class BackendEntry:
    name: str
    archs: dict            # arch name -> Target
    load: Callable         # () -> the Backend subclass
    oldest: str = ""       # the oldest supported architecture, named when an older one is asked


BACKENDS: dict[str, BackendEntry] = {}


def register_backend(name: str, archs: dict, load: Callable, oldest: str = "") -> BackendEntry:
    """Registers backend `name` for the targets in `archs`; a name or an architecture that is
    already registered is an error (naming both owners)."""
    if name in BACKENDS:
        raise ValueError(f"backend {name!r} is already registered")
    for arch, t in archs.items():
        if t.arch != arch or t.backend != name:
            raise ValueError(f"target table of {name!r}: entry {arch!r} describes "
                             f"{t.backend}/{t.arch}")
        for other in BACKENDS.values():
            if arch in other.archs:
                raise ValueError(f"architecture {arch!r} of backend {name!r} is already "
                                 f"registered by backend {other.name!r}")
    entry = BACKENDS[name] = BackendEntry(name, dict(archs), load, oldest)
    return entry


def known_targets() -> list[str]:
    return [a for b in BACKENDS.values() for a in b.archs]


def parse_target(name) -> Target:
    """`sm_80`, `sm_90a`, `gfx942`, ... -> its Target; anything else is a ValueError naming
    the target and listing the known ones."""
    if isinstance(name, Target):
        return name
    name = str(name).strip()
    for b in BACKENDS.values():
        if name in b.archs:
            return b.archs[name]
    known = ", ".join(known_targets())
    m = re.match(r"^sm_(\d+)a?$", name)
    nv = BACKENDS.get("nvidia")
    if m and nv is not None and nv.oldest and int(m.group(1)) < arch_capability(nv.oldest):
        raise ValueError(f"unsupported target {name!r}: NVIDIA targets from {nv.oldest} are "
                         f"supported; known targets: {known}")
    raise ValueError(f"unknown target {name!r}; known targets: {known}")


def get_backend(target: Target):
    """The Backend instance that compiles for `target` (a Target or an architecture name)."""
    target = parse_target(target)
    return BACKENDS[target.backend].load()(target)

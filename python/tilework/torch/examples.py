"""Finds the example kernels the wrappers are built on (`examples/*.py` of the source tree).

The examples are scripts, not a package: their folder goes on `sys.path` (as the tests and
`examples/main.py` put it) and each is imported by its own name, so the wrappers, the tests
and the tutorials share one module object (one compiled-kernel cache) per example.  The folder
is `$TILEWORK_EXAMPLES` when set, else `examples/` at the root of the source tree this package
was installed from (an editable install, `pip install -e .`).
"""
from __future__ import annotations

import importlib
import os
import pathlib
import sys


def examples_dir() -> pathlib.Path:
    env = os.environ.get("TILEWORK_EXAMPLES")
    if env:
        return pathlib.Path(env)
    return pathlib.Path(__file__).resolve().parents[3] / "examples"


def load(name: str):
    """The example module `name` ("softmax", "layernorm", "attention", ...)."""
    mod = sys.modules.get(name)
    if mod is not None and getattr(mod, "__file__", None):
        return mod
    folder = examples_dir()
    if not (folder / f"{name}.py").is_file():
        raise ImportError(f"tilework.torch needs examples/{name}.py; not found in {folder} "
                          f"(set TILEWORK_EXAMPLES to the examples folder of a tilework "
                          f"source tree)")
    if str(folder) not in sys.path:
        sys.path.insert(0, str(folder))
    return importlib.import_module(name)

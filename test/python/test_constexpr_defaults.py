"""A constexpr parameter's Python default applies where `compile(ASTSource(...))` is given no
value for it (as a launch applies it): run on gpu_sim, against the values asked for."""
import os
import sys

import numpy as np

import tilework
import tilework.language as tl
from tilework.compiler.driver import ASTSource, compile

sys.path.insert(0, os.path.dirname(__file__))
import gpu_sim  # noqa: E402


@tilework.jit
def k_fill(x, VALUE: tl.constexpr = 7, BLOCK: tl.constexpr = 16):
    tl.store(x + tl.arange(0, BLOCK), tl.full([BLOCK], VALUE, tl.int32))


def _run(constants):
    ck = compile(ASTSource(k_fill, {"x": tl.pointer_type(tl.int32)}, constants, {}), "sm_80",
                 cache=False)
    x = np.zeros(16, np.int32)
    gpu_sim.run(ck, (1,), x)
    return x


def test_default_applies_when_not_given():
    assert list(_run({})) == [7] * 16


def test_given_value_wins():
    assert list(_run({"VALUE": -3})) == [-3] * 16
    x = _run({"VALUE": 5, "BLOCK": 8})
    assert list(x) == [5] * 8 + [0] * 8

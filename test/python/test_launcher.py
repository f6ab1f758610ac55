"""The generated per-kernel launch key agrees with the generic one on every kind of argument."""
import random

import tilework
import tilework.language as tl
from tilework.runtime import launcher


@tilework.jit
def _k(x, n, m, f, flag, none, B: tl.constexpr):
    pass


@tilework.jit(do_not_specialize=("n",))
def _k2(x, n, m, B: tl.constexpr):
    pass


class _CAI:
    def __init__(self, p):
        self.__cuda_array_interface__ = {"typestr": "<f4", "data": (p, False), "shape": (4,),
                                         "version": 3}


class _FakeCudaTensor:
    """Takes the inlined torch path (registered as a torch tensor type below)."""
    is_cuda = True

    def __init__(self, p, dtype):
        self.p, self.dtype = p, dtype

    def data_ptr(self):
        return self.p


def test_fast_key_matches_the_generic_key():
    launcher._TORCH_TYPES.add(_FakeCudaTensor)
    try:
        fast, fast2 = launcher.fast_key_and_params(_k), launcher.fast_key_and_params(_k2)
        ints = [1, 0, 16, -16, 17, -1, 2**31, 2**31 - 1, -2**31, -2**31 - 1, 2**40,
                2**63 + 5, 3]
        rng = random.Random()
        for _ in range(3000):
            ptr = rng.choice([0x1000, 0x1004, 0x2010])
            x = rng.choice([_CAI(ptr), _FakeCudaTensor(ptr, rng.choice(["f32", "f16"]))])
            args = (x, rng.choice(ints), rng.choice(ints), rng.random(), rng.random() < 0.5,
                    None, rng.choice([16, tl.constexpr(32)]))
            assert fast(args) == launcher.key_and_params(_k, args), args
            args2 = (x, rng.choice(ints), tl.constexpr(rng.choice(ints)), 64)
            assert fast2(args2) == launcher.key_and_params(_k2, args2), args2
    finally:
        launcher._TORCH_TYPES.discard(_FakeCudaTensor)

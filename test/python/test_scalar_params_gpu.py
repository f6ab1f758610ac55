"""Every scalar parameter type on the GPU: launched as numpy scalars (ml_dtypes' bfloat16 for
bf16) and as Python numbers, against numpy; warmup and tilework.compile on a GPU machine.
Skipped without a GPU."""
import numpy as np
import pytest

import tilework

from test_scalar_params import NP, TYPES, VALUES, bits_of, expected_twice, store_twice

pytestmark = pytest.mark.gpu
torch = pytest.importorskip("torch")


def scalar(ty):
    if ty == "bf16":
        ml = pytest.importorskip("ml_dtypes")
        return ml.bfloat16(VALUES[ty])
    return NP[ty](VALUES[ty])


@pytest.mark.parametrize("ty", TYPES)
def test_numpy_scalar_arguments_on_the_gpu(ty):
    out = torch.full((1000,), float("nan"), dtype=torch.float64, device="cuda")
    k = store_twice[(8,)](out, scalar(ty), 1000, BLOCK=128)
    assert k.metadata["signature"]["a"] == {"i1": "int1", "i8": "int8", "i16": "int16",
                                            "i32": "int32", "i64": "int64", "u8": "uint8",
                                            "u16": "uint16", "u32": "uint32",
                                            "u64": "uint64"}.get(ty, ty)
    np.testing.assert_array_equal(out.cpu().numpy(), expected_twice(ty, VALUES[ty]))


@pytest.mark.parametrize("v", [3, -2 ** 40, 2 ** 63 + 10, 2.5, True])
def test_python_scalar_arguments_on_the_gpu(v):
    out = torch.zeros(256, dtype=torch.float64, device="cuda")
    store_twice[(2,)](out, v, 256, BLOCK=128)
    assert (out.cpu().numpy() == float(v) * 2).all()


@pytest.mark.parametrize("ty", ["i8", "i16", "u8", "u16", "u32"])
def test_narrow_integer_extremes_on_the_gpu(ty):
    rng = np.random.default_rng(7)
    info = np.iinfo(NP[ty])
    for v in (info.min, info.max, int(rng.integers(info.min, info.max))):
        out = torch.zeros(32, dtype=torch.int64, device="cuda")
        bits_of[(1,)](out, NP[ty](v), BLOCK=32)
        assert (out.cpu().numpy() == v).all(), (ty, v)


def test_warmup_without_target_loads_for_the_device():
    x = torch.zeros(128, dtype=torch.float64, device="cuda")
    k = store_twice.warmup(x, np.float16(1.5), 128, BLOCK=128, grid=(1,))
    assert k.metadata["signature"]["a"] == "fp16"
    store_twice[(1,)](x, np.float16(1.5), 128, BLOCK=128)
    assert (x.cpu().numpy() == 3.0).all()


def test_compile_for_the_device_target_matches_the_launch():
    x = torch.zeros(128, dtype=torch.float64, device="cuda")
    k = store_twice.warmup(x, 2.5, 128, BLOCK=128, grid=(1,))
    arch = k.metadata["target"]
    ck = tilework.compile(store_twice, target=arch, signature="*fp64:16,fp32,i32:16",
                          constexprs={"BLOCK": 128})
    assert ck.asm["ptx"] == k.asm["ptx"]

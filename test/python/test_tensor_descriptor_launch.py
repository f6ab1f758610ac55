"""The launch side of tensor descriptors without a GPU: a host TensorDescriptor's key (dtype,
block shape, padding, divisibility) and parameters (base, shape, strides but the last) on the
generic and the generated path, the specialization the compiler gets, the ABI's kinds; and
`tilework.set_allocator` with the global scratch a kernel may ask for."""
import random

import numpy as np
import pytest

import tilework
import tilework.language as tl
from tilework.language.descriptor import tensor_descriptor_type
from tilework.runtime import abi, allocation, launcher
from tilework.tools.tensor_descriptor import TensorDescriptor


class FakeGpuArray:
    """A GPU tensor-like (CUDA array interface) of a numpy dtype at address `p`."""

    def __init__(self, p, dtype, shape):
        self.dtype = np.dtype(dtype)
        self.shape = shape
        self.__cuda_array_interface__ = {"typestr": self.dtype.str, "data": (p, False),
                                         "shape": shape, "version": 3}


@tilework.jit
def k_desc(a_desc, n, o_desc, B: tl.constexpr):
    pass


def test_descriptor_key_and_params():
    a = FakeGpuArray(0x10000, np.float16, (40, 64))
    d = TensorDescriptor(a, [40, 50], [64, 1], [16, 32])
    key, params = launcher.key_and_params(k_desc, (d, 7, d, 4))
    assert key[0] == ("tensordesc", "<f2", (16, 32), "zero", (False, False), (16,), False)
    assert params == [0x10000, 40, 50, 64, 7, 0x10000, 40, 50, 64]
    assert launcher.fast_key_and_params(k_desc)((d, 7, d, 4)) == (key, params)


def test_fast_key_matches_the_generic_key_with_descriptors():
    fast = launcher.fast_key_and_params(k_desc)
    rng = random.Random(0)
    for _ in range(500):
        a = FakeGpuArray(rng.choice([0x1000, 0x2000]), rng.choice([np.float32, np.int8]),
                         (64, 64))
        d = TensorDescriptor(a, [rng.choice([16, 17, 64]), rng.choice([32, 33])],
                             [rng.choice([16, 48, 64]), 1], [rng.choice([8, 16]), 32],
                             rng.choice(["zero", "nan"]) if a.dtype.kind == "f" else "zero")
        args = (d, rng.choice([1, 16, 5, 2**40]), rng.choice([d, None]), 8)
        assert fast(args) == launcher.key_and_params(k_desc, args), args


def test_descriptor_specialization():
    a = FakeGpuArray(0x10000, np.float32, (40, 64))
    d = TensorDescriptor(a, [40, 48], [64, 1], [16, 32], padding="nan")
    sig, consts, attrs = launcher.specialization(k_desc, (d, 7, d, 4))
    assert sig["a_desc"] == tensor_descriptor_type(tl.float32, [16, 32], "nan")
    assert str(sig["a_desc"]) == "tensordesc<fp32[16, 32], nan>"
    assert attrs["a_desc"] == {"tile.divisibility": 16}
    assert attrs["a_desc.shape1"] == {"tile.divisibility": 16}
    assert attrs["a_desc.stride0"] == {"tile.divisibility": 16}
    assert "a_desc.shape0" not in attrs  # 40 is not a multiple of 16
    assert consts == {"B": 4}


@pytest.mark.parametrize("dtype, width, flag, div", [
    (np.float16, 70, False, None), (np.float16, 72, True, 8), (np.float16, 66, False, None),
    (np.float32, 70, False, None), (np.float32, 72, True, 4), (np.float16, 64, True, 16),
    (np.int8, 72, False, None), (np.float64, 70, True, 2)])
def test_descriptor_row_bytes_specialization(dtype, width, flag, div):
    """Whether a row is a multiple of 16 bytes is part of the key (the TMA store writes rows in
    whole 16-byte chunks: a 70-wide fp16 tensor gets the block-pointer store, a 72-wide one the
    TMA store); the last shape argument is then known divisible by 16 // itemsize."""
    a = FakeGpuArray(0x10000, dtype, (40, 80))
    d = TensorDescriptor(a, [40, width], [80, 1], [16, 64 // np.dtype(dtype).itemsize])
    key, _ = launcher.key_and_params(k_desc, (d, 7, d, 4))
    assert key[0][6] is flag
    assert launcher.fast_key_and_params(k_desc)((d, 7, d, 4))[0] == key
    other = TensorDescriptor(a, [40, 64], [80, 1], d.block_shape)
    assert (launcher.key_and_params(k_desc, (other, 7, other, 4))[0] == key) == (width == 64)
    _, _, attrs = launcher.specialization(k_desc, (d, 7, d, 4))
    assert attrs.get("a_desc.shape1") == ({"tile.divisibility": div} if div else None)


@pytest.mark.parametrize("dtype, stride, div", [
    (np.float16, 1000, 8), (np.float16, 1024, 16), (np.float32, 1004, 4), (np.float64, 1002, 2),
    (np.int8, 1008, 16), (np.int8, 1040, 16)])
def test_descriptor_stride_divisor(dtype, stride, div):
    """A stride spans a multiple of 16 bytes (TensorDescriptor asserts it; TMA needs it), so it
    is known divisible by 16 // itemsize even where not by 16: a 1000-wide fp16 C still gets
    16-byte vector stores in a descriptor store's fallback."""
    a = FakeGpuArray(0x10000, dtype, (4, stride))
    d = TensorDescriptor(a, [4, 32], [stride, 1], [4, 16])
    key, _ = launcher.key_and_params(k_desc, (d, 7, d, 4))
    assert key[0][5] == (div,)
    assert launcher.fast_key_and_params(k_desc)((d, 7, d, 4))[0] == key
    _, _, attrs = launcher.specialization(k_desc, (d, 7, d, 4))
    assert attrs["a_desc.stride0"] == {"tile.divisibility": div}


def test_descriptor_store_fallback_is_vectorized_at_width_1000():
    """The persistent GEMM's C store at M = N = K = 1000 fp16 (no TMA store): the attributes a
    launch gives (rows of 2,000 bytes) let the fallback write 16-byte vectors, not one
    `st.global.b16` per element (what ncu showed on an H200, behind Triton's TMA store)."""
    import os
    import re
    import sys
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "examples"))
    import persistent_matmul as pm
    from tilework.compiler import api
    from tilework.compiler.options import CompileOptions
    arrays = [FakeGpuArray(0x10000 * (i + 1), np.float16, (1000, 1000)) for i in range(3)]
    descs = [TensorDescriptor(x, [1000, 1000], [1000, 1], blk)
             for x, blk in zip(arrays, ([64, 64], [64, 128], [64, 128]))]
    kern = pm.matmul_tma_persistent
    cx = dict(BM=64, BN=128, BK=64, GROUP_M=8, NUM_SMS=132, WARP_SPECIALIZE=False, B_NK=False)
    sig, consts, attrs = launcher.specialization(kern, (*descs, 1000, 1000, 1000, *cx.values()))
    assert attrs["c_desc.stride0"] == {"tile.divisibility": 8}
    opts = CompileOptions.from_env(target="sm_90a", num_warps=4, num_stages=4)
    ck = api.compile_source(api.ASTSource(kern, sig, consts, attrs), opts.target, opts,
                            cache=False)
    ptx = ck.asm["ptx"]
    assert len(re.findall(r"st\.global\.v4\.b32", ptx)) == 8  # 64 x 128 fp16 / 128 threads
    assert "st.global.b16" not in ptx


def test_descriptor_of_host_memory_is_refused():
    d = TensorDescriptor(np.zeros((4, 16), np.float32), [4, 16], [16, 1], [4, 16])
    with pytest.raises(ValueError, match="is a host \\(numpy\\) array"):
        launcher.key_and_params(k_desc, (d, 3, d, 4))


@pytest.mark.parametrize("sig, kinds", [
    ({"d": "tensordesc<fp16[64]>", "n": "int32"}, "pii"),
    ({"d": "tensordesc<fp32[2, 4, 8], nan>", "p": "*fp32"}, "piiillp"),
    ({"x": "*fp16", "d": "tensordesc<int8[1, 1, 1, 1, 16]>"}, "ppiiiiillll"),
])
def test_abi_kinds_of_descriptors(sig, kinds):
    assert abi.param_kinds({"signature": sig}) == kinds


# ---- set_allocator -------------------------------------------------------------------------------

@pytest.fixture
def no_allocator():
    prev = allocation.get_allocator()
    tilework.set_allocator(None)
    yield
    tilework.set_allocator(prev)


def test_scratch_without_an_allocator_is_triton_s_error(no_allocator):
    md = {"global_scratch_size": 128, "global_scratch_align": 128}
    with pytest.raises(RuntimeError, match="Kernel requires a runtime memory allocation, but "
                                           "no allocator was set. Use tilework.set_allocator "
                                           "to specify an allocator."):
        allocation.global_scratch(md, (2, 3, 1), 0)


def test_scratch_comes_from_the_allocator(no_allocator):
    calls = []

    class Buf:
        def data_ptr(self):
            return 0xABC000

    def alloc(size, alignment, stream):
        calls.append((size, alignment, stream))
        return Buf()

    tilework.set_allocator(alloc)
    md = {"global_scratch_size": 128, "global_scratch_align": 64,
          "signature": {"x": "*fp32"}}
    buf, ptr = allocation.global_scratch(md, (2, 3, 4), 7)
    assert ptr == 0xABC000 and calls == [(128 * 24, 64, 7)]
    assert abi.param_kinds(md) == "pp"  # the scratch pointer is the last parameter
    assert allocation.scratch_size({}) == 0 and abi.param_kinds({"signature": {}}) == ""


def test_set_allocator_takes_a_callable(no_allocator):
    with pytest.raises(TypeError, match="set_allocator expects a callable"):
        tilework.set_allocator(42)


def test_descriptor_entry_is_memoized_and_follows_its_fields():
    """A descriptor's key entry and parameters are computed once per state of the object:
    reassigning a field, or its base moving, gives the new ones."""
    a = FakeGpuArray(0x10000, np.float16, (40, 64))
    d = TensorDescriptor(a, [40, 64], [64, 1], [16, 32])
    first = launcher.arg_entry(k_desc, "a_desc", False, d)
    assert launcher.arg_entry(k_desc, "a_desc", False, d) is first  # the memo's
    assert first[1] == [0x10000, 40, 64, 64]
    d.shape = [48, 64]
    assert launcher.arg_entry(k_desc, "a_desc", False, d)[1] == [0x10000, 48, 64, 64]
    d.strides = [80, 1]
    assert launcher.arg_entry(k_desc, "a_desc", False, d)[1] == [0x10000, 48, 64, 80]
    a.__cuda_array_interface__["data"] = (0x20000, False)  # the same base, moved
    assert launcher.arg_entry(k_desc, "a_desc", False, d)[1] == [0x20000, 48, 64, 80]
    d.base = FakeGpuArray(0x30000, np.float32, (40, 64))
    k, p = launcher.arg_entry(k_desc, "a_desc", False, d)
    assert p[0] == 0x30000 and k[1] == "<f4"
    d.block_shape, d.padding = [8, 32], "nan"
    k, _ = launcher.arg_entry(k_desc, "a_desc", False, d)
    assert k[2:4] == ((8, 32), "nan")
    d.base = np.zeros((4, 16), np.float32)  # host memory: refused each time, never memoized
    for _ in range(2):
        with pytest.raises(ValueError, match="is a host \\(numpy\\) array"):
            launcher.arg_entry(k_desc, "a_desc", False, d)


def test_descriptors_made_anew_share_the_memo_of_their_state():
    """Code that builds its descriptors for each call (Triton's tutorials do) gets the entry
    computed once: equal descriptors share it; another address, dtype or block does not."""
    a = FakeGpuArray(0x40000, np.float16, (40, 64))
    first = launcher.arg_entry(k_desc, "a_desc", False, TensorDescriptor(a, [40, 64], [64, 1],
                                                                         [16, 32]))
    again = launcher.arg_entry(k_desc, "a_desc", False, TensorDescriptor(a, [40, 64], [64, 1],
                                                                         [16, 32]))
    assert again is first
    b = FakeGpuArray(0x50000, np.float16, (40, 64))
    other = launcher.arg_entry(k_desc, "a_desc", False, TensorDescriptor(b, [40, 64], [64, 1],
                                                                         [16, 32]))
    assert other is not first and other[1][0] == 0x50000
    c = FakeGpuArray(0x40000, np.float32, (40, 64))
    k, _ = launcher.arg_entry(k_desc, "a_desc", False, TensorDescriptor(c, [40, 64], [64, 1],
                                                                        [16, 32]))
    assert k[1] == "<f4"
    k, _ = launcher.arg_entry(k_desc, "a_desc", False, TensorDescriptor(a, [40, 64], [64, 1],
                                                                        [8, 32]))
    assert k[2] == (8, 32)


def test_tensor_maps_are_encoded_once_per_descriptor_state(monkeypatch):
    from tilework.runtime import tma
    calls = []
    monkeypatch.setattr(tma, "encode", lambda p, fn=None: calls.append(p) or bytes(128))
    monkeypatch.setattr(tma, "_CACHE", {})
    a = FakeGpuArray(0x10000, np.float16, (40, 64))
    d = TensorDescriptor(a, [40, 64], [64, 1], [16, 32])
    plan = {"arg": "a_desc", "box": [16, 32], "swizzle": 64}
    maps = tma.launch_maps([plan])
    for _ in range(3):
        assert maps(k_desc, (d, 7, None, 4)) == [bytes(128)]
    assert len(calls) == 1
    d.shape = [40, 48]
    maps(k_desc, (d, 7, None, 4))
    assert len(calls) == 2 and calls[-1]["dims"] == [48, 40]
    with pytest.raises(TypeError, match="argument `a_desc` of k_desc was compiled as a tensor "
                                        "descriptor, got int"):
        maps(k_desc, (3, 7, None, 4))

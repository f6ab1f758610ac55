"""Every scalar parameter type Triton accepts (fp16, bf16, fp32, fp64, i1, i8/16/32/64,
u8/16/32/64): in signatures, with an ABI whose slot sizes are the compiled kernel's parameter
sizes (PTX, AMDGPU kernel arguments), as launch arguments (numpy scalars), and used correctly
(the llir stage run by gpu_sim against numpy)."""
import ctypes
import re
import struct

import numpy as np
import pytest

import tilework
import tilework.language as tl
from tilework.runtime import abi

import gpu_sim

TYPES = ["fp16", "bf16", "fp32", "fp64", "i1", "i8", "i16", "i32", "i64", "u8", "u16", "u32",
         "u64"]
NAMES = {"fp16": "fp16", "bf16": "bf16", "fp32": "fp32", "fp64": "fp64", "i1": "int1",
         "i8": "int8", "i16": "int16", "i32": "int32", "i64": "int64", "u8": "uint8",
         "u16": "uint16", "u32": "uint32", "u64": "uint64"}
# a value of each type that its narrower neighbours could not hold
VALUES = {"fp16": 1.5, "bf16": -2.25, "fp32": 3.1, "fp64": 1.0 + 2.0 ** -40, "i1": True,
          "i8": -7, "i16": -300, "i32": -70000, "i64": -2 ** 40, "u8": 250, "u16": 65000,
          "u32": 2 ** 32 - 5, "u64": 2 ** 63 + 10}
NP = {"fp16": np.float16, "fp32": np.float32, "fp64": np.float64, "i1": np.bool_,
      "i8": np.int8, "i16": np.int16, "i32": np.int32, "i64": np.int64, "u8": np.uint8,
      "u16": np.uint16, "u32": np.uint32, "u64": np.uint64}


@tilework.jit
def store_twice(out, a, n, BLOCK: tl.constexpr):
    """out[i] = 2 * a in fp64 (exact for every value above)."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    v = tl.zeros([BLOCK], dtype=tl.float64) + a.to(tl.float64) * 2
    tl.store(out + offs, v, mask=offs < n)


@tilework.jit
def bits_of(out, a, BLOCK: tl.constexpr):
    """out[i] = the parameter's value (integers: their bits as int64, unsigned as unsigned)."""
    offs = tl.arange(0, BLOCK)
    tl.store(out + offs, tl.zeros([BLOCK], dtype=tl.int64) + a.to(tl.int64))


def expected_twice(ty, v):
    if ty == "fp16":
        v = float(np.float16(v))
    elif ty == "fp32":
        v = float(np.float32(v))
    elif ty == "bf16":
        v = struct.unpack("<f", struct.pack("<I", abi.bf16_bits(v) << 16))[0]
    return float(np.float64(v) * 2)


def test_every_scalar_type_has_an_abi():
    assert [abi.param_kind(NAMES[t]) for t in TYPES] == list("hBfdbcsilCSIL")
    with pytest.raises(ValueError) as e:
        abi.param_kind("fp8e4nv")
    assert str(e.value).startswith("no kernel parameter ABI for dtype 'fp8e4nv': expected a "
                                   "pointer or one of int32, int64, uint64, fp32, int1, int8")


def test_fp16_and_bf16_go_as_their_bits():
    assert abi.fp16_bits(1.5) == 0x3E00 and abi.fp16_bits(-2.0) == 0xC000
    assert abi.fp16_bits(1e6) == 0x7C00 and abi.fp16_bits(-1e6) == 0xFC00  # overflow: inf
    assert abi.bf16_bits(1.0) == 0x3F80 and abi.bf16_bits(-2.25) == 0xC010
    # round to nearest even at the 16th bit: 1 + 2^-8 is a tie, rounds down to 1.0;
    # 1 + 3 * 2^-8 rounds up
    assert abi.bf16_bits(1 + 2 ** -8) == 0x3F80 and abi.bf16_bits(1 + 3 * 2 ** -8) == 0x3F82
    assert abi.bf16_bits(float("nan")) == 0x7FC0 and abi.bf16_bits(1e39) == 0x7F80
    for x in np.random.default_rng(0).standard_normal(200):
        assert abi.fp16_bits(float(x)) == int(np.float16(x).view(np.uint16))
    assert abi.encode_values("hBcCi", [1.5, 1.0, 300, -1, 5]) == [0x3E00, 0x3F80, 44, 255, 5]
    assert abi.needs_encoding("pih") and not abi.needs_encoding("pifdL")


def _ptx_param_sizes(ptx: str) -> list:
    """Bytes of each `.param` of the kernel entry (`.u64 .ptr ...`, `.align 2 .b8 x[2]`)."""
    sizes = []
    for m in re.finditer(r"\.param\s+(?:\.align \d+\s+)?\.[usbf](\d+)\b[^\n]*?"
                         r"_param_\d+(?:\[(\d+)\])?", ptx):
        sizes.append(int(m.group(2)) if m.group(2) else int(m.group(1)) // 8)
    return sizes


@pytest.mark.parametrize("ty", TYPES)
def test_cuda_slots_match_the_ptx_parameters(ty):
    """The CUDA runtime's slot for each parameter has the size of the PTX parameter."""
    from tilework.runtime.cuda import LoadedKernel
    ck = tilework.compile(store_twice, target="sm_90a", signature=f"*fp64,{ty},i32",
                          constexprs={"BLOCK": 64})
    k = LoadedKernel(ck, None, None, 128, 0)
    assert k.kinds == "p" + abi.param_kind(NAMES[ty]) + "i"
    assert [ctypes.sizeof(s) for s in k.slots] == _ptx_param_sizes(ck.asm["ptx"])
    assert k.encode == (ty in ("fp16", "bf16"))


@pytest.mark.parametrize("ty", TYPES)
def test_hip_buffer_matches_the_amdgpu_kernel_arguments(ty):
    """The packed HIP argument buffer puts each parameter at the offset the AMDGPU code reads
    it from (the kernel descriptor's `.args` metadata)."""
    ck = tilework.compile(store_twice, target="gfx942", signature=f"*fp64,{ty},i32",
                          constexprs={"BLOCK": 64})
    fmt = abi.struct_format("p" + abi.param_kind(NAMES[ty]) + "i")
    offsets = [int(o) for o in re.findall(r"\.offset:\s+(\d+)", ck.asm["amdgcn"])][:3]
    sizes = [int(s) for s in re.findall(r"\.size:\s+(\d+)", ck.asm["amdgcn"])][:3]
    codes = fmt[1:]
    mine = [struct.calcsize("@" + codes[:i + 1]) - struct.calcsize(codes[i]) for i in range(3)]
    assert mine == offsets, (fmt, offsets)
    assert [struct.calcsize(c) for c in codes] == sizes


@pytest.mark.parametrize("ty", TYPES)
def test_scalar_parameters_are_used_correctly(ty):
    """The compiled code (llir, on the CPU through gpu_sim) reads each parameter type."""
    ck = tilework.compile(store_twice, target="sm_90a", signature=f"*fp64,{ty},i32",
                          constexprs={"BLOCK": 64})
    out = np.full(100, np.nan)
    gpu_sim.run(ck, (2,), out, VALUES[ty], 100)
    np.testing.assert_array_equal(out, expected_twice(ty, VALUES[ty]))


@pytest.mark.parametrize("ty", ["i8", "i16", "u8", "u16", "u32"])
def test_narrow_integers_keep_their_sign(ty):
    """-1 as i8 is -1; 255 as u8 is 255 (zero- vs sign-extension of the parameter)."""
    ck = tilework.compile(bits_of, target="sm_90a", signature=f"*i64,{ty}",
                          constexprs={"BLOCK": 32})
    v = -1 if ty.startswith("i") else np.iinfo(NP[ty]).max
    out = np.zeros(32, np.int64)
    gpu_sim.run(ck, (1,), out, v)
    assert (out == v).all()


@pytest.mark.parametrize("ty", [t for t in TYPES if t != "bf16"])
def test_numpy_scalars_are_launch_arguments_of_their_type(ty):
    """np.float16(1.5), np.uint8(250), ...: the specialization gives the parameter that
    type (the interpreter and a compiled launch see the same signature)."""
    from tilework.runtime.launcher import arg_entry, specialization
    v = NP[ty](VALUES[ty])
    sig, constants, _ = specialization(store_twice, [None, v, 7, 64])
    assert str(sig["a"]) == NAMES[ty]
    entry, param = arg_entry(store_twice, "a", False, v)
    assert entry == NAMES[ty] and param == v.item() and type(param) is type(v.item())


@pytest.mark.parametrize("ty", [t for t in TYPES if t != "bf16"])
def test_numpy_scalars_in_the_interpreter(ty):
    k = tilework.jit(store_twice.fn, interpret=True)
    out = np.zeros(64)
    k[(1,)](out, NP[ty](VALUES[ty]), 64, BLOCK=64)
    np.testing.assert_array_equal(out, expected_twice(ty, VALUES[ty]))


def test_warmup_placeholders_for_every_type():
    """`warmup(..., target=)` with type strings gives the same kernel as tilework.compile."""
    for ty in ("fp16", "u8", "fp64"):
        a = store_twice.warmup("*fp64:16", ty, "i32", BLOCK=64, grid=(1,), target="sm_90a")
        b = tilework.compile(store_twice, target="sm_90a", signature=f"*fp64:16,{ty},i32",
                             constexprs={"BLOCK": 64})
        assert a.asm["ptx"] == b.asm["ptx"] and a.metadata["signature"]["a"] == NAMES[ty]


@tilework.jit
def all_scalars_kernel(out, a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12):
    """out[i] = a_i in fp64, for one parameter of each scalar type (in TYPES order)."""
    tl.store(out + 0, a0.to(tl.float64))
    tl.store(out + 1, a1.to(tl.float64))
    tl.store(out + 2, a2.to(tl.float64))
    tl.store(out + 3, a3.to(tl.float64))
    tl.store(out + 4, a4.to(tl.float64))
    tl.store(out + 5, a5.to(tl.float64))
    tl.store(out + 6, a6.to(tl.float64))
    tl.store(out + 7, a7.to(tl.float64))
    tl.store(out + 8, a8.to(tl.float64))
    tl.store(out + 9, a9.to(tl.float64))
    tl.store(out + 10, a10.to(tl.float64))
    tl.store(out + 11, a11.to(tl.float64))
    tl.store(out + 12, a12.to(tl.float64))


@pytest.fixture(scope="module")
def all_scalars():
    return all_scalars_kernel


def test_every_target_compiles_every_scalar_type(all_scalars, monkeypatch):
    """One kernel taking all 13 scalar types, compiled for every known target (PTX only:
    the local ptxas may lack old architectures)."""
    from tilework.backends import known_targets
    from tilework.backends.nvidia import compiler as nv
    monkeypatch.setattr(nv, "find_ptxas", lambda: None)
    sig = "*fp64," + ",".join(TYPES)
    for target in known_targets():
        ck = tilework.compile(all_scalars, target=target, signature=sig, cache=False)
        assert list(ck.metadata["signature"].values())[1:] == [NAMES[t] for t in TYPES]
        text = ck.asm.get("ptx") or ck.asm["amdgcn"]
        if "ptx" in ck.asm:
            assert _ptx_param_sizes(text) == [8] + [ctypes.sizeof(abi.KINDS[
                abi.param_kind(NAMES[t])][0]) for t in TYPES], target
        else:  # the packed HIP buffer's offsets are the kernel's argument offsets
            fmt = abi.struct_format("p" + "".join(abi.param_kind(NAMES[t]) for t in TYPES))
            codes = fmt[1:]
            mine = [struct.calcsize("@" + codes[:i + 1]) - struct.calcsize(codes[i])
                    for i in range(len(codes))]
            offsets = [int(o) for o in re.findall(r"\.offset:\s+(\d+)", text)][:len(codes)]
            assert mine == offsets, target


def test_all_scalar_types_in_one_launch(all_scalars):
    """gpu_sim runs the kernel with every type at once: each parameter lands in its slot."""
    ck = tilework.compile(all_scalars, target="sm_90a",
                          signature="*fp64," + ",".join(TYPES))
    out = np.full(len(TYPES), np.nan)
    gpu_sim.run(ck, (1,), out, *[VALUES[t] for t in TYPES])
    np.testing.assert_array_equal(out, [expected_twice(t, VALUES[t]) / 2 for t in TYPES])

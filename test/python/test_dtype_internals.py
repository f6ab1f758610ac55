"""Triton's compiler internals on dtypes that kernels and libraries touch: `codegen_name()`,
`cache_key_part`, `mangle()` (of dtypes, pointers, `tuple_type`, `constexpr_type`), with
Triton 3.6's values for every dtype; checked against Triton itself where it is importable
(PYTHONPATH=/tmp/tsite), else against the table (recorded from Triton 3.6)."""
import pytest

import tilework.language as tl

# name -> (codegen_name(), cache_key_part, mangle()), Triton 3.6's
TRITON = {
    "int1": ("int1", "int1", "u1"), "int8": ("int8", "int8", "i8"),
    "int16": ("int16", "int16", "i16"), "int32": ("int32", "int32", "i32"),
    "int64": ("int64", "int64", "i64"), "uint8": ("uint8", "uint8", "u8"),
    "uint16": ("uint16", "uint16", "u16"), "uint32": ("uint32", "uint32", "u32"),
    "uint64": ("uint64", "uint64", "u64"),
    "float8e4nv": ("float8e4nv", "fp8e4nv", "fp8e4nv"), "float8e5": ("float8e5", "fp8e5", "fp8e5"),
    "float8e4b15": ("float8e4b15", "fp8e4b15", "fp8e4b15"),
    "float8e4b8": ("float8e4b8", "fp8e4b8", "fp8e4b8"),
    "float8e5b16": ("float8e5b16", "fp8e5b16", "fp8e5b16"),
    "float16": ("float16", "fp16", "fp16"), "bfloat16": ("bfloat16", "bf16", "bf16"),
    "float32": ("float32", "fp32", "fp32"), "float64": ("float64", "fp64", "fp64"),
}


def _ours(d):
    return d.codegen_name(), d.cache_key_part, d.mangle()


@pytest.mark.parametrize("name", sorted(TRITON))
def test_dtype_internals_are_tritons(name):
    assert _ours(getattr(tl, name)) == TRITON[name]


def test_pointer_tuple_and_constexpr_types():
    assert _ours(tl.pointer_type(tl.float32)) == ("pointer<fp32>", "pointer<fp32>", "Pfp32")
    assert _ours(tl.pointer_type(tl.int8, const=True)) == ("const_pointer<int8>",
                                                            "const_pointer<int8>", "Pi8")
    assert tl.pointer_type(tl.pointer_type(tl.uint16)).mangle() == "PPu16"
    assert tl.constexpr_type(3).mangle() == "constexpr_type[3]"
    nested = tl.tuple_type([tl.float32, tl.tuple_type([tl.int32, tl.constexpr_type(2)])])
    assert nested.mangle() == "Tfp32_Ti32_constexpr_type[2]TT"


def test_void_has_no_mangled_name():
    assert tl.void.codegen_name() == "void" and tl.void.cache_key_part == "void"
    with pytest.raises(RuntimeError, match="Not implemented"):
        tl.void.mangle()  # as Triton's


def test_against_triton_itself():
    triton_tl = pytest.importorskip("triton.language")
    for name in TRITON:
        t = getattr(triton_tl, name)
        assert (t.codegen_name(), t.cache_key_part, t.mangle()) == _ours(getattr(tl, name))
    for const in (False, True):
        t = triton_tl.pointer_type(triton_tl.float16, const=const)
        assert (t.codegen_name(), t.cache_key_part, t.mangle()) == \
            _ours(tl.pointer_type(tl.float16, const=const))
    t = triton_tl.tuple_type([triton_tl.float32, triton_tl.constexpr_type(2)])
    assert t.mangle() == tl.tuple_type([tl.float32, tl.constexpr_type(2)]).mangle()

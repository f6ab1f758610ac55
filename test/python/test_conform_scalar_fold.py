"""A number assigned in a kernel computes as Triton's scalar (frontend/scalar_fold.py): `a = -7`
gives `a // 2 == -3` and `a % 2 == -1` (C's truncation), `*` and `<<` wrap at int32, `/` of
ints and float arithmetic are fp32; a tuple literal's members, `a = BLOCK` and
`a = tl.constexpr(-7)` likewise.  Constexprs used directly (`BLOCK // 2`, a literal,
`c: tl.constexpr = -7`) keep Python's answers.  The expected values were measured with Triton
3.6 (its TTIR from `triton.compile` for sm_90, and its interpreter, which differs only for the
tuple's members: see docs/conformance.md).  Interpreted, and compiled for sm_90a and gfx942
(the SIMT emulator)."""
import numpy as np
import pytest

import tilework
import tilework.language as tl
from test_conform_language import P, run  # (one program, interpreted or emulated)

WHERE = ["interpreter", "sm_90a", "gfx942"]


def k_ints(out, outf, BLOCK: tl.constexpr):
    a = -7
    tl.store(out + 0, a // 2)
    tl.store(out + 1, a % 2)
    tl.store(out + 2, a >> 1)
    tl.store(out + 3, (a << 29).to(tl.int64))
    tl.store(out + 4, (a * 1000000000).to(tl.int64))
    t = (-7, 2)
    tl.store(out + 5, t[0] // t[1])
    tl.store(out + 6, t[0] % t[1])
    b = BLOCK
    tl.store(out + 7, b // 2)
    c: tl.constexpr = -7
    tl.store(out + 8, c // 2)
    tl.store(out + 9, BLOCK // 2)
    d = tl.constexpr(-7)
    tl.store(out + 10, d // 2)
    e = 100000
    tl.store(out + 11, (e * e).to(tl.int64))
    f = 2**40
    tl.store(out + 12, f // -3)
    g = -7
    g += 0
    tl.store(out + 13, g // 2)
    tl.store(out + 14, -7 // 2)
    h = 7
    tl.store(outf + 0, (h / 3).to(tl.float64))
    tl.store(outf + 1, (a / 2).to(tl.float64))
    x = 0.1
    tl.store(outf + 2, (x * 3).to(tl.float64))
    tl.store(out + 15, -a // 2)
    tl.store(out + 16, a // BLOCK)
    tl.store(out + 17, a % -3)
    tl.store(out + 18, t[0] * 1)


# Triton 3.6's answers (TTIR constants); index 8, 9 and 14 are Python's (constexprs)
INTS = [-3, -1, -4, 536870912, 1589934592, -3, -1, -3, -4, -4, -3, 1410065408,
        -366503875925, -3, -4, 3, 1, -1, -7]
FLOATS = [2.3333332538604736, -3.5, 0.30000001192092896]


@pytest.mark.parametrize("where", WHERE)
def test_assigned_numbers_compute_as_triton_scalars(where):
    out, outf = np.zeros(19, np.int64), np.zeros(3, np.float64)
    run(k_ints, where, {"out": P(tl.int64), "outf": P(tl.float64)}, {"BLOCK": -7}, out, outf)
    assert out.tolist() == INTS
    assert outf.tolist() == FLOATS


@tilework.constexpr_function
def neg7():
    return -7


def k_more(out):
    tl.store(out + 0, neg7() // 2)  # a constexpr_function's result: Python's
    a = -7
    tl.store(out + 1, (-a) // -2)
    m = -2147483648
    tl.store(out + 2, -m)  # wraps at int32
    tl.store(out + 3, ~a)
    u = 3000000000
    tl.store(out + 4, u // 7)
    n = 4
    tl.store(out + 5 + tl.arange(0, n), tl.arange(0, n) * a)  # still a compile-time value


@pytest.mark.parametrize("where", WHERE)
def test_constexpr_function_results_and_unary_operators(where):
    out = np.zeros(9, np.int64)
    run(k_more, where, {"out": P(tl.int64)}, {}, out)
    assert out.tolist() == [-4, -3, -2147483648, 6, 428571428, 0, -7, -14, -21]


def k_mixed_signedness(out):
    a = -7
    b = 2**63
    tl.store(out, a // b)


def k_float_bitwise(out):
    x = 0.5
    tl.store(out, x & 1)


def k_out_of_range(out):
    a = 1
    tl.store(out, a * 2**40)


@pytest.mark.parametrize("where", WHERE)
@pytest.mark.parametrize("kernel, message", [
    (k_mixed_signedness, "Cannot use `//` with int32 and uint64 because they have different "
                         "signedness"),
    (k_float_bitwise, r"`&` is not defined for fp32 and fp32 \(invalid operands"),
    (k_out_of_range, "Scalar 1099511627776 is out of range for type int32"),
])
def test_scalar_operations_triton_refuses(where, kernel, message):
    # Triton 3.6 refuses each (its TypeError, IncompatibleTypeErrorImpl, ValueError)
    with pytest.raises(Exception, match=message):
        run(kernel, where, {"out": P(tl.int64)}, {}, np.zeros(1, np.int64))


def k_wide(out):
    u = 3000000000  # Triton's uint32
    tl.static_assert(u.dtype == tl.uint32)
    tl.store(out + 0, u * 2)
    tl.store(out + 1, u >> 1)
    a = -7
    b = 2**40
    tl.store(out + 2, (b + a) // 2)
    tl.store(out + 3, (((a * 1.5) % 2) * 4).to(tl.int64))  # fp32 `%`: C's fmod


@pytest.mark.parametrize("where", WHERE)
def test_uint32_int64_and_float_scalars(where):
    out = np.zeros(4, np.int64)
    run(k_wide, where, {"out": P(tl.int64)}, {}, out)
    assert out.tolist() == [1705032704, 1500000000, 549755813884, -2]


def k_static_range(out):
    for i in tl.static_range(3):  # the loop variable is a constexpr, as Triton's
        j = -7 + i
        tl.store(out + i, i * -7 // 2)
        tl.store(out + 3 + i, j // 2)


@pytest.mark.parametrize("where", WHERE)
def test_static_range_variable_stays_a_constexpr(where):
    out = np.zeros(6, np.int64)
    run(k_static_range, where, {"out": P(tl.int64)}, {}, out)
    assert out.tolist() == [0, -4, -7, -3, -3, -2]

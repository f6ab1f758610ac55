"""The CPU interpreter: kernels run with numpy, compared with numpy on random inputs.

Outputs are poisoned (NaN or a sentinel) before each run, so a lane the kernel fails to
write shows up."""
import importlib
import os
import sys

import numpy as np
import pytest

import tilework
import tilework.language as tl

EXAMPLES = os.path.join(os.path.dirname(__file__), "..", "..", "examples")
SENTINEL = -777

# `interpret=True` on the decorator; TILEWORK_INTERPRET=1 (read when a kernel is decorated)
# is tested with the example kernel below.
interpreted = tilework.jit(interpret=True)


@pytest.fixture
def rng(request):
    return np.random.default_rng(abs(hash(request.node.name)) % 2**32)


def rand(rng, n, dtype):
    if np.dtype(dtype).kind == "f":
        return (rng.standard_normal(n) * 10).astype(dtype)
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max, n, dtype=dtype, endpoint=True)


def poison(n, dtype):
    if np.dtype(dtype).kind == "f":
        return np.full(n, np.nan, dtype)
    return np.full(n, np.array(SENTINEL).astype(dtype), dtype)


def import_example(monkeypatch, env):
    """examples/vector_add.py imported afresh with TILEWORK_INTERPRET=env."""
    monkeypatch.setenv("TILEWORK_INTERPRET", env)
    monkeypatch.syspath_prepend(EXAMPLES)
    monkeypatch.delitem(sys.modules, "vector_add", raising=False)
    return importlib.import_module("vector_add")


@pytest.fixture
def add_kernel(monkeypatch):
    return import_example(monkeypatch, "1").add_kernel


# ---- the example kernel --------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [np.float32, np.float16])
@pytest.mark.parametrize("n", [1000, 1024, 1])
def test_vector_add_example(add_kernel, rng, dtype, n):
    x, y = rand(rng, n, dtype), rand(rng, n, dtype)
    out = poison(n, dtype)
    add_kernel[(tl.cdiv(n, 256),)](x, y, out, n, BLOCK_SIZE=256)
    np.testing.assert_array_equal(out, x + y)  # fp16 adds round in fp16, as numpy's


def test_env_var_off_means_compiled(monkeypatch):
    add_kernel = import_example(monkeypatch, "0").add_kernel
    x = np.ones(4, np.float32)
    with pytest.raises(ValueError, match="TILEWORK_INTERPRET=1"):
        add_kernel[(1,)](x, x, x, 4, BLOCK_SIZE=4)


def test_jit_interpret_flag(monkeypatch, rng):
    monkeypatch.delenv("TILEWORK_INTERPRET", raising=False)

    @tilework.jit(interpret=True)
    def scale(x_ptr, out_ptr, n, alpha, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        m = offs < n
        tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=m) * alpha, mask=m)

    x, out = rand(rng, 300, np.float32), poison(300, np.float32)
    scale[lambda meta: (tl.cdiv(meta["n"], meta["BLOCK"]),)](x, out, 300, 0.5, BLOCK=64)
    np.testing.assert_array_equal(out, x * np.float32(0.5))


# ---- loads and stores ----------------------------------------------------------------------

@interpreted
def masked_copy(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    v = tl.load(x_ptr + offs, mask=offs < n, other=-2.5)
    tl.store(out_ptr + offs, v)


def test_masked_load_other(rng):
    x, out = rand(rng, 50, np.float32), poison(64, np.float32)
    masked_copy[(2,)](x, out, 50, BLOCK=32)
    np.testing.assert_array_equal(out[:50], x)
    np.testing.assert_array_equal(out[50:], -2.5)


def test_out_of_bounds_load_raises():
    x, out = np.ones(50, np.float32), poison(64, np.float32)
    with pytest.raises(IndexError, match=r"out-of-bounds load in kernel `oob_load`.*x_ptr") as e:
        oob_load[(2,)](x, out, BLOCK=32)
    assert "test_interpreter.py" in str(e.value)


@interpreted
def oob_load(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs))


def test_out_of_bounds_store_writes_nothing():
    @interpreted
    def oob_store(out_ptr, BLOCK: tl.constexpr):
        tl.store(out_ptr + tl.arange(0, BLOCK), 1.0)

    out = poison(6, np.float32)
    with pytest.raises(IndexError, match="out-of-bounds store in kernel `oob_store`"):
        oob_store[(1,)](out[:4], BLOCK=8)
    assert np.isnan(out).all()


def test_scalar_load_store_and_in_place(rng):
    @interpreted
    def bump(x_ptr, n):
        tl.store(x_ptr + n, tl.load(x_ptr + n) + 1)  # one element per program, in place

    x = rand(rng, 8, np.int64)
    ref = x + 1
    bump[(1,)](x, 3)
    assert x[3] == ref[3] and (np.delete(x, 3) == np.delete(ref - 1, 3)).all()


def test_bool_and_strided_arguments(rng):
    @interpreted
    def flip(m_ptr, x_ptr, out_ptr, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        m = tl.load(m_ptr + offs)
        tl.store(out_ptr + offs, tl.where(m, tl.load(x_ptr + 2 * offs), 0))

    m = rng.integers(0, 2, 16).astype(bool)
    base = rand(rng, 64, np.int32)
    x = base[::2]  # a strided view: pointer arithmetic counts elements of the base
    out = poison(16, np.int32)
    flip[(1,)](m, x, out, BLOCK=16)
    np.testing.assert_array_equal(out, np.where(m, base[0:32:2], 0))


def test_hints_and_read_only_arguments(rng):
    @interpreted
    def copy(x_ptr, out_ptr, BLOCK: tl.constexpr):
        offs = tl.multiple_of(tl.program_id(0) * BLOCK, 16) + tl.arange(0, BLOCK)
        tl.store(out_ptr + tl.max_contiguous(offs, 16), tl.load(x_ptr + offs))

    x, out = rand(rng, 64, np.float32), poison(64, np.float32)
    x.flags.writeable = False  # read-only inputs are fine
    copy[(4,)](x, out, BLOCK=16)
    np.testing.assert_array_equal(out, x)
    with pytest.raises(ValueError, match="stores into read-only array `out_ptr`"):
        copy[(4,)](out, x, BLOCK=16)


# ---- integer semantics ---------------------------------------------------------------------

@interpreted
def int_ops(a_ptr, b_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    a = tl.load(a_ptr + offs)
    b = tl.load(b_ptr + offs)
    tl.store(out_ptr + 0 * BLOCK + offs, a // b)
    tl.store(out_ptr + 1 * BLOCK + offs, a % b)
    tl.store(out_ptr + 2 * BLOCK + offs, a + b)   # wraps
    tl.store(out_ptr + 3 * BLOCK + offs, a * b)   # wraps
    tl.store(out_ptr + 4 * BLOCK + offs, a >> 3)
    tl.store(out_ptr + 5 * BLOCK + offs, -a)
    tl.store(out_ptr + 6 * BLOCK + offs, ~a ^ b)
    tl.store(out_ptr + 7 * BLOCK + offs, (a < b).to(tl.int32) + (a // 7) * 10 + a % -7)


def c_div(a, b):
    q = np.abs(a) // np.abs(b)
    return np.where((a < 0) != (b < 0), -q, q)


def test_int32_semantics(rng):
    n = 64
    a = rand(rng, n, np.int32)
    b = rand(rng, n, np.int32)
    b[b == 0] = 3
    a[:4] = [-7, 7, -7, 2**31 - 1]
    b[:4] = [2, -2, -2, 1]
    out = poison(8 * n, np.int32)
    int_ops[(1,)](a, b, out, BLOCK=n)
    a64, b64 = a.astype(np.int64), b.astype(np.int64)
    q = c_div(a64, b64)
    wrap = lambda v: ((v + 2**31) % 2**32 - 2**31).astype(np.int32)  # noqa: E731
    expected = [q, a64 - q * b64, a64 + b64, a64 * b64, a64 >> 3, -a64, ~a64 ^ b64,
                (a64 < b64) + c_div(a64, 7) * 10 + (a64 - c_div(a64, -7) * -7)]
    for i, e in enumerate(expected):
        np.testing.assert_array_equal(out[i * n:(i + 1) * n], wrap(e), err_msg=f"row {i}")
    assert out[0] == -3 and out[n] == -1 and out[1] == -3 and out[n + 1] == 1
    assert out[2 * n + 3] == wrap(np.int64(2**31 - 1) + b[3])


@interpreted
def uint_ops(a_ptr, b_ptr, out_ptr, f_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    a = tl.load(a_ptr + offs)
    b = tl.load(b_ptr + offs)
    tl.store(out_ptr + 0 * BLOCK + offs, a // b)
    tl.store(out_ptr + 1 * BLOCK + offs, a % b)
    tl.store(out_ptr + 2 * BLOCK + offs, a >> 5)
    tl.store(out_ptr + 3 * BLOCK + offs, tl.where(a > b, a, b))
    tl.store(out_ptr + 4 * BLOCK + offs, a + b)
    tl.store(out_ptr + 5 * BLOCK + offs, tl.maximum(a, b) - tl.minimum(a, b))
    tl.store(f_ptr + offs, a.to(tl.float32))


def test_uint32_semantics(rng):
    n = 32
    a, b = rand(rng, n, np.uint32), rand(rng, n, np.uint32)
    b[b == 0] = 5
    a[0], b[0] = 2**32 - 1, 2**31  # would be -1 and INT_MIN as signed
    out, f = poison(6 * n, np.uint32), poison(n, np.float32)
    uint_ops[(1,)](a, b, out, f, BLOCK=n)
    expected = [a // b, a % b, a >> 5, np.maximum(a, b), a + b, np.maximum(a, b) - np.minimum(a, b)]
    for i, e in enumerate(expected):
        np.testing.assert_array_equal(out[i * n:(i + 1) * n], e, err_msg=f"row {i}")
    np.testing.assert_array_equal(f, a.astype(np.float32))
    assert out[0] == 1 and out[3 * n] == 2**32 - 1


def test_float_to_int_saturates():
    @interpreted
    def f2i(x_ptr, out_ptr, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        tl.store(out_ptr + offs, tl.load(x_ptr + offs).to(tl.int32))

    x = np.array([1.9, -1.9, 3e9, -3e9, np.nan, np.inf, -0.5, 2**31 - 128], np.float32)
    out = poison(8, np.int32)
    f2i[(1,)](x, out, BLOCK=8)
    np.testing.assert_array_equal(out, [1, -1, 2**31 - 1, -2**31, 0, 2**31 - 1, 0, 2**31 - 128])


# ---- type promotion and floats -------------------------------------------------------------

def test_promotion(rng):
    @interpreted
    def promote(h_ptr, i_ptr, h_out, f_out, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        h = tl.load(h_ptr + offs) + 1.5
        tl.static_assert(h.dtype == tl.float16, "fp16 + python float stays fp16")
        q = tl.load(i_ptr + offs) / 3
        tl.static_assert(q.dtype == tl.float32, "int / int is fp32")
        tl.store(h_out + offs, h)
        tl.store(f_out + offs, q)

    h, i = rand(rng, 16, np.float16), rand(rng, 16, np.int32)
    ho, fo = poison(16, np.float16), poison(16, np.float32)
    promote[(1,)](h, i, ho, fo, BLOCK=16)
    np.testing.assert_array_equal(ho, h + np.float16(1.5))
    np.testing.assert_array_equal(fo, i.astype(np.float32) / np.float32(3))


def test_where_maximum_minimum(rng):
    @interpreted
    def wmm(x_ptr, y_ptr, out_ptr, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        x = tl.load(x_ptr + offs)
        y = tl.load(y_ptr + offs)
        tl.store(out_ptr + offs, tl.where(x > 0, x, y * 2))
        tl.store(out_ptr + BLOCK + offs, tl.maximum(x, y))
        tl.store(out_ptr + 2 * BLOCK + offs, tl.minimum(x, 0.25))
        tl.store(out_ptr + 3 * BLOCK + offs, tl.maximum(x, y, propagate_nan=tl.PropagateNan.ALL))

    x, y = rand(rng, 32, np.float32), rand(rng, 32, np.float32)
    x[3] = np.nan
    out = poison(128, np.float32)
    wmm[(1,)](x, y, out, BLOCK=32)
    np.testing.assert_array_equal(out[:32], np.where(x > 0, x, y * 2))
    # as Triton: by default a NaN operand gives the other one; PropagateNan.ALL gives NaN
    np.testing.assert_array_equal(out[32:64], np.fmax(x, y))
    np.testing.assert_array_equal(out[64:96], np.fmin(x, np.float32(0.25)))
    np.testing.assert_array_equal(out[96:], np.maximum(x, y))
    assert np.isnan(out[96 + 3]) and not np.isnan(out[32 + 3])


def test_maximum_propagate_nan_must_be_a_propagate_nan(rng):
    @interpreted
    def bad(x_ptr, BLOCK: tl.constexpr):
        x = tl.load(x_ptr + tl.arange(0, BLOCK))
        tl.store(x_ptr + tl.arange(0, BLOCK), tl.maximum(x, x, propagate_nan=True))

    with pytest.raises(Exception, match="tl.maximum: propagate_nan must be tl.PropagateNan.NONE "
                                        "or tl.PropagateNan.ALL, got True"):
        bad[(1,)](rand(rng, 16, np.float32), BLOCK=16)


def bf16_round(x):
    b = x.astype(np.float32).view(np.uint32).astype(np.uint64)
    b = ((b + 0x7FFF + ((b >> 16) & 1)) & 0xFFFF0000).astype(np.uint32)
    return b.view(np.float32)


def test_bf16_rounds_after_every_op(rng):
    @interpreted
    def bf(x_ptr, y_ptr, out_ptr, bits_ptr, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        x = tl.load(x_ptr + offs).to(tl.bfloat16)
        y = tl.load(y_ptr + offs).to(tl.bfloat16)
        z = x * y + x
        tl.store(out_ptr + offs, z.to(tl.float32))
        tl.store(bits_ptr + offs, z.to(tl.int16, bitcast=True))

    x, y = rand(rng, 64, np.float32), rand(rng, 64, np.float32)
    out, bits = poison(64, np.float32), poison(64, np.int16)
    bf[(1,)](x, y, out, bits, BLOCK=64)
    xb, yb = bf16_round(x), bf16_round(y)
    ref = bf16_round(bf16_round(xb * yb) + xb)
    np.testing.assert_array_equal(out, ref)
    ref_bits = (ref.view(np.uint32) >> 16).astype(np.uint16).view(np.int16)
    np.testing.assert_array_equal(bits, ref_bits)


# ---- grids, control flow, printing ---------------------------------------------------------

def test_2d_grid(rng):
    @interpreted
    def grid2d(x_ptr, out_ptr, pid_ptr, n_cols, BLOCK: tl.constexpr):
        row = tl.program_id(1)
        cols = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        m = cols < n_cols
        v = tl.load(x_ptr + row * n_cols + cols, mask=m)
        tl.store(out_ptr + row * n_cols + cols, v * 2 + row, mask=m)
        flat = row * tl.num_programs(0) + tl.program_id(0)
        tl.store(pid_ptr + flat, tl.num_programs(0) * 100 + tl.num_programs(1))

    rows, cols = 5, 70
    x = rand(rng, rows * cols, np.float32)
    out, pids = poison(rows * cols, np.float32), poison(3 * rows, np.int32)
    grid2d[(3, rows)](x, out, pids, cols, BLOCK=32)
    ref = x.reshape(rows, cols) * 2 + np.arange(rows, dtype=np.float32)[:, None]
    np.testing.assert_array_equal(out.reshape(rows, cols), ref)
    np.testing.assert_array_equal(pids, 3 * 100 + rows)


def test_print_and_runtime_if(capsys, rng):
    @interpreted
    def branchy(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
        pid = tl.program_id(0)
        offs = pid * BLOCK + tl.arange(0, BLOCK)
        v = tl.load(x_ptr + offs)
        total = 0.0
        for i in range(n):  # a runtime scalar as a Python range bound
            total += i
        if pid * BLOCK < n:
            print("program", int(pid), "sum", float(total))
            tl.store(out_ptr + offs, v + total)
        else:
            tl.store(out_ptr + offs, -v)

    x = rand(rng, 16, np.float32)
    out = poison(16, np.float32)
    branchy[(4,)](x, out, 5, BLOCK=4)
    np.testing.assert_array_equal(out[:8], x[:8] + 10)
    np.testing.assert_array_equal(out[8:], -x[8:])
    assert capsys.readouterr().out == "program 0 sum 10.0\nprogram 1 sum 10.0\n"


def test_print_tensor_values(capsys):
    @interpreted
    def show(BLOCK: tl.constexpr):
        print(tl.arange(0, BLOCK) * 3)

    show[(1,)](BLOCK=4)
    assert capsys.readouterr().out.strip() == "tensor([0, 3, 6, 9], dtype=int32)"


def test_nested_jit_function(rng):
    @interpreted
    def axpy(a, x, y):
        return a * x + y

    @interpreted
    def outer(x_ptr, y_ptr, out_ptr, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        tl.store(out_ptr + offs, axpy(2.0, tl.load(x_ptr + offs), tl.load(y_ptr + offs)))

    x, y, out = rand(rng, 8, np.float32), rand(rng, 8, np.float32), poison(8, np.float32)
    outer[(1,)](x, y, out, BLOCK=8)
    np.testing.assert_array_equal(out, np.float32(2) * x + y)


def test_semantic_errors_name_the_program():
    @interpreted
    def bad(x_ptr, BLOCK: tl.constexpr):
        tl.store(x_ptr + tl.arange(0, BLOCK), tl.arange(0, 2 * BLOCK))

    with pytest.raises(Exception, match="shape mismatch between store value and pointer") as e:
        bad[(1,)](np.zeros(8, np.int32), BLOCK=4)
    assert any("program id (0, 0, 0)" in n for n in getattr(e.value, "__notes__", []))


# ---- torch CPU tensors ---------------------------------------------------------------------

def test_torch_cpu_tensors(add_kernel):
    torch = pytest.importorskip("torch")
    torch.manual_seed(0)
    for dtype in (torch.float32, torch.float16, torch.bfloat16):
        x = torch.randn(1000, dtype=dtype)
        y = torch.randn(1000, dtype=dtype)
        out = torch.full((1000,), float("nan"), dtype=dtype)
        add_kernel[(8,)](x, y, out, 1000, BLOCK_SIZE=128)
        assert torch.equal(out, x + y), dtype


# ---- outside the interpreter ---------------------------------------------------------------

def test_outside_interpreter_raises():
    t = tl.tensor(None, tl.int32)
    with pytest.raises(RuntimeError, match="inside a @tilework.jit kernel"):
        tl.program_id(0)
    with pytest.raises(TypeError, match="only evaluated by the interpreter"):
        t + 1
    with pytest.raises(TypeError, match="no Python truth value"):
        bool(t)
    assert (t == 1) is False and t in [t]  # identity outside kernels

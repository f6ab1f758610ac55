"""The inputs, launch and numpy reference of each compat kernel (shared by test_compat.py, which
runs tilework's interpreter and compiler, and test_compat_gpu.py, which runs tilework and
Triton on a GPU).

A case's `args` are numpy arrays (pointers; outputs are the indices in `outputs`) and Python
scalars; `check(outs)` compares the outputs (numpy, in `outputs` order) with numpy; `exact`
says whether tilework and Triton must agree bit for bit (else `tol` = (rtol, atol))."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


@dataclass
class Case:
    name: str
    kernel: str  # attribute of compat_kernels
    grid: tuple
    args: list
    constexprs: dict
    outputs: list
    check: object
    exact: bool = True
    tol: tuple = (0.0, 0.0)
    notes: str = ""
    extra: dict = field(default_factory=dict)


def cdiv(a, b):
    return (a + b - 1) // b


def _close(rtol, atol):
    def check(out, ref):
        np.testing.assert_allclose(np.asarray(out, np.float64), ref, rtol=rtol, atol=atol)
    return check


def _softmax(x, axis=-1):
    x = x.astype(np.float64)
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def _uniform_ref(seed, offsets):
    """tl.rand's stream (Philox-4x32-10, first word), from test_random's reference."""
    from test_random import ref_randint4x, ref_uniform
    return ref_uniform(ref_randint4x(seed, offsets)[0])


def make_cases(rng) -> list[Case]:
    cases = []

    n = 1000
    x, y = rng.standard_normal(n).astype(np.float32), rng.standard_normal(n).astype(np.float32)
    cases.append(Case("vector_add", "add_kernel", (cdiv(n, 256),),
                      [x, y, np.zeros(n, np.float32), n], {"BLOCK_SIZE": 256}, [2],
                      lambda o, x=x, y=y: np.testing.assert_array_equal(o[0], x + y)))

    rows, cols = 13, 781
    x = (rng.standard_normal((rows, cols)) * 3).astype(np.float32)
    cases.append(Case("softmax", "softmax_kernel", (4,),
                      [np.zeros_like(x), x, cols, cols, rows, cols], {"BLOCK_SIZE": 1024}, [0],
                      lambda o, x=x: _close(1e-5, 1e-7)(o[0], _softmax(x)),
                      exact=False, tol=(1e-5, 1e-7)))

    rows, cols = 6, 100
    x = (rng.standard_normal((rows, cols)) * 3).astype(np.float32)
    cases.append(Case("softmax_builtin", "softmax_builtin_kernel", (rows,),
                      [np.zeros_like(x), x, cols], {"BLOCK_SIZE": 128}, [0],
                      lambda o, x=x: _close(1e-5, 1e-7)(o[0], _softmax(x)),
                      exact=False, tol=(1e-5, 1e-7)))

    m, n, eps = 6, 1000, 1e-5
    x = (rng.standard_normal((m, n)) * 2 + 0.5).astype(np.float32)
    w, b = rng.standard_normal(n).astype(np.float32), rng.standard_normal(n).astype(np.float32)

    def ln_check(o, x=x, w=w, b=b):
        x64 = x.astype(np.float64)
        mean, var = x64.mean(1), x64.var(1)
        rstd = 1 / np.sqrt(var + eps)
        _close(1e-4, 1e-4)(o[0], (x64 - mean[:, None]) * rstd[:, None] * w + b)
        _close(1e-5, 1e-6)(o[1], mean)
        _close(1e-4, 0)(o[2], rstd)
    cases.append(Case("layer_norm", "layer_norm_fwd_kernel", (m,),
                      [x, np.zeros_like(x), w, b, np.zeros(m, np.float32),
                       np.zeros(m, np.float32), n, n, eps], {"BLOCK_SIZE": 256}, [1, 4, 5],
                      ln_check, exact=False, tol=(1e-5, 1e-5)))

    m, n, k = 200, 130, 70
    a = rng.standard_normal((m, k)).astype(np.float16)
    bm = rng.standard_normal((k, n)).astype(np.float16)

    def mm_check(o, a=a, bm=bm):
        ref = a.astype(np.float64) @ bm.astype(np.float64)
        _close(2e-3, 1e-2)(o[0], ref)
    cases.append(Case("matmul", "matmul_kernel", (cdiv(m, 64) * cdiv(n, 64),),
                      [a, bm, np.zeros((m, n), np.float16), m, n, k, k, 1, n, 1, n, 1],
                      {"BLOCK_SIZE_M": 64, "BLOCK_SIZE_N": 64, "BLOCK_SIZE_K": 32,
                       "GROUP_SIZE_M": 8}, [2], mm_check, exact=False, tol=(2e-3, 2e-2),
                      notes="fp16 inputs: Triton's tensor cores and tilework's FMAs both "
                            "accumulate exact products in fp32, in different orders"))

    rows, cols = 8, 100
    x = rng.standard_normal((rows, cols)).astype(np.float32)
    x[3, 5] = x[3, 50] = 10.0  # a tie: the first index wins

    def red_check(o, x=x, rows=rows):
        np.testing.assert_array_equal(o[0], x.max(1))
        np.testing.assert_array_equal(o[1], x.argmax(1))
        np.testing.assert_array_equal(o[2], x[np.arange(rows), np.abs(x).argmax(1)])
    cases.append(Case("reduce_custom", "reduce_custom_kernel", (rows,),
                      [x, np.zeros(rows, np.float32), np.zeros(rows, np.int32),
                       np.zeros(rows, np.float32), cols], {"BLOCK_SIZE": 128}, [1, 2, 3],
                      red_check))

    rows, cols = 4, 300
    x = rng.integers(-1000, 1000, (rows, cols)).astype(np.int32)
    cases.append(Case("cumsum", "cumsum_kernel", (rows,), [x, np.zeros_like(x), cols],
                      {"BLOCK_SIZE": 512}, [1],
                      lambda o, x=x: np.testing.assert_array_equal(o[0], np.cumsum(x, 1))))

    n, bins = 10000, 64
    x = rng.integers(0, bins, n).astype(np.int32)
    cases.append(Case("histogram", "histogram_kernel", (cdiv(n, 1024),),
                      [x, np.zeros(bins, np.int32), n], {"BLOCK_SIZE": 1024}, [1],
                      lambda o, x=x, bins=bins: np.testing.assert_array_equal(
                          o[0], np.bincount(x, minlength=bins))))

    m, n = 40, 150
    x = rng.standard_normal((m, n)).astype(np.float32)
    cases.append(Case("block_ptr_rowsum", "block_ptr_rowsum_kernel", (cdiv(m, 16),),
                      [x, np.zeros(m, np.float32), m, n, n, 1],
                      {"BLOCK_M": 16, "BLOCK_N": 64}, [1],
                      lambda o, x=x: _close(1e-5, 1e-5)(o[0], x.astype(np.float64).sum(1)),
                      exact=False, tol=(1e-5, 1e-5)))

    n, seed = 5000, 1234
    cases.append(Case("rand", "rand_kernel", (cdiv(n, 1024),), [np.zeros(n, np.float32), n, seed],
                      {"BLOCK_SIZE": 1024}, [0],
                      lambda o, n=n, seed=seed: np.testing.assert_array_equal(
                          o[0], _uniform_ref(seed, np.arange(n, dtype=np.int32)))))

    n = 128
    a, b = rng.standard_normal(n).astype(np.float32), rng.standard_normal(n).astype(np.float32)

    def js_check(o, a=a, b=b):
        np.testing.assert_array_equal(o[0], np.stack([a, b], -1).reshape(-1))
        np.testing.assert_array_equal(o[1], a + 2 * b)
    cases.append(Case("join_split_interleave", "join_split_kernel", (1,),
                      [a, b, np.zeros(2 * n, np.float32), np.zeros(n, np.float32)],
                      {"BLOCK_SIZE": n}, [2, 3], js_check))
    return cases


NAMES = [c.name for c in make_cases(np.random.default_rng(0))]

"""07 - Math and extern functions.

`tilework.language` has the math functions of Triton's `tl` surface: `exp`, `exp2`, `log`,
`log2`, `sin`, `cos`, `sqrt`, `sqrt_rn`, `rsqrt`, `abs`, `erf`, `floor`, `ceil`, `fma`,
`fdiv`, `div_rn`, `clamp`, `sigmoid`, `umulhi`, `cdiv`.  They work elementwise on tiles of
any shape, in fp32 (fp16/bf16 arguments are computed in fp32 and rounded back, fp64 in fp64).
On NVIDIA they lower to PTX approximations where one is accurate enough (`ex2.approx`,
`rsqrt.approx`, `sqrt.approx`; `tl.sqrt_rn` for the correctly rounded root) and to the
compiler's own range-reduced polynomial expansions elsewhere (`log`, `sin`, `cos`, `erf`:
`lowering/rules/math_approx.py`); on AMD to the ROCDL intrinsics and the same expansions.

**Extern functions.**  Triton can call a vendor library's device functions
(`tl.extra.cuda.libdevice.*`, or `tl.extern_elementwise` naming a bitcode library); tilework
has no extern calls yet and links no libdevice: functions beyond the list are written in the
language itself from these, as `tl.sigmoid` and the Philox generator of tutorial 04 are.  This
tutorial does that for three functions libdevice would give (tanh, softplus, and the
numerically stable log-sigmoid), checks every function against torch in float64, and compares
the throughput of the same source under Triton and of torch's own kernels.

    python docs/tutorials/07-math-functions.py
"""
import sys

import common
import torch

import tilework
import tilework.language as tl

FUNCTIONS = ("exp", "log", "sin", "sqrt", "rsqrt", "erf", "sigmoid", "tanh", "softplus",
             "logsigmoid")


@tilework.jit
def tanh(x):
    # 1 - 2 / (exp(2x) + 1): exact limits at +-inf, no inf / inf
    return 1.0 - 2.0 / (tl.exp(2.0 * x) + 1.0)


@tilework.jit
def softplus(x):
    # log(1 + exp(x)) without overflow: max(x, 0) + log(1 + exp(-|x|))
    return tl.maximum(x, 0.0) + tl.log(1.0 + tl.exp(-tl.abs(x)))


@tilework.jit
def math_kernel(x_ptr, out_ptr, n, FN: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=1.0)
    if FN == "exp":
        y = tl.exp(x)
    elif FN == "log":
        y = tl.log(tl.abs(x))
    elif FN == "sin":
        y = tl.sin(x)
    elif FN == "sqrt":
        y = tl.sqrt(tl.abs(x))
    elif FN == "rsqrt":
        y = tl.rsqrt(tl.abs(x))
    elif FN == "erf":
        y = tl.erf(x)
    elif FN == "sigmoid":
        y = tl.sigmoid(x)
    elif FN == "tanh":
        y = tanh(x)
    elif FN == "softplus":
        y = softplus(x)
    else:  # logsigmoid(x) = -softplus(-x)
        y = -softplus(-x)
    tl.store(out_ptr + offs, y, mask=mask)


def reference(fn, x):
    return {"exp": torch.exp, "log": lambda t: torch.log(t.abs()), "sin": torch.sin,
            "sqrt": lambda t: t.abs().sqrt(), "rsqrt": lambda t: t.abs().rsqrt(),
            "erf": torch.erf, "sigmoid": torch.sigmoid, "tanh": torch.tanh,
            "softplus": torch.nn.functional.softplus,
            "logsigmoid": torch.nn.functional.logsigmoid}[fn](x)


def run(fn, x, kernel=None):
    out = torch.empty_like(x)
    n = x.numel()
    (kernel or math_kernel)[((n + 1023) // 1024,)](x, out, n, FN=fn, BLOCK=1024)
    return out


def check(dev, n, tol):
    x = torch.randn(n, device=dev) * 4
    x[:4] = torch.tensor([30.0, -30.0, 1e-3, -1e-3])  # saturation and cancellation
    for fn in FUNCTIONS:
        got = run(fn, x)
        want = reference(fn, x.double())
        torch.testing.assert_close(got.double(), want, rtol=tol, atol=tol,
                                   msg=lambda m, fn=fn: f"{fn}: {m}")


def check_cpu():
    common.interpret(math_kernel)
    check("cpu", 3000, 2e-6)  # numpy's functions


def check_gpu():
    check("cuda", 1 << 20, 1e-5)  # the approximations: a few ulp


def benchmark():
    tri = common.triton_module(__file__)
    n = 1 << 26
    x = torch.randn(n, device="cuda")
    out = torch.empty_like(x)
    series = {"tilework": [], "Triton": [], "torch": []}
    for fn in FUNCTIONS:
        series["tilework"].append(8 * n / common.bench(
            lambda fn=fn: math_kernel[(n // 1024,)](x, out, n, FN=fn, BLOCK=1024)) / 1e6)
        series["Triton"].append(8 * n / common.bench(
            lambda fn=fn: tri.math_kernel[(n // 1024,)](x, out, n, FN=fn, BLOCK=1024)) / 1e6
            if tri else float("nan"))
        series["torch"].append(8 * n / common.bench(lambda fn=fn: reference(fn, x)) / 1e6)
    common.plot("07-math-functions", f"Math functions (fp32, {n} elements)", list(FUNCTIONS),
                series, "function", "GB/s", log_x=False)


if __name__ == "__main__":
    common.main(sys.modules[__name__])

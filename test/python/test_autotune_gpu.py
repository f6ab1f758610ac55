"""The autotuner, do_bench and the matmul examples on the GPU, against torch: every config
timed on the real arguments, the fastest kept, configs that cannot load skipped, in-place
outputs protected, the choice cached on disk; outputs poisoned before each run."""
import pytest

pytestmark = pytest.mark.gpu
torch = pytest.importorskip("torch")

import tilework  # noqa: E402
import tilework.language as tl  # noqa: E402
from tilework.runtime import bench as bench_mod  # noqa: E402
from tilework.testing import do_bench, do_bench_cudagraph  # noqa: E402

import fp8_matmul  # noqa: E402
import linear_activation  # noqa: E402
import matmul  # noqa: E402

# (rtol, atol per sqrt(K)): the output's rounding, and fp32 accumulation over K
TOL = {torch.float16: (1e-2, 0.01), torch.bfloat16: (2e-2, 0.02), torch.float32: (1e-2, 0.01)}


@tilework.jit
def axpy(x, y, out, n, a, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(out + offs, a * tl.load(x + offs, mask=m) + tl.load(y + offs, mask=m), mask=m)


def _axpy_call(n=1 << 22):
    x = torch.randn(n, device="cuda")
    y = torch.randn(n, device="cuda")
    out = torch.empty_like(x)
    return lambda: axpy[(triton_cdiv(n, 1024),)](x, y, out, n, 2.0, BLOCK=1024), (x, y, out)


def triton_cdiv(a, b):
    return (a + b - 1) // b


@pytest.mark.parametrize("torch_available", [True, False], ids=["torch", "cuda_bindings"])
def test_do_bench_modes(torch_available, monkeypatch):
    if not torch_available:  # the cuda.bindings path (events, a cuMemsetD32Async flush)
        monkeypatch.setattr(bench_mod, "_torch", lambda: None)
    fn, (x, y, out) = _axpy_call()
    ms = do_bench(fn)
    assert 0 < ms < 50
    q = do_bench(fn, quantiles=[0.2, 0.5, 0.8])
    assert len(q) == 3 and q[0] <= q[1] <= q[2]
    times = do_bench(fn, warmup=1, rep=5, return_mode="all")
    assert isinstance(times, list) and len(times) >= 1 and min(times) > 0
    assert do_bench(fn, return_mode="min") <= do_bench(fn, return_mode="max")
    torch.cuda.synchronize()
    torch.testing.assert_close(out, 2.0 * x + y)
    with pytest.raises(ValueError, match="return_mode must be one of"):
        do_bench(fn, return_mode="avg")


def test_do_bench_cudagraph_and_grad_to_none():
    fn, (x, y, out) = _axpy_call()
    w = torch.zeros(4, device="cuda", requires_grad=True)
    w.grad = torch.ones(4, device="cuda")
    ms = do_bench_cudagraph(fn, grad_to_none=[w])
    assert 0 < ms < 50 and w.grad is None
    # no L2 flush in the graph: back-to-back runs are not slower than flushed ones
    assert ms <= do_bench(fn, return_mode="median") * 1.5
    assert len(do_bench_cudagraph(fn, quantiles=[0.5, 0.9])) == 2
    torch.testing.assert_close(out, 2.0 * x + y)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float32], ids=str)
@pytest.mark.parametrize("m, n, k", [(512, 512, 512), (1000, 1000, 1000), (16, 8192, 1024),
                                     (257, 129, 65), (1, 1, 1)])
def test_autotuned_matmul(dtype, m, n, k):
    a = torch.randn(m, k, device="cuda", dtype=dtype)
    b = torch.randn(k, n, device="cuda", dtype=dtype)
    c = torch.full((m, n), float("nan"), device="cuda", dtype=dtype)
    matmul.matmul(a, b, c)
    rtol, atol = TOL[dtype]
    torch.testing.assert_close(c.float(), a.float() @ b.float(), rtol=rtol, atol=atol * k ** 0.5)
    kern = matmul.matmul_kernel
    assert kern.best_config in matmul.ALL_CONFIGS
    assert (m, n, k, str(dtype), str(dtype), str(dtype)) in kern.cache
    # the transposed view of b
    bt = b.t().contiguous().t()
    c2 = matmul.matmul(a, bt)
    torch.testing.assert_close(c2, c)


def test_tuning_times_every_config_once_per_key(monkeypatch):
    monkeypatch.setenv("TILEWORK_PRINT_AUTOTUNING", "1")
    timed = []

    def my_bench(call, quantiles):
        ms = do_bench(call, warmup=1, rep=3, quantiles=quantiles)
        timed.append(ms)
        return ms

    @tilework.autotune(configs=[tilework.Config({"BLOCK": b}, num_warps=w)
                                for b, w in ((256, 2), (1024, 4), (4096, 8))],
                       key=["n"], do_bench=my_bench)
    @tilework.jit
    def k(x, y, out, n, a, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        m = offs < n
        tl.store(out + offs, a * tl.load(x + offs, mask=m) + tl.load(y + offs, mask=m),
                 mask=m)
    n = 1 << 20
    x, y = torch.randn(n, device="cuda"), torch.randn(n, device="cuda")
    out = torch.full_like(x, float("nan"))

    def grid(meta):
        return (triton_cdiv(meta["n"], meta["BLOCK"]),)
    k[grid](x, y, out, n, 3.0)
    assert len(timed) == 3 and len(k.configs_timings) == 3
    torch.testing.assert_close(out, 3.0 * x + y)
    k[grid](x, y, out, n, 3.0)
    assert len(timed) == 3
    k[grid](x[:1000], y[:1000], out[:1000], 1000, 3.0)
    assert len(timed) == 6


@tilework.jit
def accumulate(x, out, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.atomic_add(out + (offs % 7), tl.load(x + offs, mask=m), mask=m)


@pytest.mark.parametrize("protect", ["reset_to_zero", "restore_value"])
def test_in_place_outputs_are_protected(protect):
    k = tilework.autotune(configs=[tilework.Config({"BLOCK": 128}),
                                   tilework.Config({"BLOCK": 512})],
                          key=["n"], **{protect: ["out"]}, warmup=1, rep=3)(accumulate)
    n = 100_000
    x = torch.randn(n, device="cuda")
    out = torch.zeros(7, device="cuda") if protect == "reset_to_zero" else \
        torch.full((7,), 5.0, device="cuda")
    start = out.clone()
    k[lambda meta: (triton_cdiv(n, meta["BLOCK"]),)](x, out, n)
    ref = start + torch.stack([x[i::7].sum() for i in range(7)])
    torch.testing.assert_close(out, ref, rtol=1e-4, atol=1e-3)


def test_config_out_of_shared_memory_is_skipped(capsys):
    """A tile whose operands need more shared memory than the GPU has is skipped."""
    big = tilework.Config({"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 512, "GROUP_M": 8})
    ok = tilework.Config({"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 32, "GROUP_M": 8})
    k = tilework.autotune(configs=[big, ok], key=["M", "N", "K"], warmup=1, rep=3)(
        matmul.matmul_kernel.fn)
    a = torch.randn(300, 300, device="cuda")
    b = torch.randn(300, 300, device="cuda")
    c = torch.full((300, 300), float("nan"), device="cuda")
    k[matmul.grid](a, b, c, 300, 300, 300, 300, 1, 300, 1, 300, 1)
    assert k.best_config == ok
    torch.testing.assert_close(c, a @ b, rtol=1e-2, atol=0.1)
    assert "skipped config BLOCK_M: 64, BLOCK_N: 64, BLOCK_K: 512" in capsys.readouterr().err


def test_cuda_graph_timing_and_disk_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("TILEWORK_CACHE_DIR", str(tmp_path))
    configs = matmul.CONFIGS[2:5]

    def make(**kw):
        return tilework.autotune(configs=configs, key=["M", "N", "K"], **kw)(
            matmul.matmul_kernel.fn)
    a = torch.randn(512, 256, device="cuda", dtype=torch.float16)
    b = torch.randn(256, 384, device="cuda", dtype=torch.float16)
    c = torch.empty(512, 384, device="cuda", dtype=torch.float16)
    args = (a, b, c, 512, 384, 256, 256, 1, 384, 1, 384, 1)
    k1 = make(use_cuda_graph=True, cache_results=True)
    k1[matmul.grid](*args)
    assert len(list((tmp_path / "autotune").rglob("*.json"))) == 1

    def no_bench(call, quantiles):
        raise AssertionError("timed although cached on disk")
    k2 = make(cache_results=True, do_bench=no_bench)
    c.fill_(float("nan"))
    k2[matmul.grid](*args)
    assert k2.best_config == k1.best_config
    torch.testing.assert_close(c.float(), a.float() @ b.float(), rtol=2e-2, atol=0.2)


@pytest.mark.parametrize("act", linear_activation.ACTIVATIONS)
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=str)
def test_linear_activation(act, dtype):
    x = torch.randn(777, 300, device="cuda", dtype=dtype)
    w = torch.randn(300, 513, device="cuda", dtype=dtype) / 16
    bias = torch.randn(513, device="cuda", dtype=dtype)
    y = linear_activation.linear(x, w, bias, act)
    z = x.float() @ w.float() + bias.float()
    ref = {"gelu": torch.nn.functional.gelu(z),
           "gelu_tanh": torch.nn.functional.gelu(z, approximate="tanh"),
           "silu": torch.nn.functional.silu(z), "none": z}[act]
    torch.testing.assert_close(y.float(), ref, rtol=3e-2, atol=5e-2)
    y2 = linear_activation.linear(x, w, None, act)
    assert not torch.equal(y2, y)


@pytest.mark.skipif(not hasattr(torch, "float8_e4m3fn"), reason="torch without float8")
@pytest.mark.parametrize("m, n, k", [(512, 640, 384), (100, 200, 300), (1, 257, 129)])
@pytest.mark.parametrize("out", [torch.bfloat16, torch.float16, torch.float32], ids=str)
def test_fp8_matmul(m, n, k, out):
    a8 = (torch.randn(m, k, device="cuda") * 4).to(torch.float8_e4m3fn)
    b8 = torch.randn(k, n, device="cuda").to(torch.float8_e4m3fn)
    sa = torch.tensor([0.25], device="cuda")
    sb = torch.tensor([3.0], device="cuda")
    c = fp8_matmul.fp8_matmul(a8, b8, sa, sb, out_dtype=out)
    ref = (a8.float() @ b8.float()) * 0.75
    # Hopper's fp8 accumulator keeps fewer bits than fp32 (max_num_imprecise_acc unset, as
    # Triton's sm_90 default): its bound, plus the output's rounding (test_fp8_matmul_gpu.py
    # checks exact results on small integers)
    mag = (a8.float().abs() @ b8.float().abs()) * 0.75
    rnd = {torch.bfloat16: 2.0**-8, torch.float16: 2.0**-11, torch.float32: 0}[out]
    err = (c.float() - ref).abs() - ref.abs() * rnd
    assert (err <= mag * 2.0**-9).all(), (err / mag).max().item()


def test_num_ctas_launch_on_hopper():
    if torch.cuda.get_device_capability()[0] < 9:
        pytest.skip("clusters need sm_90")
    n = 5000
    x, y = torch.randn(n, device="cuda"), torch.randn(n, device="cuda")
    out = torch.full_like(x, float("nan"))
    axpy[(triton_cdiv(n, 256),)](x, y, out, n, 2.0, BLOCK=256, num_ctas=2)
    torch.testing.assert_close(out, 2.0 * x + y)

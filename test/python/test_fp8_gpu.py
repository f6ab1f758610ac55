"""float8 on the GPU against torch's float8 dtypes and test_fp8.py's numpy references
(skipped without a GPU)."""
import numpy as np
import pytest

pytestmark = pytest.mark.gpu
torch = pytest.importorskip("torch")

from test_fp8 import k_copy, k_from_f32, k_to_f32  # noqa: E402
from test_fp8 import (BLOCK, DIV_OPS, MAXVAL, MIXED, MOD_OPS, N, RBLOCK, RN,  # noqa: E402
                      SAME_KIND, SENTINEL, TL, UINT, WIDTH, _reduce_inputs, check_bits,
                      check_reductions, k_arith, k_reduce8, random_bits, reference, values)
from test_fp8 import KINDS as TL_KINDS  # noqa: E402

KINDS = {"fp8e4nv": torch.float8_e4m3fn, "fp8e5": torch.float8_e5m2}


def cdiv(a, b):
    return (a + b - 1) // b


@pytest.mark.parametrize("kind", KINDS)
def test_every_pattern_decodes_like_torch(kind):
    bits = torch.arange(256, dtype=torch.uint8, device="cuda")
    x = bits.view(KINDS[kind])
    y = torch.full((256,), 7.0, device="cuda")
    k_to_f32[(1,)](x, y, 256, BLOCK=256)
    torch.cuda.synchronize()
    ref = x.float()
    nan = torch.isnan(ref)
    assert torch.equal(y[~nan], ref[~nan])
    assert torch.isnan(y[nan]).all()


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("n", [1000, 4096, 1])
def test_in_range_values_encode_like_torch(kind, n):
    big = 448.0 if kind == "fp8e4nv" else 57344.0
    x = (torch.rand(n, device="cuda") * 2 - 1) * big * torch.rand(n, device="cuda") ** 8
    y = torch.full((n,), 0x55, dtype=torch.uint8, device="cuda").view(KINDS[kind])
    k_from_f32[(cdiv(n, 256),)](x, y, n, BLOCK=256)
    torch.cuda.synchronize()
    assert torch.equal(y.view(torch.uint8), x.to(KINDS[kind]).view(torch.uint8))


@pytest.mark.parametrize("kind", KINDS)
def test_overflow_saturates(kind):
    big = 448.0 if kind == "fp8e4nv" else 57344.0
    x = torch.tensor([big * 4, -big * 4, 1e30], device="cuda")
    y = torch.zeros(3, dtype=torch.uint8, device="cuda").view(KINDS[kind])
    k_from_f32[(1,)](x, y, 3, BLOCK=4)
    torch.cuda.synchronize()
    assert y.float().tolist() == [big, -big, big]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("block", [128, 256, 1024])
def test_hardware_encode_keeps_the_expansion(kind, block):
    """sm_89+ encodes by cvt.rn.satfinite x2 (1, 2 or 4 values a thread: one cvt of (x, x), a
    pair, a packed word) plus fix-ups that assume satfinite saturates inf (PTX ISA): every
    boundary value and special, both signs, bit for bit the expansion's (test_fp8's reference,
    the interpreter's), where the hardware's cvt runs."""
    from test_fp8 import encode_inputs, k_f32_to_bits, ref_encode
    if torch.cuda.get_device_capability() < (8, 9):
        pytest.skip("cvt to fp8 needs sm_89+")
    x = encode_inputs(kind, 4000, seed=2)
    n = len(x)
    y = torch.zeros(n, dtype=torch.uint8, device="cuda")
    k_f32_to_bits[(cdiv(n, block),)](torch.from_numpy(x).cuda(), y, n, KIND=TL_KINDS[kind],
                                     BLOCK=block)
    torch.cuda.synchronize()
    got, ref = y.cpu().numpy(), ref_encode(x, kind)
    bad = np.nonzero(got != ref)[0]
    assert not len(bad), [(x[i], hex(got[i]), hex(ref[i])) for i in bad[:8]]


@pytest.mark.parametrize("kind", KINDS)
def test_masked_copy_moves_bytes(kind):
    n = 1000
    bits = torch.randint(0, 256, (n,), dtype=torch.uint8, device="cuda")
    y = torch.full((1024,), 0x55, dtype=torch.uint8, device="cuda")
    k_copy[(cdiv(n, 256),)](bits.view(KINDS[kind]), y.view(KINDS[kind]), n, BLOCK=256)
    torch.cuda.synchronize()
    assert torch.equal(y[:n], bits) and bool((y[n:] == 0x55).all())


# ---- arithmetic on float8 tiles (Triton's promotion; test_fp8.py has the rules) --------------

TORCH = {"fp8e4nv": torch.float8_e4m3fn, "fp8e5": torch.float8_e5m2, "fp16": torch.float16,
         "bf16": torch.bfloat16, "fp32": torch.float32, "fp64": torch.float64,
         "int32": torch.int32, "int1": torch.uint8}
SIGNED = {8: torch.uint8, 16: torch.int16, 32: torch.int32, 64: torch.int64}
NP_SIGNED = {8: np.uint8, 16: np.int16, 32: np.int32, 64: np.int64}


def _to_cuda(bits, t):
    """numpy bit patterns -> a CUDA tensor of dtype `t` holding them."""
    w = WIDTH[t]
    return torch.from_numpy(bits.view(NP_SIGNED[w]).copy()).view(TORCH[t]).cuda()


def _bits(tensor, t):
    return tensor.cpu().view(SIGNED[WIDTH[t]]).numpy().view(UINT[WIDTH[t]])


def _within_ulps(out, ref, rt, ulps=2):
    """fp32/fp64 values within `ulps` units in the last place (inf, NaN: equal kinds)."""
    o, r = values(out[:N], rt), values(ref[:N], rt)
    fin = np.isfinite(r)
    assert np.array_equal(np.isnan(o), np.isnan(r))
    assert np.array_equal(o[~fin & ~np.isnan(r)], r[~fin & ~np.isnan(r)])
    sp = np.spacing(np.abs(r[fin]).astype(np.float32 if rt == "fp32" else np.float64))
    assert (np.abs(o[fin] - r[fin]) <= ulps * sp.astype(np.float64)).all()


def _floordiv_within(out, xb, yb, xt, yt):
    """floor(x / y) with the quotient within 2 ulp (div.full.f32), as the GPU computes it."""
    x, y = values(xb, xt), values(yb, yt)
    with np.errstate(all="ignore"):
        q = (x / y).astype(np.float32)
        lo = np.floor(q - 2 * np.spacing(np.abs(q)))
        hi = np.floor(q + 2 * np.spacing(np.abs(q)))
    o = values(out[:N], "fp32")
    fin = np.isfinite(q)
    assert ((o[fin] >= lo[fin]) & (o[fin] <= hi[fin])).all()
    assert np.array_equal(np.isnan(o[~fin]), np.isnan(q[~fin]))


def _run_arith_gpu(op, xt, yt, rt, seed):
    rng = np.random.default_rng(seed)
    xb, yb = random_bits(rng, xt, N), random_bits(rng, yt, N)
    out = torch.full((N + 24,), SENTINEL, dtype=SIGNED[WIDTH[rt]], device="cuda").view(
        TORCH[rt])
    k_arith[(cdiv(N, BLOCK),)](_to_cuda(xb, xt), _to_cuda(yb, yt), out, N, OP=op, XT=TL[xt],
                               YT=TL[yt], RT=TL[rt], BLOCK=BLOCK)
    torch.cuda.synchronize()
    got = _bits(out, rt)
    assert (got[N:] == SENTINEL).all()  # the masked tail
    ref = reference(op, xt, yt, rt, xb, yb)
    if op == "floordiv":
        _floordiv_within(got, xb, yb, xt, yt)
    elif op in DIV_OPS and rt == "fp32":  # div.full.f32, as Triton: at most 2 ulp
        _within_ulps(got, ref, rt)
    else:
        check_bits(got, ref, rt)


# float `%` calls a device-library function (no library is linked): not run here
GPU_SAME_KIND = [(o, r) for o, r in SAME_KIND if o not in MOD_OPS]
GPU_MIXED = [c for c in MIXED if c[2] not in MOD_OPS]


@pytest.mark.parametrize("kind", TL_KINDS)
@pytest.mark.parametrize("op, result", GPU_SAME_KIND, ids=[o for o, _ in GPU_SAME_KIND])
def test_same_kind_arithmetic(kind, op, result):
    _run_arith_gpu(op, kind, kind, kind if result == "k" else result, seed=hash(op) % 2**32)


@pytest.mark.parametrize("xt, yt, op, rt", GPU_MIXED, ids=["-".join(c) for c in GPU_MIXED])
def test_mixed_arithmetic(xt, yt, op, rt):
    _run_arith_gpu(op, xt, yt, rt, seed=hash((xt, yt, op)) % 2**32)


@pytest.mark.parametrize("kind", TL_KINDS)
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_reductions(kind, seed):
    bits = _reduce_inputs(np.random.default_rng(seed), kind)
    x = torch.from_numpy(bits).cuda().view(KINDS[kind])
    # the kernel stores the float8 results' bits: uint8 outputs
    s8 = torch.full((1,), SENTINEL, dtype=torch.uint8, device="cuda")
    s32 = torch.full((1,), 7.0, device="cuda")
    mx = torch.full((1,), 7.0, device="cuda")
    mn = torch.full((1,), SENTINEL, dtype=torch.uint8, device="cuda")
    am = torch.full((1,), 77, dtype=torch.int32, device="cuda")
    cs = torch.full((RBLOCK,), SENTINEL, dtype=torch.uint8, device="cuda")
    k_reduce8[(1,)](x, s8, s32, mx, mn, am, cs, RN, KIND=TL_KINDS[kind], BIG=MAXVAL[kind],
                    BLOCK=RBLOCK)
    torch.cuda.synchronize()
    outs = tuple(t.cpu().numpy() for t in (s8, s32, mx, mn, am, cs))
    check_reductions(kind, bits, outs, False)

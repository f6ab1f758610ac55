"""Atomics on the GPU against torch and (where installed) Triton (skipped without a GPU)."""
import importlib.util
import os
import sys
import tempfile

import pytest

pytestmark = pytest.mark.gpu

torch = pytest.importorskip("torch")

import tilework  # noqa: E402
import tilework.language as tl  # noqa: E402

DT = {"int32": torch.int32, "int64": torch.int64, "fp32": torch.float32,
      "fp64": torch.float64, "fp16": torch.float16, "bf16": torch.bfloat16,
      "uint32": getattr(torch, "uint32", None), "uint64": getattr(torch, "uint64", None)}


def rand(n, dt, nonzero=True):
    t = DT[dt]
    if t.is_floating_point:
        x = (torch.randn(n, device="cuda") * 10).to(t)
        return torch.where(x == 0, torch.tensor(1.5, dtype=t, device="cuda"), x)
    info = torch.iinfo(t)
    x = torch.randint(max(info.min, -2**62), min(info.max, 2**62), (n,), device="cuda",
                      dtype=torch.int64).to(t)
    return torch.where(x == 0, torch.tensor(3, dtype=t, device="cuda"), x)


@tilework.jit
def rmw(x, y, old, n, OP: tl.constexpr, BLOCK: tl.constexpr, SEM: tl.constexpr,
        SCOPE: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    v = tl.load(y + offs, mask=m)
    o = getattr(tl, OP)(x + offs, v, mask=m, sem=SEM, scope=SCOPE)
    tl.store(old + offs, o, mask=m)


def ref(op, x, y):
    if op == "atomic_add":
        return x + y
    if op == "atomic_max":
        return torch.maximum(x, y)
    if op == "atomic_min":
        return torch.minimum(x, y)
    if op == "atomic_and":
        return x & y
    if op == "atomic_or":
        return x | y
    if op == "atomic_xor":
        return x ^ y
    return y.clone()


CASES = [("atomic_add", d) for d in ("int32", "int64", "fp32", "fp64")] + \
        [(op, d) for op in ("atomic_max", "atomic_min") for d in ("int32", "int64", "fp32", "fp64")] + \
        [(op, d) for op in ("atomic_and", "atomic_or", "atomic_xor") for d in ("int32", "int64")] + \
        [("atomic_xchg", d) for d in ("int32", "int64", "fp32", "fp64")]


@pytest.mark.parametrize("op, dt", CASES)
@pytest.mark.parametrize("n, block, warps", [(100_003, 1024, 4), (37, 32, 4), (5000, 256, 8)])
@pytest.mark.parametrize("sem, scope", [("acq_rel", "gpu"), ("relaxed", "cta"), ("release", "sys")])
def test_rmw_matches_torch(op, dt, n, block, warps, sem, scope):
    x, y = rand(n, dt), rand(n, dt)
    x0 = x.clone()
    old = torch.full_like(x, -777) if not x.is_floating_point() else torch.full_like(x, float("nan"))
    rmw[(triton_cdiv(n, block),)](x, y, old, n, OP=op, BLOCK=block, SEM=sem, SCOPE=scope,
                                  num_warps=warps)
    torch.cuda.synchronize()
    assert torch.equal(old, x0)
    assert torch.equal(x, ref(op, x0, y))


def triton_cdiv(a, b):
    return (a + b - 1) // b


@pytest.mark.parametrize("dt", ["fp16", "bf16"])
def test_half_add(dt):
    n = 4099
    x, y = rand(n, dt), rand(n, dt)
    x0, old = x.clone(), torch.full_like(x, float("nan"))
    rmw[(triton_cdiv(n, 512),)](x, y, old, n, OP="atomic_add", BLOCK=512, SEM="acq_rel",
                                SCOPE="gpu")
    torch.cuda.synchronize()
    assert torch.equal(old, x0)
    assert torch.equal(x, x0 + y)


@tilework.jit
def hist(bins, idx, old, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    o = tl.atomic_add(bins + tl.load(idx + offs, mask=m), 1, mask=m)
    tl.store(old + offs, o, mask=m)


def test_histogram_collisions():
    n, nb = 1_000_003, 97
    idx = torch.randint(0, nb, (n,), device="cuda", dtype=torch.int32)
    bins = torch.randint(1, 100, (nb,), device="cuda", dtype=torch.int32)
    b0, old = bins.clone(), torch.full((n,), -777, device="cuda", dtype=torch.int32)
    hist[(triton_cdiv(n, 1024),)](bins, idx, old, n, BLOCK=1024)
    torch.cuda.synchronize()
    counts = torch.bincount(idx.long(), minlength=nb).to(torch.int32)
    assert torch.equal(bins, b0 + counts)
    # the old values of each bin are exactly b0, b0 + 1, ..., b0 + count - 1 in some order
    order = torch.argsort(idx.long() * (2 * n) + (old.long() - b0[idx.long()].long()))
    got = old[order].long() - b0[idx[order].long()].long()
    start = torch.cumsum(counts.long(), 0) - counts.long()
    want = torch.arange(n, device="cuda") - start[idx[order].long()]
    assert torch.equal(got, want)


@tilework.jit
def counter(c, out):
    o = tl.atomic_add(c, 1)
    tl.store(out + tl.program_id(0), o)


@pytest.mark.parametrize("warps", [1, 4, 8])
def test_scalar_atomic_once_per_program_and_broadcast(warps):
    g = 4096
    c = torch.tensor([10], device="cuda", dtype=torch.int32)
    out = torch.full((g,), -1, device="cuda", dtype=torch.int32)
    counter[(g,)](c, out, num_warps=warps)
    torch.cuda.synchronize()
    assert c.item() == 10 + g
    assert torch.equal(torch.sort(out).values,
                       torch.arange(10, 10 + g, device="cuda", dtype=torch.int32))


@tilework.jit
def replicated(x, old, every, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    o = tl.atomic_add(x + offs, 1)
    tl.store(old + offs, o)
    tl.store(every + tl.program_id(0) * BLOCK + offs, o)


@pytest.mark.parametrize("block, warps", [(32, 4), (16, 8), (64, 4), (1, 4)])
def test_replicated_elements_apply_once(block, warps):
    """Tiles smaller than the threads: each element is added once, and every copy sees the
    owner's old value."""
    g = 50
    x = torch.zeros(block, device="cuda", dtype=torch.int32)
    old = torch.empty_like(x)
    every = torch.full((g * block,), -1, device="cuda", dtype=torch.int32)
    replicated[(g,)](x, old, every, BLOCK=block, num_warps=warps)
    torch.cuda.synchronize()
    assert torch.equal(x, torch.full_like(x, g))
    per = every.view(g, block)
    assert torch.equal(torch.sort(per, 0).values,
                       torch.arange(g, device="cuda", dtype=torch.int32)[:, None].expand(g, block))


@tilework.jit
def take(lock, winner):
    o = tl.atomic_cas(lock, 0, tl.program_id(0) + 1, sem="acquire")
    tl.store(winner + tl.program_id(0), o)


def test_cas_one_winner():
    g = 1000
    lock = torch.zeros(1, device="cuda", dtype=torch.int32)
    w = torch.full((g,), -1, device="cuda", dtype=torch.int32)
    take[(g,)](lock, w)
    torch.cuda.synchronize()
    assert (w == 0).sum().item() == 1
    assert lock.item() == int(torch.nonzero(w == 0)[0, 0]) + 1
    assert torch.all(w[w != 0] == lock.item())


@pytest.mark.parametrize("dt", ["fp32", "fp64"])
def test_float_max_min_mixed_signs_collide(dt):
    """Many lanes into few addresses: the result is the numeric max/min."""
    n, nb = 100_000, 13
    vals = rand(n, dt)
    idx = torch.randint(0, nb, (n,), device="cuda", dtype=torch.int32)

    @tilework.jit
    def k(out_max, out_min, v, idx, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        m = offs < n
        i = tl.load(idx + offs, mask=m)
        x = tl.load(v + offs, mask=m)
        tl.atomic_max(out_max + i, x, mask=m)
        tl.atomic_min(out_min + i, x, mask=m)

    big = 1e30
    mx = torch.full((nb,), -big, device="cuda", dtype=DT[dt])
    mn = torch.full((nb,), big, device="cuda", dtype=DT[dt])
    k[(triton_cdiv(n, 1024),)](mx, mn, vals, idx, n, BLOCK=1024)
    torch.cuda.synchronize()
    want_max = torch.full_like(mx, -big).scatter_reduce(0, idx.long(), vals, "amax")
    want_min = torch.full_like(mn, big).scatter_reduce(0, idx.long(), vals, "amin")
    assert torch.equal(mx, want_max) and torch.equal(mn, want_min)


# ---- against Triton ----------------------------------------------------------------------------

TRITON_SRC = '''
@jit
def k(x, y, old, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    v = tl.load(y + offs, mask=m)
    a = tl.atomic_max(x + offs, v, mask=m)
    b = tl.where(v > 0, tl.atomic_add(x + offs, v, mask=m & (v > 0)), 0.0)
    third = offs % 3 == 0
    c = tl.where(third, tl.atomic_xchg(x + offs, a + b, mask=m & third), 0.0)
    tl.store(old + offs, a + b + c, mask=m)
'''


def _module(src, header, name):
    d = tempfile.mkdtemp()
    path = os.path.join(d, f"{name}.py")
    with open(path, "w") as f:
        f.write(header + src)
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


def test_same_results_as_triton():
    triton = pytest.importorskip("triton")  # noqa: F841
    ours = _module(TRITON_SRC, "import tilework.language as tl\nfrom tilework import jit\n",
                   "tw_atomics_k").k
    theirs = _module(TRITON_SRC, "import triton.language as tl\nfrom triton import jit\n",
                     "triton_atomics_k").k
    n = 10_007
    x, y = rand(n, "fp32"), rand(n, "fp32")
    outs = []
    for fn in (ours, theirs):
        xx, old = x.clone(), torch.full_like(x, float("nan"))
        fn[(triton_cdiv(n, 512),)](xx, y, old, n, BLOCK=512)
        torch.cuda.synchronize()
        outs.append((xx, old))
    assert torch.equal(outs[0][0], outs[1][0])
    assert torch.equal(torch.nan_to_num(outs[0][1], 7.0), torch.nan_to_num(outs[1][1], 7.0))

"""float8 on the GPU against torch's float8 dtypes (skipped without a GPU)."""
import pytest

pytestmark = pytest.mark.gpu
torch = pytest.importorskip("torch")

from test_fp8 import k_copy, k_from_f32, k_to_f32  # noqa: E402

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
def test_masked_copy_moves_bytes(kind):
    n = 1000
    bits = torch.randint(0, 256, (n,), dtype=torch.uint8, device="cuda")
    y = torch.full((1024,), 0x55, dtype=torch.uint8, device="cuda")
    k_copy[(cdiv(n, 256),)](bits.view(KINDS[kind]), y.view(KINDS[kind]), n, BLOCK=256)
    torch.cuda.synchronize()
    assert torch.equal(y[:n], bits) and bool((y[n:] == 0x55).all())

"""examples/attention.py's forward routing, without a GPU: `attention_forward` takes
examples/attention_tma.py's descriptor kernel on an NVIDIA sm_90 target when q, k and v are
contiguous 16-byte-aligned fp16/bf16 torch tensors, under tilework (not Triton), unless
`tma=False` or TILEWORK_ATTENTION_TMA=0; else the pointer kernel.  The target is faked here
(torch CPU tensors stand in for GPU ones); the GPU side: test_attention_route_gpu.py.  Also
attention_tma's `warp_specialize="auto"`."""
import types

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import attention as A  # noqa: E402
import attention_tma as T  # noqa: E402

SM90 = types.SimpleNamespace(backend="cuda", arch=90, warp_size=32)
SM80 = types.SimpleNamespace(backend="cuda", arch=80, warp_size=32)
GFX942 = types.SimpleNamespace(backend="hip", arch="gfx942", warp_size=64)


def qkv(dtype=torch.float16, n=64, d=64, hk=2):
    g = torch.Generator().manual_seed(0)
    q = torch.randn(2, 4, n, d, generator=g).to(dtype)
    k, v = (torch.randn(2, hk, n, d, generator=g).to(dtype) for _ in range(2))
    return q, k, v


@pytest.fixture
def on(monkeypatch):
    """on(target): launch_target answers `target` for torch tensors."""
    monkeypatch.delenv(A.TMA_ENV, raising=False)

    def set_target(target):
        monkeypatch.setattr(A, "launch_target", lambda t: target)
    return set_target


def test_sm90_takes_tma(on):
    on(SM90)
    q, k, v = qkv()
    assert A.tma_forward_applies(q, k, v)
    assert A.forward_kernel(q, k, v) == "tma"
    assert A.forward_kernel(*qkv(torch.bfloat16, d=128)) == "tma"


@pytest.mark.parametrize("target", [None, SM80, GFX942])
def test_other_targets_keep_the_pointer_kernel(on, target):
    on(target)
    assert A.forward_kernel(*qkv()) == "pointer"


def test_numpy_keeps_the_pointer_kernel(on):
    on(SM90)
    q = np.ones((1, 2, 8, 16), np.float16)
    assert A.forward_kernel(q, q, q) == "pointer"


@pytest.mark.parametrize("dt", ["float8_e4m3fn", "float8_e5m2"])
def test_fp8_takes_tma_with_v_either_way(on, dt):
    on(SM90)
    q, k, v = qkv(getattr(torch, dt))
    assert A.forward_kernel(q, k, v) == "tma"
    vt = v.transpose(2, 3).contiguous().transpose(2, 3)  # (Triton's tutorial lays fp8 V so)
    assert A.forward_kernel(q, k, vt) == "tma"
    assert A.forward_kernel(q, k, v.to(torch.float16)) == "pointer"  # (mixed: refused below)


@pytest.mark.parametrize("target", [None, SM80])
def test_fp8_without_tma_is_refused(on, target):
    on(target)
    q, k, v = qkv(torch.float8_e4m3fn)
    with pytest.raises(ValueError, match="attention: fp8 inputs take the TMA forward only"):
        A.attention_forward(q, k, v, False, 1.0)
    on(SM90)
    with pytest.raises(ValueError, match="attention: fp8 inputs take the TMA forward only"):
        A.attention_forward(q, k, v, False, 1.0, tma=False)


def test_fp8_backward_is_refused():
    q, k, v = qkv(torch.float8_e5m2)
    with pytest.raises(ValueError, match="attention: the backward takes fp16, bf16 or fp32, "
                                         "not fp8"):
        A.attention_backward(q, k, v, q, q, None, False, 1.0)


def test_fp8_tma_inputs_must_be_one_torch_fp8_type():
    q, k, v = qkv(torch.float8_e4m3fn)
    with pytest.raises(ValueError, match="attention: fp8 inputs must be torch tensors of one "
                                         "fp8 type; got torch.float8_e4m3fn, torch.float16"):
        T.attention_forward(q, k.to(torch.float16), v, False, 1.0)


def test_fp8_v_is_read_transposed():
    """V's descriptor views (Z*H_KV*D, N'), N' = N rounded up to 16: V's own memory when laid
    out so, else a zero-padded copy; blocks [D, BLOCK_N] (the pre_hook's)."""
    q, k, v = qkv(torch.float8_e5m2, n=40)
    vt = T._transposed(v)
    assert vt.shape == (2, 2, 64, 48) and torch.equal(vt[..., :40].float(),
                                                      v.transpose(2, 3).float())
    assert not vt[..., 40:].float().any()
    q, k, v = qkv(torch.float8_e5m2, n=64)
    laid = v.transpose(2, 3).contiguous().transpose(2, 3)
    assert T._transposed(laid).data_ptr() == laid.data_ptr()
    d = T.TensorDescriptor(T._transposed(laid), [2 * 2 * 64, 64], [64, 1], [64, 8])
    nargs = {"BLOCK_M": 128, "BLOCK_N": 64, "HEAD_DIM": 64, "desc_q": d, "desc_k": d,
             "desc_v": d, "desc_o": d}
    T.set_block_shapes(nargs)
    assert d.block_shape == [64, 64] and T.v_transposed(d)


def test_inputs_tma_cannot_take(on):
    on(SM90)
    q, k, v = qkv()
    assert A.forward_kernel(q.float(), k.float(), v.float()) == "pointer"  # fp32
    assert A.forward_kernel(q, k.to(torch.bfloat16), v) == "pointer"  # mixed dtypes
    # not contiguous (a head-major view of a (Z, N, H, D) tensor)
    assert A.forward_kernel(q.transpose(1, 2).contiguous().transpose(1, 2), k, v) == "pointer"
    # data 2 bytes past a 16-byte boundary
    flat = torch.empty(q.numel() + 1, dtype=q.dtype)
    off = flat[1:].view(q.shape)
    assert off.data_ptr() % 16 == 2
    assert A.forward_kernel(off, k, v) == "pointer"
    assert A.forward_kernel(q, k[:, :, :, :1].squeeze(-1), v) == "pointer"  # not 4-D
    for d in (16, 32, 256):  # (D=256: no TMA config fits its shared memory)
        assert A.forward_kernel(*qkv(d=d)) == "pointer", d


def test_opt_outs(on, monkeypatch):
    on(SM90)
    q, k, v = qkv()
    assert A.forward_kernel(q, k, v, tma=False) == "pointer"
    monkeypatch.setenv(A.TMA_ENV, "0")
    assert A.forward_kernel(q, k, v) == "pointer"
    assert A.forward_kernel(q, k, v, tma=True) == "tma"  # (the argument wins)
    monkeypatch.setenv(A.TMA_ENV, "1")
    assert A.forward_kernel(q, k, v) == "tma"


def test_triton_runs_the_pointer_kernel(on, monkeypatch):
    """The benchmark's and tutorial 06's Triton run of this source (`import triton as
    tilework`) keeps the pointer forward: the same kernel source as tilework's pointer side."""
    on(SM90)
    monkeypatch.setattr(A, "tilework", types.SimpleNamespace(__name__="triton"))
    assert A.forward_kernel(*qkv()) == "pointer"


def test_route_calls_attention_tma(on, monkeypatch):
    """The routed call reaches attention_tma.attention_forward with the same arguments (its
    warp_specialize left "auto"), after this file's shape checks."""
    on(SM90)
    calls = []
    monkeypatch.setattr(T, "attention_forward",
                        lambda *a, **kw: calls.append((a, kw)) or ("o", "lse"))
    q, k, v = qkv()
    assert A.attention_forward(q, k, v, True, 0.5) == ("o", "lse")
    assert len(calls) == 1 and calls[0][0][3:] == (True, 0.5) and calls[0][1] == {}
    with pytest.raises(ValueError, match="q's 4 heads are not a multiple of k's 3"):
        A.attention_forward(q, *qkv(hk=3)[1:], False, 1.0)
    assert len(calls) == 1


def test_warp_specialize_is_tuned_from_ws_head_dim():
    """"auto" tunes warp-specialized configs only from WS_HEAD_DIM; True and False tune over
    those of that value alone."""
    fits = lambda d, ws: [c for c in T.FWD_TMA_CONFIGS  # noqa: E731
                          if T.config_fits(c, d) and c.kwargs["WARP_SPECIALIZE"] == ws]
    assert T.WS_HEAD_DIM == 128
    assert fits(64, True) == [] and fits(64, False) and fits(128, True) and fits(128, False)
    assert all(c.kwargs["WARP_SPECIALIZE"] for c in T.TUNERS[True].configs)
    assert not any(c.kwargs["WARP_SPECIALIZE"] for c in T.TUNERS[False].configs)
    assert T.TUNERS["auto"].configs == T.FWD_TMA_CONFIGS and T.attn_fwd_tma is T.TUNERS["auto"]


def test_warp_specialize_picks_the_tuner(monkeypatch):
    """"auto", True and False launch through their own autotuner; none passes
    WARP_SPECIALIZE (the config sets it)."""
    seen = []

    class Launcher:
        def __init__(self, name):
            self.name = name

        def __getitem__(self, grid):
            return lambda *a, **kw: seen.append((self.name, "WARP_SPECIALIZE" in kw))
    monkeypatch.setattr(T, "TUNERS", {w: Launcher(w) for w in ("auto", True, False)})
    monkeypatch.setattr(T, "TensorDescriptor", lambda *a: None)
    for d, ws in [(64, "auto"), (128, "auto"), (64, True), (128, False)]:
        q = np.ones((1, 2, 8, d), np.float16)
        T.attention_forward(q, q, q, False, 1.0, warp_specialize=ws)
    assert seen == [("auto", False), ("auto", False), (True, False), (False, False)]


def test_warp_specialize_rejects_others():
    q = np.ones((1, 2, 8, 16), np.float16)
    with pytest.raises(ValueError, match="attention: warp_specialize must be True, False or "
                                         "'auto'; got 'on'"):
        T.attention_forward(q, q, q, False, 1.0, warp_specialize="on")

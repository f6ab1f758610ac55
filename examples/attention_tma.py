"""FlashAttention forward through tensor descriptors (TMA on sm_90): the form Triton's fused
attention tutorial writes for Hopper.

    o, lse = attention_forward(q, k, v, causal, sm_scale)

q, o: (Z, H, N, D); k, v: (Z, H_KV, N, D) with H a multiple of H_KV.  fp16 or bf16 (or fp8
e4m3/e5m2 on sm_90, o then fp16, V read transposed: see `attention_forward`), D in
16..256 a power of two, any N.  lse is float32 (Z, H, N), the natural log of each row's
softmax denominator.  The tensors are contiguous torch tensors on the GPU or, with the kernel's
`interpret` set (TILEWORK_INTERPRET=1), numpy arrays.

Q, K, V and O are seen as 2-D (Z*H*N, D) tensors through host `TensorDescriptor`s whose block
shapes the autotuner's pre_hook sets per config ([BLOCK_M, D] for Q and O, [BLOCK_N, D] for K
and V).  One program per (BLOCK_M query rows, z*H + h): Q is loaded once; the key loop loads
K and V by descriptor at coordinates carried from one iteration to the next
(`offset_k += BLOCK_N`), so the compiler pipelines both into rings of num_stages slots.  The
key range is split as the tutorial's STAGE argument splits it: causal, the blocks left of the
diagonal (stage 1, no mask) then the diagonal ones (stage 2, the causal mask); non-causal,
the full blocks (stage 3, no mask) then a partial last one (stage 4, the sequence bound).  A
block reaching past N reads the next head's rows (or zeros past the tensor, TMA's padding);
the masks give them no weight, and rows past N are not stored (O then goes by masked
pointers: a descriptor store would write the next head's rows).

The key loop may be warp-specialized (`tl.range(..., warp_specialize=True)`: a producer warp
group issues the K and V copies).  `warp_specialize="auto"` (the default) lets the autotuner
choose at head dim >= 128 (on an H200, fp16, batch 4, 32 heads, it won at N >= 4096, +6..10%,
and lost at N <= 2048 to two plain programs an SM) and keeps it off below (-8..30% at D=64);
True or False forces it.

examples/attention.py's `attention_forward` takes this kernel on sm_90 (see its
`tma_forward_applies`) and its own pointer kernels otherwise and for the backward: o and lse
here are laid out and scaled as there.

The kernels use Triton's surface only: `benchmarks/attention.py` runs this same source under
Triton by swapping the import lines below.
"""
import tilework
import tilework.language as tl
from tilework.tools.tensor_descriptor import TensorDescriptor


@tilework.jit
def attn_fwd_tma_inner(acc, l_i, m_i, q, desc_k, desc_v, offset_kv, v_row, start_m, qk_scale,
                       offs_m, N_CTX, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                       STAGE: tl.constexpr, WARP_SPECIALIZE: tl.constexpr,
                       V_T: tl.constexpr):
    """Keys [lo, hi) of the stage in blocks of BLOCK_N; offset_kv: the K/V head's first row;
    V_T: desc_v views V transposed (fp8: wgmma takes an fp8 B operand only K-major), its head's
    rows from v_row."""
    if STAGE == 1:
        lo, hi = 0, start_m * BLOCK_M
    elif STAGE == 2:
        lo = tl.multiple_of(start_m * BLOCK_M, BLOCK_M)
        hi = tl.minimum((start_m + 1) * BLOCK_M, N_CTX)
    elif STAGE == 3:
        lo, hi = 0, (N_CTX // BLOCK_N) * BLOCK_N
    else:
        lo, hi = (N_CTX // BLOCK_N) * BLOCK_N, N_CTX
    offset_k = offset_kv + lo
    if V_T:
        offset_v = lo  # (a column of V^T)
    else:
        offset_v = offset_kv + lo
    for start_n in tl.range(lo, hi, BLOCK_N, warp_specialize=WARP_SPECIALIZE):
        start_n = tl.multiple_of(start_n, BLOCK_N)
        k = desc_k.load([offset_k, 0]).T
        qk = tl.dot(q, k)
        if STAGE == 1 or STAGE == 3:
            m_ij = tl.maximum(m_i, tl.max(qk, 1) * qk_scale)
            qk = qk * qk_scale - m_ij[:, None]
        else:
            offs_n = start_n + tl.arange(0, BLOCK_N)
            if STAGE == 2:
                keep = offs_m[:, None] >= offs_n[None, :]
            else:
                keep = offs_n[None, :] < N_CTX
            qk = qk * qk_scale + tl.where(keep, 0.0, float("-inf"))
            m_ij = tl.maximum(m_i, tl.max(qk, 1))
            qk = qk - m_ij[:, None]
        p = tl.math.exp2(qk)
        alpha = tl.math.exp2(m_i - m_ij)
        l_ij = tl.sum(p, 1)
        acc = acc * alpha[:, None]
        if V_T:
            v = desc_v.load([v_row, offset_v]).T
        else:
            v = desc_v.load([offset_v, 0])
        acc = tl.dot(p.to(v.dtype), v, acc)
        l_i = l_i * alpha + l_ij
        m_i = m_ij
        offset_k += BLOCK_N
        offset_v += BLOCK_N
    return acc, l_i, m_i


@tilework.jit
def attn_fwd_tma_kernel(sm_scale, LSE, O, desc_q, desc_k, desc_v, desc_o, H, GROUP, N_CTX,
                        HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                        CAUSAL: tl.constexpr, EVEN_N: tl.constexpr,
                        WARP_SPECIALIZE: tl.constexpr, V_T: tl.constexpr = False):
    start_m = tl.program_id(0)
    off_hz = tl.program_id(1)
    off_z = off_hz // H
    off_h = off_hz % H
    offset_q = off_hz * N_CTX  # (rows of the 2-D view: Z*H*N of them fit in an i32)
    kv_head = off_z * (H // GROUP) + off_h // GROUP
    offset_kv = kv_head * N_CTX
    v_row = kv_head * HEAD_DIM  # (V_T: the head's first row of V^T)
    qo_row = offset_q + start_m * BLOCK_M
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    m_i = tl.zeros([BLOCK_M], dtype=tl.float32) - float("inf")
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32)
    acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)
    qk_scale = sm_scale * 1.4426950408889634  # log2(e): exp2 below
    q = desc_q.load([qo_row, 0])
    if CAUSAL:
        acc, l_i, m_i = attn_fwd_tma_inner(acc, l_i, m_i, q, desc_k, desc_v, offset_kv,
                                           v_row, start_m, qk_scale, offs_m, N_CTX, BLOCK_M,
                                           BLOCK_N, 1, WARP_SPECIALIZE, V_T)
        acc, l_i, m_i = attn_fwd_tma_inner(acc, l_i, m_i, q, desc_k, desc_v, offset_kv,
                                           v_row, start_m, qk_scale, offs_m, N_CTX, BLOCK_M,
                                           BLOCK_N, 2, WARP_SPECIALIZE, V_T)
    else:
        acc, l_i, m_i = attn_fwd_tma_inner(acc, l_i, m_i, q, desc_k, desc_v, offset_kv,
                                           v_row, start_m, qk_scale, offs_m, N_CTX, BLOCK_M,
                                           BLOCK_N, 3, WARP_SPECIALIZE, V_T)
        if not EVEN_N:
            acc, l_i, m_i = attn_fwd_tma_inner(acc, l_i, m_i, q, desc_k, desc_v, offset_kv,
                                               v_row, start_m, qk_scale, offs_m, N_CTX,
                                               BLOCK_M, BLOCK_N, 4, WARP_SPECIALIZE, V_T)
    acc = acc / l_i[:, None]
    lse = (m_i + tl.math.log2(l_i)) * 0.6931471805599453
    lse_ptrs = LSE + off_hz.to(tl.int64) * N_CTX + offs_m
    if EVEN_N:
        desc_o.store([qo_row, 0], acc.to(desc_o.dtype))
        tl.store(lse_ptrs, lse)
    else:
        offs_d = tl.arange(0, HEAD_DIM)
        o_ptrs = O + (offset_q.to(tl.int64) + offs_m[:, None]) * HEAD_DIM + offs_d[None, :]
        tl.store(o_ptrs, acc.to(O.dtype.element_ty), mask=offs_m[:, None] < N_CTX)
        tl.store(lse_ptrs, lse, mask=offs_m < N_CTX)


def set_block_shapes(nargs):
    """The autotuner's pre_hook: each descriptor's block for this config."""
    m, n, d = nargs["BLOCK_M"], nargs["BLOCK_N"], nargs["HEAD_DIM"]
    nargs["desc_q"].block_shape = [m, d]
    nargs["desc_o"].block_shape = [m, d]
    nargs["desc_k"].block_shape = [n, d]
    nargs["desc_v"].block_shape = [d, n] if v_transposed(nargs["desc_v"]) else [n, d]


def is_fp8(t) -> bool:
    return "float8" in str(t.dtype)


def v_transposed(desc_v) -> bool:
    """Whether V's descriptor views it transposed, (Z*H_KV*D, N): fp8 (`attention_forward`
    lays it out so), whose wgmma B operand must be K-major."""
    return is_fp8(desc_v.base)


def tma_config(m, n, warps, stages, ws):
    return tilework.Config({"BLOCK_M": m, "BLOCK_N": n, "WARP_SPECIALIZE": ws},
                           num_warps=warps, num_stages=stages, pre_hook=set_block_shapes)


# as Triton's tutorial tunes Hopper (the first that fits is the default), plus 128x64 at two
# stages (96 KB of shared memory at D=128: two programs an SM, which hide each other's
# prologue and epilogue at short sequences: N=2048 D=128 0.53 -> 0.49 ms on an H200), and
# warp-specialized variants of the two best (a producer warp group issues the copies;
# WS_HEAD_DIM)
FWD_TMA_CONFIGS = [tma_config(m, n, w, s, False)
                   for (m, n, w, s) in [(128, 64, 8, 3), (128, 128, 8, 2), (128, 64, 8, 4),
                                        (128, 64, 4, 3), (128, 128, 8, 3), (128, 128, 4, 2),
                                        (128, 64, 8, 2)]] + \
    [tma_config(128, 128, 8, 2, True), tma_config(128, 64, 8, 3, True)]
# warp specialization is tuned at head dims from this one: below it the producer warp group
# lost at every shape measured (H200, D=64: -8..30%), so those configs are not timed
WS_HEAD_DIM = 128


def config_fits(config, head_dim) -> bool:
    """Q and the K and V rings in about 200 KB of shared memory; an fp32 [BLOCK_M, D]
    accumulator and [BLOCK_M, BLOCK_N] scores of at most 192 registers a thread; warp
    specialization only from WS_HEAD_DIM."""
    m, n, s = config.kwargs["BLOCK_M"], config.kwargs["BLOCK_N"], config.num_stages
    threads = 32 * config.num_warps
    if config.kwargs.get("WARP_SPECIALIZE") and head_dim < WS_HEAD_DIM:
        return False
    return 2 * head_dim * (m + 2 * n * s) <= 200 * 1024 and \
        (m * head_dim + m * n) // threads <= 192


def prune(configs, named_args, **kwargs):
    d = named_args.get("HEAD_DIM", kwargs.get("HEAD_DIM"))
    return [c for c in configs if config_fits(c, d)] or configs[-1:]


def even_n(args):
    return args["N_CTX"] % args["BLOCK_M"] == 0 and args["N_CTX"] % args["BLOCK_N"] == 0


def _tuned(configs):
    return tilework.autotune(configs=configs, key=["N_CTX", "HEAD_DIM", "CAUSAL"],
                             prune_configs_by={"early_config_prune": prune})(
        tilework.heuristics({"EVEN_N": even_n,
                             "V_T": lambda a: v_transposed(a["desc_v"])})(attn_fwd_tma_kernel))


# warp_specialize -> the autotuned forward over those configs ("auto": all of them)
TUNERS = {"auto": _tuned(FWD_TMA_CONFIGS),
          True: _tuned([c for c in FWD_TMA_CONFIGS if c.kwargs["WARP_SPECIALIZE"]]),
          False: _tuned([c for c in FWD_TMA_CONFIGS if not c.kwargs["WARP_SPECIALIZE"]])}
attn_fwd_tma = TUNERS["auto"]


def cdiv(a: int, b: int) -> int:
    return -(-a // b)


def _is_torch(x) -> bool:
    return type(x).__module__.startswith("torch")


def _empty(like, shape, float32=False, float16=False):
    if _is_torch(like):
        import torch
        return torch.empty(shape, device=like.device, dtype=torch.float32 if float32 else
                           torch.float16 if float16 else like.dtype)
    import numpy as np
    return np.empty(shape, np.float32 if float32 else like.dtype)


def _transposed(v):
    """V (Z, H_KV, N, D) as a contiguous (Z, H_KV, D, N') tensor, N' = N rounded up to 16:
    V's own memory where it is laid out so already (`v.transpose(2, 3)` contiguous, as
    Triton's tutorial prepares fp8 V), else a copy."""
    import torch
    Z, HKV, N, D = v.shape
    if v.transpose(2, 3).is_contiguous() and N % 16 == 0 and v.data_ptr() % 16 == 0:
        return v.transpose(2, 3)
    vt = torch.zeros((Z, HKV, D, cdiv(N, 16) * 16), device=v.device, dtype=v.dtype)
    vt[..., :N] = v.transpose(2, 3)
    return vt


def _contiguous(x):
    if _is_torch(x):
        return x.contiguous()
    import numpy as np
    return np.ascontiguousarray(x)


def attention_forward(q, k, v, causal, sm_scale, warp_specialize="auto"):
    """-> (o, lse): o like q (contiguous; fp16 for fp8 inputs), lse float32 (Z, H, N)
    (natural log).  fp8 (torch.float8_e4m3fn or float8_e5m2, sm_90 only): V is copied
    transposed first, as Triton's tutorial lays it out for fp8.
    warp_specialize: True or False forces the key loop's `tl.range(..., warp_specialize=...)`
    (a producer warp group issues the copies); "auto": the autotuner chooses (from head dim
    WS_HEAD_DIM; below it, off)."""
    if warp_specialize not in (True, False, "auto"):
        raise ValueError(f"attention: warp_specialize must be True, False or 'auto'; "
                         f"got {warp_specialize!r}")
    q, k = _contiguous(q), _contiguous(k)
    if not is_fp8(v):  # (fp8: V is read transposed, below)
        v = _contiguous(v)
    if len(q.shape) != 4 or len(k.shape) != 4 or k.shape != v.shape:
        raise ValueError(f"attention: q must be (Z, H, N, D) and k, v (Z, H_KV, N, D) alike; "
                         f"got {tuple(q.shape)}, {tuple(k.shape)}, {tuple(v.shape)}")
    Z, H, N, D = q.shape
    if k.shape[0] != Z or k.shape[2] != N or k.shape[3] != D or H % k.shape[1]:
        raise ValueError(f"attention: k and v {tuple(k.shape)} do not match q "
                         f"{tuple(q.shape)}")
    if D not in (16, 32, 64, 128, 256):
        raise ValueError(f"attention: head dim {D} is not one of 16, 32, 64, 128, 256")
    fp8 = is_fp8(q)
    if fp8 and not (_is_torch(q) and k.dtype == q.dtype and v.dtype == q.dtype):
        raise ValueError(f"attention: fp8 inputs must be torch tensors of one fp8 type; got "
                         f"{q.dtype}, {k.dtype}, {v.dtype}")
    o = _empty(q, q.shape, float16=fp8)
    lse = _empty(q, (Z, H, N), float32=True)
    dummy = [8, D]  # (the pre_hook sets the blocks per config)
    descs = [TensorDescriptor(t, [t.shape[0] * t.shape[1] * N, D], [D, 1], list(dummy))
             for t in (q, k, v, o)]
    if fp8:  # V as V^T, (Z*H_KV*D, N), rows padded to 16 bytes (TMA's stride rule)
        descs[2] = TensorDescriptor(_transposed(v), [v.shape[0] * v.shape[1] * D, N],
                                    [cdiv(N, 16) * 16, 1], [D, 8])

    def grid(meta):
        return (cdiv(N, meta["BLOCK_M"]), Z * H)

    TUNERS[warp_specialize][grid](float(sm_scale), lse, o, *descs, H, H // k.shape[1], N,
                                  HEAD_DIM=D, CAUSAL=bool(causal))
    return o, lse

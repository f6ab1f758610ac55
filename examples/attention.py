"""FlashAttention forward and backward (online softmax in base 2, fp32 accumulation).

    o, lse = attention_forward(q, k, v, causal, sm_scale)
    dq, dk, dv = attention_backward(q, k, v, o, do, lse, causal, sm_scale)

q, o, do: (Z, H, N, D); k, v: (Z, H_KV, N, D) with H a multiple of H_KV (grouped-query
attention: query head h reads key/value head h // (H // H_KV)).  fp16 or bf16, D in 16..256 a
power of two, any N (the last block is masked).  lse is float32 (Z, H, N), the natural log of
each row's softmax denominator (scores scaled by sm_scale).  The tensors may be torch tensors on
the GPU or, with the kernels' `interpret` set (TILEWORK_INTERPRET=1), numpy arrays; the last
dimension must be contiguous (other strides are passed).

The kernels use Triton's surface only: `benchmarks/attention.py` runs this same source under
Triton by swapping the two import lines below.

Forward (`attn_fwd`, autotuned `attn_fwd_kernel`): one program per (BLOCK_M query rows,
z*H + h).  The key loop is split so that only the blocks that need a mask pay for it.  Causal:
the diagonal blocks (`offs_m >= offs_n` and the sequence bound) first, then the keys below the
block's first row with no mask.  Non-causal: the full blocks with no mask, then the partial
last one under the sequence bound.  The first key block is peeled off the loops
(`attn_fwd_first`), so that the loop-carried row statistics and accumulator start in the dot's
register layouts.  On an NVIDIA sm_90 GPU `attention_forward` runs examples/attention_tma.py's
descriptor (TMA) forward instead, where its inputs allow (`tma_forward_applies`: contiguous
fp16/bf16, D 64 or 128; +1..17% over this kernel on an H200, fp16, batch 4, 32 heads, N 4096
and 16384); `tma=False` or TILEWORK_ATTENTION_TMA=0 keeps this one.
Backward: `attn_bwd_preprocess` (delta = rowsum(o * do)), `attn_bwd_dkdv` (one program per
BLOCK_N keys of one K/V head, looping over the query blocks of every query head of its group),
`attn_bwd_dq` (one program per BLOCK_M query rows, looping over key blocks).
"""
import os
import sys

import tilework
import tilework.language as tl

# (scores are scaled by sm_scale * log2(e) = 1.4426950408889634 and exponentiated with exp2;
# the kernels spell the constants out: a kernel may read only constexpr globals)

# ---- forward --------------------------------------------------------------------------------

@tilework.jit
def attn_fwd_inner(acc, l_i, m_i, q, k_base, v_base, stride_kn, stride_vn, offs_m,
                   lo, hi, N_CTX, qk_scale, HEAD_DIM: tl.constexpr, BLOCK_N: tl.constexpr,
                   MASK: tl.constexpr):
    """Keys [lo, hi) in blocks of BLOCK_N.  MASK 0: none; 1: the sequence bound; 2: causal
    (offs_m >= key) and the sequence bound.  The addresses are recomputed from the block's
    start each iteration: loop-carried pointer tiles would hold 64-bit registers per element."""
    offs_d = tl.arange(0, HEAD_DIM)
    for start_n in tl.range(lo, hi, BLOCK_N):
        offs_n = start_n + tl.arange(0, BLOCK_N)
        k_ptrs = k_base + offs_n[:, None] * stride_kn + offs_d[None, :]
        v_ptrs = v_base + offs_n[:, None] * stride_vn + offs_d[None, :]
        if MASK == 0:
            k = tl.load(k_ptrs)
        else:
            k = tl.load(k_ptrs, mask=offs_n[:, None] < N_CTX, other=0.0)
        qk = tl.dot(q, tl.trans(k))  # [BLOCK_M, D] @ [D, BLOCK_N]
        if MASK == 0:
            m_ij = tl.maximum(m_i, tl.max(qk, 1) * qk_scale)
            qk = qk * qk_scale - m_ij[:, None]
        else:
            keep = offs_n[None, :] < N_CTX
            if MASK == 2:
                keep = keep & (offs_m[:, None] >= offs_n[None, :])
            # an additive mask: the scores keep the dot's layout (the mask, made of aranges,
            # is recomputed in it); tl.where(keep, qk, ..) would move qk to keep's layout
            qk = qk * qk_scale + tl.where(keep, 0.0, float("-inf"))
            m_ij = tl.maximum(m_i, tl.max(qk, 1))
            qk = qk - m_ij[:, None]
        p = tl.exp2(qk)
        alpha = tl.exp2(m_i - m_ij)
        l_i = l_i * alpha + tl.sum(p, 1)
        acc = acc * alpha[:, None]
        if MASK == 0:
            v = tl.load(v_ptrs)
        else:
            v = tl.load(v_ptrs, mask=offs_n[:, None] < N_CTX, other=0.0)
        acc = tl.dot(p.to(v.dtype), v, acc)
        m_i = m_ij
    return acc, l_i, m_i


@tilework.jit
def attn_fwd_first(q, k_base, v_base, stride_kn, stride_vn, offs_m, start_n, N_CTX, qk_scale,
                   HEAD_DIM: tl.constexpr, BLOCK_N: tl.constexpr, MASK: tl.constexpr):
    """The first key block, peeled off the loops: -> (acc, l_i, m_i).  Started from the dot's
    results, the loop-carried statistics and accumulator keep the dot's layouts (started from
    constants, they took a blocked layout and moved through shared memory every iteration)."""
    offs_n = start_n + tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)
    k_ptrs = k_base + offs_n[:, None] * stride_kn + offs_d[None, :]
    v_ptrs = v_base + offs_n[:, None] * stride_vn + offs_d[None, :]
    if MASK == 0:
        k = tl.load(k_ptrs)
    else:
        k = tl.load(k_ptrs, mask=offs_n[:, None] < N_CTX, other=0.0)
    qk = tl.dot(q, tl.trans(k))
    if MASK == 0:
        m_i = tl.max(qk, 1) * qk_scale
        qk = qk * qk_scale - m_i[:, None]
    else:
        keep = offs_n[None, :] < N_CTX
        if MASK == 2:
            keep = keep & (offs_m[:, None] >= offs_n[None, :])
        # an additive mask: the scores keep the dot's layout (the mask, made of aranges,
        # is recomputed in it); tl.where(keep, qk, ..) would move qk to keep's layout
        qk = qk * qk_scale + tl.where(keep, 0.0, float("-inf"))
        m_i = tl.max(qk, 1)
        qk = qk - m_i[:, None]
    p = tl.exp2(qk)
    l_i = tl.sum(p, 1)
    if MASK == 0:
        v = tl.load(v_ptrs)
    else:
        v = tl.load(v_ptrs, mask=offs_n[:, None] < N_CTX, other=0.0)
    acc = tl.dot(p.to(v.dtype), v)
    return acc, l_i, m_i


@tilework.jit
def attn_fwd_kernel(Q, K, V, O, LSE, sm_scale,
                    stride_qz, stride_qh, stride_qn, stride_kz, stride_kh, stride_kn,
                    stride_vz, stride_vh, stride_vn, stride_oz, stride_oh, stride_on,
                    H, GROUP, N_CTX,
                    HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                    CAUSAL: tl.constexpr, EVEN_N: tl.constexpr):
    start_m = tl.program_id(0)
    off_hz = tl.program_id(1)
    off_z = off_hz // H
    off_h = off_hz % H
    off_hk = off_h // GROUP
    q_base = Q + off_z.to(tl.int64) * stride_qz + off_h.to(tl.int64) * stride_qh
    k_base = K + off_z.to(tl.int64) * stride_kz + off_hk.to(tl.int64) * stride_kh
    v_base = V + off_z.to(tl.int64) * stride_vz + off_hk.to(tl.int64) * stride_vh
    o_base = O + off_z.to(tl.int64) * stride_oz + off_h.to(tl.int64) * stride_oh
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_d = tl.arange(0, HEAD_DIM)
    q_ptrs = q_base + offs_m[:, None] * stride_qn + offs_d[None, :]
    if EVEN_N:
        q = tl.load(q_ptrs)
    else:
        q = tl.load(q_ptrs, mask=offs_m[:, None] < N_CTX, other=0.0)
    qk_scale = sm_scale * 1.4426950408889634
    # every row has a key in the first block processed (the diagonal one when causal)
    if CAUSAL:
        # the diagonal blocks under the causal mask, then the keys below this block's first
        # row with no mask (BLOCK_M % BLOCK_N == 0)
        lo = start_m * BLOCK_M
        acc, l_i, m_i = attn_fwd_first(q, k_base, v_base, stride_kn, stride_vn, offs_m, lo,
                                       N_CTX, qk_scale, HEAD_DIM, BLOCK_N, 2)
        hi = tl.minimum(lo + BLOCK_M, N_CTX)
        acc, l_i, m_i = attn_fwd_inner(acc, l_i, m_i, q, k_base, v_base, stride_kn, stride_vn,
                                       offs_m, lo + BLOCK_N, hi, N_CTX, qk_scale, HEAD_DIM,
                                       BLOCK_N, 2)
        acc, l_i, m_i = attn_fwd_inner(acc, l_i, m_i, q, k_base, v_base, stride_kn, stride_vn,
                                       offs_m, 0, lo, N_CTX, qk_scale, HEAD_DIM, BLOCK_N, 0)
    else:
        n_full = (N_CTX // BLOCK_N) * BLOCK_N
        acc, l_i, m_i = attn_fwd_first(q, k_base, v_base, stride_kn, stride_vn, offs_m, 0,
                                       N_CTX, qk_scale, HEAD_DIM, BLOCK_N, 0 if EVEN_N else 1)
        acc, l_i, m_i = attn_fwd_inner(acc, l_i, m_i, q, k_base, v_base, stride_kn, stride_vn,
                                       offs_m, BLOCK_N, n_full, N_CTX, qk_scale, HEAD_DIM,
                                       BLOCK_N, 0)
        if not EVEN_N:
            acc, l_i, m_i = attn_fwd_inner(acc, l_i, m_i, q, k_base, v_base, stride_kn,
                                           stride_vn, offs_m, tl.maximum(n_full, BLOCK_N),
                                           N_CTX, N_CTX, qk_scale, HEAD_DIM, BLOCK_N, 1)
    acc = acc / l_i[:, None]
    lse = (m_i + tl.log2(l_i)) * 0.6931471805599453
    o_ptrs = o_base + offs_m[:, None] * stride_on + offs_d[None, :]
    lse_ptrs = LSE + off_hz.to(tl.int64) * N_CTX + offs_m
    if EVEN_N:
        tl.store(o_ptrs, acc.to(O.dtype.element_ty))
        tl.store(lse_ptrs, lse)
    else:
        tl.store(o_ptrs, acc.to(O.dtype.element_ty), mask=offs_m[:, None] < N_CTX)
        tl.store(lse_ptrs, lse, mask=offs_m < N_CTX)


FWD_CONFIGS = [  # the first that fits a head dim is the default (no ptxas spills on sm_90a)
    tilework.Config({"BLOCK_M": 128, "BLOCK_N": 64}, num_warps=8, num_stages=3),
    tilework.Config({"BLOCK_M": 128, "BLOCK_N": 64}, num_warps=8, num_stages=2),
    tilework.Config({"BLOCK_M": 128, "BLOCK_N": 128}, num_warps=8, num_stages=2),
    tilework.Config({"BLOCK_M": 64, "BLOCK_N": 64}, num_warps=4, num_stages=3),
    tilework.Config({"BLOCK_M": 128, "BLOCK_N": 64}, num_warps=4, num_stages=3),
]

# AMD RDNA (32-lane waves, WMMA): a lane holds twice the tile elements of a 64-lane CDNA wave in
# at most 256 VGPRs, and every config above spills there (gfx1201, D=64, 128x64 with 8 waves: 612
# bytes of scratch).  These need no scratch on gfx1100 and gfx1201 up to D=64.
FWD_CONFIGS_RDNA = [
    tilework.Config({"BLOCK_M": 64, "BLOCK_N": 32}, num_warps=8, num_stages=3),
    tilework.Config({"BLOCK_M": 32, "BLOCK_N": 32}, num_warps=4, num_stages=3),
]


def is_rdna(target) -> bool:
    """Whether a target (`tilework.runtime.driver.active.get_current_target()`, or any object
    with `arch` and `warp_size`) is an AMD GPU with 32-lane waves."""
    return target is not None and str(target.arch).startswith("gfx") and target.warp_size == 32


def fwd_configs(target=None) -> list:
    """The forward configs to try on a target (None: NVIDIA or CDNA)."""
    return FWD_CONFIGS_RDNA if is_rdna(target) else FWD_CONFIGS


def fwd_config_fits(config, head_dim) -> bool:
    """Whether a forward config suits a head dim: q, and K and V per stage, in about 200 KB of
    shared memory; an fp32 [BLOCK_M, D] accumulator of at most 128 registers a thread."""
    m, n = config.kwargs["BLOCK_M"], config.kwargs["BLOCK_N"]
    smem = 2 * head_dim * (m + 2 * n * config.num_stages)
    acc_regs = m * head_dim // (32 * config.num_warps)
    return smem <= 200 * 1024 and acc_regs <= 128


def default_fwd_config(head_dim, target=None):
    return next(c for c in fwd_configs(target) if fwd_config_fits(c, head_dim))


def launch_target(tensor):
    """The current GPU's target when `tensor` lives on a GPU, else None (the interpreter)."""
    if getattr(getattr(tensor, "device", None), "type", None) != "cuda":
        return None
    return tilework.runtime.driver.active.get_current_target()


def prune_fwd(configs, named_args, **kwargs):
    head_dim = named_args.get("HEAD_DIM", kwargs.get("HEAD_DIM"))
    wanted = fwd_configs(launch_target(named_args.get("Q")))
    kept = [c for c in configs if c in wanted and fwd_config_fits(c, head_dim)]
    return kept or [c for c in configs if c in wanted][-1:]


def even_n(args):
    return args["N_CTX"] % args["BLOCK_M"] == 0 and args["N_CTX"] % args["BLOCK_N"] == 0


attn_fwd = tilework.autotune(configs=FWD_CONFIGS + FWD_CONFIGS_RDNA,
                             key=["N_CTX", "HEAD_DIM", "CAUSAL"],
                             prune_configs_by={"early_config_prune": prune_fwd})(
    tilework.heuristics({"EVEN_N": even_n})(attn_fwd_kernel))


# ---- backward -------------------------------------------------------------------------------

@tilework.jit
def attn_bwd_preprocess(O, DO, DELTA, stride_oz, stride_oh, stride_on, stride_dz, stride_dh,
                        stride_dn, H, N_CTX, HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr):
    """delta[z, h, m] = sum_d o * do (fp32)."""
    off_hz = tl.program_id(1)
    off_z = off_hz // H
    off_h = off_hz % H
    offs_m = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_d = tl.arange(0, HEAD_DIM)
    rows = offs_m[:, None] < N_CTX
    o = tl.load(O + off_z.to(tl.int64) * stride_oz + off_h.to(tl.int64) * stride_oh
                + offs_m[:, None] * stride_on + offs_d[None, :], mask=rows, other=0.0)
    do = tl.load(DO + off_z.to(tl.int64) * stride_dz + off_h.to(tl.int64) * stride_dh
                 + offs_m[:, None] * stride_dn + offs_d[None, :], mask=rows, other=0.0)
    delta = tl.sum(o.to(tl.float32) * do.to(tl.float32), 1)
    tl.store(DELTA + off_hz.to(tl.int64) * N_CTX + offs_m, delta, mask=offs_m < N_CTX)


@tilework.jit
def attn_bwd_dkdv_inner(dk, dv, k, v, q_base, do_base, lse_base, delta_base, stride_qn,
                        stride_dn, offs_n, lo, hi, N_CTX, qk_scale,
                        HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, MASK: tl.constexpr):
    """Query rows [lo, hi) in blocks of BLOCK_M against this program's keys.  MASK 0: none; 1:
    the sequence bound; 2: causal and the sequence bound."""
    offs_d = tl.arange(0, HEAD_DIM)
    for start_m in tl.range(lo, hi, BLOCK_M):
        offs_m = start_m + tl.arange(0, BLOCK_M)
        q_ptrs = q_base + offs_d[:, None] + offs_m[None, :] * stride_qn  # q^T: [D, BLOCK_M]
        do_ptrs = do_base + offs_m[:, None] * stride_dn + offs_d[None, :]
        if MASK == 0:
            qT = tl.load(q_ptrs)
            lse = tl.load(lse_base + offs_m)
            do = tl.load(do_ptrs)
            di = tl.load(delta_base + offs_m)
        else:
            qT = tl.load(q_ptrs, mask=offs_m[None, :] < N_CTX, other=0.0)
            lse = tl.load(lse_base + offs_m, mask=offs_m < N_CTX, other=0.0)
            do = tl.load(do_ptrs, mask=offs_m[:, None] < N_CTX, other=0.0)
            di = tl.load(delta_base + offs_m, mask=offs_m < N_CTX, other=0.0)
        qkT = tl.dot(k, qT)  # [BLOCK_N, BLOCK_M]
        sT = qkT * qk_scale - (lse * 1.4426950408889634)[None, :]
        if MASK != 0:  # additive, as in the forward (keeps the dot's layout)
            keep = offs_m[None, :] < N_CTX
            if MASK == 2:
                keep = keep & (offs_m[None, :] >= offs_n[:, None])
            sT = sT + tl.where(keep, 0.0, float("-inf"))
        pT = tl.exp2(sT)
        dv = tl.dot(pT.to(do.dtype), do, dv)
        dpT = tl.dot(v, tl.trans(do))  # [BLOCK_N, BLOCK_M]
        dsT = pT * (dpT - di[None, :])
        dk = tl.dot(dsT.to(qT.dtype), tl.trans(qT), dk)
    return dk, dv


@tilework.jit
def attn_bwd_dkdv(Q, K, V, DO, DK, DV, LSE, DELTA, sm_scale,
                  stride_qz, stride_qh, stride_qn, stride_kz, stride_kh, stride_kn,
                  stride_vz, stride_vh, stride_vn, stride_dz, stride_dh, stride_dn,
                  H, GROUP, N_CTX,
                  HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                  CAUSAL: tl.constexpr):
    """dK and dV of BLOCK_N keys of K/V head (z, hk); dk, dv share K's strides; the grid's
    second axis is z * H_KV + hk.  BLOCK_N % BLOCK_M == 0."""
    start_n = tl.program_id(0) * BLOCK_N
    off_hkz = tl.program_id(1)
    H_KV = H // GROUP
    off_z = off_hkz // H_KV
    off_hk = off_hkz % H_KV
    offs_n = start_n + tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)
    rows = offs_n[:, None] < N_CTX
    k_off = off_z.to(tl.int64) * stride_kz + off_hk.to(tl.int64) * stride_kh
    v_off = off_z.to(tl.int64) * stride_vz + off_hk.to(tl.int64) * stride_vh
    k = tl.load(K + k_off + offs_n[:, None] * stride_kn + offs_d[None, :], mask=rows, other=0.0)
    v = tl.load(V + v_off + offs_n[:, None] * stride_vn + offs_d[None, :], mask=rows, other=0.0)
    dk = tl.zeros([BLOCK_N, HEAD_DIM], dtype=tl.float32)
    dv = tl.zeros([BLOCK_N, HEAD_DIM], dtype=tl.float32)
    qk_scale = sm_scale * 1.4426950408889634
    m_full = (N_CTX // BLOCK_M) * BLOCK_M
    for g in range(0, GROUP):
        off_h = off_hk * GROUP + g
        q_base = Q + off_z.to(tl.int64) * stride_qz + off_h.to(tl.int64) * stride_qh
        do_base = DO + off_z.to(tl.int64) * stride_dz + off_h.to(tl.int64) * stride_dh
        row0 = (off_z * H + off_h).to(tl.int64) * N_CTX
        if CAUSAL:
            # the diagonal blocks, then the full blocks below them, then the partial last one
            dk, dv = attn_bwd_dkdv_inner(dk, dv, k, v, q_base, do_base, LSE + row0,
                                         DELTA + row0, stride_qn, stride_dn, offs_n, start_n,
                                         tl.minimum(start_n + BLOCK_N, N_CTX), N_CTX,
                                         qk_scale, HEAD_DIM, BLOCK_M, 2)
            lo = start_n + BLOCK_N
        else:
            lo = 0
        dk, dv = attn_bwd_dkdv_inner(dk, dv, k, v, q_base, do_base, LSE + row0, DELTA + row0,
                                     stride_qn, stride_dn, offs_n, lo, m_full, N_CTX, qk_scale,
                                     HEAD_DIM, BLOCK_M, 0)
        dk, dv = attn_bwd_dkdv_inner(dk, dv, k, v, q_base, do_base, LSE + row0, DELTA + row0,
                                     stride_qn, stride_dn, offs_n, tl.maximum(lo, m_full),
                                     N_CTX, N_CTX, qk_scale, HEAD_DIM, BLOCK_M, 1)
    dk = dk * sm_scale
    tl.store(DK + k_off + offs_n[:, None] * stride_kn + offs_d[None, :],
             dk.to(DK.dtype.element_ty), mask=rows)
    tl.store(DV + k_off + offs_n[:, None] * stride_kn + offs_d[None, :],
             dv.to(DV.dtype.element_ty), mask=rows)


@tilework.jit
def attn_bwd_dq_inner(dq, q, do, lse, di, k_base, v_base, stride_kn, stride_vn, offs_m,
                      lo, hi, N_CTX, qk_scale,
                      HEAD_DIM: tl.constexpr, BLOCK_N: tl.constexpr, MASK: tl.constexpr):
    """Keys [lo, hi) in blocks of BLOCK_N.  MASK as in attn_bwd_dkdv_inner."""
    offs_d = tl.arange(0, HEAD_DIM)
    for start_n in tl.range(lo, hi, BLOCK_N):
        offs_n = start_n + tl.arange(0, BLOCK_N)
        k_ptrs = k_base + offs_d[:, None] + offs_n[None, :] * stride_kn  # k^T: [D, BLOCK_N]
        v_ptrs = v_base + offs_d[:, None] + offs_n[None, :] * stride_vn  # v^T
        if MASK == 0:
            kT = tl.load(k_ptrs)
            vT = tl.load(v_ptrs)
        else:
            kT = tl.load(k_ptrs, mask=offs_n[None, :] < N_CTX, other=0.0)
            vT = tl.load(v_ptrs, mask=offs_n[None, :] < N_CTX, other=0.0)
        qk = tl.dot(q, kT)
        s = qk * qk_scale - lse[:, None]
        if MASK != 0:
            keep = offs_n[None, :] < N_CTX
            if MASK == 2:
                keep = keep & (offs_m[:, None] >= offs_n[None, :])
            s = s + tl.where(keep, 0.0, float("-inf"))
        p = tl.exp2(s)
        dp = tl.dot(do, vT)
        ds = p * (dp - di[:, None])
        dq = tl.dot(ds.to(kT.dtype), tl.trans(kT), dq)
    return dq


@tilework.jit
def attn_bwd_dq(Q, K, V, DO, DQ, LSE, DELTA, sm_scale,
                stride_qz, stride_qh, stride_qn, stride_kz, stride_kh, stride_kn,
                stride_vz, stride_vh, stride_vn, stride_dz, stride_dh, stride_dn,
                H, GROUP, N_CTX,
                HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                CAUSAL: tl.constexpr):
    """dQ of BLOCK_M query rows of head (z, h); dq shares Q's strides.  BLOCK_M % BLOCK_N
    == 0."""
    start_m = tl.program_id(0) * BLOCK_M
    off_hz = tl.program_id(1)
    off_z = off_hz // H
    off_h = off_hz % H
    off_hk = off_h // GROUP
    offs_m = start_m + tl.arange(0, BLOCK_M)
    offs_d = tl.arange(0, HEAD_DIM)
    rows = offs_m[:, None] < N_CTX
    q_off = off_z.to(tl.int64) * stride_qz + off_h.to(tl.int64) * stride_qh
    q = tl.load(Q + q_off + offs_m[:, None] * stride_qn + offs_d[None, :], mask=rows, other=0.0)
    do = tl.load(DO + off_z.to(tl.int64) * stride_dz + off_h.to(tl.int64) * stride_dh
                 + offs_m[:, None] * stride_dn + offs_d[None, :], mask=rows, other=0.0)
    row0 = off_hz.to(tl.int64) * N_CTX
    lse = tl.load(LSE + row0 + offs_m, mask=offs_m < N_CTX, other=0.0) * 1.4426950408889634
    di = tl.load(DELTA + row0 + offs_m, mask=offs_m < N_CTX, other=0.0)
    k_base = K + off_z.to(tl.int64) * stride_kz + off_hk.to(tl.int64) * stride_kh
    v_base = V + off_z.to(tl.int64) * stride_vz + off_hk.to(tl.int64) * stride_vh
    dq = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)
    qk_scale = sm_scale * 1.4426950408889634
    if CAUSAL:
        dq = attn_bwd_dq_inner(dq, q, do, lse, di, k_base, v_base, stride_kn, stride_vn, offs_m,
                               0, start_m, N_CTX, qk_scale, HEAD_DIM, BLOCK_N, 0)
        dq = attn_bwd_dq_inner(dq, q, do, lse, di, k_base, v_base, stride_kn, stride_vn, offs_m,
                               start_m, tl.minimum(start_m + BLOCK_M, N_CTX), N_CTX, qk_scale,
                               HEAD_DIM, BLOCK_N, 2)
    else:
        n_full = (N_CTX // BLOCK_N) * BLOCK_N
        dq = attn_bwd_dq_inner(dq, q, do, lse, di, k_base, v_base, stride_kn, stride_vn, offs_m,
                               0, n_full, N_CTX, qk_scale, HEAD_DIM, BLOCK_N, 0)
        dq = attn_bwd_dq_inner(dq, q, do, lse, di, k_base, v_base, stride_kn, stride_vn, offs_m,
                               n_full, N_CTX, N_CTX, qk_scale, HEAD_DIM, BLOCK_N, 1)
    dq = dq * sm_scale
    tl.store(DQ + q_off + offs_m[:, None] * stride_qn + offs_d[None, :],
             dq.to(DQ.dtype.element_ty), mask=rows)


def _bwd_config(block_m, block_n, warps, stages, max_head_dim):
    c = tilework.Config({"BLOCK_M": block_m, "BLOCK_N": block_n}, num_warps=warps,
                        num_stages=stages)
    c.max_head_dim = max_head_dim  # the largest D it is meant for (registers)
    return c


# dK/dV: BLOCK_N % BLOCK_M == 0; dQ: BLOCK_M % BLOCK_N == 0.  The first that suits a head dim
# is the default (and the interpreter's).
DKDV_CONFIGS = [
    _bwd_config(64, 64, 8, 2, 64),
    _bwd_config(32, 32, 4, 2, 128),
    _bwd_config(32, 64, 8, 2, 128),
    _bwd_config(16, 64, 8, 1, 256),  # D=256: wgmma (M=64 keys), still spills
]
DQ_CONFIGS = [
    _bwd_config(64, 64, 8, 2, 128),
    _bwd_config(64, 32, 4, 2, 64),
    _bwd_config(32, 32, 4, 2, 128),
    _bwd_config(64, 16, 8, 1, 256),  # D=256: wgmma (no spills since q, do are written once)
]


def prune_bwd(configs, named_args, **kwargs):
    head_dim = named_args.get("HEAD_DIM", kwargs.get("HEAD_DIM"))
    return [c for c in configs if head_dim <= c.max_head_dim] or configs[-1:]


def default_bwd_configs(head_dim):
    """(the dK/dV config, the dQ config) the autotuners start from for a head dim."""
    return (prune_bwd(DKDV_CONFIGS, {"HEAD_DIM": head_dim})[0],
            prune_bwd(DQ_CONFIGS, {"HEAD_DIM": head_dim})[0])


attn_bwd_dkdv_tuned = tilework.autotune(configs=DKDV_CONFIGS, key=["N_CTX", "HEAD_DIM", "CAUSAL"],
                                        prune_configs_by={"early_config_prune": prune_bwd})(
    attn_bwd_dkdv)
attn_bwd_dq_tuned = tilework.autotune(configs=DQ_CONFIGS, key=["N_CTX", "HEAD_DIM", "CAUSAL"],
                                      prune_configs_by={"early_config_prune": prune_bwd})(
    attn_bwd_dq)


# ---- host API -------------------------------------------------------------------------------

def cdiv(a: int, b: int) -> int:
    return -(-a // b)  # (tl.cdiv is a kernel builtin under Triton, not a host function)


def _is_torch(x) -> bool:
    return type(x).__module__.startswith("torch")


def _strides(x):
    """Element strides of a torch tensor or a numpy array."""
    if _is_torch(x):
        return tuple(x.stride())
    return tuple(s // x.itemsize for s in x.strides)


def _last_contiguous(x):
    if _strides(x)[-1] == 1:
        return x
    return x.contiguous() if _is_torch(x) else x.copy(order="C")


def _contiguous(x):
    if _is_torch(x):
        return x.contiguous()
    import numpy as np
    return np.ascontiguousarray(x)


def _empty(like, shape, float32=False):
    if _is_torch(like):
        import torch
        return torch.empty(shape, device=like.device,
                           dtype=torch.float32 if float32 else like.dtype)
    import numpy as np
    return np.empty(shape, np.float32 if float32 else like.dtype)


def _check(q, k, v):
    if len(q.shape) != 4 or len(k.shape) != 4 or k.shape != v.shape:
        raise ValueError(f"attention: q must be (Z, H, N, D) and k, v (Z, H_KV, N, D) alike; "
                         f"got {tuple(q.shape)}, {tuple(k.shape)}, {tuple(v.shape)}")
    Z, H, N, D = q.shape
    if k.shape[0] != Z or k.shape[2] != N or k.shape[3] != D:
        raise ValueError(f"attention: k and v {tuple(k.shape)} do not match q "
                         f"{tuple(q.shape)} in Z, N or D")
    if H % k.shape[1]:
        raise ValueError(f"attention: q's {H} heads are not a multiple of k's {k.shape[1]}")
    if D not in (16, 32, 64, 128, 256):
        raise ValueError(f"attention: head dim {D} is not one of 16, 32, 64, 128, 256")
    return Z, H, N, D, H // k.shape[1]


TMA_ENV = "TILEWORK_ATTENTION_TMA"  # "0": attention_forward keeps the pointer kernel
# the head dims routed to attention_tma: its configs fit them (none fits D=256's shared
# memory) and they are the ones measured and tested on the GPU
TMA_HEAD_DIMS = (64, 128)


def tma_forward_applies(q, k, v) -> bool:
    """Whether examples/attention_tma.py's descriptor (TMA) forward can run these inputs:
    under tilework (this source run by Triton keeps its pointer kernel, the benchmark's
    "same source"), on an NVIDIA sm_90 GPU, q, k and v contiguous fp16 or bf16 tensors (or
    all one fp8 type, V then contiguous or laid out transposed) with
    16-byte-aligned data (TMA's rule for a base and its row strides: D * 2 bytes is always a
    multiple of 16 here), a head dim in TMA_HEAD_DIMS, Z * H * N rows in an i32 (the
    kernel's row coordinates)."""
    if tilework.__name__ != "tilework" or not _is_torch(q):
        return False
    target = launch_target(q)
    if target is None or target.backend != "cuda" or target.arch != 90:
        return False
    fp8 = _is_fp8(q)
    allowed = _tma_dtypes(fp8)
    # (fp8: V is read as a (Z*H_KV*D, N) view of its memory when laid out transposed with
    # rows of 16-byte multiples, else through a copy of that layout)
    ts = (q, k) if fp8 else (q, k, v)
    return all(t.dtype in allowed and t.dtype == q.dtype and t.is_contiguous() and
               t.data_ptr() % 16 == 0 and t.stride(2) * t.element_size() % 16 == 0
               for t in ts) and v.dtype == q.dtype and \
        (v.is_contiguous() or fp8 and v.transpose(2, 3).is_contiguous()) and \
        q.shape[3] in TMA_HEAD_DIMS and q.shape[0] * q.shape[1] * q.shape[2] < 2 ** 31


_TMA_DTYPES = {}  # fp8 -> the torch dtypes the TMA forward takes


def _tma_dtypes(fp8: bool) -> tuple:
    dts = _TMA_DTYPES.get(fp8)
    if dts is None:
        import torch
        dts = _TMA_DTYPES[fp8] = (getattr(torch, "float8_e4m3fn", None),
                                  getattr(torch, "float8_e5m2", None)) if fp8 else \
            (torch.float16, torch.bfloat16)
    return dts


def _is_fp8(t) -> bool:
    return "float8" in str(getattr(t, "dtype", ""))


def _tma_wanted(tma) -> bool:
    if tma is None:
        return os.environ.get(TMA_ENV, "1") != "0"
    return bool(tma)


def forward_kernel(q, k, v, tma=None) -> str:
    """Which forward `attention_forward(q, k, v, ..., tma=tma)` runs: "tma" or "pointer"."""
    if _tma_wanted(tma) and all(len(t.shape) == 4 for t in (q, k, v)) and \
            tma_forward_applies(q, k, v):
        return "tma"
    return "pointer"


_TMA_MODULE = []  # (attention_tma, once imported: a routed call asks every time)


def _attention_tma():
    """examples/attention_tma.py, imported by name from this file's folder (one module object
    with the tests and the benchmark, which put the folder on sys.path too)."""
    if not _TMA_MODULE:
        folder = os.path.dirname(os.path.abspath(__file__))
        if folder not in sys.path:
            sys.path.append(folder)
        import attention_tma
        _TMA_MODULE.append(attention_tma)
    return _TMA_MODULE[0]


def attention_forward(q, k, v, causal, sm_scale, tma=None):
    """-> (o, lse): o like q, lse float32 (Z, H, N) (natural log).  On sm_90 (where
    `tma_forward_applies`) the forward is examples/attention_tma.py's descriptor kernel (its
    key loop warp-specialized where its autotuner finds it faster), which writes o and lse as
    the pointer kernel does (the backward reads them alike).  tma=False, or the environment variable
    TILEWORK_ATTENTION_TMA=0 when tma is None, keeps the pointer kernel everywhere; tma=True
    takes the TMA kernel where it applies whatever the variable says."""
    if forward_kernel(q, k, v, tma) == "tma":
        _check(q, k, v)  # (this file's messages)
        return _attention_tma().attention_forward(q, k, v, causal, sm_scale)
    if _is_fp8(q) or _is_fp8(k) or _is_fp8(v):
        raise ValueError("attention: fp8 inputs take the TMA forward only (an NVIDIA sm_90 GPU, "
                         "q, k, v of one fp8 type, head dim 64 or 128, 16-byte aligned)")
    q, k, v = (_last_contiguous(t) for t in (q, k, v))
    Z, H, N, D, group = _check(q, k, v)
    o = _empty(q, q.shape)
    lse = _empty(q, (Z, H, N), float32=True)

    def grid(meta):
        return (cdiv(N, meta["BLOCK_M"]), Z * H)

    attn_fwd[grid](q, k, v, o, lse, float(sm_scale), *_strides(q)[:3], *_strides(k)[:3],
                   *_strides(v)[:3], *_strides(o)[:3], H, group, N, HEAD_DIM=D,
                   CAUSAL=bool(causal))
    return o, lse


def attention_backward(q, k, v, o, do, lse, causal, sm_scale, blocks=None):
    """-> (dq, dk, dv) like q, k, v.  The dK/dV and dQ kernels are autotuned; `blocks`
    (BLOCK_M1, BLOCK_N1, BLOCK_M2, BLOCK_N2) runs them untuned with those blocks instead."""
    if any(_is_fp8(t) for t in (q, k, v, o, do)):
        raise ValueError("attention: the backward takes fp16, bf16 or fp32, not fp8")
    # dq, dk, dv are made contiguous and share q's and k's strides (v's equal k's)
    q, k, v = (_contiguous(t) for t in (q, k, v))
    o, do = (_last_contiguous(t) for t in (o, do))
    Z, H, N, D, group = _check(q, k, v)
    lse = _contiguous(lse)
    delta = _empty(q, (Z, H, N), float32=True)
    attn_bwd_preprocess[(cdiv(N, 64), Z * H)](o, do, delta, *_strides(o)[:3],
                                              *_strides(do)[:3], H, N, HEAD_DIM=D, BLOCK_M=64)
    dq, dk, dv = _empty(q, q.shape), _empty(k, k.shape), _empty(v, v.shape)
    args = (*_strides(q)[:3], *_strides(k)[:3], *_strides(v)[:3], *_strides(do)[:3],
            H, group, N)
    sm_scale = float(sm_scale)
    causal = bool(causal)
    if blocks is None:
        attn_bwd_dkdv_tuned[lambda meta: (cdiv(N, meta["BLOCK_N"]), Z * (H // group))](
            q, k, v, do, dk, dv, lse, delta, sm_scale, *args, HEAD_DIM=D, CAUSAL=causal)
        attn_bwd_dq_tuned[lambda meta: (cdiv(N, meta["BLOCK_M"]), Z * H)](
            q, k, v, do, dq, lse, delta, sm_scale, *args, HEAD_DIM=D, CAUSAL=causal)
    else:
        m1, n1, m2, n2 = blocks
        attn_bwd_dkdv[(cdiv(N, n1), Z * (H // group))](
            q, k, v, do, dk, dv, lse, delta, sm_scale, *args, HEAD_DIM=D, BLOCK_M=m1,
            BLOCK_N=n1, CAUSAL=causal)
        attn_bwd_dq[(cdiv(N, m2), Z * H)](
            q, k, v, do, dq, lse, delta, sm_scale, *args, HEAD_DIM=D, BLOCK_M=m2, BLOCK_N=n2,
            CAUSAL=causal)
    return dq, dk, dv

"""Kernels shared by the TMA tests (compile-only: test_tma.py; on the GPU: test_tma_gpu.py)."""
import tilework
import tilework.language as tl


@tilework.jit
def desc_matmul(a_desc, b_desc, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr,
                BK: tl.constexpr):
    """C = A @ B with A and B read through tensor descriptors (TMA on sm_90)."""
    pm, pn = tl.program_id(0), tl.program_id(1)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BK)):
        a = a_desc.load([pm * BM, k * BK])
        b = b_desc.load([k * BK, pn * BN])
        acc = tl.dot(a, b, acc)
    rm = pm * BM + tl.arange(0, BM)
    rn = pn * BN + tl.arange(0, BN)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc,
             mask=(rm[:, None] < M) & (rn[None, :] < N))


@tilework.jit
def desc_matmul_store(a_desc, b_desc, c_desc, M, N, K, BM: tl.constexpr, BN: tl.constexpr,
                      BK: tl.constexpr):
    """C = A @ B with A, B and C through tensor descriptors: TMA loads, and with `tma_store`
    the TMA-store epilogue (C's block clipped at M and N by the hardware)."""
    pm, pn = tl.program_id(0), tl.program_id(1)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BK)):
        a = a_desc.load([pm * BM, k * BK])
        b = b_desc.load([k * BK, pn * BN])
        acc = tl.dot(a, b, acc)
    c_desc.store([pm * BM, pn * BN], acc.to(c_desc.dtype))


@tilework.jit
def ptr_matmul_desc_store(a_ptr, b_ptr, c_desc, M, N, K, BM: tl.constexpr, BN: tl.constexpr,
                          BK: tl.constexpr):
    """C = A @ B (row-major A, B by pointers) stored through a tensor descriptor: the epilogue
    of desc_matmul_store without TMA loads (which the SIMT emulator does not model)."""
    pm, pn = tl.program_id(0), tl.program_id(1)
    rm = pm * BM + tl.arange(0, BM)
    rn = pn * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BK)):
        kk = k * BK + rk
        a = tl.load(a_ptr + rm[:, None] * K + kk[None, :],
                    mask=(rm[:, None] < M) & (kk[None, :] < K), other=0.0)
        b = tl.load(b_ptr + kk[:, None] * N + rn[None, :],
                    mask=(kk[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc)
    c_desc.store([pm * BM, pn * BN], acc.to(c_desc.dtype))


@tilework.jit
def store_block(x, o_desc, R0: tl.constexpr, C0: tl.constexpr, BM: tl.constexpr,
                BN: tl.constexpr):
    """o's block at (R0 + pid0 * BM, C0 + pid1 * BN) = 2 * x's block (pid0, pid1) (x holds
    the blocks side by side, row-major).  The offsets are constexprs: the TMA store needs the
    inner one a known multiple of 16 bytes and both known >= 0 (R0, C0 >= 0); otherwise (a
    negative R0 or C0: boxes partly before the start) the block-pointer store."""
    pm, pn = tl.program_id(0), tl.program_id(1)
    rm = pm * BM + tl.arange(0, BM)
    rn = pn * BN + tl.arange(0, BN)
    v = tl.load(x + rm[:, None] * (BN * tl.num_programs(1)) + rn[None, :])
    o_desc.store([R0 + pm * BM, C0 + pn * BN], v.to(tl.float32) * 2)  # (cast back on store)


@tilework.jit
def store_block_rt(x, o_desc, r0, BM: tl.constexpr, BN: tl.constexpr):
    """store_block with a runtime row offset (of unknown sign: always the block-pointer
    store)."""
    pm, pn = tl.program_id(0), tl.program_id(1)
    rm = pm * BM + tl.arange(0, BM)
    rn = pn * BN + tl.arange(0, BN)
    v = tl.load(x + rm[:, None] * (BN * tl.num_programs(1)) + rn[None, :])
    o_desc.store([r0 + pm * BM, pn * BN], v.to(tl.float32) * 2)


@tilework.jit
def store_block3d(x, o_desc, R0: tl.constexpr, C1: tl.constexpr, B0: tl.constexpr,
                  B1: tl.constexpr, B2: tl.constexpr):
    """o's 3-D block at (R0 + pid * B0, C1, 0) = x's block pid + 1."""
    p = tl.program_id(0)
    i = p * B0 + tl.arange(0, B0)
    j = tl.arange(0, B1)
    k = tl.arange(0, B2)
    v = tl.load(x + i[:, None, None] * (B1 * B2) + j[None, :, None] * B2 + k[None, None, :])
    o_desc.store([R0 + p * B0, C1, 0], v + 1)


@tilework.jit
def store_loop(x, o_desc, n, BM: tl.constexpr, BN: tl.constexpr):
    """o's blocks (i, 0) = x + i for i < n: one TMA store per iteration, each reusing the last
    one's shared buffer (the barrier between its copy's wait and the next writes)."""
    rm = tl.arange(0, BM)
    rn = tl.arange(0, BN)
    v = tl.load(x + rm[:, None] * BN + rn[None, :]).to(tl.float32)
    for i in range(n):
        o_desc.store([i * BM, 0], v + i)

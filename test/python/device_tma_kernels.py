"""Kernels with descriptors made in the kernel (`tl.make_tensor_descriptor`), shared by the
compile-only tests (test_device_tma.py) and the GPU ones (test_device_tma_gpu.py): on sm_90a
their loads copy by TMA from a tensor map each program writes in global scratch."""
import tilework
import tilework.language as tl


@tilework.jit
def dev_matmul(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_bk, stride_cm,
               BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, GROUP_M: tl.constexpr):
    """C = A @ B with A [M, K], B [K, N] and C [M, N] described in the kernel (Triton
    tutorial 09's device-descriptor matmul, grouped program order): TMA loads of A and B,
    C stored through its descriptor (the block-pointer store: masked at M and N)."""
    pid = tl.program_id(0)
    num_m = tl.cdiv(M, BM)
    num_n = tl.cdiv(N, BN)
    per_group = GROUP_M * num_n
    first_m = (pid // per_group) * GROUP_M
    group_m = min(num_m - first_m, GROUP_M)
    pid_m = first_m + (pid % per_group) % group_m
    pid_n = (pid % per_group) // group_m
    a_desc = tl.make_tensor_descriptor(a_ptr, shape=[M, K], strides=[stride_am, 1],
                                       block_shape=[BM, BK])
    b_desc = tl.make_tensor_descriptor(b_ptr, shape=[K, N], strides=[stride_bk, 1],
                                       block_shape=[BK, BN])
    c_desc = tl.make_tensor_descriptor(c_ptr, shape=[M, N], strides=[stride_cm, 1],
                                       block_shape=[BM, BN])
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BK)):
        a = a_desc.load([pid_m * BM, k * BK])
        b = b_desc.load([k * BK, pid_n * BN])
        acc = tl.dot(a, b, acc)
    c_desc.store([pid_m * BM, pid_n * BN], acc.to(c_desc.dtype))


@tilework.jit
def dev_window(a_ptr, out, R, C, stride_a, r0, BM: tl.constexpr, BN: tl.constexpr):
    """The [BM, BN] block of the [R, C] tensor at `a_ptr` at (r0 + pid * BM, pid1 * BN)
    (zero outside), stored row-major to `out` as block (pid, pid1) of a [grid0 * BM,
    grid1 * BN] tensor."""
    p, q = tl.program_id(0), tl.program_id(1)
    d = tl.make_tensor_descriptor(a_ptr, shape=[R, C], strides=[stride_a, 1],
                                  block_shape=[BM, BN])
    v = d.load([r0 + p * BM, q * BN])
    rm = p * BM + tl.arange(0, BM)
    rn = q * BN + tl.arange(0, BN)
    tl.store(out + rm[:, None] * (tl.num_programs(1) * BN) + rn[None, :], v)


@tilework.jit
def dev_two_maps(a_ptr, b_ptr, out, R, C, stride, BM: tl.constexpr, BN: tl.constexpr):
    """out block = a block + b block: two maps, two 128-byte slots of a program's scratch."""
    p = tl.program_id(0)
    da = tl.make_tensor_descriptor(a_ptr, [R, C], [stride, 1], [BM, BN])
    db = tl.make_tensor_descriptor(b_ptr, [R, C], [stride, 1], [BM, BN])
    v = da.load([p * BM, 0]) + db.load([p * BM, 0])
    rm = p * BM + tl.arange(0, BM)
    tl.store(out + rm[:, None] * BN + tl.arange(0, BN)[None, :], v)


@tilework.jit
def dev_batched(a_ptr, out, R, C, stride_b, stride_r, BM: tl.constexpr, BN: tl.constexpr):
    """Program (p, b) copies block p of batch b: each program's map has its own base, so a
    slot shared by two programs would copy another batch's rows."""
    p, bi = tl.program_id(0), tl.program_id(1)
    d = tl.make_tensor_descriptor(a_ptr + bi * stride_b, [R, C], [stride_r, 1], [BM, BN])
    v = d.load([p * BM, 0])
    rm = p * BM + tl.arange(0, BM)
    o = out + bi * (tl.num_programs(0) * BM * BN)
    tl.store(o + rm[:, None] * BN + tl.arange(0, BN)[None, :], v)


@tilework.jit
def dev_rows(x, out, N, B: tl.constexpr):
    """A 1-D descriptor (no strides): out block p = 3 * x's block p, zero past N."""
    d = tl.make_tensor_descriptor(x, [N], [1], [B])
    tl.store(out + tl.program_id(0) * B + tl.arange(0, B), d.load([tl.program_id(0) * B]) * 3)


@tilework.jit
def dev_box3d(x, out, A, Bd, C, s0, s1, B0: tl.constexpr, B1: tl.constexpr,
              B2: tl.constexpr):
    """A 3-D descriptor: block p along the first dimension, stored row-major."""
    p = tl.program_id(0)
    d = tl.make_tensor_descriptor(x, [A, Bd, C], [s0, s1, 1], [B0, B1, B2])
    v = d.load([p * B0, 0, 0])
    o = (p * B0 + tl.arange(0, B0))[:, None, None] * (B1 * B2) + \
        tl.arange(0, B1)[None, :, None] * B2 + tl.arange(0, B2)[None, None, :]
    tl.store(out + o, v)


@tilework.jit
def dev_remade(a_ptr, out, R, C, stride, n, BM: tl.constexpr, BN: tl.constexpr):
    """out block = the sum over i < n of block pid of the i-th [R, C] matrix at a_ptr: a
    descriptor made in the loop, its map rewritten (one slot) each iteration."""
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for i in range(n):
        d = tl.make_tensor_descriptor(a_ptr + i * stride * R, [R, C], [stride, 1], [BM, BN])
        acc += d.load([tl.program_id(0) * BM, 0])
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    tl.store(out + rm[:, None] * BN + tl.arange(0, BN)[None, :], acc)

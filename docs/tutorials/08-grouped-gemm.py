"""08 - Grouped GEMM.

Many independent matrix products of different shapes (`C_g = A_g @ B_g`: the experts of a
mixture-of-experts layer, the heads of a multi-LoRA batch) in *one* launch.  A fixed number of
programs (one per multiprocessor) walk all the groups' output tiles together: tile t of the
concatenated tile list goes to program t % NUM_PROGRAMS.  Each program loops over the groups,
reads a group's sizes and where its matrices start, and takes the group's tiles that fall to it:

    tile_idx = tl.program_id(0)
    last = 0
    for g in range(group_count):
        m, n, k = (tl.load(sizes_ptr + 3 * g + i) for i in range(3))
        num_tiles = tl.cdiv(m, BLOCK_M) * tl.cdiv(n, BLOCK_N)
        while tile_idx >= last and tile_idx < last + num_tiles:
            ...                                  # one [BLOCK_M, BLOCK_N] tile, as in 03
            tile_idx += NUM_PROGRAMS
        last += num_tiles

The matrices live packed in three flat buffers (row-major A_g [m, k], B_g [k, n], C_g [m, n]);
`offsets_ptr` holds each group's three element offsets.  (Triton's own tutorial passes arrays
of pointers instead; offsets into one buffer work the same and need no pointer casts.)  The
benchmark runs 4 groups of N x N x N fp16 products: tilework, Triton (the same source) and
torch running one torch.matmul per group.

    python docs/tutorials/08-grouped-gemm.py
"""
import sys

import common
import torch

import tilework
import tilework.language as tl


@tilework.jit
def grouped_matmul_kernel(a_ptr, b_ptr, c_ptr, offsets_ptr, sizes_ptr, group_count,
                          NUM_PROGRAMS: tl.constexpr, BLOCK_M: tl.constexpr,
                          BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    tile_idx = tl.program_id(0)
    last = 0
    for g in range(group_count):
        m = tl.load(sizes_ptr + 3 * g)
        n = tl.load(sizes_ptr + 3 * g + 1)
        k = tl.load(sizes_ptr + 3 * g + 2)
        a_base = a_ptr + tl.load(offsets_ptr + 3 * g)
        b_base = b_ptr + tl.load(offsets_ptr + 3 * g + 1)
        c_base = c_ptr + tl.load(offsets_ptr + 3 * g + 2)
        num_n = tl.cdiv(n, BLOCK_N)
        num_tiles = tl.cdiv(m, BLOCK_M) * num_n
        while tile_idx >= last and tile_idx < last + num_tiles:
            t = tile_idx - last
            rm = (t // num_n) * BLOCK_M + tl.arange(0, BLOCK_M)
            rn = (t % num_n) * BLOCK_N + tl.arange(0, BLOCK_N)
            rk = tl.arange(0, BLOCK_K)
            a_ptrs = a_base + (rm % m)[:, None] * k + rk[None, :]
            b_ptrs = b_base + rk[:, None] * n + (rn % n)[None, :]
            acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
            for kk in range(0, tl.cdiv(k, BLOCK_K)):
                a = tl.load(a_ptrs, mask=rk[None, :] < k - kk * BLOCK_K, other=0.0)
                b = tl.load(b_ptrs, mask=rk[:, None] < k - kk * BLOCK_K, other=0.0)
                acc = tl.dot(a, b, acc)
                a_ptrs += BLOCK_K
                b_ptrs += BLOCK_K * n
            c_ptrs = c_base + rm[:, None] * n + rn[None, :]
            tl.store(c_ptrs, acc.to(c_ptr.dtype.element_ty),
                     mask=(rm[:, None] < m) & (rn[None, :] < n))
            tile_idx += NUM_PROGRAMS
        last += num_tiles


class Groups:
    """The packed operands of a list of (A, B) pairs, and the launch."""

    def __init__(self, pairs):
        dev, dt = pairs[0][0].device, pairs[0][0].dtype
        self.shapes = [(a.shape[0], b.shape[1], a.shape[1]) for a, b in pairs]
        sizes, offs, ao, bo, co = [], [], 0, 0, 0
        for m, n, k in self.shapes:
            sizes += [m, n, k]
            offs += [ao, bo, co]
            ao, bo, co = ao + m * k, bo + k * n, co + m * n
        self.a = torch.cat([a.reshape(-1) for a, _ in pairs])
        self.b = torch.cat([b.reshape(-1) for _, b in pairs])
        self.c = torch.empty(co, device=dev, dtype=dt)
        self.sizes = torch.tensor(sizes, device=dev, dtype=torch.int32)
        self.offsets = torch.tensor(offs, device=dev, dtype=torch.int64)
        self.offs = offs

    def run(self, kernel=None, programs=4, block=(16, 16, 16), num_warps=4):
        bm, bn, bk = block
        (kernel or grouped_matmul_kernel)[(programs,)](
            self.a, self.b, self.c, self.offsets, self.sizes, len(self.shapes),
            NUM_PROGRAMS=programs, BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, num_warps=num_warps)
        return [self.c[self.offs[3 * i + 2]:self.offs[3 * i + 2] + m * n].view(m, n)
                for i, (m, n, _) in enumerate(self.shapes)]


def check(dev, shapes, dtype, tol, **launch):
    pairs = [(torch.randn(m, k, device=dev, dtype=dtype), torch.randn(k, n, device=dev,
                                                                     dtype=dtype))
             for m, n, k in shapes]
    for (a, b), c in zip(pairs, Groups(pairs).run(**launch)):
        torch.testing.assert_close(c.float(), a.float() @ b.float(), atol=tol, rtol=tol)


def check_cpu():
    common.interpret(grouped_matmul_kernel)
    check("cpu", [(16, 24, 8), (33, 17, 40), (5, 9, 3)], torch.float32, 2e-2)


def sms():
    return torch.cuda.get_device_properties(0).multi_processor_count


def check_gpu():
    check("cuda", [(1000, 512, 256), (77, 640, 128), (256, 96, 320), (1, 1, 64)],
          torch.float16, 5e-2, programs=sms(), block=(128, 128, 32))


def benchmark():
    tri = common.triton_module(__file__)
    sizes = [256, 512, 1024, 2048, 4096]
    groups = {}

    def pairs(n):
        if n not in groups:
            ps = [(torch.randn(n, n, device="cuda", dtype=torch.float16),
                   torch.randn(n, n, device="cuda", dtype=torch.float16)) for _ in range(4)]
            groups[n] = (ps, Groups(ps))
        return groups[n]

    cfg = dict(programs=sms(), block=(128, 128, 32), num_warps=4)
    providers = {
        "tilework": lambda n: (lambda g=pairs(n)[1]: g.run(**cfg)),
        "Triton": (lambda n: (lambda g=pairs(n)[1]: g.run(tri.grouped_matmul_kernel, **cfg)))
        if tri else None,
        "torch (a matmul per group)": lambda n: (
            lambda ps=pairs(n)[0]: [torch.matmul(a, b) for a, b in ps]),
    }
    series = common.sweep(sizes, providers, lambda ms, n: 4 * 2 * n ** 3 / ms / 1e9)
    common.plot("08-grouped-gemm", "Grouped GEMM (4 groups of N x N x N, fp16)", sizes, series,
                "N", "TFLOP/s")


if __name__ == "__main__":
    common.main(sys.modules[__name__])

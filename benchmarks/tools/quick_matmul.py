"""Quick fp16 GEMM check and timing: one grouped-ordering matmul source compiled by tilework and
by Triton (exec'd under each one's imports), against torch.matmul (cuBLAS), CUDA-event medians.

    python benchmarks/tools/quick_matmul.py [M N K] [--configs BMxBNxBK/warps/stages ...]
"""
import sys
import time

try:
    import torch
except ImportError:  # (build() needs no torch)
    torch = None

# the grouped ordering of program ids (pid_m, pid_n: GROUP_M rows of blocks at a time, for L2
# reuse), the matmul sources' first lines (tma_matmul.py's too)
GROUPED_PIDS = '''    pid = tl.program_id(0)
    num_m = tl.cdiv(M, BM)
    num_n = tl.cdiv(N, BN)
    group = GROUP_M * num_n
    gid = pid // group
    first_m = gid * GROUP_M
    gsize = min(num_m - first_m, GROUP_M)
    pid_m = first_m + ((pid % group) % gsize)
    pid_n = (pid % group) // gsize
'''

SRC = '''
@jit
def matmul(a_ptr, b_ptr, c_ptr, M, N, K, sam, sak, sbk, sbn, scm, scn,
           BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, GROUP_M: tl.constexpr):
''' + GROUPED_PIDS + '''    offs_m = (pid_m * BM + tl.arange(0, BM)) % M
    offs_n = (pid_n * BN + tl.arange(0, BN)) % N
    offs_k = tl.arange(0, BK)
    a_ptrs = a_ptr + offs_m[:, None] * sam + offs_k[None, :] * sak
    b_ptrs = b_ptr + offs_k[:, None] * sbk + offs_n[None, :] * sbn
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BK)):
        a = tl.load(a_ptrs, mask=offs_k[None, :] < K - k * BK, other=0.0)
        b = tl.load(b_ptrs, mask=offs_k[:, None] < K - k * BK, other=0.0)
        acc = tl.dot(a, b, acc)
        a_ptrs += BK * sak
        b_ptrs += BK * sbk
    c = acc.to(tl.float16)
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    tl.store(c_ptr + rm[:, None] * scm + rn[None, :] * scn, c, mask=(rm[:, None] < M) & (rn[None, :] < N))
'''


def load_source(src, which, tag):
    """`src` (kernels written against `jit` and `tl`) as a module under tilework or Triton
    (`which`): written to a file first, since both jits read a kernel's source from its file."""
    if which == "triton":
        import triton as mod
        import triton.language as tl
    else:
        import tilework as mod
        import tilework.language as tl
    import importlib.util
    import os
    import tempfile
    path = os.path.join(tempfile.mkdtemp(), f"{tag}_{which}.py")
    with open(path, "w") as f:
        f.write(f"import {mod.__name__} as mod\nimport {tl.__name__} as tl\njit = mod.jit\n" + src)
    spec = importlib.util.spec_from_file_location(f"{tag}_{which}", path)
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    return m


def build(which):
    return load_source(SRC, which, "quick_matmul").matmul


def bench(fn, reps=50):
    fn()
    torch.cuda.synchronize()
    ts = []
    for _ in range(reps):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        fn()
        e.record()
        e.synchronize()
        ts.append(s.elapsed_time(e))
    ts.sort()
    return ts[len(ts) // 2]


def measure(run, c, ref, flop, tol):
    """One config's launch `run` (writing `c`): (TFLOP/s, the first call's seconds, compile
    included, its max error against `ref`, whether that is under `tol`)."""
    t0 = time.perf_counter()
    run()
    torch.cuda.synchronize()
    ct = time.perf_counter() - t0
    err = (c.float() - ref.float()).abs().max().item()
    t = bench(run)
    return flop / t / 1e9, ct, err, err < tol


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    M, N, K = (int(x) for x in args[:3]) if args else (4096, 4096, 4096)
    configs = [(128, 128, 64, 8, 3), (128, 256, 64, 8, 3), (128, 128, 32, 4, 4), (64, 128, 32, 4, 4)]
    torch.manual_seed(0)
    a = torch.randn(M, K, device="cuda", dtype=torch.float16)
    b = torch.randn(K, N, device="cuda", dtype=torch.float16)
    ref = a @ b
    flop = 2 * M * N * K
    print(f"{torch.cuda.get_device_name()}  fp16 {M}x{N}x{K}")
    t = bench(lambda: torch.matmul(a, b))
    print(f"  cuBLAS                 {flop / t / 1e9:8.1f} TFLOP/s")
    kernels = {w: build(w) for w in ("tilework", "triton")}
    for bm, bn, bk, w, s in configs:
        row = []
        for which, k in kernels.items():
            c = torch.empty(M, N, device="cuda", dtype=torch.float16)
            grid = (((M + bm - 1) // bm) * ((N + bn - 1) // bn),)

            def run():
                k[grid](a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
                        c.stride(0), c.stride(1), BM=bm, BN=bn, BK=bk, GROUP_M=8,
                        num_warps=w, num_stages=s)
            try:
                tflops, ct, err, ok = measure(run, c, ref, flop, 0.5)
                row.append(f"{which} {tflops:7.1f} TFLOP/s (first call {ct:5.2f} s, "
                           f"max err {err:.3f}{'' if ok else ' WRONG'})")
            except Exception as e:  # report and go on
                row.append(f"{which} failed: {type(e).__name__}: {str(e)[:200]}")
        print(f"  {bm}x{bn}x{bk} w{w} s{s}: " + " | ".join(row))


if __name__ == "__main__":
    main()

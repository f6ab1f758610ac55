"""Dumps PTX and SASS of our LayerNorm forward and Triton's, same configuration (1 row per
program, 8 warps, 4096 fp16 columns), for side-by-side reading.

    python benchmarks/tools/dump_asm.py OUTDIR
"""
import os
import subprocess
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "examples"))
sys.path.insert(0, os.path.join(HERE, ".."))


def sass(cubin_bytes, path):
    with open(path + ".cubin", "wb") as f:
        f.write(cubin_bytes)
    out = subprocess.run(["cuobjdump", "-sass", path + ".cubin"], capture_output=True, text=True)
    with open(path + ".sass", "w") as f:
        f.write(out.stdout + out.stderr)


def main(outdir):
    import triton_kernels as tk
    from layernorm import layernorm_fwd
    from sweep_prefetch import softmax_prefetch
    os.makedirs(outdir, exist_ok=True)
    m, n = 8192, 4096
    x = torch.randn(m, n, device="cuda", dtype=torch.float16)
    w = torch.randn(n, device="cuda", dtype=torch.float16)
    y = torch.empty_like(x)
    mean = torch.empty(m, device="cuda")
    rstd = torch.empty(m, device="cuda")
    k = layernorm_fwd[(m,)](x, y, w, w, mean, rstd, n, m, n, 1e-5, BLOCK_N=n, ROWS=1, RMS=False,
                            num_warps=8)
    tk_k = tk.layernorm_kernel[(m,)](x, y, w, w, mean, rstd, n, n, 1e-5, BLOCK=n, num_warps=8)
    with open(f"{outdir}/triton_ln.ptx", "w") as f:
        f.write(tk_k.asm["ptx"])
    sass(tk_k.asm["cubin"], f"{outdir}/triton_ln")
    with open(f"{outdir}/tw_ln.ptx", "w") as f:
        f.write(k.asm["ptx"])
    sass(k.asm["cubin"], f"{outdir}/tw_ln")
    o = torch.empty(1024, 32768, device="cuda", dtype=torch.float16)
    a = torch.randn_like(o)
    k2 = softmax_prefetch[(132,)](o, a, 32768, 1024, 32768, BLOCK_N=32768, HOLD16=False,
                                  num_warps=16)
    sass(k2.asm["cubin"], f"{outdir}/tw_softmax_prefetch")


if __name__ == "__main__":
    main(sys.argv[1])

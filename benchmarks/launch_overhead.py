"""Host-side launch overhead, broken into its parts (µs per launch, 2,000 launches each),
against Triton's launch of the same tiny kernel.  Diagnoses where the launch path spends."""
import os
import sys
import time

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples"))


def per_call_us(fn, n=2000):
    fn()
    torch.cuda.synchronize()
    t = time.perf_counter()
    for _ in range(n):
        fn()
    dt = time.perf_counter() - t
    torch.cuda.synchronize()
    return dt / n * 1e6


def main():
    from tilework.runtime import launcher
    from vector_add import add_kernel
    x = torch.randn(1024, device="cuda")
    y, o = torch.randn_like(x), torch.empty_like(x)
    k = add_kernel.warmup(x, y, o, 1024, BLOCK_SIZE=1024)
    rt = launcher._get_runtime()
    values = (x, y, o, 1024, 1024)
    kp = launcher.fast_key_and_params(add_kernel)
    _, params = kp(values)
    rows = {
        "tilework launch": per_call_us(lambda: add_kernel[(1,)](x, y, o, 1024, BLOCK_SIZE=1024)),
        "  binder": per_call_us(lambda: add_kernel._binder(x, y, o, 1024, BLOCK_SIZE=1024)),
        "  key and parameters": per_call_us(lambda: kp(values)),
        "  stream()": per_call_us(rt.stream),
        "  rt.launch": per_call_us(lambda: rt.launch(k, (1, 1, 1), params)),
    }
    try:
        import triton
        import triton.language as tl

        @triton.jit
        def tadd(x_ptr, y_ptr, out_ptr, n, BLOCK_SIZE: tl.constexpr):
            off = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
            m = off < n
            tl.store(out_ptr + off, tl.load(x_ptr + off, mask=m) + tl.load(y_ptr + off, mask=m),
                     mask=m)
        rows["triton launch"] = per_call_us(lambda: tadd[(1,)](x, y, o, 1024, BLOCK_SIZE=1024))
    except ImportError:
        pass
    print(f"\n== launch overhead on {torch.cuda.get_device_name()} (us per launch) ==")
    for name, us in rows.items():
        print(f"{name:28s} {us:7.2f}")


if __name__ == "__main__":
    main()

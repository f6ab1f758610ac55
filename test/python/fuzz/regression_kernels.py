"""Programs the fuzzer found mismatching, kept as written (fuzz_regressions.py runs them)."""
import tilework
import tilework.language as tl


# seed 1271 (2-D, x fp16, y int8): canonicalize folds the `if` on a reduction into an
# arith.select whose i1 condition is a scalar; axis_info's rule for select indexed that
# scalar's (missing) second dimension: IndexError in tilegpu-vector-width
@tilework.jit
def seed_1271(x_ptr, y_ptr, out0_ptr, out1_ptr, out2_ptr, cnt_ptr, M, N, s0, s1,
              BM: tl.constexpr, BN: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    offs = rm[:, None] * N + rn[None, :]
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    y = tl.load(y_ptr + offs, mask=mask, other=1)
    v1 = tl.sqrt(tl.abs((x).to(tl.float32)))
    v2 = (v1 - (x).to(tl.float32))
    v3 = (x + (v2).to(tl.float16))
    if tl.min(y) < 1:
        v4 = tl.sqrt(tl.abs((x).to(tl.float32)))
    else:
        v4 = (tl.where((y <= y), x, v3)).to(tl.float32)
    tl.store(out0_ptr + offs, v2, mask=mask)
    tl.store(out1_ptr + offs, v3, mask=mask)
    tl.store(out2_ptr + offs, v4, mask=mask)


# seed 50 (2-D, x fp64): `(x).to(tl.float16)` of fp64 is an LLVM `fptrunc double to half`,
# which the host (gpu_sim) lowers to a call of compiler-rt's `__truncdfhf2`; MCJIT did not
# find it (libgcc_s not loaded), linked address 0, and the process segfaulted.  The GPU has
# cvt.rn.f16.f64: not affected.  fp64 -> bf16 alike (`__truncdfbf2`).
@tilework.jit
def fp64_to_16bit(x_ptr, h_ptr, b_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    tl.store(h_ptr + offs, x.to(tl.float16), mask=mask)
    tl.store(b_ptr + offs, x.to(tl.bfloat16).to(tl.int16, bitcast=True), mask=mask)

"""The language surface of issue 3's checklist, compiled ahead of time for sm_80, sm_90a and
gfx942 (no GPU needed), one case per op and target, plus the docstring of every `tl` name.

One small kernel per op family (`FAMILIES`) is compiled once per target (cached for the
module); each op's case checks that its family kernel reached the last stage (cubin/hsaco,
or ptx where no ptxas is installed) and that the op left its mark in the tile IR (a regex:
the op name, attribute or type the frontend emits for it), in the tilegpu IR, or in what the
compiler printed (tl.static_print).  The dtypes are one kernel each (a load, a conversion to
and from a wider type, a store)."""
import contextlib
import functools
import io
import re

import pytest

import tilework
import tilework.language as tl
from tilework import CompileOptions
from tilework.compiler.driver import ASTSource, compile

TARGETS = ["sm_80", "sm_90a", "gfx942"]
P = tl.pointer_type
F32, F16, I32, U32, I8, F64 = (P(t) for t in (
    tl.float32, tl.float16, tl.int32, tl.uint32, tl.int8, tl.float64))


# ---- family kernels ---------------------------------------------------------------------------

@tilework.jit
def k_program(i_ptr, u_ptr, f_ptr, oi_ptr, ou_ptr, of_ptr, o8_ptr, n, B: tl.constexpr):
    offs = tl.program_id(0) * B + tl.arange(0, B)
    m = offs < n
    i = tl.load(i_ptr + offs, mask=m, other=1)
    u = tl.load(u_ptr + offs, mask=m, other=1)
    f = tl.load(f_ptr + offs, mask=m, other=1.0)
    tl.static_assert(i.dtype == tl.int32 and i.shape[0] == B and len(f.shape) == 1)
    tl.store(oi_ptr + offs, i // 3 + i % -5, mask=m)
    tl.store(ou_ptr + offs, (u // 7) + (u % 7) + (u >> 3), mask=m)
    tl.store(of_ptr + offs, f // 2.0, mask=m)
    tl.store(oi_ptr + offs, (i << 2) + (i >> 1) + ((i & 6) | (i ^ 5)), mask=m)
    c = (i < n) & (i <= 3) & (i > -2) & (i >= 0) & (i == 1) & (i != 2) & (f < 1.0)
    tl.store(oi_ptr + offs, c.to(tl.int32) + (not c).to(tl.int32), mask=m)
    tl.store(oi_ptr + offs, -i + ~i, mask=m)
    tl.store(of_ptr + offs, -f, mask=m)
    tl.store(o8_ptr + offs, f.to(tl.int8) + i.to(tl.int8), mask=m)
    tl.store(oi_ptr + offs, f.to(tl.int32, bitcast=True), mask=m)
    tl.store(of_ptr + offs, tl.cast(i, tl.float32), mask=m)
    tl.store(of_ptr + offs, u.to(tl.float32) + tl.num_programs(0) + tl.program_id(1), mask=m)


@tilework.jit
def k_fmod(f_ptr, d_ptr, n):
    offs = tl.arange(0, 64)
    m = offs < n
    tl.store(f_ptr + offs, tl.load(f_ptr + offs, mask=m) % 2.5, mask=m)
    tl.store(d_ptr + offs, tl.load(d_ptr + offs, mask=m) % -1.5, mask=m)


@tilework.jit
def k_shape(x_ptr, o_ptr, oh_ptr, n):
    offs = tl.arange(0, 16)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    a = tl.arange(0, 16)
    f = tl.full([16], 2.5, tl.float32) + tl.zeros([16], tl.float32) + tl.zeros_like(x)
    tl.store(oh_ptr + offs, tl.zeros([16], oh_ptr.dtype.element_ty))
    e = tl.expand_dims(x, 0)                       # [1, 16]
    bt = tl.broadcast_to(e, (4, 16))               # [4, 16]
    l, r = tl.broadcast(x[:, None], x[None, :])    # [16, 16]
    t = tl.trans(bt)                               # [16, 4]
    p = tl.permute(tl.reshape(bt, (2, 2, 16)), (2, 1, 0))  # [16, 2, 2]
    v = tl.view(p, (64,))
    rv = tl.ravel(t)
    j = tl.join(x, f)                              # [16, 2]
    lo, hi = tl.split(j)
    il = tl.interleave(lo, hi)                     # [32]
    ct = tl.cat(x, f, can_reorder=True)            # [32]
    tl.store(o_ptr + tl.arange(0, 16), a.to(tl.float32).reshape(4, 4).reshape(16))
    tl.store(o_ptr + tl.arange(0, 64), v + rv)
    tl.store(o_ptr + tl.arange(0, 32), il + ct)
    tl.store(o_ptr + tl.arange(0, 256), tl.reshape(l + r, (256,)))


@tilework.jit
def k_memory(x_ptr, o_ptr, n, M, N, stride):
    offs = tl.arange(0, 64)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m, other=1.0, cache_modifier=".cg",
                eviction_policy="evict_last")
    y = tl.load(x_ptr + offs, mask=m, volatile=True)
    tl.store(o_ptr + offs, x + y, mask=m, cache_modifier=".cs", eviction_policy="evict_first")
    r = tl.arange(0, 16)[:, None]
    c = tl.arange(0, 32)[None, :]
    m2 = (r < M) & (c < N)
    z = tl.load(x_ptr + r * stride + c, mask=m2, other=0.0)
    bp = tl.make_block_ptr(x_ptr, (M, N), (stride, 1), (0, 0), (16, 32), (1, 0))
    w = tl.load(bp, boundary_check=(0, 1), padding_option="zero")
    bp = tl.advance(bp, (16, 0))
    w += tl.load(bp, boundary_check=(0,), padding_option="nan")
    op = tl.make_block_ptr(o_ptr, (M, N), (N, 1), (0, 0), (16, 32), (1, 0))
    tl.store(op, z + w, boundary_check=(0, 1))


@tilework.jit
def k_atomics(i_ptr, f_ptr, o_ptr, n):
    offs = tl.arange(0, 64)
    m = offs < n
    r = tl.atomic_add(i_ptr + offs, 1, mask=m, sem="relaxed")
    r += tl.atomic_max(i_ptr + offs, offs, mask=m, sem="acquire")
    r += tl.atomic_min(i_ptr + offs, offs, mask=m, sem="release")
    r += tl.atomic_and(i_ptr + offs, 7, mask=m, sem="acq_rel")
    r += tl.atomic_or(i_ptr + offs, 8, mask=m, scope="cta")
    r += tl.atomic_xor(i_ptr + offs, offs, mask=m, scope="sys")
    r += tl.atomic_xchg(i_ptr + offs, 0, mask=m)
    r += tl.atomic_cas(i_ptr + offs, 0, 1, sem="acq_rel")
    f = tl.atomic_add(f_ptr + offs, 1.0, mask=m) + tl.atomic_max(f_ptr + offs, 0.5, mask=m)
    tl.store(o_ptr + offs, r + f.to(tl.int32), mask=m)


@tilework.jit
def k_math(x_ptr, h_ptr, i_ptr, u_ptr, o_ptr, oi_ptr, n):
    offs = tl.arange(0, 64)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m, other=1.0)
    h = tl.load(h_ptr + offs, mask=m, other=1.0)
    i = tl.load(i_ptr + offs, mask=m, other=1)
    u = tl.load(u_ptr + offs, mask=m, other=1)
    tl.store(o_ptr + offs, tl.exp(x) + tl.exp2(x) + tl.log(x) + tl.log2(x), mask=m)
    tl.store(o_ptr + offs, tl.sqrt(x) + tl.sqrt_rn(x) + tl.rsqrt(x), mask=m)
    tl.store(o_ptr + offs, tl.sin(x) + tl.cos(x) + tl.abs(x) + tl.floor(x) + tl.ceil(x), mask=m)
    tl.store(o_ptr + offs, tl.erf(x) + tl.sigmoid(x) + tl.fma(x, h, 1.0), mask=m)
    tl.store(o_ptr + offs, tl.maximum(x, h) + tl.minimum(x, 2.0), mask=m)
    tl.store(o_ptr + offs, tl.clamp(x, 0.0, 6.0) + tl.where(i > 0, x, h), mask=m)
    tl.store(o_ptr + offs, tl.div_rn(x, 3.0) + tl.fdiv(h, x), mask=m)
    tl.store(o_ptr + offs, tl.softmax(x), mask=m)
    tl.store(oi_ptr + offs, tl.umulhi(u, u).to(tl.int32) + tl.cdiv(i, 4), mask=m)


@tilework.jit
def _combine_pair(a, b):
    return tl.maximum(a, b) + 0 * b


@tilework.jit
def k_reduce(x_ptr, i_ptr, o_ptr, oi_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr):
    r = tl.arange(0, BM)[:, None]
    c = tl.arange(0, BN)[None, :]
    m = (r < M) & (c < N)
    x = tl.load(x_ptr + r * BN + c, mask=m, other=0.0)
    i = tl.load(i_ptr + r * BN + c, mask=m, other=0)
    rows = tl.arange(0, BM)
    tl.store(o_ptr + rows, tl.sum(x, axis=1) + tl.max(x, axis=1) + tl.min(x, 1))
    v, idx = tl.max(x, axis=1, return_indices=True)
    v2, idx2 = tl.min(x, axis=0, return_indices=True, keep_dims=True)
    tl.store(oi_ptr + rows, idx + tl.argmax(x, axis=1) + tl.argmin(x, 1, keep_dims=False))
    tl.store(oi_ptr + tl.arange(0, BN)[None, :], idx2)
    tl.store(oi_ptr + rows, tl.xor_sum(i, axis=1))
    tl.store(o_ptr + rows, tl.reduce(x, 1, _combine_pair) + v)
    tl.store(o_ptr, tl.sum(x) + tl.sum(v2, axis=None, keep_dims=False))


@tilework.jit
def k_scan(x_ptr, o_ptr):
    a = tl.arange(0, 4)[:, None, None]
    b = tl.arange(0, 8)[None, :, None]
    c = tl.arange(0, 16)[None, None, :]
    offs = a * 128 + b * 16 + c
    x3 = tl.load(x_ptr + offs)
    r2 = tl.arange(0, 8)[:, None] * 16 + tl.arange(0, 16)[None, :]
    x2 = tl.load(x_ptr + r2)
    x1 = tl.load(x_ptr + tl.arange(0, 32))
    tl.store(o_ptr + offs, tl.cumsum(x3, axis=0) + tl.cumprod(x3, axis=1, reverse=True)
             + tl.associative_scan(x3, 2, _combine_pair))
    tl.store(o_ptr + r2, tl.cumsum(x2, 1) + tl.associative_scan(x2, 0, _combine_pair,
                                                                reverse=True))
    tl.store(o_ptr + tl.arange(0, 32), tl.cumprod(x1, 0) + x1.cumsum(0))


@tilework.jit
def k_dot(a_ptr, h_ptr, o_ptr, oh_ptr):
    r = tl.arange(0, 16)[:, None]
    c = tl.arange(0, 16)[None, :]
    a = tl.load(a_ptr + r * 16 + c)
    acc = tl.zeros([16, 16], tl.float32)
    acc = tl.dot(a, a, acc, input_precision="ieee")
    acc += tl.dot(a, a, out_dtype=tl.float32)
    h = tl.load(h_ptr + r * 16 + c)
    tl.store(oh_ptr + r * 16 + c, tl.dot(h, h, out_dtype=tl.float16))
    tl.store(o_ptr + r * 16 + c, acc)


@tilework.jit
def _helper(x, k):
    if k > 0:  # a runtime `if` with a return in it
        return x * 2, k
    return x, k + 1


@tilework.jit
def k_control(x_ptr, o_ptr, n, DT: tl.constexpr, MODE: tl.constexpr):
    offs = tl.arange(0, 16)
    x = tl.load(x_ptr + offs)
    if tl.program_id(0) >= n:  # early exit
        return
    acc = tl.zeros([16], tl.float32)
    for k in range(n):                         # loop-carried tile
        acc += x
    for k in tl.range(0, n, 2, num_stages=3):
        acc += 1.0
    for k in tl.static_range(3):               # unrolled
        acc += k * 1000 + 7
    i = 0
    while i < n:
        i += 1
    if n > 5:
        acc += 1.0
    elif n > 2:
        acc += 2.0
    else:
        acc += 3.0
    if DT == tl.float32:                       # constexpr: only the live branch is compiled
        acc += 1.0
    else:
        acc = acc & 1                          # a type error, never compiled
    if MODE == 0:
        y, j = _helper(acc, i)                 # nested @jit call returning a tuple
    elif MODE == 1:
        y, j = acc, i
    else:
        y, j = acc, 0
    tl.store(o_ptr + offs, y + j)


@tilework.jit
def k_debug(x_ptr, n, B: tl.constexpr):
    tl.static_print("surface static_print", B)
    tl.static_assert(B == 32, "B must be 32")
    offs = tl.arange(0, B)
    x = tl.load(x_ptr + offs, mask=offs < n, other=1.0)
    tl.device_print("x", x)
    tl.device_assert(x > 0, "x must be positive", mask=offs < n)


@tilework.jit
def k_hints(x_ptr, o_ptr, n, B: tl.constexpr):
    offs = tl.program_id(0) * B + tl.arange(0, B)
    offs = tl.max_contiguous(tl.multiple_of(offs, B), B)
    m = tl.max_constancy(offs < n, 4)
    tl.assume(n > 0)
    tl.store(o_ptr + offs, tl.load(x_ptr + offs, mask=m), mask=m)


@tilework.jit
def k_random(o_ptr, oi_ptr, seed, n):
    offs = tl.arange(0, 64)
    m = offs < n
    tl.store(o_ptr + offs, tl.rand(seed, offs) + tl.randn(seed, offs), mask=m)
    a, b, c, d = tl.randint4x(seed, offs)
    tl.store(oi_ptr + offs, tl.randint(seed, offs) ^ a ^ b ^ c ^ d, mask=m)


@tilework.jit
def k_dtype(x_ptr, y_ptr, n, WIDE: tl.constexpr):
    offs = tl.arange(0, 64)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m)
    tl.store(y_ptr + offs, x.to(WIDE).to(x_ptr.dtype.element_ty), mask=m)


FAMILIES = {
    "program": (k_program, {"i_ptr": I32, "u_ptr": U32, "f_ptr": F32, "oi_ptr": I32,
                            "ou_ptr": U32, "of_ptr": F32, "o8_ptr": I8, "n": tl.int32},
                {"B": 64}, {}),
    "fmod": (k_fmod, {"f_ptr": F32, "d_ptr": F64, "n": tl.int32}, {}, {}),
    "shape": (k_shape, {"x_ptr": F32, "o_ptr": F32, "oh_ptr": F16, "n": tl.int32}, {}, {}),
    "memory": (k_memory, {"x_ptr": F32, "o_ptr": F32, "n": tl.int32, "M": tl.int32,
                          "N": tl.int32, "stride": tl.int32}, {}, {}),
    "atomics": (k_atomics, {"i_ptr": I32, "f_ptr": F32, "o_ptr": I32, "n": tl.int32}, {}, {}),
    "math": (k_math, {"x_ptr": F32, "h_ptr": F16, "i_ptr": I32, "u_ptr": U32, "o_ptr": F32,
                      "oi_ptr": I32, "n": tl.int32}, {}, {}),
    "reduce": (k_reduce, {"x_ptr": F32, "i_ptr": I32, "o_ptr": F32, "oi_ptr": I32,
                          "M": tl.int32, "N": tl.int32}, {"BM": 8, "BN": 32}, {}),
    "scan": (k_scan, {"x_ptr": F32, "o_ptr": F32}, {}, {}),
    "dot": (k_dot, {"a_ptr": F32, "h_ptr": F16, "o_ptr": F32, "oh_ptr": F16}, {}, {}),
    "control": (k_control, {"x_ptr": F32, "o_ptr": F32, "n": tl.int32},
                {"DT": tl.float32, "MODE": 0}, {}),
    "debug": (k_debug, {"x_ptr": F32, "n": tl.int32}, {"B": 32}, {"debug": True}),
    "hints": (k_hints, {"x_ptr": F32, "o_ptr": F32, "n": tl.int32}, {"B": 256}, {}),
    "random": (k_random, {"o_ptr": F32, "oi_ptr": U32, "seed": tl.int32, "n": tl.int32}, {}, {}),
}


@functools.lru_cache(maxsize=None)
def compiled(family, target):
    """(CompiledKernel, what compiling printed) of a family kernel for `target`."""
    fn, sig, const, opts = FAMILIES[family]
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        ck = compile(ASTSource(fn, sig, const, {}), target, CompileOptions(**opts), cache=False)
    return ck, out.getvalue()


def assert_complete(ck, target, name):
    """The kernel went through every stage of its target."""
    if target.startswith("sm_"):
        assert f".target {target}" in ck.asm["ptx"] and f".entry {name}" in ck.asm["ptx"]
        cubin = ck.asm.get("cubin")  # None where no ptxas is installed (the driver JITs)
        assert cubin is None or cubin[:4] == b"\x7fELF"
    else:
        assert f".amdhsa_kernel {name}" in ck.asm["amdgcn"]
        assert ck.asm["hsaco"][:4] == b"\x7fELF"


# op -> (family, where to look, regex).  `where`: "tile" (the frontend's IR), "tilegpu" or
# "stdout" (what compiling printed).
C = r"func\.func private @\w+__combine\d+\([^)]*\) -> [^{]*\{\s*"  # a combine function's head
OPS = {
    # programming model, tensors, operators
    "program_id": ("program", "tile", r'"tile\.get_program_id"\(\) \{axis = 1 : i32\}'),
    "num_programs": ("program", "tile", r'"tile\.get_num_programs"\(\) \{axis = 0 : i32\}'),
    "constexpr": ("program", "tile", r'"tile\.make_range"\(\) \{end = 64 : i32'),
    "tensor.dtype/.shape": ("program", "tile", r"func\.func @k_program"),  # static_assert holds
    "tensor.to": ("program", "tile", r"arith\.fptosi %\w+ : tensor<64xf32> to tensor<64xi8>"),
    "tensor.to(bitcast=True)": ("program", "tile", r"arith\.bitcast %\w+ : tensor<64xf32> to tensor<64xi32>"),
    "cast": ("program", "tile", r"arith\.sitofp %\w+ : tensor<64xi32> to tensor<64xf32>"),
    "//": ("program", "tile", r"arith\.divsi .*\n(.*\n)*.*arith\.divui .*\n(.*\n)*.*math\.floor"),
    "% (ints)": ("program", "tile", r"arith\.remsi .*\n(.*\n)*.*arith\.remui "),
    "% (floats)": ("fmod", "tile", r"arith\.remf %\w+, %\w+ : tensor<64xf32>(.*\n)*.*arith\.remf %\w+, %\w+ : tensor<64xf64>"),
    "<<, >>": ("program", "tile", r"arith\.shrui (.*\n)*.*arith\.shli (.*\n)*.*arith\.shrsi"),
    "& | ^": ("program", "tile", r"arith\.andi (.*\n)*.*arith\.xori (.*\n)*.*arith\.ori"),
    "comparisons": ("program", "tile", r"cmpi slt(.*\n)*.*cmpi sle(.*\n)*.*cmpi sgt(.*\n)*.*"
                                       r"cmpi sge(.*\n)*.*cmpi eq(.*\n)*.*cmpi ne(.*\n)*.*cmpf olt"),
    "unary - ~ not": ("program", "tile", r"arith\.subi (.*\n)*.*arith\.xori (.*\n)*.*arith\.negf"),
    # creation and shapes
    "arange": ("shape", "tile", r'"tile\.make_range"\(\) \{end = 16 : i32, start = 0 : i32\}'),
    "full": ("shape", "tile", r"arith\.constant dense<2\.500000e\+00> : tensor<16xf32>"),
    "zeros": ("shape", "tile", r"arith\.constant dense<0\.000000e\+00> : tensor<16xf32>"),
    "zeros_like": ("shape", "tile", r"arith\.constant dense<0\.000000e\+00> : tensor<16xf32>"),
    "pointer.dtype.element_ty": ("shape", "tile", r"arith\.constant dense<0\.000000e\+00> : tensor<16xf16>"),
    "expand_dims": ("shape", "tile", r'"tile\.expand_dims"\(%\w+\) \{axis = 0 : i32\} : \(tensor<16xf32>\) -> tensor<1x16xf32>'),
    "indexing None and :": ("shape", "tile", r'"tile\.expand_dims"\(%\w+\) \{axis = 1 : i32\} : \(tensor<16xf32>\) -> tensor<16x1xf32>'),
    "broadcast_to": ("shape", "tile", r'"tile\.broadcast"\(%\w+\) : \(tensor<1x16xf32>\) -> tensor<4x16xf32>'),
    "broadcast": ("shape", "tile", r'"tile\.broadcast"\(%\w+\) : \(tensor<16x1xf32>\) -> tensor<16x16xf32>'),
    "reshape": ("shape", "tile", r'"tile\.reshape"\(%\w+\) : \(tensor<4x16xf32>\) -> tensor<2x2x16xf32>'),
    "view": ("shape", "tile", r'"tile\.reshape"\(%\w+\) : \(tensor<16x2x2xf32>\) -> tensor<64xf32>'),
    "trans": ("shape", "tile", r'"tile\.trans"\(%\w+\) \{order = array<i32: 1, 0>\}'),
    "permute": ("shape", "tile", r'"tile\.trans"\(%\w+\) \{order = array<i32: 2, 1, 0>\}'),
    "ravel": ("shape", "tile", r'"tile\.reshape"\(%\w+\) : \(tensor<16x4xf32>\) -> tensor<64xf32>'),
    "join": ("shape", "tile", r'"tile\.join"\(%\w+, %\w+\) : \(tensor<16xf32>, tensor<16xf32>\) -> tensor<16x2xf32>'),
    "split": ("shape", "tile", r'"tile\.split"\(%\w+\) : \(tensor<16x2xf32>\)'),
    "interleave": ("shape", "tile", r'"tile\.reshape"\(%\w+\) : \(tensor<16x2xf32>\) -> tensor<32xf32>'),
    "cat": ("shape", "tile", r'"tile\.cat"\(%\w+, %\w+\) : \(tensor<16xf32>, tensor<16xf32>\) -> tensor<32xf32>'),
    # memory
    "load mask/other": ("memory", "tile", r'"tile\.load"\(%\w+, %\w+, %\w+\) \{.*operandSegmentSizes = array<i32: 1, 1, 1>'),
    "load cache_modifier/eviction_policy": ("memory", "tile", r'"tile\.load".*\{cache = "\.cg", evict = "evict_last"'),
    "load volatile": ("memory", "tile", r'"tile\.load".*volatile\}'),
    "store mask/cache_modifier/eviction_policy": ("memory", "tile", r'"tile\.store"\(%\w+, %\w+, %\w+\) \{cache = "\.cs", evict = "evict_first"'),
    "2-D pointer tiles": ("memory", "tile", r'"tile\.load".*\(tensor<16x32x!tile\.ptr<f32>>, tensor<16x32xi1>, tensor<16x32xf32>\)'),
    "make_block_ptr": ("memory", "tile", r'"tile\.addptr"\(%\w+, %\w+\) : \(tensor<16x32x!tile\.ptr<f32>>, tensor<16x32xi64>\)'),
    "advance": ("memory", "tile", r"%\w+ = arith\.addi %\w+, %c16_i32\w* : i32"),
    "boundary_check/padding_option": ("memory", "tile", r"arith\.constant 0x7FC00000 : f32"),
    # atomics
    **{f"atomic_{k}": ("atomics", "tile", rf'"tile\.atomic_rmw".*kind = "{kind}"')
       for k, kind in (("add", "add"), ("max", "max"), ("min", "min"), ("and", "and"),
                       ("or", "or"), ("xor", "xor"), ("xchg", "xchg"))},
    "atomic_cas": ("atomics", "tile", r'"tile\.atomic_cas"\(.*\{scope = "gpu", sem = "acq_rel"\}'),
    "atomic mask": ("atomics", "tile", r'"tile\.atomic_rmw"\(%\w+, %\w+, %\w+\) \{kind = "xchg", operandSegmentSizes = array<i32: 1, 1, 1>'),
    "atomic sem": ("atomics", "tile", r'kind = "add".*sem = "relaxed"(.*\n)*.*sem = "acquire"(.*\n)*.*sem = "release"'),
    "atomic float add/max": ("atomics", "tile", r'kind = "fadd"(.*\n)*.*kind = "umin"'),
    # math
    **{fn: ("math", "tile", rf"math\.{fn} %\w+ : tensor<64xf32>")
       for fn in ("exp", "exp2", "log", "log2", "rsqrt", "sin", "cos", "floor", "ceil", "erf")},
    "sqrt": ("math", "tile", r"math\.sqrt %\w+ fastmath<afn> : tensor<64xf32>"),
    "sqrt_rn": ("math", "tile", r"math\.sqrt %\w+ : tensor<64xf32>"),
    "abs": ("math", "tile", r"math\.absf %\w+ : tensor<64xf32>"),
    "sigmoid": ("math", "tile", r"arith\.negf (.*\n){1,2}.*math\.exp"),
    "fma": ("math", "tile", r"math\.fma %\w+, %\w+, %\w+ : tensor<64xf32>"),
    "maximum": ("math", "tile", r"arith\.maxnumf %\w+, %\w+ : tensor<64xf32>"),
    "minimum": ("math", "tile", r"arith\.minnumf %\w+, %\w+ : tensor<64xf32>"),
    "clamp": ("math", "tile", r"arith\.maxnumf (.*\n)arith\.minnumf|arith\.maxnumf %\w+, %\w+ : tensor<64xf32>\n\s+%\w+ = arith\.minnumf"),
    "where": ("math", "tile", r"arith\.select %\w+, %\w+, %\w+ : tensor<64xi1>, tensor<64xf32>"),
    "cdiv": ("math", "tile", r"arith\.subi (.*\n){0,3}.*arith\.divsi"),
    "umulhi": ("math", "tile", r'"tile\.umulhi"\(%\w+, %\w+\) : \(tensor<64xi32>, tensor<64xi32>\)'),
    "div_rn": ("math", "tile", r"arith\.divf %\w+, %\w+.*: tensor<64xf32>"),
    "fdiv": ("math", "tile", r"arith\.extf (.*\n)*.*arith\.divf"),
    "softmax": ("math", "tile", r"arith\.subf (.*\n).*math\.exp (.*\n).*\"tile\.reduce\""),
    # reductions and scans
    "sum": ("reduce", "tile", C + r"%\w+ = arith\.addf"),
    "max": ("reduce", "tile", C + r"%\w+ = arith\.maxnumf"),
    "min": ("reduce", "tile", C + r"%\w+ = arith\.minnumf"),
    "argmax/max(return_indices)": ("reduce", "tile", r'"tile\.reduce".*\(tensor<8x32xf32>, tensor<8x32xi32>\) -> \(tensor<8xf32>, tensor<8xi32>\)'),
    "argmin/min(return_indices)": ("reduce", "tile", r'"tile\.reduce".*\{axis = 0 : i32.*-> \(tensor<32xf32>, tensor<32xi32>\)'),
    "keep_dims": ("reduce", "tile", r'"tile\.expand_dims"\(%\w+\) \{axis = 0 : i32\} : \(tensor<32xi32>\) -> tensor<1x32xi32>'),
    "xor_sum": ("reduce", "tile", C + r"%\w+ = arith\.xori"),
    "reduce (@jit combine)": ("reduce", "tile", C + r"%\w+ = arith\.maxnumf"),
    "cumsum": ("scan", "tile", r'"tile\.scan"\(%\w+\) \{axis = 0 : i32, .*reverse = 0 : i32\} : \(tensor<4x8x16xf32>\)'),
    "cumprod": ("scan", "tile", r'"tile\.scan"\(%\w+\) \{axis = 1 : i32, .*reverse = 1 : i32\} : \(tensor<4x8x16xf32>\)'),
    "associative_scan": ("scan", "tile", r'"tile\.scan"\(%\w+\) \{axis = 2 : i32, .*\(tensor<4x8x16xf32>\)'),
    "scans 1-D/2-D": ("scan", "tile", r'"tile\.scan".*\(tensor<8x16xf32>\)(.*\n)*.*"tile\.scan".*\(tensor<32xf32>\)'),
    # dot
    "dot": ("dot", "tile", r'"tile\.dot"\(%\w+, %\w+, %\w+\) \{input_precision = "ieee"'),
    "dot out_dtype": ("dot", "tile", r'"tile\.dot".*-> tensor<16x16xf16>'),
    # control flow
    "for range (loop-carried tile)": ("control", "tile", r"scf\.for .* iter_args\(.*\) -> \(tensor<16xf32>\)"),
    "tl.range(num_stages)": ("control", "tile", r"tile\.num_stages = 3 : i32"),
    "tl.static_range": ("control", "tile", r"arith\.constant 2\.007000e\+03 : f32"),
    "while": ("control", "tile", r"scf\.while"),
    "if/elif/else": ("control", "tile", r"\} else \{\n(.*\n){0,2}\s+%\w+ = arith\.cmpi sgt, %arg2, .*\n\s+%\w+ = scf\.if "),
    "constexpr if prunes": ("control", "tile", r"func\.func @k_control"),  # `acc & 1` not built
    "nested @jit with return values / early return": ("control", "tile", r"scf\.if %\w+ -> \(tensor<16xf32>, i32\)"),
    # debug and hints
    "static_print": ("debug", "stdout", r"surface static_print 32"),
    "static_assert": ("debug", "tile", r"func\.func @k_debug"),
    "device_print": ("debug", "tile", r'"tile\.print"\(%\w+\) \{hex = 0 : i32'),
    "device_assert (debug)": ("debug", "tile", r'"tile\.assert"\(%\w+\) \{msg = "x must be positive"\}'),
    "multiple_of": ("hints", "tile", r"tile\.divisibility = array<i32: 256>"),
    "max_contiguous": ("hints", "tile", r"tile\.contiguity = array<i32: 256>"),
    "max_constancy": ("hints", "tilegpu", r"tile\.constancy = array<i32: 4>"),
    "assume": ("hints", "tile", r'"tile\.assume"\(%\w+\) : \(i1\)'),
    # random
    "rand": ("random", "tile", r"arith\.constant 4\.6566\d*E-10 : f32"),
    "randn": ("random", "tile", r"math\.cos"),
    "randint/randint4x": ("random", "tile", r"arith\.constant -1640531527 : i32"),
}


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("op", list(OPS))
def test_op_compiles(op, target):
    family, where, pattern = OPS[op]
    ck, printed = compiled(family, target)
    assert_complete(ck, target, FAMILIES[family][0].__name__)
    text = printed if where == "stdout" else ck.asm[where]
    assert re.search(pattern, text), f"{op}: /{pattern}/ not in the {where} of {family}"


# ---- dtypes: a masked copy through a conversion, for every element type ----------------------

DTYPES = {"int1": tl.int32, "int8": tl.int32, "int16": tl.int32, "int32": tl.int64,
          "int64": tl.float64, "uint8": tl.int32, "uint16": tl.int32, "uint32": tl.int64,
          "uint64": tl.float64, "float8e4nv": tl.float32, "float8e5": tl.float16,
          "float16": tl.float32, "bfloat16": tl.float32, "float32": tl.float64,
          "float64": tl.float32}

IR_ELEM = {"int1": "i1", "int8": "i8", "int16": "i16", "int32": "i32", "int64": "i64",
           "uint8": "i8", "uint16": "i16", "uint32": "i32", "uint64": "i64",
           "float8e4nv": "f8E4M3FN", "float8e5": "f8E5M2", "float16": "f16", "bfloat16": "bf16",
           "float32": "f32", "float64": "f64"}


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("name", list(DTYPES))
def test_dtype_compiles(name, target):
    dt = getattr(tl, name)
    src = ASTSource(k_dtype, {"x_ptr": P(dt), "y_ptr": P(dt), "n": tl.int32},
                    {"WIDE": DTYPES[name]}, {})
    ck = compile(src, target, cache=False)
    assert_complete(ck, target, "k_dtype")
    assert f"tensor<64x!tile.ptr<{IR_ELEM[name]}>>" in ck.asm["tile"]


# ---- docstrings -------------------------------------------------------------------------------

DOCUMENTED = [
    "program_id", "num_programs", "constexpr", "dtype", "pointer_type", "tensor", "arange",
    "full", "zeros", "zeros_like", "full_like", "cast", "broadcast", "broadcast_to",
    "expand_dims", "reshape", "view", "trans", "permute", "join", "split", "interleave", "cat",
    "ravel", "load", "store", "make_block_ptr", "advance", "atomic_add", "atomic_max",
    "atomic_min", "atomic_and", "atomic_or", "atomic_xor", "atomic_xchg", "atomic_cas", "exp",
    "exp2", "log", "log2", "sqrt", "sqrt_rn", "rsqrt", "sin", "cos", "abs", "floor", "ceil",
    "erf", "sigmoid", "fma", "maximum", "minimum", "clamp", "where", "cdiv", "umulhi", "div_rn",
    "fdiv", "softmax", "sum", "max", "min", "argmax", "argmin", "xor_sum", "reduce", "cumsum",
    "cumprod", "associative_scan", "dot", "range", "static_range", "static_print",
    "static_assert", "device_print", "device_assert", "multiple_of", "max_contiguous",
    "max_constancy", "assume", "rand", "randn", "randint", "randint4x",
]
MATH = ["exp", "exp2", "log", "log2", "sqrt", "sqrt_rn", "rsqrt", "sin", "cos", "abs", "floor",
        "ceil", "erf", "sigmoid", "fma", "clamp", "cdiv", "umulhi", "div_rn", "fdiv"]


@pytest.mark.parametrize("name", DOCUMENTED)
def test_docstring(name):
    obj = getattr(tl, name)
    doc = (getattr(obj, "__doc__", None) or "").strip()
    assert len(doc) >= 20, f"tl.{name} has no docstring"


@pytest.mark.parametrize("name", MATH)
def test_math_namespace(name):
    assert getattr(tl.math, name) is getattr(tl, name)


def test_tensor_methods_documented():
    assert tl.tensor.to.__doc__ and tl.tensor.__getitem__.__doc__
    assert "shape" in tl.tensor.__doc__ and "dtype" in tl.tensor.__doc__


def test_every_builtin_has_an_implementation():
    """Each documented builtin is either implemented by the frontend or a tile-language
    @jit function (the random ones), a class (dtypes, iterators) or a host-usable helper."""
    from tilework.frontend.ops import IMPLS
    from tilework.runtime.jit import JITFunction
    for name in DOCUMENTED:
        obj = getattr(tl, name)
        builtin = getattr(obj, "__tilework_builtin__", None)
        assert builtin in IMPLS or isinstance(obj, (JITFunction, type)), name

# RUN: %python %s | FileCheck %s
#
# tl.dot on the portable path, compiled for sm_75 (no GPU needed; sm_80+ takes these dots to
# tensor cores: test/lit/tilegpu-to-llvm-dot-mma.mlir): the tile.dot result takes
# the accumulator's layout; a and b are loaded in layouts made for their own (smaller) shapes,
# 4 elements per thread and no copies (lowering/layout_hints.py); tilegpu-to-llvm writes a and b to shared memory and synchronizes
# (no barrier before: it is the kernel's first user of the buffer), then runs a loop over K (not unrolled) carrying the thread's accumulators in fp32,
# reading a row of B with one vector load, one fma per accumulator; an fp16 result is rounded
# once after the loop.
import tilework
import tilework.language as tl
from tilework.compiler.driver import ASTSource, compile


@tilework.jit
def dot16(a_ptr, b_ptr, c_ptr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
    rm = tl.arange(0, M)[:, None]
    rn = tl.arange(0, N)[None, :]
    rk = tl.arange(0, K)
    a = tl.load(a_ptr + rm * K + rk[None, :])
    b = tl.load(b_ptr + rk[:, None] * N + rn)
    tl.store(c_ptr + rm * N + rn, tl.dot(a, b, out_dtype=tl.float16))


P = tl.pointer_type(tl.float16)
ck = compile(ASTSource(dot16, dict(a_ptr=P, b_ptr=P, c_ptr=P), dict(M=32, N=32, K=16), {}),
             "sm_75", cache=False)
print(ck.asm["tilegpu"])
print(ck.asm["llvm"])
print("shared:", ck.metadata["shared"])

# CHECK: "tile.dot"(%{{.+}}, %{{.+}}, %{{.+}}) {input_precision = "tf32", max_num_imprecise_acc = 0 : i32, tilegpu.smem_offset = 0 : i32} : (tensor<32x16xf16, #tilegpu.blocked<array<i32: 1, 4>, array<i32: 8, 4>, array<i32: 4, 1>, array<i32: 1, 0>>>, tensor<16x32xf16, #tilegpu.blocked<array<i32: 1, 4>, array<i32: 4, 8>, array<i32: 4, 1>, array<i32: 1, 0>>>, tensor<32x32xf16, [[L:#tilegpu.blocked<array<i32: 1, 8>, array<i32: 8, 4>, array<i32: 4, 1>, array<i32: 1, 0>>]]>) -> tensor<32x32xf16, [[L]]>
# CHECK-LABEL: llvm.func @dot16
# CHECK-NOT: nvvm.barrier0
# CHECK: llvm.store %{{.+}}, %{{.+}} : f16, !llvm.ptr<3>
# CHECK: nvvm.barrier0
# CHECK: llvm.br ^bb1(%{{.+}} : i32, f32, f32, f32, f32, f32, f32, f32, f32)
# CHECK: ^bb2:
# CHECK: llvm.load %{{.+}} {alignment = 2 : i64} : !llvm.ptr<3> -> f16
# CHECK: llvm.load %{{.+}} {alignment = 16 : i64} : !llvm.ptr<3> -> vector<8xf16>
# CHECK-COUNT-8: llvm.call_intrinsic "llvm.fma"
# CHECK-NOT: llvm.call_intrinsic "llvm.fma"
# CHECK: llvm.br ^bb1
# CHECK: ^bb3:
# CHECK-COUNT-8: llvm.fptrunc %{{.+}} : f32 to f16
# CHECK: shared: 2048

# fp32 operands: with input_precision "tf32" (the default) each element is rounded to tf32
# (cvt.rna.tf32.f32's rounding in integer arith: + 0x1000, & 0xffffe000, NaN kept) before it
# is written to shared memory; "ieee" writes the fp32 values unchanged.


@tilework.jit
def dot32(a_ptr, b_ptr, c_ptr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr,
          PREC: tl.constexpr):
    rm = tl.arange(0, M)[:, None]
    rn = tl.arange(0, N)[None, :]
    rk = tl.arange(0, K)
    a = tl.load(a_ptr + rm * K + rk[None, :])
    b = tl.load(b_ptr + rk[:, None] * N + rn)
    tl.store(c_ptr + rm * N + rn, tl.dot(a, b, input_precision=PREC))


F = tl.pointer_type(tl.float32)
for prec in ("tf32", "ieee"):
    ck = compile(ASTSource(dot32, dict(a_ptr=F, b_ptr=F, c_ptr=F), dict(M=16, N=16, K=16,
                                                                       PREC=prec), {}),
                 "sm_75", cache=False)
    print("precision:", prec)
    print(ck.asm["llvm"])

# CHECK-LABEL: precision: tf32
# CHECK-LABEL: llvm.func @dot32
# CHECK-DAG: [[INF:%[0-9]+]] = llvm.mlir.constant(2139095040 : i32) : i32
# CHECK-DAG: [[ABS:%[0-9]+]] = llvm.mlir.constant(2147483647 : i32) : i32
# CHECK-DAG: [[MASK:%[0-9]+]] = llvm.mlir.constant(-8192 : i32) : i32
# CHECK-DAG: [[HALF:%[0-9]+]] = llvm.mlir.constant(4096 : i32) : i32
# CHECK: [[BITS:%[0-9]+]] = llvm.bitcast %{{[0-9]+}} : f32 to i32
# CHECK-NEXT: [[UP:%[0-9]+]] = llvm.add [[BITS]], [[HALF]] : i32
# CHECK-NEXT: [[RND:%[0-9]+]] = llvm.and [[UP]], [[MASK]] : i32
# CHECK-NEXT: [[MAG:%[0-9]+]] = llvm.and [[BITS]], [[ABS]] : i32
# CHECK-NEXT: [[NAN:%[0-9]+]] = llvm.icmp "ugt" [[MAG]], [[INF]] : i32
# CHECK-NEXT: [[SEL:%[0-9]+]] = llvm.select [[NAN]], [[BITS]], [[RND]] : i1, i32
# CHECK-NEXT: [[TF32:%[0-9]+]] = llvm.bitcast [[SEL]] : i32 to f32
# CHECK: llvm.store [[TF32]], %{{[0-9]+}} : f32, !llvm.ptr<3>
# CHECK: nvvm.barrier0
# CHECK: llvm.call_intrinsic "llvm.fma"
# CHECK-LABEL: precision: ieee
# CHECK-LABEL: llvm.func @dot32
# CHECK-NOT: -8192
# CHECK: llvm.store %{{[0-9]+}}, %{{[0-9]+}} : f32, !llvm.ptr<3>
# CHECK-NOT: -8192
# CHECK: nvvm.barrier0
# CHECK: llvm.call_intrinsic "llvm.fma"

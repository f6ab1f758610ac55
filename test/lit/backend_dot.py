# RUN: %python %s | FileCheck %s
#
# tl.dot on the portable path, compiled for sm_90a (no GPU needed): the tile.dot result takes
# the accumulator's layout; tilegpu-to-llvm writes a and b to shared memory and synchronizes
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
             "sm_90a", cache=False)
print(ck.asm["tilegpu"])
print(ck.asm["llvm"])
print("shared:", ck.metadata["shared"])

# CHECK: "tile.dot"(%{{.+}}, %{{.+}}, %{{.+}}) {input_precision = "tf32", max_num_imprecise_acc = 0 : i32} : (tensor<32x16xf16, [[L:#tilegpu.blocked<[^>]+>[^>]+>[^>]+>[^>]+>>]]>, tensor<16x32xf16, [[L]]>, tensor<32x32xf16, [[L]]>) -> tensor<32x32xf16, [[L]]>
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

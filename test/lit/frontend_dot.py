# RUN: %python %s | FileCheck %s
#
# The tile IR of tl.dot (compiled ahead of time, no GPU): one "tile.dot"(a, b, acc) with the
# `input_precision` (default tf32; allow_tf32=False gives ieee) and `max_num_imprecise_acc`
# attributes.  Without `acc` the accumulator is a zero constant of the result type: fp32 for
# fp32/bf16 inputs, `out_dtype` (fp16 here) for fp16, int32 for int8; a given `acc` is the
# third operand; batched [B, M, K] x [B, K, N] keeps the batch dimension.
import tilework
import tilework.language as tl
from tilework.compiler.driver import ASTSource, compile

P = tl.pointer_type


@tilework.jit
def dots(a_ptr, h_ptr, b16_ptr, i_ptr, o_ptr, oh_ptr, oi_ptr):
    r = tl.arange(0, 16)[:, None]
    c = tl.arange(0, 16)[None, :]
    a = tl.load(a_ptr + r * 16 + c)
    acc = tl.load(o_ptr + r * 16 + c)
    acc = tl.dot(a, a, acc, input_precision="ieee")
    acc += tl.dot(a, a, allow_tf32=False)
    acc += tl.dot(a.T, a)
    bf = tl.load(b16_ptr + r * 16 + c)
    acc += tl.dot(bf, bf)
    tl.store(o_ptr + r * 16 + c, acc)
    h = tl.load(h_ptr + r * 16 + c)
    tl.store(oh_ptr + r * 16 + c, tl.dot(h, h, out_dtype=tl.float16))
    k = tl.arange(0, 32)
    i8a = tl.load(i_ptr + r * 32 + k[None, :])   # [16, 32]
    i8b = tl.load(i_ptr + k[:, None] * 16 + c)   # [32, 16]
    tl.store(oi_ptr + r * 16 + c, tl.dot(i8a, i8b))


@tilework.jit
def batched(a_ptr, o_ptr):
    bb = tl.arange(0, 2)[:, None, None]
    r = tl.arange(0, 16)[None, :, None]
    c = tl.arange(0, 16)[None, None, :]
    a = tl.load(a_ptr + bb * 256 + r * 16 + c)
    tl.store(o_ptr + bb * 256 + r * 16 + c, tl.dot(a, a, input_precision="tf32x3"))


def show(title, fn, sig, constants=None):
    print(f"// ---- {title}")
    print(compile(ASTSource(fn, sig, constants or {}, {}), "sm_90a", cache=False).asm["tile"])


show("dots", dots, {"a_ptr": P(tl.float32), "h_ptr": P(tl.float16), "b16_ptr": P(tl.bfloat16),
                    "i_ptr": P(tl.int8), "o_ptr": P(tl.float32), "oh_ptr": P(tl.float16),
                    "oi_ptr": P(tl.int32)})
# CHECK-LABEL: // ---- dots
# CHECK: %[[A:.+]] = "tile.load"{{.*}} -> tensor<16x16xf32>
# CHECK: %[[ACC:.+]] = "tile.load"{{.*}} -> tensor<16x16xf32>
# CHECK-NEXT: %[[D1:.+]] = "tile.dot"(%[[A]], %[[A]], %[[ACC]]) {input_precision = "ieee", max_num_imprecise_acc = 0 : i32} : (tensor<16x16xf32>, tensor<16x16xf32>, tensor<16x16xf32>) -> tensor<16x16xf32>
# CHECK-NEXT: %[[Z:.+]] = arith.constant dense<0.000000e+00> : tensor<16x16xf32>
# CHECK-NEXT: %[[D2:.+]] = "tile.dot"(%[[A]], %[[A]], %[[Z]]) {input_precision = "ieee", max_num_imprecise_acc = 0 : i32}
# CHECK-NEXT: %[[S2:.+]] = arith.addf %[[D1]], %[[D2]]
# CHECK-NEXT: %[[AT:.+]] = "tile.trans"(%[[A]]) {order = array<i32: 1, 0>} : (tensor<16x16xf32>) -> tensor<16x16xf32>
# CHECK-NEXT: %[[Z3:.+]] = arith.constant dense<0.000000e+00> : tensor<16x16xf32>
# CHECK-NEXT: %[[D3:.+]] = "tile.dot"(%[[AT]], %[[A]], %[[Z3]]) {input_precision = "tf32", max_num_imprecise_acc = 0 : i32}
# bf16 inputs give an fp32 result
# CHECK: %[[BF:.+]] = "tile.load"{{.*}} -> tensor<16x16xbf16>
# CHECK-NEXT: %[[Z4:.+]] = arith.constant dense<0.000000e+00> : tensor<16x16xf32>
# CHECK-NEXT: "tile.dot"(%[[BF]], %[[BF]], %[[Z4]]) {{.*}} : (tensor<16x16xbf16>, tensor<16x16xbf16>, tensor<16x16xf32>) -> tensor<16x16xf32>
# fp16 with out_dtype=fp16: an fp16 accumulator
# CHECK: %[[H:.+]] = "tile.load"{{.*}} -> tensor<16x16xf16>
# CHECK: %[[ZH:.+]] = arith.constant dense<0.000000e+00> : tensor<16x16xf16>
# CHECK-NEXT: %[[DH:.+]] = "tile.dot"(%[[H]], %[[H]], %[[ZH]]) {{.*}} : (tensor<16x16xf16>, tensor<16x16xf16>, tensor<16x16xf16>) -> tensor<16x16xf16>
# CHECK-NEXT: "tile.store"(%{{.+}}, %[[DH]])
# int8 x int8 accumulates in int32
# CHECK: %[[IA:.+]] = "tile.load"{{.*}} -> tensor<16x32xi8>
# CHECK: %[[IB:.+]] = "tile.load"{{.*}} -> tensor<32x16xi8>
# CHECK: %[[ZI:.+]] = arith.constant dense<0> : tensor<16x16xi32>
# CHECK-NEXT: %[[DI:.+]] = "tile.dot"(%[[IA]], %[[IB]], %[[ZI]]) {{.*}} : (tensor<16x32xi8>, tensor<32x16xi8>, tensor<16x16xi32>) -> tensor<16x16xi32>
# CHECK-NEXT: "tile.store"(%{{.+}}, %[[DI]])

show("batched", batched, {"a_ptr": P(tl.float32), "o_ptr": P(tl.float32)})
# CHECK-LABEL: // ---- batched
# CHECK: %[[A:.+]] = "tile.load"{{.*}} -> tensor<2x16x16xf32>
# CHECK: %[[Z:.+]] = arith.constant dense<0.000000e+00> : tensor<2x16x16xf32>
# CHECK-NEXT: "tile.dot"(%[[A]], %[[A]], %[[Z]]) {input_precision = "tf32x3", max_num_imprecise_acc = 0 : i32} : (tensor<2x16x16xf32>, tensor<2x16x16xf32>, tensor<2x16x16xf32>) -> tensor<2x16x16xf32>

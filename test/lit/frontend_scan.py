# RUN: %python %s | FileCheck %s
#
# The tile IR of scans: one "tile.scan" per call with its axis, its direction (reverse, an i32
# 0/1) and the symbol of a private scalar combine function (func.func of two tuples of
# scalars, earlier elements first).  cumsum widens int8 to i32 before scanning (as Triton);
# a tuple scan has one operand and one result per tile.
import tilework
import tilework.language as tl
from tilework.compiler.driver import ASTSource, compile


@tilework.jit
def cumsum_i8(x_ptr, o_ptr):
    offs = tl.arange(0, 64)[:, None] * 32 + tl.arange(0, 32)[None, :]
    x = tl.load(x_ptr + offs)
    tl.store(o_ptr + offs, tl.cumsum(x, axis=1, reverse=True))


@tilework.jit
def _affine(a, b, c, d):
    return a * c, b * c + d


@tilework.jit
def affine(a_ptr, b_ptr):
    offs = tl.arange(0, 128)
    a = tl.load(a_ptr + offs)
    b = tl.load(b_ptr + offs)
    ra, rb = tl.associative_scan((a, b), 0, _affine)
    tl.store(a_ptr + offs, ra)
    tl.store(b_ptr + offs, rb)


def tile_ir(fn, sig):
    return compile(ASTSource(fn, sig, {}, {}), "sm_90a", cache=False).asm["tile"]


print("// ---- cumsum_i8")
print(tile_ir(cumsum_i8, {"x_ptr": tl.pointer_type(tl.int8), "o_ptr": tl.pointer_type(tl.int32)}))
# CHECK-LABEL: // ---- cumsum_i8
# CHECK: func.func @cumsum_i8(
# CHECK: %[[X:.+]] = "tile.load"({{.*}}) -> tensor<64x32xi8>
# CHECK: %[[W:.+]] = arith.extsi %[[X]] : tensor<64x32xi8> to tensor<64x32xi32>
# CHECK: "tile.scan"(%[[W]]) {axis = 1 : i32, combine = @cumsum_i8__combine1, operandSegmentSizes = array<i32: 1, 0, 0, 0>, resultSegmentSizes = array<i32: 1, 0, 0, 0>, reverse = 1 : i32} : (tensor<64x32xi32>) -> tensor<64x32xi32>
# CHECK: func.func private @cumsum_i8__combine1(%[[A:.+]]: i32, %[[B:.+]]: i32) -> i32
# CHECK-NEXT: %[[S:.+]] = arith.addi %[[A]], %[[B]] : i32
# CHECK-NEXT: return %[[S]] : i32

print("// ---- affine")
print(tile_ir(affine, {"a_ptr": tl.pointer_type(tl.float32), "b_ptr": tl.pointer_type(tl.float32)}))
# CHECK-LABEL: // ---- affine
# CHECK: %{{.+}}:2 = "tile.scan"(%{{.+}}, %{{.+}}) {axis = 0 : i32, combine = @affine__combine1, operandSegmentSizes = array<i32: 1, 1, 0, 0>, resultSegmentSizes = array<i32: 1, 1, 0, 0>, reverse = 0 : i32} : (tensor<128xf32>, tensor<128xf32>) -> (tensor<128xf32>, tensor<128xf32>)
# CHECK: func.func private @affine__combine1(%[[A0:[^:]+]]: f32, %[[B0:[^:]+]]: f32, %[[A1:[^:]+]]: f32, %[[B1:[^:]+]]: f32) -> (f32, f32)
# CHECK-NEXT: %[[P:.+]] = arith.mulf %[[A0]], %[[A1]]
# CHECK-NEXT: %[[Q:.+]] = arith.mulf %[[B0]], %[[A1]]
# CHECK-NEXT: %[[R:.+]] = arith.addf %[[Q]], %[[B1]]
# CHECK-NEXT: return %[[P]], %[[R]] : f32, f32

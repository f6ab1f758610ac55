# RUN: %python %s | FileCheck %s
#
# The tile IR of loads and stores (compiled ahead of time, no GPU): the mask and `other`
# operands of tile.load / tile.store (operandSegmentSizes says which are present), `other`
# cast to the pointee type and splat, the cache/eviction hints as `cache`/`evict` string
# attributes and `volatile` as a unit attribute, the stored value cast to the pointee type,
# 2-D tiles of pointers built by broadcasting, and block pointers desugared into int64
# offsets `(offset + arange) * stride`, a `0 <= i < shape` mask per checked dimension and a
# zero or NaN `other` (padding_option); tl.advance adds to the offsets.
import tilework
import tilework.language as tl
from tilework.compiler.driver import ASTSource, compile

P16, P32 = tl.pointer_type(tl.float16), tl.pointer_type(tl.float32)


@tilework.jit
def masked(x_ptr, o_ptr, n):
    offs = tl.arange(0, 64)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m, other=1.5, cache_modifier=".cg",
                eviction_policy="evict_last")
    y = tl.load(x_ptr + offs, volatile=True)
    tl.store(o_ptr + offs, x + y, mask=m, cache_modifier=".cs", eviction_policy="evict_first")
    tl.store(o_ptr, 2)


@tilework.jit
def tile2d(x_ptr, o_ptr, M, N, stride):
    r = tl.arange(0, 16)[:, None]
    c = tl.arange(0, 32)[None, :]
    m = (r < M) & (c < N)
    x = tl.load(x_ptr + r * stride + c, mask=m, other=0.0)
    tl.store(o_ptr + r * N + c, x, mask=m)


@tilework.jit
def blocks(x_ptr, o_ptr, M, N, s0):
    bp = tl.make_block_ptr(x_ptr, (M, N), (s0, 1), (0, 0), (16, 32), (1, 0))
    a = tl.load(bp, boundary_check=(0, 1), padding_option="nan")
    bp = tl.advance(bp, (16, 0))
    c = tl.load(bp, boundary_check=(1,), padding_option="zero")
    d = tl.load(bp)
    op = tl.make_block_ptr(o_ptr, (M, N), (N, 1), (0, 0), (16, 32), (1, 0))
    tl.store(op, a + c + d, boundary_check=(0,))


def show(title, fn, sig, constants=None):
    print(f"// ---- {title}")
    print(compile(ASTSource(fn, sig, constants or {}, {}), "sm_90a", cache=False).asm["tile"])


show("masked", masked, {"x_ptr": P16, "o_ptr": P32, "n": tl.int32})
# CHECK-LABEL: // ---- masked
# CHECK: %[[M:.+]] = arith.cmpi slt, %{{.+}}, %{{.+}} : tensor<64xi32>
# CHECK: %[[XA:.+]] = "tile.addptr"({{.*}}) : (tensor<64x!tile.ptr<f16>>, tensor<64xi32>) -> tensor<64x!tile.ptr<f16>>
# `other=1.5` takes the pointee type (f16), splat to the pointers' shape
# CHECK-NEXT: %[[C:.+]] = arith.constant 1.500000e+00 : f16
# CHECK-NEXT: %[[O:.+]] = "tile.splat"(%[[C]]) : (f16) -> tensor<64xf16>
# CHECK-NEXT: %[[X:.+]] = "tile.load"(%[[XA]], %[[M]], %[[O]]) {cache = ".cg", evict = "evict_last", operandSegmentSizes = array<i32: 1, 1, 1>} : (tensor<64x!tile.ptr<f16>>, tensor<64xi1>, tensor<64xf16>) -> tensor<64xf16>
# CHECK: %[[Y:.+]] = "tile.load"(%{{.+}}) {operandSegmentSizes = array<i32: 1, 0, 0>, volatile} : (tensor<64x!tile.ptr<f16>>) -> tensor<64xf16>
# CHECK: %[[OA:.+]] = "tile.addptr"({{.*}}) -> tensor<64x!tile.ptr<f32>>
# CHECK-NEXT: %[[S:.+]] = arith.addf %[[X]], %[[Y]] {{.*}}: tensor<64xf16>
# the f16 sum is stored through f32 pointers: extended first
# CHECK-NEXT: %[[W:.+]] = arith.extf %[[S]] : tensor<64xf16> to tensor<64xf32>
# CHECK-NEXT: "tile.store"(%[[OA]], %[[W]], %[[M]]) {cache = ".cs", evict = "evict_first", operandSegmentSizes = array<i32: 1, 1, 1>} : (tensor<64x!tile.ptr<f32>>, tensor<64xf32>, tensor<64xi1>) -> ()
# a Python int stored through an f32 pointer: a scalar f32 constant, no mask
# CHECK-NEXT: %[[TWO:.+]] = arith.constant 2.000000e+00 : f32
# CHECK-NEXT: "tile.store"(%arg1, %[[TWO]]) {operandSegmentSizes = array<i32: 1, 1, 0>} : (!tile.ptr<f32>, f32) -> ()

show("tile2d", tile2d, {"x_ptr": P32, "o_ptr": P32, "M": tl.int32, "N": tl.int32,
                        "stride": tl.int32})
# CHECK-LABEL: // ---- tile2d
# CHECK: %[[R:.+]] = "tile.expand_dims"(%{{.+}}) {axis = 1 : i32} : (tensor<16xi32>) -> tensor<16x1xi32>
# CHECK: %[[C:.+]] = "tile.expand_dims"(%{{.+}}) {axis = 0 : i32} : (tensor<32xi32>) -> tensor<1x32xi32>
# CHECK: %[[RM:.+]] = arith.cmpi slt, %[[R]], %{{.+}} : tensor<16x1xi32>
# CHECK: %[[CM:.+]] = arith.cmpi slt, %[[C]], %{{.+}} : tensor<1x32xi32>
# CHECK-NEXT: %[[RMB:.+]] = "tile.broadcast"(%[[RM]]) : (tensor<16x1xi1>) -> tensor<16x32xi1>
# CHECK-NEXT: %[[CMB:.+]] = "tile.broadcast"(%[[CM]]) : (tensor<1x32xi1>) -> tensor<16x32xi1>
# CHECK-NEXT: %[[M:.+]] = arith.andi %[[RMB]], %[[CMB]] : tensor<16x32xi1>
# CHECK: %[[ROW:.+]] = arith.muli %[[R]], %{{.+}} : tensor<16x1xi32>
# CHECK-NEXT: %[[XS:.+]] = "tile.splat"(%arg0) : (!tile.ptr<f32>) -> tensor<16x1x!tile.ptr<f32>>
# CHECK-NEXT: %[[XR:.+]] = "tile.addptr"(%[[XS]], %[[ROW]]) : (tensor<16x1x!tile.ptr<f32>>, tensor<16x1xi32>) -> tensor<16x1x!tile.ptr<f32>>
# CHECK-NEXT: %[[XB:.+]] = "tile.broadcast"(%[[XR]]) : (tensor<16x1x!tile.ptr<f32>>) -> tensor<16x32x!tile.ptr<f32>>
# CHECK-NEXT: %[[CB:.+]] = "tile.broadcast"(%[[C]]) : (tensor<1x32xi32>) -> tensor<16x32xi32>
# CHECK-NEXT: %[[XP:.+]] = "tile.addptr"(%[[XB]], %[[CB]]) : (tensor<16x32x!tile.ptr<f32>>, tensor<16x32xi32>) -> tensor<16x32x!tile.ptr<f32>>
# CHECK: %[[V:.+]] = "tile.load"(%[[XP]], %[[M]], %{{.+}}) {operandSegmentSizes = array<i32: 1, 1, 1>} : (tensor<16x32x!tile.ptr<f32>>, tensor<16x32xi1>, tensor<16x32xf32>) -> tensor<16x32xf32>
# CHECK: "tile.store"(%{{.+}}, %[[V]], %[[M]]) {operandSegmentSizes = array<i32: 1, 1, 1>} : (tensor<16x32x!tile.ptr<f32>>, tensor<16x32xf32>, tensor<16x32xi1>) -> ()

show("blocks", blocks, {"x_ptr": P32, "o_ptr": P32, "M": tl.int32, "N": tl.int32,
                        "s0": tl.int64})
# CHECK-LABEL: // ---- blocks
# shapes are int64 (the int32 arguments extended), offsets int32
# CHECK: %[[M64:.+]] = arith.extsi %arg2 : i32 to i64
# CHECK-NEXT: %[[N64:.+]] = arith.extsi %arg3 : i32 to i64
# CHECK-NEXT: %[[ONE:.+]] = arith.constant 1 : i64
# CHECK-NEXT: %[[OFF0:.+]] = arith.constant 0 : i32
# dimension 0: (0 + arange(16)) as a column, times the stride s0 in int64
# CHECK: %[[I0:.+]] = "tile.expand_dims"(%{{.+}}) {axis = 1 : i32} : (tensor<16xi32>) -> tensor<16x1xi32>
# CHECK-NEXT: %[[I064:.+]] = arith.extsi %[[I0]] : tensor<16x1xi32> to tensor<16x1xi64>
# CHECK-NEXT: %[[S0:.+]] = "tile.splat"(%arg4) : (i64) -> tensor<16x1xi64>
# CHECK-NEXT: %[[T0:.+]] = arith.muli %[[I064]], %[[S0]] : tensor<16x1xi64>
# boundary_check 0: 0 <= i and i < M
# CHECK: %[[GE0:.+]] = arith.cmpi sge, %[[I0]], %{{.+}} : tensor<16x1xi32>
# CHECK: %[[LT0:.+]] = arith.cmpi slt, %{{.+}}, %{{.+}} : tensor<16x1xi64>
# CHECK-NEXT: %[[OK0:.+]] = arith.andi %[[GE0]], %[[LT0]] : tensor<16x1xi1>
# dimension 1, then the offsets add up in int64
# CHECK: %[[I1:.+]] = "tile.expand_dims"(%{{.+}}) {axis = 0 : i32} : (tensor<32xi32>) -> tensor<1x32xi32>
# CHECK: %[[OFFS:.+]] = arith.addi %{{.+}}, %{{.+}} : tensor<16x32xi64>
# CHECK: %[[OK1:.+]] = arith.andi %{{.+}}, %{{.+}} : tensor<1x32xi1>
# CHECK-NEXT: %[[OK0B:.+]] = "tile.broadcast"(%[[OK0]]) : (tensor<16x1xi1>) -> tensor<16x32xi1>
# CHECK-NEXT: %[[OK1B:.+]] = "tile.broadcast"(%[[OK1]]) : (tensor<1x32xi1>) -> tensor<16x32xi1>
# CHECK-NEXT: %[[MASK:.+]] = arith.andi %[[OK0B]], %[[OK1B]] : tensor<16x32xi1>
# CHECK-NEXT: %[[BS:.+]] = "tile.splat"(%arg0) : (!tile.ptr<f32>) -> tensor<16x32x!tile.ptr<f32>>
# CHECK-NEXT: %[[PTRS:.+]] = "tile.addptr"(%[[BS]], %[[OFFS]]) : (tensor<16x32x!tile.ptr<f32>>, tensor<16x32xi64>) -> tensor<16x32x!tile.ptr<f32>>
# padding_option="nan"
# CHECK-NEXT: %[[NAN:.+]] = arith.constant 0x7FC00000 : f32
# CHECK-NEXT: %[[NANS:.+]] = "tile.splat"(%[[NAN]]) : (f32) -> tensor<16x32xf32>
# CHECK-NEXT: %[[A:.+]] = "tile.load"(%[[PTRS]], %[[MASK]], %[[NANS]]) {operandSegmentSizes = array<i32: 1, 1, 1>}
# tl.advance(bp, (16, 0)): offset 0 becomes 0 + 16, offset 1 is unchanged
# CHECK-NEXT: %[[D16:.+]] = arith.constant 16 : i32
# CHECK-NEXT: %[[NEWOFF:.+]] = arith.addi %[[OFF0]], %[[D16]] : i32
# CHECK-NEXT: "tile.make_range"() {end = 16 : i32, start = 0 : i32}
# CHECK-NEXT: "tile.splat"(%[[NEWOFF]]) : (i32) -> tensor<16xi32>
# only dimension 1 checked, padding "zero"
# CHECK: %[[ZERO:.+]] = arith.constant 0.000000e+00 : f32
# CHECK-NEXT: %[[ZEROS:.+]] = "tile.splat"(%[[ZERO]]) : (f32) -> tensor<16x32xf32>
# CHECK-NEXT: %[[C:.+]] = "tile.load"(%{{.+}}, %{{.+}}, %[[ZEROS]]) {operandSegmentSizes = array<i32: 1, 1, 1>}
# no boundary_check: no mask, no other
# CHECK-NOT: arith.cmpi
# CHECK: %[[D:.+]] = "tile.load"(%{{.+}}) {operandSegmentSizes = array<i32: 1, 0, 0>} : (tensor<16x32x!tile.ptr<f32>>) -> tensor<16x32xf32>
# the store checks dimension 0 only
# CHECK: %[[ST:.+]] = "tile.addptr"(%{{.+}}, %{{.+}}) : (tensor<16x32x!tile.ptr<f32>>, tensor<16x32xi64>) -> tensor<16x32x!tile.ptr<f32>>
# CHECK-NEXT: %[[SM:.+]] = "tile.broadcast"(%{{.+}}) : (tensor<16x1xi1>) -> tensor<16x32xi1>
# CHECK-NEXT: "tile.store"(%[[ST]], %{{.+}}, %[[SM]]) {operandSegmentSizes = array<i32: 1, 1, 1>} : (tensor<16x32x!tile.ptr<f32>>, tensor<16x32xf32>, tensor<16x32xi1>) -> ()

# RUN: %python %s | FileCheck %s
#
# The tile IR of the creation and shape builtins (compiled ahead of time, no GPU):
# tl.arange -> tile.make_range (start/end attributes), tl.full/tl.zeros/tl.zeros_like/
# tl.full_like of constants -> one splat arith.constant, of a runtime scalar -> tile.splat;
# expand_dims / x[None, :] -> tile.expand_dims (one op per new axis), broadcast_to and
# implicit broadcasting -> tile.broadcast, reshape/view/ravel -> tile.reshape (none when the
# shape is unchanged), trans/permute/.T -> tile.trans with its order, join -> tile.join,
# split -> one tile.split with two results, interleave -> join + reshape, cat -> tile.cat.
import tilework
import tilework.language as tl
from tilework.compiler.driver import ASTSource, compile

P16, P32, PI32 = (tl.pointer_type(t) for t in (tl.float16, tl.float32, tl.int32))


@tilework.jit
def creation(h_ptr, i_ptr, f_ptr, v):
    r = tl.arange(4, 12)
    f = tl.full([8], 3, tl.int32)
    zl = tl.zeros_like(r)
    fl = tl.full_like(r, 7)
    tl.store(i_ptr + tl.arange(0, 8), r + f + zl + fl)
    tl.store(h_ptr + tl.arange(0, 8), tl.zeros([8], tl.float16))
    fv = tl.full([2, 4], v, tl.float32)
    tl.store(f_ptr + tl.arange(0, 2)[:, None] * 4 + tl.arange(0, 4)[None, :], fv)


@tilework.jit
def shapes(x_ptr, o_ptr):
    x = tl.load(x_ptr + tl.arange(0, 8))
    e = tl.expand_dims(x, (0, 2))            # [1, 8, 1]
    bt = tl.broadcast_to(x[None, :], [4, 8])  # [4, 8]
    rr = tl.reshape(bt, [2, 16])
    vv = tl.view(rr, [32])
    same = tl.reshape(vv, (32,))             # unchanged: no op
    t = tl.trans(bt)                         # [8, 4]
    tt = bt.T                                # [8, 4]
    p = tl.permute(tl.reshape(bt, [2, 2, 8]), (2, 0, 1))  # [8, 2, 2]
    rv = tl.ravel(p)
    a, b = tl.broadcast(x[:, None], x[None, :])  # both [8, 8]
    tl.store(o_ptr + tl.arange(0, 32), same + rv + tl.ravel(t + tt))
    tl.store(o_ptr + tl.arange(0, 64), tl.ravel(a + b))
    tl.store(o_ptr + tl.arange(0, 8), tl.reshape(e, [8]))


@tilework.jit
def joins(x_ptr, o_ptr):
    c = tl.arange(0, 16)
    x = tl.load(x_ptr + c)
    y = tl.load(x_ptr + 16 + c)
    j = tl.join(x, y)
    lo, hi = tl.split(j)
    il = tl.interleave(lo, hi)
    ct = tl.cat(x, y, can_reorder=True)
    tl.store(o_ptr + tl.arange(0, 32), il + ct)


def show(title, fn, sig, constants=None):
    print(f"// ---- {title}")
    print(compile(ASTSource(fn, sig, constants or {}, {}), "sm_90a", cache=False).asm["tile"])


show("creation", creation, {"h_ptr": P16, "i_ptr": PI32, "f_ptr": P32, "v": tl.float32})
# CHECK-LABEL: // ---- creation
# CHECK: func.func @creation(
# CHECK-NEXT: %[[R:.+]] = "tile.make_range"() {end = 12 : i32, start = 4 : i32} : () -> tensor<8xi32>
# CHECK-NEXT: %[[F:.+]] = arith.constant dense<3> : tensor<8xi32>
# CHECK-NEXT: %[[ZL:.+]] = arith.constant dense<0> : tensor<8xi32>
# CHECK-NEXT: %[[FL:.+]] = arith.constant dense<7> : tensor<8xi32>
# CHECK: %[[S1:.+]] = arith.addi %[[R]], %[[F]] : tensor<8xi32>
# CHECK-NEXT: %[[S2:.+]] = arith.addi %[[S1]], %[[ZL]] : tensor<8xi32>
# CHECK-NEXT: %[[S3:.+]] = arith.addi %[[S2]], %[[FL]] : tensor<8xi32>
# CHECK-NEXT: "tile.store"(%{{.+}}, %[[S3]])
# CHECK: %[[Z16:.+]] = arith.constant dense<0.000000e+00> : tensor<8xf16>
# CHECK: "tile.store"(%{{.+}}, %[[Z16]]) {{.*}} : (tensor<8x!tile.ptr<f16>>, tensor<8xf16>) -> ()
# A runtime fill value is splat, not folded into a constant.
# CHECK: %[[FV:.+]] = "tile.splat"(%arg3) : (f32) -> tensor<2x4xf32>
# CHECK: "tile.store"(%{{.+}}, %[[FV]]) {{.*}} : (tensor<2x4x!tile.ptr<f32>>, tensor<2x4xf32>) -> ()
# CHECK-NEXT: return

show("shapes", shapes, {"x_ptr": P32, "o_ptr": P32})
# CHECK-LABEL: // ---- shapes
# CHECK: %[[X:.+]] = "tile.load"{{.*}} -> tensor<8xf32>
# expand_dims with a tuple of axes: one op per axis, in increasing order
# CHECK-NEXT: %[[E0:.+]] = "tile.expand_dims"(%[[X]]) {axis = 0 : i32} : (tensor<8xf32>) -> tensor<1x8xf32>
# CHECK-NEXT: %[[E:.+]] = "tile.expand_dims"(%[[E0]]) {axis = 2 : i32} : (tensor<1x8xf32>) -> tensor<1x8x1xf32>
# CHECK-NEXT: %[[XN:.+]] = "tile.expand_dims"(%[[X]]) {axis = 0 : i32} : (tensor<8xf32>) -> tensor<1x8xf32>
# CHECK-NEXT: %[[BT:.+]] = "tile.broadcast"(%[[XN]]) : (tensor<1x8xf32>) -> tensor<4x8xf32>
# CHECK-NEXT: %[[RR:.+]] = "tile.reshape"(%[[BT]]) : (tensor<4x8xf32>) -> tensor<2x16xf32>
# CHECK-NEXT: %[[VV:.+]] = "tile.reshape"(%[[RR]]) : (tensor<2x16xf32>) -> tensor<32xf32>
# CHECK-NEXT: %[[T:.+]] = "tile.trans"(%[[BT]]) {order = array<i32: 1, 0>} : (tensor<4x8xf32>) -> tensor<8x4xf32>
# CHECK-NEXT: %[[TT:.+]] = "tile.trans"(%[[BT]]) {order = array<i32: 1, 0>} : (tensor<4x8xf32>) -> tensor<8x4xf32>
# CHECK-NEXT: %[[R3:.+]] = "tile.reshape"(%[[BT]]) : (tensor<4x8xf32>) -> tensor<2x2x8xf32>
# CHECK-NEXT: %[[P:.+]] = "tile.trans"(%[[R3]]) {order = array<i32: 2, 0, 1>} : (tensor<2x2x8xf32>) -> tensor<8x2x2xf32>
# CHECK-NEXT: %[[RV:.+]] = "tile.reshape"(%[[P]]) : (tensor<8x2x2xf32>) -> tensor<32xf32>
# tl.broadcast: both operands grow to the common shape
# CHECK-NEXT: %[[A1:.+]] = "tile.expand_dims"(%[[X]]) {axis = 1 : i32} : (tensor<8xf32>) -> tensor<8x1xf32>
# CHECK-NEXT: %[[B1:.+]] = "tile.expand_dims"(%[[X]]) {axis = 0 : i32} : (tensor<8xf32>) -> tensor<1x8xf32>
# CHECK-NEXT: %[[A:.+]] = "tile.broadcast"(%[[A1]]) : (tensor<8x1xf32>) -> tensor<8x8xf32>
# CHECK-NEXT: %[[B:.+]] = "tile.broadcast"(%[[B1]]) : (tensor<1x8xf32>) -> tensor<8x8xf32>
# The reshape to an unchanged shape emitted nothing: `same` is the view itself.
# CHECK: %[[SR:.+]] = arith.addf %[[VV]], %[[RV]] {{.*}}: tensor<32xf32>
# CHECK-NEXT: %[[TS:.+]] = arith.addf %[[T]], %[[TT]] {{.*}}: tensor<8x4xf32>
# CHECK-NEXT: %[[TR:.+]] = "tile.reshape"(%[[TS]]) : (tensor<8x4xf32>) -> tensor<32xf32>
# CHECK-NEXT: arith.addf %[[SR]], %[[TR]]
# CHECK: %[[AB:.+]] = arith.addf %[[A]], %[[B]] {{.*}}: tensor<8x8xf32>
# CHECK-NEXT: "tile.reshape"(%[[AB]]) : (tensor<8x8xf32>) -> tensor<64xf32>
# CHECK: "tile.reshape"(%[[E]]) : (tensor<1x8x1xf32>) -> tensor<8xf32>

show("joins", joins, {"x_ptr": P32, "o_ptr": P32})
# CHECK-LABEL: // ---- joins
# CHECK: %[[X:.+]] = "tile.load"{{.*}} -> tensor<16xf32>
# CHECK: %[[Y:.+]] = "tile.load"{{.*}} -> tensor<16xf32>
# CHECK-NEXT: %[[J:.+]] = "tile.join"(%[[X]], %[[Y]]) : (tensor<16xf32>, tensor<16xf32>) -> tensor<16x2xf32>
# CHECK-NEXT: %[[S:.+]]:2 = "tile.split"(%[[J]]) : (tensor<16x2xf32>) -> (tensor<16xf32>, tensor<16xf32>)
# CHECK-NEXT: %[[J2:.+]] = "tile.join"(%[[S]]#0, %[[S]]#1) : (tensor<16xf32>, tensor<16xf32>) -> tensor<16x2xf32>
# CHECK-NEXT: %[[IL:.+]] = "tile.reshape"(%[[J2]]) : (tensor<16x2xf32>) -> tensor<32xf32>
# CHECK-NEXT: %[[CT:.+]] = "tile.cat"(%[[X]], %[[Y]]) : (tensor<16xf32>, tensor<16xf32>) -> tensor<32xf32>
# CHECK: arith.addf %[[IL]], %[[CT]]

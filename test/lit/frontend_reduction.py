# RUN: %python %s | FileCheck %s
#
# The tile IR and the layouts of reductions and shape ops (compiled ahead of time, no GPU):
# tl.sum/tl.max/tl.argmax become tile.reduce ops naming private combine functions, x[:, None]
# becomes tile.expand_dims, tl.trans a tile.trans and tl.reshape a tile.reshape; in the
# tilegpu stage a reduction's result has a slice of its operand's layout, and expand_dims of a
# slice gets the parent back with no conversion.
import tilework
import tilework.language as tl
from tilework import CompileOptions
from tilework.compiler.driver import ASTSource, compile

P32, PI32 = tl.pointer_type(tl.float32), tl.pointer_type(tl.int32)


@tilework.jit
def rows(x_ptr, out_ptr, idx_ptr, M: tl.constexpr, N: tl.constexpr):
    r = tl.arange(0, M)
    c = tl.arange(0, N)
    x = tl.load(x_ptr + r[:, None] * N + c[None, :])
    s = tl.sum(x, axis=1)
    y = x - s[:, None]
    tl.store(out_ptr + r[:, None] * N + c[None, :], y)
    tl.store(idx_ptr + c, tl.argmax(x, axis=0))
    t = tl.reshape(tl.trans(y), (M * N,))
    tl.store(out_ptr + tl.arange(0, M * N), t + tl.max(x))


ck = compile(ASTSource(rows, {"x_ptr": P32, "out_ptr": P32, "idx_ptr": PI32},
                       {"M": 16, "N": 64}, {}), "sm_90a", CompileOptions(num_warps=4),
             cache=False)
print(ck.asm["tile"])
# CHECK-LABEL: func.func @rows
# CHECK: %[[X:.+]] = "tile.load"
# CHECK: %[[S:.+]] = "tile.reduce"(%[[X]]) {axis = 1 : i32, combine = @rows__combine1
# CHECK-SAME: -> tensor<16xf32>
# CHECK: "tile.expand_dims"(%[[S]]) {axis = 1 : i32} : (tensor<16xf32>) -> tensor<16x1xf32>
# CHECK: "tile.reduce"({{.*}}) {axis = 0 : i32, combine = @rows__combine{{[0-9]+}}
# CHECK-SAME: (tensor<16x64xf32>, tensor<16x64xi32>) -> (tensor<64xf32>, tensor<64xi32>)
# CHECK: "tile.trans"({{.*}}) {order = array<i32: 1, 0>} : (tensor<16x64xf32>) -> tensor<64x16xf32>
# CHECK: "tile.reshape"({{.*}}) : (tensor<64x16xf32>) -> tensor<1024xf32>
# CHECK: func.func private @rows__combine1(%{{.*}}: f32, %{{.*}}: f32) -> f32
# CHECK-NEXT: arith.addf
# CHECK-NEXT: return
print(ck.asm["tilegpu"])
# CHECK-LABEL: func.func @rows
# CHECK: %[[XG:.+]] = "tile.load"{{.*}} -> tensor<16x64xf32, #tilegpu.blocked<array<i32: 1, 4>, array<i32: 2, 16>, array<i32: 4, 1>, array<i32: 1, 0>>>
# CHECK: %[[SG:.+]] = "tile.reduce"(%[[XG]]) {{.*}} -> tensor<16xf32, #tilegpu.slice<1 : i32, #tilegpu.blocked<array<i32: 1, 4>, array<i32: 2, 16>, array<i32: 4, 1>, array<i32: 1, 0>>>>
# CHECK-NOT: tilegpu.convert_layout
# CHECK: "tile.expand_dims"(%[[SG]]) {{.*}} -> tensor<16x1xf32, #tilegpu.blocked<array<i32: 1, 4>, array<i32: 2, 16>, array<i32: 4, 1>, array<i32: 1, 0>>>
# CHECK: "tile.trans"({{.*}}) -> tensor<64x16xf32, #tilegpu.blocked<array<i32: 4, 1>, array<i32: 16, 2>, array<i32: 1, 4>, array<i32: 0, 1>>>

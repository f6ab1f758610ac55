# RUN: %python %s | FileCheck %s
#
# tl.inline_asm_elementwise is one tile.inline_asm on the broadcast arguments (dtypes kept, a
# Python int an int32 constant), with the asm, constraints, pack and purity as attributes; a
# tuple of dtypes gives one result each.
import tilework
import tilework.language as tl
from tilework.compiler.driver import ASTSource, compile

P = tl.pointer_type


@tilework.jit
def asm(x_ptr, y_ptr, o_ptr, f_ptr):
    x = tl.load(x_ptr + tl.arange(0, 16))[:, None]  # int8 [16, 1]
    y = tl.load(y_ptr + tl.arange(0, 16))[None, :]  # fp32 [1, 16]
    a, b = tl.inline_asm_elementwise("add.s32 $0, $2, $4; mov.b32 $1, $3;", "=r,=f,r,f,r",
                                     [x.to(tl.int32), y, 7],
                                     dtype=(tl.int32, tl.float32), is_pure=False, pack=1)
    c = tl.inline_asm_elementwise("shl.b32 $0, $1, 3;", "=r,r", [x], dtype=tl.int8,
                                  is_pure=True, pack=4)
    offs = tl.arange(0, 16)[:, None] * 16 + tl.arange(0, 16)[None, :]
    tl.store(o_ptr + offs, a + c)
    tl.store(f_ptr + offs, b)


print(compile(ASTSource(asm, {"x_ptr": P(tl.int8), "y_ptr": P(tl.float32),
                              "o_ptr": P(tl.int32), "f_ptr": P(tl.float32)}, {}, {}),
              "sm_90a", cache=False).asm["tile"])
# CHECK: %[[XB:.+]] = "tile.broadcast"(%{{.+}}) : (tensor<16x1xi32>) -> tensor<16x16xi32>
# CHECK: %[[YB:.+]] = "tile.broadcast"(%{{.+}}) : (tensor<1x16xf32>) -> tensor<16x16xf32>
# CHECK: %[[SEVEN:.+]] = "tile.splat"(%{{.+}}) : (i32) -> tensor<16x16xi32>
# CHECK: %{{.+}}:2 = "tile.inline_asm"(%[[XB]], %[[YB]], %[[SEVEN]]) {{.*}}asm = "add.s32 $0, $2, $4; mov.b32 $1, $3;", constraints = "=r,=f,r,f,r", {{.*}}pack = 1 : i32, pure = 0 : i32{{.*}} : (tensor<16x16xi32>, tensor<16x16xf32>, tensor<16x16xi32>) -> (tensor<16x16xi32>, tensor<16x16xf32>)
# CHECK: "tile.inline_asm"(%{{.+}}) {{.*}}constraints = "=r,r", {{.*}}pack = 4 : i32, pure = 1 : i32{{.*}} : (tensor<16x1xi8>) -> tensor<16x1xi8>

# RUN: %python %s | FileCheck %s
#
# The tile IR of libdevice's bit intrinsics (frontend/ops_bits.py): popc/clz of int64 count in
# 64 bits and truncate to int32 (libdevice's result dtype), ffs is cttz + 1 with 0 for 0, brev
# and byte_perm are tile ops, sad is |x - y| + z with z's bits as int32, mul24 sign-extends
# bit 23 of int32 operands (shift left 8, arithmetic shift right 8) and zero-extends uint32.
import tilework
import tilework.language as tl
from tilework.compiler.driver import ASTSource, compile
from tilework.language.extra import libdevice

P = tl.pointer_type


@tilework.jit
def bits(i_ptr, w_ptr, u_ptr, o_ptr, ow_ptr, ou_ptr):
    offs = tl.arange(0, 16)
    i = tl.load(i_ptr + offs)  # int32
    w = tl.load(w_ptr + offs)  # int64
    u = tl.load(u_ptr + offs)  # uint32
    tl.store(o_ptr + offs, libdevice.popc(w))
    tl.store(o_ptr + offs, libdevice.clz(i))
    tl.store(o_ptr + offs, libdevice.ffs(i))
    tl.store(ow_ptr + offs, libdevice.brev(w))
    tl.store(o_ptr + offs, libdevice.byte_perm(i, i, i))
    tl.store(o_ptr + offs, libdevice.sad(i, i, u))
    tl.store(o_ptr + offs, libdevice.mul24(i, i))
    tl.store(ou_ptr + offs, libdevice.mul24(u, u))


print(compile(ASTSource(bits, {"i_ptr": P(tl.int32), "w_ptr": P(tl.int64), "u_ptr": P(tl.uint32),
                               "o_ptr": P(tl.int32), "ow_ptr": P(tl.int64),
                               "ou_ptr": P(tl.uint32)}, {}, {}), "sm_90a",
              cache=False).asm["tile"])
# CHECK: %[[I:.+]] = "tile.load"{{.*}} -> tensor<16xi32>
# CHECK: %[[W:.+]] = "tile.load"{{.*}} -> tensor<16xi64>
# CHECK: %[[U:.+]] = "tile.load"{{.*}} -> tensor<16xi32>
# CHECK: %[[PC:.+]] = math.ctpop %[[W]] : tensor<16xi64>
# CHECK-NEXT: arith.trunci %[[PC]] : tensor<16xi64> to tensor<16xi32>
# CHECK: math.ctlz %[[I]] : tensor<16xi32>
# CHECK: %[[TZ:.+]] = math.cttz %[[I]] : tensor<16xi32>
# CHECK: %[[Z:.+]] = arith.cmpi eq, %[[I]], %{{.+}} : tensor<16xi32>
# CHECK: %[[TZ1:.+]] = arith.addi %[[TZ]], %{{.+}} : tensor<16xi32>
# CHECK: arith.select %[[Z]], %{{.+}}, %[[TZ1]] : tensor<16xi1>, tensor<16xi32>
# CHECK: "tile.bitreverse"(%[[W]]) : (tensor<16xi64>) -> tensor<16xi64>
# CHECK: "tile.byte_perm"(%[[I]], %[[I]], %[[I]]) : (tensor<16xi32>, tensor<16xi32>, tensor<16xi32>) -> tensor<16xi32>
# CHECK: %[[LT:.+]] = arith.cmpi slt, %[[I]], %[[I]] : tensor<16xi32>
# CHECK: %[[D:.+]] = arith.select %[[LT]], %{{.+}}, %{{.+}} : tensor<16xi1>, tensor<16xi32>
# CHECK: %[[ZB:.+]] = arith.bitcast %[[U]] : tensor<16xi32> to tensor<16xi32>
# CHECK-NEXT: arith.addi %[[D]], %[[ZB]] : tensor<16xi32>
# CHECK: arith.shli %[[I]], %{{.+}} : tensor<16xi32>
# CHECK: arith.shrsi
# CHECK: arith.muli
# CHECK: arith.shli %[[U]], %{{.+}} : tensor<16xi32>
# CHECK: arith.shrui
# CHECK: arith.muli

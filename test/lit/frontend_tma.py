# RUN: %python %s | FileCheck %s
#
# The tile IR of TMA loads (sm_90a): a host TensorDescriptor whose block TMA can copy gets a
# tensor-map parameter after all others (`!tile.ptr<i8> {tile.tma}`, its plan in the kernel's
# `tile.tma`), and `desc.load` is a `tile.descriptor_load` of it at the offsets, with the
# plan's swizzle; a descriptor only stored to has no tensor map.  With tma_store=True its
# `desc.store` is a `tile.descriptor_store` of its own tensor map (the value, then the
# offsets).  On sm_80 (and with tma=False) the same source is block-pointer accesses.
import tilework
import tilework.language as tl
from tilework import CompileOptions
from tilework.compiler.driver import ASTSource, compile
from tilework.language.descriptor import tensor_descriptor_type


@tilework.jit
def copy(a_desc, o_desc, BM: tl.constexpr, BN: tl.constexpr):
    p = tl.program_id(0)
    o_desc.store([p * BM, 0], a_desc.load([p * BM, 0]))


T = tensor_descriptor_type(tl.bfloat16, [64, 32])
for target, tma, store in (("sm_90a", True, False), ("sm_90a", True, True),
                           ("sm_90a", False, True), ("sm_80", True, True)):
    ck = compile(ASTSource(copy, {"a_desc": T, "o_desc": T}, {"BM": 64, "BN": 32}, {}), target,
                 CompileOptions(tma=tma, tma_store=store), cache=False)
    print(f"// {target} tma={tma} tma_store={store}")
    print(ck.asm["tile"])

# CHECK-LABEL: // sm_90a tma=True tma_store=False
# CHECK: func.func @copy(%arg0: !tile.ptr<bf16>, %arg1: i32, %arg2: i32, %arg3: i64, %arg4: !tile.ptr<bf16>, %arg5: i32, %arg6: i32, %arg7: i64, %arg8: !tile.ptr<i8> {tile.tma}) attributes {tile.kernel, tile.tma = ["arg=a_desc;box=64,32;swizzle=64"]}
# CHECK: %[[P:.+]] = "tile.get_program_id"() {axis = 0 : i32}
# CHECK-NEXT: %[[BM0:.+]] = arith.constant 64 : i32
# CHECK-NEXT: %[[RS:.+]] = arith.muli %[[P]], %[[BM0]] : i32
# CHECK-NEXT: %[[BM:.+]] = arith.constant 64 : i32
# CHECK-NEXT: %[[R:.+]] = arith.muli %[[P]], %[[BM]] : i32
# CHECK-NEXT: %[[C:.+]] = arith.constant 0 : i32
# CHECK-NEXT: %{{.+}} = "tile.descriptor_load"(%arg8, %[[R]], %[[C]]) {operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0>, swizzle = 64 : i32} : (!tile.ptr<i8>, i32, i32) -> tensor<64x32xbf16>
# CHECK-NOT: tile.descriptor_load
# CHECK: "tile.store"
# CHECK-LABEL: // sm_90a tma=True tma_store=True
# CHECK: func.func @copy({{.*}}, %arg8: !tile.ptr<i8> {tile.tma}, %arg9: !tile.ptr<i8> {tile.tma}) attributes {tile.kernel, tile.tma = ["arg=a_desc;box=64,32;swizzle=64", "arg=o_desc;box=64,32;swizzle=64"]}
# CHECK: %[[V:.+]] = "tile.descriptor_load"(%arg8,
# CHECK-NEXT: arith.constant 0 : i32
# CHECK-NEXT: "tile.descriptor_store"(%arg9, %[[V]], %{{.+}}, %{{.+}}) {operandSegmentSizes = array<i32: 1, 1, 1, 1, 0, 0, 0>, swizzle = 64 : i32} : (!tile.ptr<i8>, tensor<64x32xbf16>, i32, i32) -> ()
# CHECK-NOT: "tile.store"
# CHECK-LABEL: // sm_90a tma=False
# CHECK-NOT: tile.tma
# CHECK-NOT: tile.descriptor_load
# CHECK: "tile.load"
# CHECK-LABEL: // sm_80 tma=True
# CHECK-NOT: tile.tma
# CHECK-NOT: tile.descriptor_load
# CHECK: "tile.load"

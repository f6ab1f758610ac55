# RUN: %python %s | FileCheck %s
#
# The tile IR of TMA loads (sm_90a): a host TensorDescriptor whose block TMA can copy gets a
# tensor-map parameter after all others (`!tile.ptr<i8> {tile.tma}`, its plan in the kernel's
# `tile.tma`), and `desc.load` is a `tile.descriptor_load` of it at the offsets, with the
# plan's swizzle and the block-pointer load it falls back to (pointers, mask, zero padding;
# tile-tma-guard takes it where the inner offset is not known 16-byte aligned); a descriptor
# only stored to has no tensor map.  With tma_store=True its
# `desc.store` is a `tile.descriptor_store` of its own tensor map (the value, then the
# offsets) holding the block-pointer store it falls back to (its pointers and mask, the ops the
# block-pointer store emits) and the row length; tile-tma-guard, the tilegpu stage's
# first pass, keeps the TMA store where it is exact on the hardware: every offset provably
# >= 0 (program ids, constants >= 0, a range loop's variable, their sums and products; not an
# int argument) and the tensor's rows a multiple of 16 bytes (the launcher's specialization of
# the last shape argument, `tile.divisibility`); elsewhere it takes the fallback (`tile.store`
# under its mask), as tma_store=False does in the frontend.  The cases above run with
# tma_store_guard=False; "rows16 runtime" with it: the offsets of unknown sign become
# `scf.if (offset >= 0) { TMA store } else { the fallback }`.  On sm_80 (and with tma=False) the
# same source is block-pointer accesses.
import tilework
import tilework.language as tl
from tilework import CompileOptions
from tilework.backends import parse_target
from tilework.compiler.driver import ASTSource, compile
from tilework.language.descriptor import tensor_descriptor_type
from tilework.lowering import PassContext, run_pipeline


@tilework.jit
def copy(a_desc, o_desc, BM: tl.constexpr, BN: tl.constexpr):
    p = tl.program_id(0)
    o_desc.store([p * BM, 0], a_desc.load([p * BM, 0]))


@tilework.jit
def store_at(o_desc, r0, BM: tl.constexpr, BN: tl.constexpr):
    p = tl.program_id(0)
    v = tl.full((BM, BN), 1.0, tl.bfloat16)
    o_desc.store([p * BM + 3 * BM, p * BN], v)  # >= 0
    o_desc.store([r0 + p * BM, 0], v)          # an int argument: maybe negative
    o_desc.store([p * BM, p * BN - BN], v)     # a difference: maybe negative
    for i in range(r0):
        o_desc.store([i * BM, (i + 1) * BN], v)  # a range loop's variable from 0: >= 0
    for t in range(p, r0, tl.num_programs(0)):  # a grid-stride loop (runtime step): >= 0
        o_desc.store([(t // 4) * BM, (t % r0) * BN], v)


T = tensor_descriptor_type(tl.bfloat16, [64, 32])
ROWS = {"o_desc.shape1": {"tile.divisibility": 8}}  # 16-byte rows of bf16
for target, tma, store in (("sm_90a", True, False), ("sm_90a", True, True),
                           ("sm_90a", False, True), ("sm_80", True, True)):
    ck = compile(ASTSource(copy, {"a_desc": T, "o_desc": T}, {"BM": 64, "BN": 32}, ROWS),
                 target, CompileOptions(tma=tma, tma_store=store), cache=False)
    print(f"// {target} tma={tma} tma_store={store}")
    print(ck.asm["tile"])

for name, attrs, store, rt in (("rows16", ROWS, True, False), ("rows_unknown", {}, True, False),
                               ("unguarded", {}, "unguarded", False),
                               ("rows16 runtime", ROWS, True, True)):
    opts = CompileOptions(tma_store=store, tma_store_guard=rt)
    ck = compile(ASTSource(store_at, {"o_desc": T, "r0": tl.int32}, {"BM": 64, "BN": 32}, attrs),
                 "sm_90a", opts, cache=False)
    print(f"// store_at {name}")
    print(ck.asm["tile"])
    mod = ck.asm["tile"]
    with tilework.dialects.new_context():
        import mlir.ir as ir
        m = ir.Module.parse(mod)
        run_pipeline(m, ["tile-tma-guard", "tile-combine"],
                     PassContext(parse_target("sm_90a"), opts))
        print(f"// store_at {name} guarded")
        print(m)

# CHECK-LABEL: // sm_90a tma=True tma_store=False
# CHECK: func.func @copy(%arg0: !tile.ptr<bf16>, %arg1: i32, %arg2: i32, %arg3: i64, %arg4: !tile.ptr<bf16>, %arg5: i32, %arg6: i32 {tile.divisibility = 8 : i32}, %arg7: i64, %arg8: !tile.ptr<i8> {tile.tma}) attributes {tile.kernel, tile.tma = ["arg=a_desc;box=64,32;swizzle=64"]}
# CHECK: %[[P:.+]] = "tile.get_program_id"() {axis = 0 : i32}
# CHECK-NEXT: %[[BM0:.+]] = arith.constant 64 : i32
# CHECK-NEXT: %[[RS:.+]] = arith.muli %[[P]], %[[BM0]] : i32
# CHECK-NEXT: %[[BM:.+]] = arith.constant 64 : i32
# CHECK-NEXT: %[[R:.+]] = arith.muli %[[P]], %[[BM]] : i32
# CHECK-NEXT: %[[C:.+]] = arith.constant 0 : i32
# CHECK: %[[M:.+]] = arith.andi %{{.+}}, %{{.+}} : tensor<64x32xi1>
# CHECK: %[[PTR:.+]] = "tile.addptr"
# CHECK-NEXT: %[[Z:.+]] = arith.constant 0.000000e+00 : bf16
# CHECK-NEXT: %[[O:.+]] = "tile.splat"(%[[Z]]) : (bf16) -> tensor<64x32xbf16>
# CHECK-NEXT: %{{.+}} = "tile.descriptor_load"(%arg8, %[[R]], %[[C]], %[[PTR]], %[[M]], %[[O]]) {operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 1, 1, 1>, swizzle = 64 : i32} : (!tile.ptr<i8>, i32, i32, tensor<64x32x!tile.ptr<bf16>>, tensor<64x32xi1>, tensor<64x32xbf16>) -> tensor<64x32xbf16>
# CHECK-NOT: tile.descriptor_load
# CHECK: "tile.store"
# CHECK-LABEL: // sm_90a tma=True tma_store=True
# CHECK: func.func @copy({{.*}}, %arg8: !tile.ptr<i8> {tile.tma}, %arg9: !tile.ptr<i8> {tile.tma}) attributes {tile.kernel, tile.tma = ["arg=a_desc;box=64,32;swizzle=64", "arg=o_desc;box=64,32;swizzle=64"]}
# CHECK: %[[V:.+]] = "tile.descriptor_load"(%arg8,
# CHECK-NEXT: %[[C0:.+]] = arith.constant 0 : i32
# CHECK: %[[M:.+]] = arith.andi %{{.+}}, %{{.+}} : tensor<64x32xi1>
# CHECK: %[[PTR:.+]] = "tile.addptr"
# CHECK-NEXT: "tile.descriptor_store"(%arg9, %[[V]], %{{.+}}, %[[C0]], %[[PTR]], %[[M]], %arg6) {operandSegmentSizes = array<i32: 1, 1, 1, 1, 0, 0, 0, 1, 1, 1>, swizzle = 64 : i32} : (!tile.ptr<i8>, tensor<64x32xbf16>, i32, i32, tensor<64x32x!tile.ptr<bf16>>, tensor<64x32xi1>, i32) -> ()
# CHECK-NOT: "tile.store"
# CHECK-LABEL: // sm_90a tma=False
# CHECK-NOT: tile.tma
# CHECK-NOT: tile.descriptor_load
# CHECK: "tile.load"
# CHECK-LABEL: // sm_80 tma=True
# CHECK-NOT: tile.tma
# CHECK-NOT: tile.descriptor_load
# CHECK: "tile.load"
# CHECK-LABEL: // store_at rows16
# CHECK-NOT: "tile.store"
# CHECK-COUNT-5: "tile.descriptor_store"({{.*}}array<i32: 1, 1, 1, 1, 0, 0, 0, 1, 1, 1>
# CHECK-NOT: "tile.store"
# CHECK-LABEL: // store_at rows16 guarded
# CHECK: "tile.descriptor_store"({{.*}}array<i32: 1, 1, 1, 1, 0, 0, 0, 0, 0, 0>
# CHECK-NOT: "tile.descriptor_store"
# CHECK: "tile.store"
# CHECK-NOT: "tile.descriptor_store"
# CHECK: "tile.store"
# CHECK-NOT: "tile.store"
# CHECK: scf.for
# CHECK: "tile.descriptor_store"({{.*}}array<i32: 1, 1, 1, 1, 0, 0, 0, 0, 0, 0>
# CHECK-NOT: "tile.store"
# CHECK: scf.for
# CHECK: "tile.descriptor_store"({{.*}}array<i32: 1, 1, 1, 1, 0, 0, 0, 0, 0, 0>
# CHECK-NOT: "tile.store"
# CHECK-LABEL: // store_at rows_unknown
# CHECK-COUNT-5: "tile.descriptor_store"
# CHECK-LABEL: // store_at rows_unknown guarded
# CHECK-NOT: "tile.descriptor_store"
# CHECK-NOT: tile.tma
# CHECK: "tile.store"
# CHECK-LABEL: // store_at unguarded guarded
# CHECK-NOT: "tile.store"
# CHECK-COUNT-5: "tile.descriptor_store"({{.*}}array<i32: 1, 1, 1, 1, 0, 0, 0, 0, 0, 0>
# CHECK-LABEL: // store_at rows16 runtime guarded
# CHECK: "tile.descriptor_store"({{.*}}array<i32: 1, 1, 1, 1, 0, 0, 0, 0, 0, 0>
# CHECK: %[[C1:.+]] = arith.cmpi sge, %{{.+}}, %{{.+}} : i32
# CHECK-NEXT: scf.if %[[C1]] {
# CHECK-NEXT: "tile.descriptor_store"({{.*}}array<i32: 1, 1, 1, 1, 0, 0, 0, 0, 0, 0>
# CHECK-NEXT: } else {
# CHECK: "tile.store"
# CHECK: %[[C2:.+]] = arith.cmpi sge, %{{.+}}, %{{.+}} : i32
# CHECK-NEXT: scf.if %[[C2]] {
# CHECK-NEXT: "tile.descriptor_store"({{.*}}array<i32: 1, 1, 1, 1, 0, 0, 0, 0, 0, 0>
# CHECK-NEXT: } else {
# CHECK: "tile.store"
# CHECK: scf.for
# CHECK: "tile.descriptor_store"({{.*}}array<i32: 1, 1, 1, 1, 0, 0, 0, 0, 0, 0>
# CHECK: scf.for
# CHECK: "tile.descriptor_store"({{.*}}array<i32: 1, 1, 1, 1, 0, 0, 0, 0, 0, 0>
# CHECK-NOT: "tile.store"

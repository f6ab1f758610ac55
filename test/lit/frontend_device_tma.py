# RUN: %python %s | FileCheck %s
#
# The tile IR of a descriptor made in the kernel on sm_90a: with a TMA plan, a 16-byte
# aligned base and 16-byte multiple strides (the specialization's `tile.divisibility`), the
# kernel takes a last `!tile.ptr<i8> {tile.global_scratch}` argument and asks for 128 bytes a
# map (`tile.global_scratch` on the kernel); `tl.make_tensor_descriptor` is a
# `tile.make_tensormap` (scratch, base, dims, strides but the last; the plan's box and
# swizzle; the map's slot) and `desc.load` a `tile.descriptor_load` of its result.  A store
# keeps the block-pointer path (no map for a descriptor only stored to); sm_80 keeps the
# block-pointer load.  A stride not known to be a multiple of 16 bytes still gets its map and
# descriptor_load here: tile-tma-guard (the axis analysis) decides, turning the load into its
# fallback and dropping the map and the scratch (its tilegpu stage, below).
import tilework
import tilework.language as tl
from tilework import CompileOptions
from tilework.compiler.driver import ASTSource, compile


@tilework.jit
def copy(a, o, M, N, sa, so, BM: tl.constexpr, BN: tl.constexpr):
    p = tl.program_id(0)
    da = tl.make_tensor_descriptor(a, [M, N], [sa, 1], [BM, BN])
    do = tl.make_tensor_descriptor(o, [M, N], [so, 1], [BM, BN])
    do.store([p * BM, 0], da.load([p * BM, 0]))


P = tl.pointer_type(tl.float16)
SIG = {"a": P, "o": P, "M": tl.int32, "N": tl.int32, "sa": tl.int32, "so": tl.int32}
ALIGNED = {k: {"tile.divisibility": 16} for k in ("a", "o", "sa", "so")}
for name, target, attrs in (("aligned", "sm_90a", ALIGNED),
                            ("stride_unknown", "sm_90a", {"a": ALIGNED["a"]}),
                            ("sm_80", "sm_80", ALIGNED)):
    ck = compile(ASTSource(copy, SIG, {"BM": 64, "BN": 32}, attrs), target, CompileOptions(),
                 cache=False)
    print(f"// {name}")
    print(ck.asm["tile"])
    if name == "stride_unknown":
        print(f"// {name} tilegpu")
        print(ck.asm["tilegpu"])

# CHECK-LABEL: // aligned
# CHECK: func.func @copy(%arg0: !tile.ptr<f16> {tile.divisibility = 16 : i32}, %arg1: !tile.ptr<f16> {tile.divisibility = 16 : i32}, %arg2: i32, %arg3: i32, %arg4: i32 {tile.divisibility = 16 : i32}, %arg5: i32 {tile.divisibility = 16 : i32}, %arg6: !tile.ptr<i8> {tile.global_scratch}) attributes {tile.global_scratch = 128 : i32, tile.kernel}
# CHECK: %[[SA:.+]] = arith.extsi %arg4 : i32 to i64
# CHECK: %[[MAP:.+]] = "tile.make_tensormap"(%arg6, %arg0, %arg2, %arg3, %[[SA]]) {box = array<i32: 64, 32>, offset = 0 : i32, operandSegmentSizes = array<i32: 1, 1, 1, 1, 0, 0, 0, 1, 0, 0, 0>, program_bytes = 128 : i32, swizzle = 64 : i32} : (!tile.ptr<i8>, !tile.ptr<f16>, i32, i32, i64) -> !tile.ptr<i8>
# CHECK-NOT: tile.make_tensormap
# CHECK: "tile.descriptor_load"(%[[MAP]], %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}) {operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 1, 1, 1>, swizzle = 64 : i32} : (!tile.ptr<i8>, i32, i32, tensor<64x32x!tile.ptr<f16>>, tensor<64x32xi1>, tensor<64x32xf16>) -> tensor<64x32xf16>
# CHECK-NOT: tile.descriptor_store
# CHECK: "tile.store"
# CHECK-LABEL: // stride_unknown
# CHECK: %arg6: !tile.ptr<i8> {tile.global_scratch}) attributes {tile.global_scratch = 128 : i32, tile.kernel}
# CHECK: "tile.make_tensormap"
# CHECK: "tile.descriptor_load"
# CHECK-LABEL: // stride_unknown tilegpu
# CHECK-NOT: global_scratch
# CHECK-NOT: tile.make_tensormap
# CHECK-NOT: descriptor_load
# CHECK: "tile.load"
# CHECK-LABEL: // sm_80
# CHECK-NOT: tile.global_scratch
# CHECK-NOT: tile.make_tensormap
# CHECK: "tile.load"

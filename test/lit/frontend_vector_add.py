# RUN: %python %s | FileCheck %s
#
# The tile IR the frontend emits for @tilework.jit kernels, compiled ahead of time (no GPU
# needed): program id, make_range, the `offsets < n` mask, masked loads, addf, masked store,
# plus what specialization and hints add (tile.divisibility / tile.contiguity).
import tilework
import tilework.language as tl
from tilework.compiler.driver import ASTSource, compile


@tilework.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, x + y, mask=mask)


@tilework.jit
def add_hinted(x_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    offsets = tl.max_contiguous(tl.multiple_of(offsets, BLOCK_SIZE), BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask, other=0.0)
    tl.store(out_ptr + offsets, x, mask=mask)


def tile_ir(fn, dtype, params, divisible, block=1024):
    sig = {p: tl.pointer_type(dtype) for p in params}
    sig["n_elements"] = tl.int32
    attrs = {p: {"tile.divisibility": 16} for p in divisible}
    ck = compile(ASTSource(fn, sig, {"BLOCK_SIZE": block}, attrs), "sm_90a", cache=False)
    return ck.asm["tile"]


XYO = ("x_ptr", "y_ptr", "out_ptr")

# fp32, every argument specialized as divisible by 16.
print("// ---- add_f32")
print(tile_ir(add_kernel, tl.float32, XYO, XYO + ("n_elements",)))
# CHECK-LABEL: // ---- add_f32
# CHECK: func.func @add_kernel(
# CHECK-SAME: %[[X:[^:]+]]: !tile.ptr<f32> {tile.divisibility = 16 : i32},
# CHECK-SAME: %[[Y:[^:]+]]: !tile.ptr<f32> {tile.divisibility = 16 : i32},
# CHECK-SAME: %[[O:[^:]+]]: !tile.ptr<f32> {tile.divisibility = 16 : i32},
# CHECK-SAME: %[[N:[^:]+]]: i32 {tile.divisibility = 16 : i32})
# CHECK-SAME: attributes {tile.kernel}
# CHECK-NEXT: %[[PID:.+]] = "tile.get_program_id"() {axis = 0 : i32} : () -> i32
# CHECK-NEXT: %[[BS:.+]] = arith.constant 1024 : i32
# CHECK-NEXT: %[[START:.+]] = arith.muli %[[PID]], %[[BS]] : i32
# CHECK-NEXT: %[[R:.+]] = "tile.make_range"() {end = 1024 : i32, start = 0 : i32} : () -> tensor<1024xi32>
# CHECK-NEXT: %[[SS:.+]] = "tile.splat"(%[[START]]) : (i32) -> tensor<1024xi32>
# CHECK-NEXT: %[[OFF:.+]] = arith.addi %[[SS]], %[[R]] : tensor<1024xi32>
# CHECK-NEXT: %[[NS:.+]] = "tile.splat"(%[[N]]) : (i32) -> tensor<1024xi32>
# CHECK-NEXT: %[[M:.+]] = arith.cmpi slt, %[[OFF]], %[[NS]] : tensor<1024xi32>
# CHECK-NEXT: %[[XS:.+]] = "tile.splat"(%[[X]]) : (!tile.ptr<f32>) -> tensor<1024x!tile.ptr<f32>>
# CHECK-NEXT: %[[XA:.+]] = "tile.addptr"(%[[XS]], %[[OFF]]) : (tensor<1024x!tile.ptr<f32>>, tensor<1024xi32>) -> tensor<1024x!tile.ptr<f32>>
# CHECK-NEXT: %[[XV:.+]] = "tile.load"(%[[XA]], %[[M]]) {operandSegmentSizes = array<i32: 1, 1, 0>} : (tensor<1024x!tile.ptr<f32>>, tensor<1024xi1>) -> tensor<1024xf32>
# CHECK-NEXT: %[[YS:.+]] = "tile.splat"(%[[Y]]) : (!tile.ptr<f32>) -> tensor<1024x!tile.ptr<f32>>
# CHECK-NEXT: %[[YA:.+]] = "tile.addptr"(%[[YS]], %[[OFF]])
# CHECK-NEXT: %[[YV:.+]] = "tile.load"(%[[YA]], %[[M]]) {operandSegmentSizes = array<i32: 1, 1, 0>} : (tensor<1024x!tile.ptr<f32>>, tensor<1024xi1>) -> tensor<1024xf32>
# CHECK-DAG: %[[OS:.+]] = "tile.splat"(%[[O]]) : (!tile.ptr<f32>) -> tensor<1024x!tile.ptr<f32>>
# CHECK-DAG: %[[OA:.+]] = "tile.addptr"(%[[OS]], %[[OFF]])
# CHECK-DAG: %[[SUM:.+]] = arith.addf %[[XV]], %[[YV]] fastmath<contract> : tensor<1024xf32>
# CHECK: "tile.store"(%[[OA]], %[[SUM]], %[[M]]) {operandSegmentSizes = array<i32: 1, 1, 1>} : (tensor<1024x!tile.ptr<f32>>, tensor<1024xf32>, tensor<1024xi1>) -> ()
# CHECK-NEXT: return

# fp16 with n not specialized: f16 tiles, and nothing claimed about n.
print("// ---- add_f16_n_unspecialized")
print(tile_ir(add_kernel, tl.float16, XYO, XYO))
# CHECK-LABEL: // ---- add_f16_n_unspecialized
# CHECK: func.func @add_kernel(
# CHECK-SAME: !tile.ptr<f16> {tile.divisibility = 16 : i32},
# CHECK-SAME: %[[N:[^:]+]]: i32) attributes {tile.kernel}
# CHECK: "tile.splat"(%[[N]]) : (i32) -> tensor<1024xi32>
# CHECK: "tile.load"({{.*}}) -> tensor<1024xf16>
# CHECK: "tile.load"({{.*}}) -> tensor<1024xf16>
# CHECK: arith.addf {{.*}} : tensor<1024xf16>
# CHECK: "tile.store"({{.*}} : (tensor<1024x!tile.ptr<f16>>, tensor<1024xf16>, tensor<1024xi1>) -> ()

# tl.multiple_of / tl.max_contiguous become attributes on the op that computes the offsets;
# `other=0.0` becomes the third (other) operand, a splat of the constant.
print("// ---- add_hinted")
print(tile_ir(add_hinted, tl.float32, ("x_ptr", "out_ptr"), ("x_ptr", "out_ptr"), block=256))
# CHECK-LABEL: // ---- add_hinted
# CHECK: func.func @add_hinted(
# CHECK: %[[R:.+]] = "tile.make_range"() {end = 256 : i32, start = 0 : i32} : () -> tensor<256xi32>
# CHECK: %[[OFF:.+]] = arith.addi %{{.+}}, %[[R]] {tile.contiguity = array<i32: 256>, tile.divisibility = array<i32: 256>} : tensor<256xi32>
# CHECK: %[[M:.+]] = arith.cmpi slt, %[[OFF]], %{{.+}} : tensor<256xi32>
# CHECK: %[[A:.+]] = "tile.addptr"(%{{.+}}, %[[OFF]])
# CHECK: %[[C:.+]] = arith.constant 0.000000e+00 : f32
# CHECK-NEXT: %[[Z:.+]] = "tile.splat"(%[[C]]) : (f32) -> tensor<256xf32>
# CHECK-NEXT: "tile.load"(%[[A]], %[[M]], %[[Z]]) {operandSegmentSizes = array<i32: 1, 1, 1>} : (tensor<256x!tile.ptr<f32>>, tensor<256xi1>, tensor<256xf32>) -> tensor<256xf32>
# CHECK: "tile.store"

// RUN: tilework-opt %s --tilegpu-to-llvm --target sm_90a | FileCheck %s
// RUN: tilework-opt %s --tilegpu-to-llvm --target gfx942 | FileCheck %s --check-prefix=AMD

// tile.map_elementwise (lowering/rules/asm.py): the private scalar function's body lowered
// once per group of `pack` elements a thread holds (here 4 elements, pack 2: two copies), its
// arguments each operand's pack elements in turn, its scf.if kept as a branch per group.

#b = #tilegpu.blocked<array<i32: 4>, array<i32: 32>, array<i32: 4>, array<i32: 0>>
module attributes {tilegpu.num_warps = 4 : i32, tilegpu.warp_size = 32 : i32} {
  // CHECK-LABEL: gpu.func @k(
  // CHECK-COUNT-2: scf.if %{{.+}} -> (i32, i32)
  // CHECK-NOT: scf.if
  // CHECK-NOT: func.call
  // AMD-LABEL: gpu.func @k(
  // AMD-COUNT-2: scf.if %{{.+}} -> (i32, i32)
  func.func @k(%p0: !tile.ptr<i32>) attributes {tile.kernel} {
    %x = "tile.make_range"() {end = 512 : i32, start = 0 : i32} : () -> tensor<512xi32, #b>
    %ps = "tile.splat"(%p0) : (!tile.ptr<i32>) -> tensor<512x!tile.ptr<i32>, #b>
    %p = "tile.addptr"(%ps, %x) : (tensor<512x!tile.ptr<i32>, #b>, tensor<512xi32, #b>) -> tensor<512x!tile.ptr<i32>, #b>
    %y = "tile.map_elementwise"(%x) {fn = @neg_or_double, pack = 2 : i32, operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0>} : (tensor<512xi32, #b>) -> tensor<512xi32, #b>
    "tile.store"(%p, %y) {operandSegmentSizes = array<i32: 1, 1, 0>, tilegpu.vector_width = 4 : i32} : (tensor<512x!tile.ptr<i32>, #b>, tensor<512xi32, #b>) -> ()
    return
  }
  func.func private @neg_or_double(%a: i32, %b: i32) -> (i32, i32) {
    %c = arith.constant 100 : i32
    %lt = arith.cmpi slt, %a, %c : i32
    %r:2 = scf.if %lt -> (i32, i32) {
      %na = arith.subi %c, %a : i32
      scf.yield %na, %b : i32, i32
    } else {
      %da = arith.addi %a, %a : i32
      %db = arith.addi %b, %b : i32
      scf.yield %da, %db : i32, i32
    }
    return %r#0, %r#1 : i32, i32
  }
}

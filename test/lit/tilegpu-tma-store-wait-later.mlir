// RUN: tilework-opt %s --split-input-file --tilegpu-tma-store-wait-later | FileCheck %s

// In a loop whose TMA ring lives across its tiles, the TMA store's buffer is allocated once
// before the loop; each tile waits for the previous store's reads (tma_store_wait) before
// writing it, the store is left in flight (tilegpu.wait_later), and the loop is followed by
// the last wait and the dealloc.
// CHECK-LABEL: func.func @across_tiles(
// CHECK-NEXT: %[[BUF:.+]] = "tilegpu.local_alloc"() : () -> !tilegpu.memdesc<array<i64: 64, 128>, f16, #tilegpu.nvmma_shared<128 : i32, false, 16 : i32>, 1 : i32>
// CHECK-NEXT: scf.for %[[I:.+]] = %arg1 to %arg2 step %arg3 : i32 {
// CHECK-NEXT: %[[V:.+]] = "tile.splat"
// CHECK-NEXT: "tilegpu.tma_store_wait"() : () -> ()
// CHECK-NEXT: "tilegpu.local_store"(%[[V]], %[[BUF]])
// CHECK-NEXT: "tilegpu.tma_store"(%arg0, %[[BUF]], %[[I]], %[[I]]) {operandSegmentSizes = array<i32: 1, 1, 1, 1, 0, 0, 0>, tilegpu.wait_later}
// CHECK-NEXT: } {tilegpu.ring_across_tiles}
// CHECK-NEXT: "tilegpu.tma_store_wait"() : () -> ()
// CHECK-NEXT: "tilegpu.local_dealloc"(%[[BUF]])
// CHECK-NEXT: return
#S = #tilegpu.nvmma_shared<128 : i32, false, 16 : i32>
#A = #tilegpu.mma<3 : i32, array<i32: 4, 1>, array<i32: 64, 128, 16>>
module attributes {tilegpu.num_warps = 4 : i32, tilegpu.warp_size = 32 : i32} {
  func.func @across_tiles(%d: !tile.ptr<i8> {tile.tma}, %lo: i32, %hi: i32, %st: i32, %x: f16) attributes {tile.kernel} {
    scf.for %i = %lo to %hi step %st : i32 {
      %v = "tile.splat"(%x) : (f16) -> tensor<64x128xf16, #A>
      %buf = "tilegpu.local_alloc"(%v) : (tensor<64x128xf16, #A>) -> !tilegpu.memdesc<array<i64: 64, 128>, f16, #S, 1 : i32>
      "tilegpu.tma_store"(%d, %buf, %i, %i) {operandSegmentSizes = array<i32: 1, 1, 1, 1, 0, 0, 0>} : (!tile.ptr<i8>, !tilegpu.memdesc<array<i64: 64, 128>, f16, #S, 1 : i32>, i32, i32) -> ()
      "tilegpu.local_dealloc"(%buf) : (!tilegpu.memdesc<array<i64: 64, 128>, f16, #S, 1 : i32>) -> ()
    } {tilegpu.ring_across_tiles}
    return
  }
}

// -----

// Inside tile-tma-guard's run-time guard: the same, the wait in the guarded branch (a store the
// previous tile left in flight is waited for before this tile writes the buffer).
// CHECK-LABEL: func.func @guarded(
// CHECK-NEXT: arith.constant 0
// CHECK-NEXT: %[[BUF:.+]] = "tilegpu.local_alloc"() : ()
// CHECK-NEXT: scf.for
// CHECK-NEXT: %[[V:.+]] = "tile.splat"
// CHECK-NEXT: %[[OK:.+]] = arith.cmpi
// CHECK-NEXT: scf.if %[[OK]] {
// CHECK-NEXT: "tilegpu.tma_store_wait"() : () -> ()
// CHECK-NEXT: "tilegpu.local_store"(%[[V]], %[[BUF]])
// CHECK-NEXT: "tilegpu.tma_store"(%arg0, %[[BUF]], {{.+}} tilegpu.wait_later}
// CHECK-NEXT: } {tilegpu.tma_store_guard}
// CHECK-NEXT: } {tilegpu.ring_across_tiles}
// CHECK-NEXT: "tilegpu.tma_store_wait"() : () -> ()
// CHECK-NEXT: "tilegpu.local_dealloc"(%[[BUF]])
// CHECK-NEXT: return
#S = #tilegpu.nvmma_shared<128 : i32, false, 16 : i32>
#A = #tilegpu.mma<3 : i32, array<i32: 4, 1>, array<i32: 64, 128, 16>>
module attributes {tilegpu.num_warps = 4 : i32, tilegpu.warp_size = 32 : i32} {
  func.func @guarded(%d: !tile.ptr<i8> {tile.tma}, %lo: i32, %hi: i32, %st: i32, %x: f16) attributes {tile.kernel} {
    %c0 = arith.constant 0 : i32
    scf.for %i = %lo to %hi step %st : i32 {
      %v = "tile.splat"(%x) : (f16) -> tensor<64x128xf16, #A>
      %ok = arith.cmpi sge, %i, %c0 : i32
      scf.if %ok {
        %buf = "tilegpu.local_alloc"(%v) : (tensor<64x128xf16, #A>) -> !tilegpu.memdesc<array<i64: 64, 128>, f16, #S, 1 : i32>
        "tilegpu.tma_store"(%d, %buf, %i, %i) {operandSegmentSizes = array<i32: 1, 1, 1, 1, 0, 0, 0>} : (!tile.ptr<i8>, !tilegpu.memdesc<array<i64: 64, 128>, f16, #S, 1 : i32>, i32, i32) -> ()
        "tilegpu.local_dealloc"(%buf) : (!tilegpu.memdesc<array<i64: 64, 128>, f16, #S, 1 : i32>) -> ()
      } {tilegpu.tma_store_guard}
    } {tilegpu.ring_across_tiles}
    return
  }
}

// -----

// A loop without the mark (rings per tile, or not a persistent loop) keeps the store whole:
// its buffer may share bytes with the next tile's rings.
// CHECK-LABEL: func.func @per_tile(
// CHECK-NEXT: scf.for
// CHECK-NEXT: "tile.splat"
// CHECK-NEXT: %[[BUF:.+]] = "tilegpu.local_alloc"(%{{.+}}) :
// CHECK-NEXT: "tilegpu.tma_store"(%arg0, %[[BUF]], %{{.+}}, %{{.+}}) {operandSegmentSizes = array<i32: 1, 1, 1, 1, 0, 0, 0>} :
// CHECK-NEXT: "tilegpu.local_dealloc"(%[[BUF]])
// CHECK-NEXT: }
// CHECK-NEXT: return
#S = #tilegpu.nvmma_shared<128 : i32, false, 16 : i32>
#A = #tilegpu.mma<3 : i32, array<i32: 4, 1>, array<i32: 64, 128, 16>>
module attributes {tilegpu.num_warps = 4 : i32, tilegpu.warp_size = 32 : i32} {
  func.func @per_tile(%d: !tile.ptr<i8> {tile.tma}, %lo: i32, %hi: i32, %st: i32, %x: f16) attributes {tile.kernel} {
    scf.for %i = %lo to %hi step %st : i32 {
      %v = "tile.splat"(%x) : (f16) -> tensor<64x128xf16, #A>
      %buf = "tilegpu.local_alloc"(%v) : (tensor<64x128xf16, #A>) -> !tilegpu.memdesc<array<i64: 64, 128>, f16, #S, 1 : i32>
      "tilegpu.tma_store"(%d, %buf, %i, %i) {operandSegmentSizes = array<i32: 1, 1, 1, 1, 0, 0, 0>} : (!tile.ptr<i8>, !tilegpu.memdesc<array<i64: 64, 128>, f16, #S, 1 : i32>, i32, i32) -> ()
      "tilegpu.local_dealloc"(%buf) : (!tilegpu.memdesc<array<i64: 64, 128>, f16, #S, 1 : i32>) -> ()
    }
    return
  }
}

// RUN: tilework-opt %s --split-input-file --tilegpu-remove-converts | FileCheck %s

// A conversion to the layout the value already has disappears.
// CHECK-LABEL: func.func @identity
// CHECK-NEXT: return %arg0
#b = #tilegpu.blocked<array<i32: 4>, array<i32: 32>, array<i32: 4>, array<i32: 0>>
#c = #tilegpu.blocked<array<i32: 1>, array<i32: 32>, array<i32: 4>, array<i32: 0>>
module attributes {tilegpu.num_warps = 4 : i32, tilegpu.warp_size = 32 : i32} {
func.func @identity(%x: tensor<512xf32, #b>) -> tensor<512xf32, #b> {
  %y = "tilegpu.convert_layout"(%x) : (tensor<512xf32, #b>) -> tensor<512xf32, #b>
  return %y : tensor<512xf32, #b>
}
}

// -----

// convert(convert(x)) converts x once (the first conversion is left dead for tile-combine).
// CHECK-LABEL: func.func @chain
// CHECK-NEXT: "tilegpu.convert_layout"(%arg0)
// CHECK-NEXT: %[[Z:.+]] = "tilegpu.convert_layout"(%arg0) : (tensor<512xf32, #tilegpu.blocked<array<i32: 4>{{.*}}) -> tensor<512xf32, #tilegpu.blocked<array<i32: 2>
// CHECK-NEXT: return %[[Z]]
#b = #tilegpu.blocked<array<i32: 4>, array<i32: 32>, array<i32: 4>, array<i32: 0>>
#c = #tilegpu.blocked<array<i32: 1>, array<i32: 32>, array<i32: 4>, array<i32: 0>>
#d = #tilegpu.blocked<array<i32: 2>, array<i32: 32>, array<i32: 4>, array<i32: 0>>
module attributes {tilegpu.num_warps = 4 : i32, tilegpu.warp_size = 32 : i32} {
func.func @chain(%x: tensor<512xf32, #b>) -> tensor<512xf32, #d> {
  %y = "tilegpu.convert_layout"(%x) : (tensor<512xf32, #b>) -> tensor<512xf32, #c>
  %z = "tilegpu.convert_layout"(%y) : (tensor<512xf32, #c>) -> tensor<512xf32, #d>
  return %z : tensor<512xf32, #d>
}
}

// -----

// A chain of cheap producers (range, splat, address arithmetic, a load used only here,
// elementwise math) is computed again in the wanted layout instead of converted.
// CHECK-LABEL: func.func @remat
// CHECK: %[[S:.+]] = "tile.splat"(%arg0) : (!tile.ptr<f32>) -> tensor<512x!tile.ptr<f32>, #tilegpu.blocked<array<i32: 1>
// CHECK-NEXT: %[[R:.+]] = "tile.make_range"() {{.*}} -> tensor<512xi32, #tilegpu.blocked<array<i32: 1>
// CHECK-NEXT: %[[A:.+]] = "tile.addptr"(%[[S]], %[[R]])
// CHECK-NEXT: %[[L:.+]] = "tile.load"(%[[A]]) {{.*}} -> tensor<512xf32, #tilegpu.blocked<array<i32: 1>
// CHECK-NEXT: %[[E:.+]] = math.exp %[[L]] : tensor<512xf32, #tilegpu.blocked<array<i32: 1>
// CHECK-NEXT: return %[[E]]
// CHECK-NOT: tilegpu.convert_layout
#b = #tilegpu.blocked<array<i32: 4>, array<i32: 32>, array<i32: 4>, array<i32: 0>>
#c = #tilegpu.blocked<array<i32: 1>, array<i32: 32>, array<i32: 4>, array<i32: 0>>
module attributes {tilegpu.num_warps = 4 : i32, tilegpu.warp_size = 32 : i32} {
func.func @remat(%p: !tile.ptr<f32>) -> tensor<512xf32, #c> {
  %r = "tile.make_range"() {start = 0 : i32, end = 512 : i32} : () -> tensor<512xi32, #b>
  %s = "tile.splat"(%p) : (!tile.ptr<f32>) -> tensor<512x!tile.ptr<f32>, #b>
  %a = "tile.addptr"(%s, %r) : (tensor<512x!tile.ptr<f32>, #b>, tensor<512xi32, #b>) -> tensor<512x!tile.ptr<f32>, #b>
  %l = "tile.load"(%a) {operandSegmentSizes = array<i32: 1, 0, 0>} : (tensor<512x!tile.ptr<f32>, #b>) -> tensor<512xf32, #b>
  %e = math.exp %l : tensor<512xf32, #b>
  %y = "tilegpu.convert_layout"(%e) : (tensor<512xf32, #b>) -> tensor<512xf32, #c>
  return %y : tensor<512xf32, #c>
}
}

// -----

// A load with another user is not repeated (memory is read once): the conversion stays.
// CHECK-LABEL: func.func @load_used_twice_stays
// CHECK: %[[L:.+]] = "tile.load"
// CHECK-NEXT: %[[Y:.+]] = "tilegpu.convert_layout"(%[[L]])
// CHECK-NEXT: return %[[L]], %[[Y]]
#b = #tilegpu.blocked<array<i32: 4>, array<i32: 32>, array<i32: 4>, array<i32: 0>>
#c = #tilegpu.blocked<array<i32: 1>, array<i32: 32>, array<i32: 4>, array<i32: 0>>
module attributes {tilegpu.num_warps = 4 : i32, tilegpu.warp_size = 32 : i32} {
func.func @load_used_twice_stays(%p: !tile.ptr<f32>) -> (tensor<512xf32, #b>, tensor<512xf32, #c>) {
  %r = "tile.make_range"() {start = 0 : i32, end = 512 : i32} : () -> tensor<512xi32, #b>
  %s = "tile.splat"(%p) : (!tile.ptr<f32>) -> tensor<512x!tile.ptr<f32>, #b>
  %a = "tile.addptr"(%s, %r) : (tensor<512x!tile.ptr<f32>, #b>, tensor<512xi32, #b>) -> tensor<512x!tile.ptr<f32>, #b>
  %l = "tile.load"(%a) {operandSegmentSizes = array<i32: 1, 0, 0>} : (tensor<512x!tile.ptr<f32>, #b>) -> tensor<512xf32, #b>
  %y = "tilegpu.convert_layout"(%l) : (tensor<512xf32, #b>) -> tensor<512xf32, #c>
  return %l, %y : tensor<512xf32, #b>, tensor<512xf32, #c>
}
}

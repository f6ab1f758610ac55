// RUN: not tilework-opt %s --split-input-file --verify-only 2>&1 | FileCheck %s

// Malformed tile.dot / join / split / cat, one per chunk (messages of
// tilework.dialects.verify; the last chunk is rejected by the IRDL definition).

// CHECK: error: {{.*}}'tile.dot' op dot shapes do not agree: [16, 32] x [16, 16] -> [16, 16]
func.func @dot_k_mismatch(%a: tensor<16x32xf32>, %b: tensor<16x16xf32>, %c: tensor<16x16xf32>) {
  %d = "tile.dot"(%a, %b, %c) {input_precision = "ieee", max_num_imprecise_acc = 0 : i32} : (tensor<16x32xf32>, tensor<16x16xf32>, tensor<16x16xf32>) -> tensor<16x16xf32>
  return
}

// -----

// CHECK-NEXT: error: {{.*}}'tile.dot' op dot operands must have the same element type, got f16 and f32
func.func @dot_mixed(%a: tensor<16x16xf16>, %b: tensor<16x16xf32>, %c: tensor<16x16xf32>) {
  %d = "tile.dot"(%a, %b, %c) {input_precision = "ieee", max_num_imprecise_acc = 0 : i32} : (tensor<16x16xf16>, tensor<16x16xf32>, tensor<16x16xf32>) -> tensor<16x16xf32>
  return
}

// -----

// CHECK-NEXT: error: {{.*}}'tile.dot' op dot of i8 cannot accumulate in f32
func.func @dot_int8_f32(%a: tensor<16x32xi8>, %b: tensor<32x16xi8>, %c: tensor<16x16xf32>) {
  %d = "tile.dot"(%a, %b, %c) {input_precision = "ieee", max_num_imprecise_acc = 0 : i32} : (tensor<16x32xi8>, tensor<32x16xi8>, tensor<16x16xf32>) -> tensor<16x16xf32>
  return
}

// -----

// CHECK-NEXT: error: {{.*}}'tile.dot' op dot input_precision must be one of tf32, tf32x3, ieee, bf16x3, bf16x6; got 'fp64'
func.func @dot_precision(%a: tensor<16x16xf32>, %c: tensor<16x16xf32>) {
  %d = "tile.dot"(%a, %a, %c) {input_precision = "fp64", max_num_imprecise_acc = 0 : i32} : (tensor<16x16xf32>, tensor<16x16xf32>, tensor<16x16xf32>) -> tensor<16x16xf32>
  return
}

// -----

// CHECK-NEXT: error: {{.*}}'tile.join' op join of [8] must produce [8, 2] elements of f32, not tensor<2x8xf32>
func.func @join_shape(%a: tensor<8xf32>) {
  %j = "tile.join"(%a, %a) : (tensor<8xf32>, tensor<8xf32>) -> tensor<2x8xf32>
  return
}

// -----

// CHECK-NEXT: error: {{.*}}'tile.split' op split needs a tile of rank >= 2 whose last dimension is 2, got [8, 4]
func.func @split_last(%x: tensor<8x4xf32>) {
  %lo, %hi = "tile.split"(%x) : (tensor<8x4xf32>) -> (tensor<8xf32>, tensor<8xf32>)
  return
}

// -----

// CHECK-NEXT: error: {{.*}}'tile.cat' op cat of two [8] tiles must produce [16] elements of f32, not tensor<8xf32>
func.func @cat_shape(%a: tensor<8xf32>) {
  %c = "tile.cat"(%a, %a) : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  return
}

// -----

// join operands of two types are rejected by the IRDL definition (one constraint variable).
// CHECK-NEXT: error: expected 'tensor<8xf32>' but got 'tensor<8xf16>'
func.func @join_types(%a: tensor<8xf32>, %b: tensor<8xf16>) {
  %j = "tile.join"(%a, %b) : (tensor<8xf32>, tensor<8xf16>) -> tensor<8x2xf32>
  return
}

// BUG: "no lowering rule" errors carry no location.  _lower_block looks the rule up
// (registry.lookup raises LoweringError) before entering the try block that attaches the op's
// location to LoweringErrors, so the message names the op but not where it is.

// RUN: not tilework-opt %s --tilegpu-to-llvm 2>&1 | FileCheck %s

// CHECK: {{loc\(.+\).*no lowering rule for 'math.atan' on target 'nvidia'}}
module attributes {tilegpu.num_warps = 4 : i32, tilegpu.warp_size = 32 : i32} {
  func.func @no_rule(%x: f32) attributes {tile.kernel} {
    %c = math.atan %x : f32
    return
  }
}

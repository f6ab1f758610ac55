"""IRDL definitions of the tilegpu layout attributes, spliced by `opdefs/tilegpu.py` into the
generated `irdl.dialect @tilegpu { ... }`.  IRDL gives them MLIR's generic syntax:
`#tilegpu.<name><param, ...>`; `layout.py` parses that text back into `Layout` objects."""

LAYOUT_ATTRS_IRDL = """
  irdl.attribute @blocked {
    %a = irdl.base "#builtin.dense_array"
    %b = irdl.base "#builtin.dense_array"
    %c = irdl.base "#builtin.dense_array"
    %d = irdl.base "#builtin.dense_array"
    irdl.parameters(size_per_thread: %a, threads_per_warp: %b, warps_per_cta: %c, order: %d)
  }
  irdl.attribute @slice {
    %d = irdl.base "#builtin.integer"
    %p = irdl.any
    irdl.parameters(dim: %d, parent: %p)
  }
  irdl.attribute @mma {
    %v = irdl.base "#builtin.integer"
    %w = irdl.base "#builtin.dense_array"
    %i = irdl.base "#builtin.dense_array"
    irdl.parameters(version: %v, warps_per_cta: %w, instr_shape: %i)
  }
  irdl.attribute @dot_operand {
    %o = irdl.base "#builtin.integer"
    %p = irdl.any
    %k = irdl.base "#builtin.integer"
    irdl.parameters(op_idx: %o, parent: %p, k_width: %k)
  }
  irdl.attribute @swizzled_shared {
    %v = irdl.base "#builtin.integer"
    %p = irdl.base "#builtin.integer"
    %m = irdl.base "#builtin.integer"
    %o = irdl.base "#builtin.dense_array"
    irdl.parameters(vec: %v, per_phase: %p, max_phase: %m, order: %o)
  }
  irdl.attribute @nvmma_shared {
    %s = irdl.base "#builtin.integer"
    %t = irdl.base "#builtin.integer"
    %e = irdl.base "#builtin.integer"
    irdl.parameters(swizzle_bytes: %s, transposed: %t, elem_bits: %e)
  }
  irdl.attribute @mfma {
    %w = irdl.base "#builtin.dense_array"
    %i = irdl.base "#builtin.dense_array"
    %t = irdl.base "#builtin.integer"
    irdl.parameters(warps_per_cta: %w, instr_shape: %i, transposed: %t)
  }
  irdl.attribute @wmma {
    %v = irdl.base "#builtin.integer"
    %w = irdl.base "#builtin.dense_array"
    irdl.parameters(version: %v, warps_per_cta: %w)
  }
"""

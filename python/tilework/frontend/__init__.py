"""Frontend: Python AST of a @jit kernel -> tile dialect IR."""

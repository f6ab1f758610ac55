"""Compatibility suite: kernels written against `triton.language`, run by tilework and (on a
GPU with Triton installed) by Triton from the same source text."""

"""Benchmarking helpers with Triton's names and semantics (`tilework.testing.do_bench`,
`do_bench_cudagraph`): CUDA events, the L2 flushed between runs.  torch is used when it is
importable, else cuda.bindings."""
from .runtime.bench import do_bench, do_bench_cudagraph  # noqa: F401

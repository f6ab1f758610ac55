"""Compiling several variants at once (the autotuner's configs, before any is timed).

Most of a compile is Python (the frontend, the Python rewrite passes) holding the GIL, so
threads barely overlap; worker processes forked from this one do (they inherit the @jit
functions, even ones defined in `__main__`, and touch no GPU: only the parent loads).
TILEWORK_COMPILE_WORKERS chooses: "process" (the default where fork exists and there is more
than one core), "thread" or "serial", optionally with a count ("process:8").
"""
from __future__ import annotations

import os
import warnings

_JOBS: list = []  # the forked workers read their jobs from here (inherited, never pickled)


class CompileFailure(Exception):
    """A job's exception as a worker reports it (its type's name and its message)."""

    def __init__(self, kind: str, message: str):
        self.kind = kind
        super().__init__(message)


def _compile_one(job):
    from ..compiler.driver import compile  # loads MLIR: only when compiling
    src, target, options = job
    return compile(src, target, options)


def _job_in_worker(i):
    try:
        return _compile_one(_JOBS[i])
    except Exception as e:  # reported, not raised: one failing config skips only itself
        return CompileFailure(type(e).__name__, str(e))


def choose_mode(n_jobs: int) -> tuple[str, int]:
    """(mode, workers) for `n_jobs` compiles."""
    cores = os.cpu_count() or 1
    spec = os.environ.get("TILEWORK_COMPILE_WORKERS", "")
    mode, _, count = spec.partition(":")
    if mode not in ("", "process", "thread", "serial"):
        raise ValueError(f"TILEWORK_COMPILE_WORKERS must be process, thread or serial "
                         f"(optionally ':N'), got {spec!r}")
    workers = int(count) if count else min(n_jobs, cores)
    if not mode:
        mode = "process" if hasattr(os, "fork") and cores > 1 and n_jobs > 1 else "serial"
    if mode == "process" and not hasattr(os, "fork"):
        mode = "thread"
    if n_jobs <= 1 or workers <= 1:
        mode = "serial"
    return mode, max(1, workers)


def compile_many(jobs, mode: str | None = None) -> list:
    """Compiles each job, (ASTSource, target, CompileOptions), into a CompiledKernel; a job
    that raises gives its exception in its place."""
    jobs = list(jobs)
    if not jobs:
        return []
    chosen, workers = choose_mode(len(jobs))
    mode = mode or chosen
    if mode == "serial":
        out = []
        for job in jobs:
            try:
                out.append(_compile_one(job))
            except Exception as e:
                out.append(e)
        return out
    if mode == "thread":
        from concurrent.futures import ThreadPoolExecutor

        def one(job):
            try:
                return _compile_one(job)
            except Exception as e:
                return e
        with ThreadPoolExecutor(max_workers=workers) as ex:
            return list(ex.map(one, jobs))
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool
    global _JOBS
    _JOBS = jobs
    try:
        with warnings.catch_warnings():
            # the children only compile (no GPU, no threads of the parent used): fork is safe
            warnings.simplefilter("ignore", DeprecationWarning)
            with ProcessPoolExecutor(max_workers=workers,
                                     mp_context=multiprocessing.get_context("fork")) as ex:
                return list(ex.map(_job_in_worker, range(len(jobs))))
    except BrokenProcessPool:  # a worker died (killed, out of memory): compile here instead
        return compile_many(jobs, mode="serial")
    finally:
        _JOBS = []

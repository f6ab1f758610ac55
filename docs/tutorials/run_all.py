"""Runs every tutorial (01-09), each in its own process, and reports.

    python docs/tutorials/run_all.py [NN ...]      # all, or the numbered ones

With a GPU each checks its kernels, benchmarks tilework, Triton (when installed) and torch,
and writes docs/tutorials/img/<nn>-<name>.png; without one, each checks its kernels in the
interpreter on small sizes (TUTORIAL_NO_BENCH=1 skips the benchmarks on a GPU too).
"""
from __future__ import annotations

import pathlib
import subprocess
import sys
import time

HERE = pathlib.Path(__file__).resolve().parent


def tutorials(only=()):
    files = sorted(p for p in HERE.glob("[0-9][0-9]-*.py"))
    return [p for p in files if not only or p.name[:2] in only]


def main(argv):
    failed = []
    for path in tutorials(set(argv)):
        t = time.perf_counter()
        print(f"== {path.name}", flush=True)
        rc = subprocess.call([sys.executable, str(path)], cwd=HERE)
        print(f"== {path.name}: {'ok' if rc == 0 else f'FAILED ({rc})'} in "
              f"{time.perf_counter() - t:.0f} s", flush=True)
        if rc:
            failed.append(path.name)
    print(f"{len(tutorials(set(argv))) - len(failed)} passed, {len(failed)} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

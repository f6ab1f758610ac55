"""python test/python/fuzz --seed S --count N [--gpu] [--out DIR]: runs programs S..S+N-1 in
the interpreter and compiled (on this CPU by gpu_sim.py, or on the GPU with --gpu), prints the
programs tried and the mismatches, and writes each failing program (with what differed) to DIR."""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fuzz_harness import fuzz  # noqa: E402


def main():
    p = argparse.ArgumentParser(prog="python test/python/fuzz")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--count", type=int, default=100)
    p.add_argument("--gpu", action="store_true", help="run the compiled side on the GPU")
    p.add_argument("--out", default="fuzz_failures", help="where failing programs go")
    a = p.parse_args()
    _, failing = fuzz(a.seed, a.count, a.gpu, a.out)
    sys.exit(1 if failing else 0)


if __name__ == "__main__":
    main()

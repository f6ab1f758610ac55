"""Every pass `tilework-opt --list-passes` shows has a lit file named after it."""
import os

from tilework.lowering import PASSES

LIT = os.path.join(os.path.dirname(__file__), "..", "lit")


def test_every_pass_has_its_lit_file():
    missing = [n for n in PASSES if not os.path.isfile(os.path.join(LIT, f"{n}.mlir"))]
    assert not missing, f"passes without test/lit/<name>.mlir: {missing}"


def test_each_lit_file_runs_its_pass():
    for n in PASSES:
        with open(os.path.join(LIT, f"{n}.mlir")) as f:
            run = f.readline()
        assert run.startswith("// RUN:") and f"--{n}" in run, (n, run)

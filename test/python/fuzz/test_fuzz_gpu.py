"""The differential fuzzer on the GPU: TILEWORK_FUZZ_GPU_COUNT programs (default 1000) from
TILEWORK_FUZZ_SEED (default 0), each run in the interpreter and launched on the device (torch
CUDA tensors), compared as in test_fuzz.py (float sums of products compared within tolerance
there: ptxas contracts a*b+c into fma).  Failing programs are written to
TILEWORK_FUZZ_OUT (default fuzz_failures/)."""
import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fuzz_harness import fuzz  # noqa: E402

pytestmark = pytest.mark.gpu

COUNT = int(os.environ.get("TILEWORK_FUZZ_GPU_COUNT", "1000"))
SEED = int(os.environ.get("TILEWORK_FUZZ_SEED", "0"))


def test_fuzz_gpu():
    pytest.importorskip("torch")
    tried, failing = fuzz(SEED, COUNT, gpu=True,
                          faildir=os.environ.get("TILEWORK_FUZZ_OUT", "fuzz_failures"))
    assert tried == COUNT
    assert not failing, f"mismatching seeds: {failing}"

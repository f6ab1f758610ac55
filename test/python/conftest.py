"""Shared fixtures.  Tests marked `gpu` run only where a CUDA (or HIP) device is usable."""
import os
import sys

import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "examples"))


def _gpu_available() -> bool:
    from tilework.runtime.device import gpu_available
    return gpu_available()


def pytest_collection_modifyitems(config, items):
    if any("gpu" in item.keywords for item in items) and not _gpu_available():
        skip = pytest.mark.skip(reason="needs a GPU")
        for item in items:
            if "gpu" in item.keywords:
                item.add_marker(skip)


@pytest.fixture(autouse=True)
def _private_cache(tmp_path, monkeypatch):
    """Each test compiles into its own cache folder (no state shared between tests)."""
    monkeypatch.setenv("TILEWORK_CACHE_DIR", str(tmp_path / "cache"))
    yield


@pytest.fixture
def sm90():
    """Skips the test unless torch sees a CUDA GPU of compute capability 9 (TMA, wgmma)."""
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("no CUDA GPU")
    if torch.cuda.get_device_capability()[0] != 9:
        pytest.skip("TMA (sm_90) GPU needed")

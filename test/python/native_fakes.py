"""The fake drivers of the native launch tests (test/python/native/fake_*.c), built once per
module: the native module loaded over a fake libcuda (test_native_launch.py) or a fake
libamdhip64 (test_native_launch_hip.py)."""
import contextlib
import ctypes
import os
import subprocess
import types

import pytest

from tilework.runtime import native_launch

HERE = os.path.dirname(os.path.abspath(__file__))


def compile_fake(d, source: str, so_name: str) -> str:
    """The path of `native/<source>` compiled into `d/<so_name>`."""
    path = str(d / so_name)
    subprocess.run(["cc", "-shared", "-fPIC", "-O1", os.path.join(HERE, "native", source),
                    "-o", path], check=True)
    return path


def open_fake(path: str, args: bool = False):
    """The fake at `path` through ctypes, to read what it recorded; `args`: it records a
    packed argument buffer (`fake_args`)."""
    lib = ctypes.CDLL(path)
    lib.fake_record.restype = ctypes.POINTER(ctypes.c_uint64)
    if args:
        lib.fake_args.restype = ctypes.POINTER(ctypes.c_ubyte)
    return lib


@contextlib.contextmanager
def fake_native(tmp_path_factory, name, source, so_name, env, load, loaded_path, stream_base,
                args=False):
    """The native module built in a fresh folder, the fake driver `source` as the library
    named by the environment variable `env`; `load()` loads it (asserted to be the fake, at
    `loaded_path()`), streams pinned to `stream_base + device`.  Yields (mod, lib); the
    environment and the native module's state are restored after."""
    if native_launch.compile_command("x") is None:
        pytest.skip("no C compiler or Python headers")
    d = tmp_path_factory.mktemp(name)
    path = native_launch.build(str(d))
    fake = compile_fake(d, source, so_name)
    os.environ["TILEWORK_NATIVE_LIB"], os.environ[env] = path, fake
    saved = native_launch.reset()
    try:
        mod = load()
        assert mod is not None, native_launch.why_not()
        # the fake, also where a real driver is loaded (a GPU machine's test run)
        assert os.path.samefile(loaded_path(), fake)
        lib = open_fake(fake, args)
        # pinned: torch, where it is imported, does not replace the fake device and stream
        native_launch.pin_stream_source(lambda: 0, lambda dev: stream_base + dev)
        yield types.SimpleNamespace(mod=mod, lib=lib)
    finally:
        native_launch.pin_stream_source(None, None)
        del os.environ["TILEWORK_NATIVE_LIB"], os.environ[env]
        native_launch.restore(saved)

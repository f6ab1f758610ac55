"""The on-disk cache of compiled kernels: one folder per key under TILEWORK_CACHE_DIR
(default ~/.cache/tilework).  A folder is written whole under a temporary name and renamed
into place, so another process sees either nothing or every file."""
from __future__ import annotations

import json
import os
import shutil
import tempfile

from .options import cache_dir


class FileCache:
    def __init__(self, root: str | None = None):
        self.root = root or cache_dir()

    def _path(self, key: str) -> str:
        return os.path.join(self.root, key[:2], key)

    def get(self, key: str) -> dict | None:
        """{filename: bytes} of a complete entry, or None."""
        path = self._path(key)
        manifest = os.path.join(path, "manifest.json")
        try:
            with open(manifest) as f:
                names = json.load(f)
            out = {}
            for n in names:
                with open(os.path.join(path, n), "rb") as f:
                    out[n] = f.read()
            return out
        except (OSError, ValueError):
            return None

    def put(self, key: str, files: dict) -> None:
        path = self._path(key)
        if os.path.isdir(path):
            return
        parent = os.path.dirname(path)
        try:
            os.makedirs(parent, exist_ok=True)
            tmp = tempfile.mkdtemp(dir=parent, prefix=".tmp-")
        except OSError:
            return  # a read-only cache is not an error
        try:
            for n, data in files.items():
                with open(os.path.join(tmp, n), "wb") as f:
                    f.write(data if isinstance(data, bytes) else data.encode())
            with open(os.path.join(tmp, "manifest.json"), "w") as f:
                json.dump(sorted(files), f)
            os.rename(tmp, path)  # atomic; fails if another process won the race
        except OSError:
            shutil.rmtree(tmp, ignore_errors=True)

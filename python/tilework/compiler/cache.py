"""The on-disk cache of compiled kernels: one folder per key under TILEWORK_CACHE_DIR
(default ~/.cache/tilework).  A folder is written whole under a temporary name and renamed
into place, so another process sees either nothing or every file.

Each folder's `manifest.json` maps every file to its size and SHA-256: an entry whose files
are missing, truncated or altered (or whose manifest is) is a miss, and is removed so that the
recompiled kernel is written in its place."""
from __future__ import annotations

import hashlib
import json
import os

from .options import cache_dir  # noqa: F401  (the cache's folder; imported from here too)

MANIFEST = "manifest.json"


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class FileCache:
    def __init__(self, root: str | None = None):
        self.root = root or cache_dir()

    def _path(self, key: str) -> str:
        return os.path.join(self.root, key[:2], key)

    def get(self, key: str) -> dict | None:
        """{filename: bytes} of a complete, undamaged entry, or None (a damaged entry is
        removed)."""
        path = self._path(key)
        if not os.path.isdir(path):
            return None
        out = self._read(path)
        if out is None:
            self.evict(key)
        return out

    @staticmethod
    def _read(path: str) -> dict | None:
        try:
            with open(os.path.join(path, MANIFEST)) as f:
                manifest = json.load(f)
            if not isinstance(manifest, dict) or not isinstance(manifest.get("files"), dict):
                return None
            out = {}
            for n, (size, digest) in manifest["files"].items():
                with open(os.path.join(path, n), "rb") as f:
                    data = f.read()
                if len(data) != size or _digest(data) != digest:
                    return None
                out[n] = data
            return out
        except (OSError, ValueError, TypeError):
            return None

    def evict(self, key: str) -> None:
        """Removes an entry: renamed aside first (atomic), so a reader never sees half of it
        and a concurrent writer can put the new one at once."""
        import shutil  # here, as in put: `import tilework` reads the cache without them
        import tempfile
        path = self._path(key)
        try:
            dead = tempfile.mkdtemp(dir=os.path.dirname(path), prefix=".dead-")
            os.rename(path, os.path.join(dead, "entry"))
        except OSError:
            return  # gone already (another process evicted it), or a read-only cache
        shutil.rmtree(dead, ignore_errors=True)

    def put(self, key: str, files: dict) -> None:
        import shutil
        import tempfile
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
            manifest = {}
            for n, data in files.items():
                data = data if isinstance(data, bytes) else data.encode()
                with open(os.path.join(tmp, n), "wb") as f:
                    f.write(data)
                manifest[n] = [len(data), _digest(data)]
            with open(os.path.join(tmp, MANIFEST), "w") as f:
                json.dump({"files": manifest}, f, sort_keys=True)
            os.rename(tmp, path)  # atomic; fails if another process won the race
        except OSError:
            shutil.rmtree(tmp, ignore_errors=True)

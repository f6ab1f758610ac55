# Sourced by main.sh and test.sh: a virtual environment in .venv with tilework installed
# (editable) and its test tools.  Only Python >= 3.10 is needed on the machine.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
PY=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
fi
extras="test"
# the NVIDIA runtime's Python bindings where an NVIDIA driver is present
if command -v nvidia-smi >/dev/null 2>&1; then extras="test,cuda"; fi
.venv/bin/python -m pip install -q --disable-pip-version-check -e ".[${extras}]"
export PATH="$PWD/.venv/bin:$PATH"

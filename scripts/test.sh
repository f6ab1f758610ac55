#!/usr/bin/env bash
# All tests: the lit/FileCheck suite, then pytest (GPU tests skip without a GPU).
source "$(dirname "$0")/env.sh"
lit -q test/lit
python -m pytest -q test/python "$@"

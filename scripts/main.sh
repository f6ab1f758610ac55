#!/usr/bin/env bash
# The main job: example kernels compiled for sm_90a and gfx942 with every stage's IR dumped
# under out/ir, then run on the GPU if there is one (else in the CPU interpreter).
source "$(dirname "$0")/env.sh"
python examples/main.py -o out/ir "$@"

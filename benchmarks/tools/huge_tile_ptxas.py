"""No GPU: cold compile time and ptxas -v of benchmarks/tools/big_tile.py's kernels (a one-row
softmax, a masked vector add) at BLOCK = 8K .. 128K for sm_90a, with and without the huge-tile
launch bound (`CompileOptions.huge_tile_bounds`: `.minnctapersm 1`), as a markdown table.

    python benchmarks/tools/huge_tile_ptxas.py [--kernels softmax,vadd]
        [--blocks 8192,16384,32768,65536,131072] [--warps 4]
"""
import argparse
import os
import re
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import tilework.language as tl  # noqa: E402
from tilework import CompileOptions  # noqa: E402
from tilework.compiler.driver import ASTSource, compile  # noqa: E402
from quick_matmul import load_source  # noqa: E402

SRC = open(os.path.join(HERE, "big_tile.py")).read().split("SRC = '''")[1].split("'''")[0]
SIGS = {"softmax": ("big_softmax", ["x_ptr", "out_ptr", "n_cols"]),
        "vadd": ("big_add", ["x_ptr", "y_ptr", "out_ptr", "n"])}


def one(mod, kname, block, warps, bounds):
    """(compile s, ptxas level, registers, spill-store bytes, .minnctapersm) of one compile."""
    name, params = SIGS[kname]
    sig = {p: tl.int32 if p.startswith("n") else tl.pointer_type(tl.float32) for p in params}
    attrs = {p: {"tile.divisibility": 16} for p in params}
    fn = getattr(mod, name)
    t = time.perf_counter()
    ck = compile(ASTSource(getattr(fn, "base_fn", fn), sig, {"BLOCK": block}, attrs), "sm_90a",
                 CompileOptions(num_warps=warps, huge_tile_bounds=bounds), cache=False)
    secs = time.perf_counter() - t
    info = ck.metadata.get("ptxas_info", "")
    spill = re.search(r"(\d+) bytes spill stores", info)
    return (secs, ck.metadata.get("ptxas_opt_level"), ck.n_regs,
            int(spill.group(1)) if spill else None, ".minnctapersm" in ck.asm["ptx"])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--kernels", default="softmax,vadd")
    ap.add_argument("--blocks", default="8192,16384,32768,65536,131072")
    ap.add_argument("--warps", type=int, default=4)
    a = ap.parse_args()
    mod = load_source(SRC, "tilework", "huge_tile_ptxas")
    print(f"sm_90a, fp32, {a.warps} warps; cells: compile s, ptxas level, registers, "
          f"spill-store bytes (+b: .minnctapersm 1 added)")
    print("| kernel | BLOCK | huge_tile_bounds=False | default |")
    print("| --- | --- | --- | --- |")
    for kname in a.kernels.split(","):
        for block in (int(b) for b in a.blocks.split(",")):
            cells = []
            for bounds in (False, True):
                s, lvl, regs, spill, b = one(mod, kname, block, a.warps, bounds)
                cells.append(f"{s:.2f} s, -O{lvl}, {regs}r, {spill} B" + (" +b" if b else ""))
            print(f"| {kname} | {block} | " + " | ".join(cells) + " |", flush=True)


if __name__ == "__main__":
    main()

"""Every op family's kernel (test_surface_compile.py's FAMILIES, compiled there for gfx942)
compiles through every stage for the other AMD targets, CDNA and RDNA, wave64 and wave32:
hsaco with a metadata note that names it, no scratch, no calls."""
import re

import pytest

from tilework.backends.amd.codeobject import kernel_note

from test_surface_compile import FAMILIES, assert_complete, compiled

TARGETS = ["gfx90a", "gfx950", "gfx1100", "gfx1201"]


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("family", list(FAMILIES))
def test_family_compiles(family, target):
    ck, _ = compiled(family, target)
    name = FAMILIES[family][0].__name__
    assert_complete(ck, target, name)
    asm = ck.asm["amdgcn"]
    assert not re.search(r"^\s*(scratch_(load|store)|buffer_(load|store)\w*\s+[^,]+,\s*off,)",
                         asm, re.M)  # scratch (gfx90a: a buffer access at no VGPR address)
    assert not re.search(r"\bs_swappc_b64\b", asm)
    note = kernel_note(ck.binary, name)
    assert note[".wavefront_size"] == (32 if target.startswith("gfx1") else 64)
    assert note[".private_segment_fixed_size"] == 0

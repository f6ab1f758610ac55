"""The IRDL generated from the op declarations names each constraint variable once."""
import re

from tilework.dialects import opdefs
from tilework.dialects.opdefs.base import Constraint, _Vars  # noqa: F401  (the unit under test)


def test_temporary_constraints_get_distinct_names():
    # constraints made and dropped one after another (as attribute constraints are): a name
    # keyed by a freed object's id would come back (seen on Python 3.12: '%v3' defined twice)
    v, names = _Vars(), []
    for _ in range(64):
        c = Constraint("irdl.any")
        names.append(v.define(c).split(" =")[0])
        del c  # its memory is free for the next one
    assert len(set(names)) == 64


def test_generated_irdl_defines_each_name_once_per_definition():
    text = opdefs.irdl_text()
    blocks = re.split(r"irdl\.(?:operation|type|attribute) @", text)[1:]
    assert len(blocks) > 25
    for blk in blocks:
        body = blk.split("\n  }")[0]
        defs = re.findall(r"^\s*(%v\d+) =", body, re.M)
        assert len(defs) == len(set(defs)), body

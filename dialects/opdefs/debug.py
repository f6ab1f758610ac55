"""`tile` ops of the debug family: print, assert, assume."""
from __future__ import annotations

from .. import ir_types as T
from .base import EFFECT, INT, STRING, Attr, any_type, operand, optional
from .core import TILE

TILE.op("print", "one line per element of `arg` (pid, index, prefix, value); device_print "
                 "of several values is one print per value, `operand` numbering them (-1: the "
                 "only one)",
        operands=[optional("arg", any_type())],
        attrs=[Attr("prefix", STRING), Attr("hex", INT), Attr("is_signed", INT),
               Attr("operand", INT)],
        traits={EFFECT}, segment_sizes=False)


def _cond_check(what):
    def check(op):
        if str(T.element_type(op.operands[0].type)) != "i1":
            return f"{what} condition must be i1, got {op.operands[0].type}"
    return check


TILE.op("assert", "traps (reporting msg, file and line) where `cond` is false; emitted only "
                  "in debug", operands=[operand("cond", any_type())], attrs=[Attr("msg", STRING)],
        traits={EFFECT}, verify=_cond_check("assert"))
# a hint: it must stay (dead-code removal would drop what it tells the compiler)
TILE.op("assume", "the compiler may assume `cond` holds", operands=[operand("cond", any_type())],
        traits={EFFECT}, verify=_cond_check("assume"))
# tl.debug_barrier: an effect, so it is neither merged nor erased nor moved
TILE.op("debug_barrier", "every thread of the CTA waits here (tl.debug_barrier)",
        traits={EFFECT})

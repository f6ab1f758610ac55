"""The lowering registry: rules by backend and architecture range, the most specific one wins,
duplicates and bad ranges are refused with messages naming the op and the functions."""
import pytest

import tilework.language as tl
from tilework.backends import parse_target
from tilework.compiler.driver import ASTSource, compile
from tilework.lowering import registry
from tilework.lowering.registry import LoweringError, lookup, lower


@pytest.fixture
def rules(monkeypatch):
    """A private rule table (the real one is left as it is)."""
    table = {}
    monkeypatch.setattr(registry, "RULES", table)
    return table


def generic(ctx, op, args): ...
def on_nvidia(ctx, op, args): ...
def on_hopper_up(ctx, op, args): ...
def on_ampere_hopper(ctx, op, args): ...
def on_cdna(ctx, op, args): ...
def on_gfx942(ctx, op, args): ...


def _register():
    lower("test.op")(generic)
    lower("test.op", target="nvidia")(on_nvidia)
    lower("test.op", target="nvidia", arch=(90, None))(on_hopper_up)
    lower("test.op", target="nvidia", arch=(80, 90))(on_ampere_hopper)
    lower("test.op", target="amd", arch=(0x900, 0x9ff))(on_cdna)
    lower("test.op", target="amd", arch=(0x942, 0x942))(on_gfx942)


@pytest.mark.parametrize("arch, want", [
    ("sm_75", on_nvidia), ("sm_80", on_ampere_hopper), ("sm_89", on_ampere_hopper),
    ("sm_90a", on_ampere_hopper),   # (80, 90) is narrower than (90, *)
    ("sm_100a", on_hopper_up), ("sm_120", on_hopper_up),
    ("gfx90a", on_cdna), ("gfx942", on_gfx942), ("gfx950", on_cdna), ("gfx1100", generic),
])
def test_most_specific_rule_wins(rules, arch, want):
    _register()
    assert lookup("test.op", parse_target(arch)) is want
    t = parse_target(arch)
    assert lookup("test.op", t.backend, t.arch) is want


def test_backend_name_without_arch_skips_ranged_rules(rules):
    _register()
    assert lookup("test.op", "nvidia") is on_nvidia
    assert lookup("test.op", "amd") is generic


def test_registering_twice_names_the_op_and_both_functions(rules):
    lower("test.op", target="nvidia", arch=(80, 90))(on_nvidia)
    with pytest.raises(ValueError) as e:
        lower("test.op", target="nvidia", arch=(80, 90))(on_hopper_up)
    assert str(e.value) == (
        "two lowering rules for 'test.op' on the same target: "
        "test_registry.on_nvidia (nvidia, arch [80, 90]) and "
        "test_registry.on_hopper_up (nvidia, arch [80, 90])")
    lower("test.op")(generic)
    with pytest.raises(ValueError, match=r"^two lowering rules for 'test.op' on the same "
                                         r"target: test_registry.generic \(every target\) and "
                                         r"test_registry.on_cdna \(every target\)$"):
        lower("test.op")(on_cdna)
    with pytest.raises(ValueError, match=r"test_registry.on_cdna \(amd, arch \[0x900, \*\]\)"):
        lower("test.op", target="amd", arch=(0x900, None))(on_cdna)
        lower("test.op", target="amd", arch=(0x900, None))(on_cdna)


@pytest.mark.parametrize("kwargs, message", [
    ({"arch": (80, 90)}, "@lower('test.op'): an arch range needs a target (arch=(80, 90))"),
    ({"target": "nvidia", "arch": 80},
     "@lower('test.op'): arch must be (min, max) capabilities (ints or None), got 80"),
    ({"target": "nvidia", "arch": (None, None)},
     "@lower('test.op'): arch must be (min, max) capabilities (ints or None), got (None, None)"),
    ({"target": "nvidia", "arch": ("sm_80", None)},
     "@lower('test.op'): arch must be (min, max) capabilities (ints or None), got ('sm_80', None)"),
    ({"target": "nvidia", "arch": (90, 80)}, "@lower('test.op'): empty arch range (90, 80)"),
])
def test_bad_arch_ranges(rules, kwargs, message):
    with pytest.raises(ValueError) as e:
        lower("test.op", **kwargs)
    assert str(e.value) == message


def test_missing_rule_names_op_and_target(rules):
    lower("test.op", target="amd")(on_cdna)
    with pytest.raises(LoweringError) as e:
        lookup("test.op", parse_target("sm_90a"))
    assert str(e.value) == "no lowering rule for 'test.op' on target 'nvidia'"
    with pytest.raises(LoweringError, match="^no lowering rule for 'test.other' on target "
                                            "'amd'$"):
        lookup("test.other", parse_target("gfx942"))


def test_overlapping_ranges_of_equal_width_are_ambiguous(rules):
    lower("test.op", target="nvidia", arch=(80, 89))(on_nvidia)
    lower("test.op", target="nvidia", arch=(85, 94))(on_hopper_up)
    assert lookup("test.op", parse_target("sm_80")) is on_nvidia
    assert lookup("test.op", parse_target("sm_90")) is on_hopper_up
    with pytest.raises(LoweringError) as e:
        lookup("test.op", parse_target("sm_86"))
    assert str(e.value) == ("ambiguous lowering rules for 'test.op' on sm_86: "
                            "test_registry.on_nvidia (nvidia, arch [80, 89]) and "
                            "test_registry.on_hopper_up (nvidia, arch [85, 94])")


def test_arch_capability_messages():
    from tilework.lowering.target import arch_capability
    assert arch_capability("sm_90a") == 90 and arch_capability("gfx90a") == 0x90a
    with pytest.raises(ValueError, match=r"^architecture 'rdna3' is neither sm_NN\[a\] nor "
                                         r"gfxNNN$"):
        arch_capability("rdna3")


# ---- the real rule table -----------------------------------------------------------------------

def test_one_float_conversion_rule_dispatches_fp8():
    """extf/truncf: one generic rule (fp8 operands go to the fp8 expansion), whatever the order
    the rule modules were imported in."""
    from tilework.lowering.rules import elementwise, fp8
    for op in ("arith.extf", "arith.truncf"):
        rs = registry.RULES[op]
        assert [(r.fn, r.target, r.arch) for r in rs] == \
            [(elementwise._float_conversion, None, None)], op
    assert not any(r.fn.__module__ == fp8.__name__ for rs in registry.RULES.values()
                   for r in rs)


def test_no_duplicate_rules_and_debug_rules_per_backend():
    from tilework.lowering.rules import debug
    for op, rs in registry.RULES.items():
        keys = [(r.target, r.arch) for r in rs]
        assert len(keys) == len(set(keys)), op
    for arch, want in (("sm_90a", debug._print_nvidia), ("gfx942", debug._print_amd)):
        assert lookup("tile.print", parse_target(arch)) is want
    for arch, want in (("sm_80", debug._assert_nvidia), ("gfx1100", debug._assert_amd)):
        assert lookup("tile.assert", parse_target(arch)) is want


def test_an_arch_rule_is_used_by_the_compiler_on_its_targets_only():
    """A rule for sm_90 and newer, wrapping the generic one, runs when compiling for sm_90a and
    sm_100a only; the kernels are the same."""
    import tilework
    generic_rule = lookup("tile.get_program_id", "nvidia")
    calls = []

    def recording(ctx, op, args):
        calls.append(ctx.arch)
        return generic_rule(ctx, op, args)
    rule = registry.Rule("tile.get_program_id", recording, "nvidia", (90, None))
    registry.add_rule(rule)
    try:
        @tilework.jit
        def k(out_ptr):
            tl.store(out_ptr + tl.program_id(0), 1)
        src = ASTSource(k, {"out_ptr": tl.pointer_type(tl.int32)}, {}, {})
        ptx = {t: compile(src, t, cache=False).asm["ptx"] for t in ("sm_80", "sm_90a",
                                                                   "sm_100a")}
        compile(src, "gfx942", cache=False)
    finally:
        registry.remove_rule(rule)
    assert calls == ["sm_90a", "sm_100a"]
    assert "%ctaid.x" in ptx["sm_80"] and "%ctaid.x" in ptx["sm_90a"]
    assert lookup("tile.get_program_id", parse_target("sm_90a")) is generic_rule

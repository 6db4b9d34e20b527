"""The text form of a verdict (attngeom.core.verdict_format): the CLI's and the notebooks'."""

from attngeom.core.verdict import combine, proved, refuted, verified
from attngeom.core.verdict_format import MAX_VALUE_CHARS, format_verdict, verdict_line


def _stamped(verdict):
    verdict.claim, verdict.source = "linear", "ADM Prop 9"
    verdict.params, verdict.seconds = {"d": 3, "t": 2, "r": None}, 0.25
    return verdict


def _combined():
    vanishing = verified(checked=4, degree=2, prime=101, points=3, summary="all vanish")
    count = proved(checked=1, summary="10 members", evidence={"listed": 10,
                                                              "rows": [{"k": i} for i in range(5)]})
    return _stamped(combine({"vanishing": vanishing, "count": count}, summary="both hold"))


def test_format_verdict_lines():
    text = format_verdict(_combined())
    assert text.splitlines() == [
        "verified  linear  [ADM Prop 9]",
        "  params    d=3 t=2",
        "  method    exact   checked 5   0.25 s",
        "  summary   both hold",
        f"  failure probability <= {(2 / 101) ** 3:.3g} (Schwartz–Zippel)",
        "  - vanishing  verified (exact): all vanish",
        "      prime: 101",
        "      points: 3",
        "      degree: 2",
        "  - count  proved (symbolic): 10 members",
        "      listed: 10",
        "      rows: [5 entries; --json shows them]",
    ]


def test_nested_parts_are_indented_under_their_part():
    outer = _stamped(combine({"outer": _combined(), "extra": proved(checked=1, summary="x",
                                                                    evidence={})}))
    lines = format_verdict(outer).splitlines()
    assert "  - outer  verified (exact): both hold" in lines
    assert "      - count  proved (symbolic): 10 members" in lines
    assert "          listed: 10" in lines


def test_evidence_selection_by_key_and_part_name():
    text = format_verdict(_combined(), evidence=["count"])
    assert "- count  proved" in text and "- vanishing" not in text
    assert "- " not in format_verdict(_combined(), evidence=())


def test_counterexample_and_long_values():
    verdict = _stamped(refuted(method="exact", counterexample={"x": 1}, summary="no",
                               evidence={"long": "y" * (MAX_VALUE_CHARS + 5)}))
    text = format_verdict(verdict)
    assert '  counterexample {"x": 1}' in text.splitlines()
    assert f"  long: {'y' * MAX_VALUE_CHARS} ..." in text.splitlines()
    assert verdict_line(verdict) == f"{'refuted':<14} linear: no"

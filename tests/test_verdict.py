"""The verdict contract: statuses, exit codes, evidence demanded by each constructor."""

import json

import pytest

from attngeom.core.verdict import (Status, combine, consistent, not_applicable, proved, refuted,
                             schwartz_zippel_bound, verified)

CONTRACT_FIELDS = ["claim", "source", "params", "status", "method", "checked",
                   "failure_probability", "max_residual", "counterexample", "seconds",
                   "backend", "device", "version"]


def test_exit_codes_follow_the_cli_contract():
    assert [s.exit_code for s in Status] == [0, 0, 0, 1, 2]
    assert Status.VERIFIED.holds and not Status.REFUTED.holds


def test_schwartz_zippel_bound():
    assert schwartz_zippel_bound(3, 101, 2) == pytest.approx((3 / 101) ** 2)
    assert schwartz_zippel_bound(3, 101, 2, members=10) == pytest.approx(10 * (3 / 101) ** 2)
    assert schwartz_zippel_bound(200, 101, 5) == 1.0
    assert schwartz_zippel_bound(0, 101, 5) == 0.0


def test_json_has_the_contract_fields():
    v = verified(checked=4, degree=2, prime=2**31 - 1, points=3, summary="ok")
    v.claim, v.source, v.params, v.seconds = "linear", "ADM Prop 9", {"d": 2}, 0.1
    data = json.loads(json.dumps(v.to_json()))
    assert list(data)[:13] == CONTRACT_FIELDS
    assert data["status"] == "verified" and data["failure_probability"] < 1e-25


def test_constructors_demand_their_evidence():
    with pytest.raises(AssertionError):
        consistent(checked=1, max_residual=1e-3, tolerance=1e-9, summary="", backend="numpy",
                   device="cpu")
    with pytest.raises(AssertionError):
        refuted(method="exact", counterexample={}, summary="")
    na = not_applicable("Thm 30 needs r <= a")
    assert na.status is Status.NOT_APPLICABLE and na.evidence["hypothesis"] == "Thm 30 needs r <= a"


def test_combine_takes_the_weakest_and_keeps_refutations():
    p = proved(checked=1, summary="p", evidence={})
    v = verified(checked=1, degree=2, prime=101, points=2, summary="v")
    r = refuted(method="exact", counterexample={"x": 1}, summary="r")
    assert combine({"p": p, "v": v}, summary="both").status is Status.VERIFIED
    both = combine({"p": p, "r": r, "v": v}, summary="x")
    assert both.status is Status.REFUTED and both.counterexample == {"x": 1}
    assert both.summary == "r"
    assert combine({"first": p, "second": p}, summary="pp").status is Status.PROVED


def test_combine_keeps_the_parts_by_name_in_order():
    p = proved(checked=1, summary="p", evidence={"terms": 3})
    v = verified(checked=2, degree=2, prime=101, points=2, summary="v")
    out = combine([("vanishing", v), ("count", p)])
    parts = out.evidence["parts"]
    assert list(parts) == ["vanishing", "count"]
    assert parts["count"] == {"status": "proved", "method": "symbolic", "summary": "p", "terms": 3}
    assert parts["vanishing"]["prime"] == 101 and out.checked == 3
    assert out.summary == "v; p"                       # the parts' summaries by default
    nested = combine({"outer": out, "d=3,3,3/a=2,2/t=3": p})
    assert nested.evidence["parts"]["outer"]["parts"]["count"]["terms"] == 3


@pytest.mark.parametrize("parts", [
    [("same", proved(checked=1, summary="a", evidence={})),
     ("same", proved(checked=1, summary="b", evidence={}))],
    {"two words": proved(checked=1, summary="a", evidence={})},
    {"": proved(checked=1, summary="a", evidence={})},
    {},
])
def test_combine_refuses_unnamed_or_clashing_parts(parts):
    with pytest.raises(AssertionError):
        combine(parts)

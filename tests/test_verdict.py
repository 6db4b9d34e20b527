"""The verdict contract: statuses, exit codes, evidence demanded by each constructor."""

import json

import pytest

from kernels.verdict import (Status, combine, consistent, not_applicable, proved, refuted,
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
    assert combine([p, v], summary="both").status is Status.VERIFIED
    both = combine([p, r, v], summary="x")
    assert both.status is Status.REFUTED and both.counterexample == {"x": 1}
    assert combine([p, p], summary="pp").status is Status.PROVED

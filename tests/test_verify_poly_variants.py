"""``attngeom verify-poly --heads / --skip / --causal`` (issue 24, ask 3): a polynomial in
ADM's coordinates of one output coordinate checked on a variant layer's variety, exactly
over F_p (attngeom/lightning_alg/variant_polynomial.py)."""

from __future__ import annotations

import json

import pytest

LINEAR = "y_((3,1),(3,1),(3,1)) - y_((3,2),(3,2),(3,1))"          # ADM Prop 9 at (3, 2, 3)
QUADRIC = ("y_((1,2),(1,2),(1,1))*y_((1,2),(2,2),(2,1)) "         # low-rank, Ex 26 (3, 2, 1)
           "- y_((1,2),(1,2),(2,1))*y_((1,2),(2,2),(1,1))")
LATER_CONTEXT = "y_((1,2),(1,2),(1,1))"                            # context 2 of column 1


def _status(run_cli, *args):
    code, out, err = run_cli("verify-poly", *args, "--json")
    assert code in (0, 1), err
    return json.loads(out)


@pytest.mark.parametrize("args,status", [
    ((LINEAR, "--d", 3, "--t", 2, "--a", 3, "--heads", 2), "verified"),     # linear relations survive
    ((QUADRIC, "--d", 3, "--t", 2, "--a", 1), "proved"),                    # one head: in J
    ((QUADRIC, "--d", 3, "--t", 2, "--a", 1, "--heads", 2), "refuted"),      # the join loses it
    ((QUADRIC, "--d", 3, "--t", 2, "--a", 1, "--skip", "linear"), "verified"),  # cubic part is f's
    ((LATER_CONTEXT, "--d", 3, "--t", 2, "--a", 3, "--causal"), "verified"),  # masked: zero
    ((LATER_CONTEXT, "--d", 3, "--t", 2, "--a", 3), "refuted"),              # unmasked: not
])
def test_verify_poly_on_variant_layers(run_cli, args, status):
    verdict = _status(run_cli, *args)
    assert verdict["status"] == status
    if status == "refuted" and "--heads" in args:
        assert len(verdict["counterexample"]["weights_per_head"]) == 2


def test_variant_verify_poly_refuses_what_it_cannot_do(run_cli):
    code, _, err = run_cli("verify-poly", LATER_CONTEXT, "--d", 3, "--t", 2, "--a", 3, "--causal",
                           "--method", "symbolic")
    assert code == 2 and "exactly over F_p" in err and len(err.strip().splitlines()) == 1
    code, _, err = run_cli("verify-poly", LATER_CONTEXT, "--d", 3, "--t", 2, "--a", 3, "--causal",
                           "--all-outputs")
    assert code == 2 and "--all-outputs" in err
    code, _, err = run_cli("verify-poly", LINEAR, "--d", 3, "--t", 2, "--a", 3, "--heads", 0)
    assert code == 2 and "--heads" in err

"""HMK claims: verdicts on the paper's examples, mutation tests, formulas, the CLI."""

import json

import numpy as np
import pytest

import attngeom.kernels.jacobian as jac
import attngeom.lightning_alg.claims.hmk as hmk
import attngeom.lightning_alg.claims.hmk_deep_fibres as hmk_deep_fibres
import attngeom.lightning_alg.claims.hmk_fibres as hmk_fibres
import attngeom.lightning_alg.hmk.dimension as dimension
from attngeom.core.claim import CheckContext
from attngeom.core.errors import BadInput
from attngeom.kernels.jacobian import jacobian_mod_p
from attngeom.kernels.primefield import rank_mod_p
from attngeom.kernels.sampling import DEFAULT_PRIME
from attngeom.lightning_alg.claims import REGISTRY
from attngeom.lightning_alg.hmk.dimension import (Architecture, architecture, deep_dimension_corrected,
                                     deep_dimension_printed, eq5_parameters_printed,
                                     parameter_space_dimension, single_layer_dimension,
                                     softmax_dimension_printed)
from attngeom.lightning_alg.model import lightning_attention, softmax_attention
from attngeom.lightning_alg.hmk.virtual_weights import adic_factor, unrolled_factors

P = DEFAULT_PRIME


def verify(claim_id, method="auto", **params):
    raw = {k: (",".join(map(str, v)) if isinstance(v, (list, tuple)) else str(v))
           for k, v in params.items()}
    return REGISTRY.get(claim_id).verify(raw, method, CheckContext(seed=0))


def part_statuses(verdict):
    return {name: part["status"] for name, part in verdict.evidence["parts"].items()}


# -- formulas and parameters ------------------------------------------------------------------
def test_single_layer_formula_matches_hmk_figure_1():
    # HMK §3.2: M_{2,1,2} (t = 2) has dimension 5
    assert single_layer_dimension(2, 1, 2) == 5
    assert single_layer_dimension(3, 2, 5) == single_layer_dimension(3, 2, 3) == 9 + 6 - 1


@pytest.mark.parametrize("delta", range(3, 11))
def test_figure3_formulas(delta):
    arch = Architecture((delta,) * 3, (2, 2), 3)
    assert softmax_dimension_printed(arch, delta) == delta ** 2 + 8 * delta - 8
    assert deep_dimension_corrected(arch, delta) == delta ** 2 + 8 * delta - 10
    # eq (14) as printed counts A_1 twice: + (2 alpha_1 delta - alpha_1^2) = 4 delta - 4
    assert deep_dimension_printed(arch, delta) == delta ** 2 + 12 * delta - 14
    assert parameter_space_dimension(arch, delta) == 2 * delta ** 2 + 8 * delta - 8


def test_parameter_count_and_printed_eq5():
    arch = Architecture((4, 2, 3), (2, 2), 3)
    assert arch.parameters == 4 * (4 + 2) + 2 * (4 + 3) == 38
    assert eq5_parameters_printed(arch) == 2 * (4 + 4) + 3 * (4 + 2) == 34
    same = Architecture((3, 3, 3), (2, 2), 3)
    assert same.parameters == eq5_parameters_printed(same) == 42


def test_architecture_parsing():
    assert architecture({"d": (3,), "a": (2,), "t": 3, "layers": 2}).d == (3, 3, 3)
    assert architecture({"d": (3,), "t": 2, "dprime": 2}).d == (3, 2)
    assert architecture({"d": (4, 2, 3), "a": (2,), "t": 3}).a == (2, 2)
    assert architecture({"d": (4, 2, 3), "t": 3}).a == (4, 2)
    for bad in [{"d": (3, 3), "t": 3, "layers": 2}, {"d": (3, 3, 3), "a": (2, 2, 2), "t": 3},
                {"d": (3, 2), "t": 2, "dprime": 3}, {"d": (3,)}, {"t": 3}]:
        with pytest.raises(BadInput):
            architecture(bad)


def test_three_adic_rule():
    assert [adic_factor(j) for j in (1, 2, 3, 4, 5, 6, 9, 18)] == [
        (1, False), (1, True), (2, False), (1, False), (1, True), (2, True), (3, False), (3, True)]
    assert unrolled_factors(2) == [(1, False), (1, True), (2, False), (1, False)]
    # M_i appears 3^(l-i) times: the exponents of eq (13)
    factors = unrolled_factors(4)
    assert [sum(a == i for a, _ in factors) for i in (1, 2, 3, 4)] == [27, 9, 3, 1]


# -- matmul-fibre ---------------------------------------------------------------------------------
def test_matmul_fibre_verified_and_not_applicable_for_a_above_d():
    verdict = verify("matmul-fibre", d=3, a=2)
    assert verdict.status.value == "verified"
    dimension = verdict.evidence["parts"]["dimension"]
    assert dimension["measured_rank"] == 2 * (6 - 2) and dimension["certified"]
    assert verify("matmul-fibre", d=2, a=3).status.value == "not-applicable"


def test_matmul_fibre_mutations(monkeypatch):
    from attngeom.lightning_alg.hmk.fibres import inverse_mod_p
    from attngeom.kernels.primefield import matmul_mod_p

    def wrong_action(Q, K, C, prime):     # C^{-1} where the lemma has C^{-T}
        return matmul_mod_p(inverse_mod_p(C, prime), Q, prime), matmul_mod_p(C, K, prime)

    monkeypatch.setattr(hmk_fibres, "gauge_action", wrong_action)
    assert verify("matmul-fibre", d=3, a=2).status.value == "refuted"
    monkeypatch.undo()
    monkeypatch.setattr(hmk_fibres, "gauge_between", lambda K, K2, p: np.eye(K.shape[0], dtype=np.int64))
    assert verify("matmul-fibre", d=3, a=2).status.value == "refuted"


# -- fibre-single-layer ------------------------------------------------------------------------------
@pytest.mark.parametrize("method", ["exact", "symbolic"])
def test_fibre_single_layer_verified(method):
    verdict = verify("fibre-single-layer", method, d=3, dprime=2, t=2)
    assert verdict.status.value == "verified"
    assert verdict.evidence["parts"]["generic-fibre"]["measured_rank"] == 9 + 6 - 1


def test_fibre_single_layer_needs_two_tokens():
    assert verify("fibre-single-layer", d=2, t=1).status.value == "not-applicable"


@pytest.mark.parametrize("method", ["exact", "symbolic"])
def test_fibre_single_layer_mutation_of_the_model(monkeypatch, method):
    # V X X^T A^T X: the swap (k <-> v) is no longer a symmetry
    monkeypatch.setattr(hmk_fibres, "lightning_attention", lambda X, A, V: V @ (X @ (X.T @ A.T @ X)))
    assert verify("fibre-single-layer", method, d=2, dprime=1, t=2).status.value == "refuted"


def test_fibre_single_layer_mutation_of_the_swap(monkeypatch):
    from attngeom.lightning_alg.hmk.fibres import outer_mod_p
    monkeypatch.setattr(hmk_fibres, "rank_one_swap", lambda k, q, h, v, p: (
        (outer_mod_p(k, q, p), outer_mod_p(h, v, p)), (outer_mod_p(v, q, p), outer_mod_p(h, v, p))))
    verdict = verify("fibre-single-layer", "exact", d=3, dprime=2, t=2)
    assert verdict.status.value == "refuted" and "swap" in verdict.summary


# -- dimension-single-layer ------------------------------------------------------------------------
@pytest.mark.parametrize("d,dp,a,t", [(2, 1, 2, 2), (3, 2, 5, 2), (4, 3, 2, 3), (2, 2, 1, 2)])
def test_single_layer_dimension_verified(d, dp, a, t):
    verdict = verify("dimension-single-layer", d=d, dprime=dp, a=a, t=t)
    assert verdict.status.value == "verified" and verdict.evidence["certified"]
    assert verdict.evidence["measured_rank"] == single_layer_dimension(d, dp, a)


def test_single_layer_grid_and_hypotheses():
    verdict = verify("dimension-single-layer")
    assert verdict.status.value == "verified" and verdict.checked == len(hmk.SINGLE_LAYER_GRID)
    assert any(a > d for d, _, a, _ in hmk.SINGLE_LAYER_GRID)
    assert verify("dimension-single-layer", d=3, dprime=1, a=1, t=2).status.value == "not-applicable"
    assert verify("dimension-single-layer", d=3, a=2, t=1).status.value == "not-applicable"


def test_single_layer_dimension_mutations(monkeypatch):
    monkeypatch.setattr(hmk, "single_layer_dimension", lambda d, dp, a: d * d + d * dp - 1 + (a <= d))
    assert verify("dimension-single-layer", d=3, dprime=2, a=2, t=2).status.value == "refuted"
    monkeypatch.undo()
    # a wrong model (only the symmetric part of A acts): the measured rank moves
    monkeypatch.setattr(dimension, "deep_lightning_attention", lambda X, layers: layers[0].V @ (
        X @ (X.T @ (layers[0].A + layers[0].A.T) @ X)))
    verdict = verify("dimension-single-layer", d=3, dprime=2, a=3, t=2)
    assert verdict.status.value == "refuted" and verdict.evidence["measured_rank"] < 14


def test_numeric_method_agrees_with_exact():
    verdict = verify("dimension-single-layer", "numeric", d=3, dprime=2, a=2, t=2)
    assert verdict.status.value == "consistent" and verdict.evidence["measured_rank"] == 13
    assert verdict.evidence["gap_clear"]


# -- singular-locus ---------------------------------------------------------------------------------
def test_singular_locus_refutes_lemma_a3_as_printed_and_checks_the_rest():
    verdict = verify("singular-locus", d=3, dprime=2, t=2)
    assert verdict.status.value == "refuted"
    statuses = part_statuses(verdict)
    assert statuses["lemmaA.3-corrected"] == "verified"
    assert statuses["lemmaA.3-printed"] == "refuted"
    assert statuses["corA.4"] == "verified" and statuses["corA.6"] == "verified"
    strata = verdict.evidence["strata"]
    assert strata["critical form (k⊗q, h⊗k)"]["critical"]
    assert not strata["rank-one (k⊗q, h⊗v), v not parallel to k"]["critical"]
    assert not strata["generic"]["critical"]
    # the counterexample re-checks: A generic, V = 0 is critical and not k⊗q, h⊗k
    witness = verdict.counterexample
    A, V = np.array(witness["A"]), np.array(witness["V"])
    assert rank_mod_p(A, P) == 3 and not V.any()
    X = np.random.default_rng(0).integers(0, P, (8, 3, 2))
    J = jacobian_mod_p(lambda w, X, be: lightning_attention(X, w[0], w[1]), [A, V], X, P)
    assert rank_mod_p(J, P) < 9 + 6 - 1


def test_singular_locus_mutation(monkeypatch):
    from attngeom.lightning_alg.hmk.fibres import outer_mod_p
    # (p⊗q, +h⊗p) is not in the kernel at the critical points
    monkeypatch.setattr(hmk_fibres, "critical_kernel_vector", lambda q, h, p_, prime: np.concatenate(
        [outer_mod_p(p_, q, prime).ravel(), outer_mod_p(h, p_, prime).ravel()]))
    verdict = verify("singular-locus", d=3, dprime=2, t=2)
    assert part_statuses(verdict)["lemmaA.3-corrected"] == "refuted"


# -- virtual-weights -----------------------------------------------------------------------------------
@pytest.mark.parametrize("d,method,status", [((3, 3, 3), "symbolic", "verified"),
                                             ((2, 3, 2), "symbolic", "proved"),
                                             ((3, 2, 2, 3), "exact", "verified"),
                                             ((2, 2, 2, 2, 2), "exact", "verified")])
def test_virtual_weights(d, method, status):
    verdict = verify("virtual-weights", method, d=d, t=3)
    assert verdict.status.value == status


@pytest.mark.parametrize("method", ["symbolic", "exact"])
def test_virtual_weights_mutations(monkeypatch, method):
    original = hmk_deep_fibres.unrolled_output
    flipped = [(alpha, not transposed) for alpha, transposed in unrolled_factors(2)]
    monkeypatch.setattr(hmk_deep_fibres, "unrolled_output", lambda Ms, L, X: original(Ms, L, X, flipped))
    verdict = verify("virtual-weights", method, d=(3, 3, 3), t=3)
    assert verdict.status.value == "refuted" and "eq (12)" in verdict.summary


def test_virtual_weights_change_of_basis_mutation(monkeypatch):
    original = hmk_deep_fibres.change_of_basis
    # C_i where eq (9) has C_i^{-1}
    monkeypatch.setattr(hmk_deep_fibres, "change_of_basis", lambda As, Vs, Cs, inverses: original(As, Vs, Cs, Cs))
    verdict = verify("virtual-weights", "exact", d=(3, 3, 3), t=3)
    assert verdict.status.value == "refuted" and "eq (9)" in verdict.summary


# -- fibre-deep ----------------------------------------------------------------------------------------
def test_fibre_deep_verified():
    verdict = verify("fibre-deep", d=(3, 3, 3), a=2, t=3)
    assert verdict.status.value == "verified"
    local = verdict.evidence["parts"]["thm3.7-local"]
    assert local["measured_rank"] == 2 and local["eq13_tangents_in_kernel"]
    assert verify("fibre-deep", d=(3, 2, 2, 3), a=2, t=3).status.value == "verified"
    assert verify("fibre-deep", d=(3, 3, 3), a=2, t=2).status.value == "not-applicable"


def test_fibre_deep_mutations(monkeypatch):
    from attngeom.lightning_alg.hmk.virtual_weights import _product
    # drop the D_i of eq (10): the degrees of eq (13) no longer match
    monkeypatch.setattr(hmk_deep_fibres, "recursion_output", lambda Ms, L, X: L @ X @ _product(
        [X.T @ M @ X for M in reversed(Ms)]))
    verdict = verify("fibre-deep", d=(3, 3, 3), a=2, t=3)
    assert part_statuses(verdict)["eq13"] == "refuted"
    monkeypatch.undo()
    monkeypatch.setattr(hmk_deep_fibres, "gauge_action", lambda Q, K, C, p: (Q, hmk_deep_fibres.matmul_mod_p(C, K, p)))
    verdict = verify("fibre-deep", d=(3, 3, 3), a=2, t=3)
    assert part_statuses(verdict)["symmetries"] == "refuted"


# -- dimension-deep ------------------------------------------------------------------------------------
def test_dimension_deep_refutes_printed_eq14_with_the_corrected_value():
    verdict = verify("dimension-deep", d=(3, 3, 3), a=(2, 2), t=3)
    ev = verdict.evidence
    assert verdict.status.value == "refuted"
    assert (ev["formula"], ev["measured_rank"], ev["corrected_formula"]) == (31, 23, 23)
    assert ev["certified"] and ev["eq32"] == ev["parameter_space_dimension_measured"] == 34
    problems = {p["formula"] for p in verdict.counterexample["problems"]}
    assert problems == {"eq (14)"}


def test_dimension_deep_refutes_printed_eq5_when_widths_change():
    verdict = verify("dimension-deep", d=(4, 2, 3), a=2, t=3)
    problems = {p["formula"]: p for p in verdict.counterexample["problems"]}
    assert problems["eq (5)"]["value"] == 34 and problems["eq (5)"]["measured"] == 38


def test_dimension_deep_grid_matches_the_corrected_formula():
    verdict = verify("dimension-deep")
    layers = set()
    for name, part in verdict.evidence["parts"].items():
        assert part["measured_rank"] == part["corrected_formula"] and part["certified"]
        assert name == Architecture(*(tuple(part["architecture"][k]) for k in "da"),
                                    part["architecture"]["t"]).slug
        layers.add(part["architecture"]["layers"])
    assert layers == {1, 2, 3, 4}


def test_dimension_deep_mutations(monkeypatch):
    monkeypatch.setattr(hmk, "deep_dimension_printed", deep_dimension_corrected)
    assert verify("dimension-deep", d=(3, 3, 3), a=2, t=3).status.value == "verified"
    monkeypatch.setattr(hmk, "deep_dimension_printed", lambda arch, delta:
                        deep_dimension_corrected(arch, delta) + 1)
    assert verify("dimension-deep", d=(3, 3, 3), a=2, t=3).status.value == "refuted"


def test_dimension_deep_hypotheses():
    for params in [dict(d=(3, 3, 3), a=2, t=2), dict(d=(3, 3, 3), a=1, t=3),
                   dict(d=(3, 2, 3, 3), a=2, t=3), dict(d=(2, 3, 3), a=2, t=3)]:
        assert verify("dimension-deep", **params).status.value == "not-applicable"


def test_exact_rank_at_delta_16_reaches_the_bound_at_the_first_attempt():
    arch = Architecture((16, 16, 16), (2, 2), 3)
    sampler = dimension.Sampler(0).spawn(16)
    measured = dimension.measure_exact(arch, sampler)
    assert measured.rank == measured.upper_bound == deep_dimension_corrected(arch, 16) == 374
    assert measured.attempts == [[16, 374]] and measured.certified
    # the Jacobian's rows alone (P + 8 of them, 14 inputs) fall short: the core directions
    rows_only = -(-(arch.parameters + dimension.EXTRA_ROWS) // (16 * 3))
    assert rows_only == 14 and dimension.core_directions(arch) == (60, 4)
    assert dimension.measure_exact(arch, sampler, samples=rows_only).rank < 374


# -- softmax ----------------------------------------------------------------------------------------------
def _symmetrized_softmax(X, A, V, backend):
    return softmax_attention(X, A + A.T, V, backend)


def test_softmax_injective_and_mutation(monkeypatch):
    verdict = verify("softmax-injective", d=3, dprime=2, t=3)
    assert verdict.status.value == "consistent"
    assert verdict.evidence["numerical_rank"] == 15 and verdict.evidence["gap_clear"]
    monkeypatch.setattr(hmk, "softmax_attention", _symmetrized_softmax)
    assert verify("softmax-injective", d=3, dprime=2, t=3).status.value == "refuted"


def test_softmax_dimension_and_mutations(monkeypatch):
    verdict = verify("softmax-dimension", d=(3, 3, 3), a=2, t=3)
    assert verdict.status.value == "consistent" and verdict.evidence["measured_rank"] == 25
    assert verdict.evidence["certified"]
    monkeypatch.setattr(hmk, "softmax_dimension_printed", lambda arch, delta: 26)
    assert verify("softmax-dimension", d=(3, 3, 3), a=2, t=3).status.value == "refuted"
    monkeypatch.undo()
    monkeypatch.setattr(dimension, "softmax_attention", _symmetrized_softmax)
    assert verify("softmax-dimension", d=(3, 3, 3), a=2, t=3).status.value == "refuted"


def test_unclear_gap_is_not_a_verdict(monkeypatch, run_cli):
    monkeypatch.setattr(jac, "CLEAR_MARGIN", 1e30)
    code, out, err = run_cli("dimension", "--d", "3,3,3", "--a", "2", "--t", "3", "--softmax")
    assert code == 2 and "no clear singular-value gap" in err and len(err.strip().splitlines()) == 1


# -- the CLI -------------------------------------------------------------------------------------------------
def test_cli_dimension_lightning_says_the_printed_formula_fails(run_cli):
    code, out, err = run_cli("dimension", "--layers", "2", "--d", "3,3,3", "--a", "2,2", "--t", "3")
    assert code == 1
    assert "measured rank  23" in out
    assert "DOES NOT HOLD  eq (14) as printed gives 31, the mathematics gives 23" in out


def test_cli_dimension_softmax_json(run_cli):
    code, out, err = run_cli("dimension", "--layers", "2", "--d", "3,3,3", "--a", "2,2", "--t", "3",
                             "--softmax", "--json")
    report = json.loads(out)
    assert code == 0 and report["status"] == "consistent"
    assert (report["parameters"], report["formula"], report["measured_rank"]) == (42, 25, 25)
    assert report["gap"] > 1e6 and report["samples"] == 250


def test_cli_dimension_json_fields_and_single_layer(run_cli):
    code, out, _ = run_cli("dimension", "--d", "3", "--dprime", "2", "--a", "5", "--t", "2", "--json")
    report = json.loads(out)
    assert code == 0 and report["claim"] == "dimension-single-layer"
    assert {"parameters", "formula", "measured_rank", "status", "prime"} <= set(report)


@pytest.mark.parametrize("args,message", [
    (("--d", "0,3,3", "--a", "2", "--t", "3"), "at least 1"),
    (("--d", "3,3", "--layers", "2", "--t", "3"), "needs 3 dimensions"),
    (("--d", "3,3,3", "--a", "2", "--t", "2"), "not-applicable: HMK Cor 3.8 needs t >= 3"),
    (("--d", "3,3,3", "--a", "2", "--t", "3", "--backend", "torch", "--device", "cuda"), "cuda"),
    (("--d", "3,3,3", "--a", "2", "--t", "3", "--softmax", "--method", "exact"), "numeric"),
    (("--figure3",), "--out"),
    (("--d", "3,3,3", "--a", "2", "--t", "3", "--samples", "1"), "inconclusive"),
])
def test_cli_dimension_bad_input(run_cli, args, message):
    from tests.conftest import cuda_available
    if "cuda" in args and cuda_available("torch"):
        pytest.skip("a GPU is present")
    code, out, err = run_cli("dimension", *args)
    assert code == 2 and message.lower() in err.lower()
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_cli_verify_takes_comma_lists(run_cli):
    code, out, _ = run_cli("verify", "dimension-deep", "--d", "3,3,3", "--a", "2", "--t", "3", "--json")
    assert code == 1 and json.loads(out)["evidence"]["corrected_formula"] == 23
    code, out, _ = run_cli("verify", "matmul-fibre", "--d", "4", "--a", "2")
    assert code == 0 and out.startswith("verified")


def test_cli_figure3_writes_the_png(run_cli, tmp_path):
    code, out, err = run_cli("dimension", "--figure3", "--out", tmp_path, "--json")
    data = json.loads(out)
    assert code == 0 and data["right"]
    png = tmp_path / "hmk_figure3.png"
    assert png.exists() and png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert [r["delta"] for r in data["rows"]] == list(range(3, 11))
    assert all(r["softmax_measured"] == r["softmax_eq16"] for r in data["rows"])
    assert all(r["lightning_measured"] == r["lightning_corrected"] < r["lightning_eq14_printed"]
               for r in data["rows"])


@pytest.mark.slow
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_figure3_is_right_at_other_seeds(seed):
    from attngeom.lightning_alg.hmk.figure3 import figure3_rows, rows_are_right
    assert rows_are_right(figure3_rows(CheckContext(seed=seed)))


@pytest.mark.parametrize("args", [
    ("verify", "dimension-single-layer", "--d", "500", "--a", "500", "--t", "500"),
    ("verify", "dimension-deep", "--d", "200,200,200", "--a", "2,2", "--t", "3"),
    ("verify", "softmax-dimension", "--d", "300", "--a", "300", "--t", "3"),
])
def test_jacobians_that_would_not_fit_are_refused_before_any_work(run_cli, args):
    """Issue 29, bounded work: the size is known before sampling (it used to hang in the
    symmetry tangents of a 750,000-parameter network)."""
    code, _, err = run_cli(*args)
    assert code == 2 and err.count("\n") == 1 and "the Jacobian would have about" in err


def test_a_formula_one_too_small_never_passes_on_an_uncertified_rank(monkeypatch, run_cli):
    """Issue 27 (the hole): eq (7) lowered by one (- a^2 - 2) used to be 'verified' at
    --samples 5, where the rank (10) is below the symmetry bound and not ample: a lower
    bound only.  Now inconclusive there, and refuted where the rank is certified."""
    true = hmk.single_layer_dimension
    monkeypatch.setattr(hmk, "single_layer_dimension", lambda d, dp, a: true(d, dp, a) - 1)
    args = ("verify", "dimension-single-layer", "--d", "3", "--dprime", "1", "--t", "2", "--a", "3")
    code, out, err = run_cli(*args, "--samples", "5")
    assert code == 2 and "inconclusive" in err and "lower bound" in err
    code, out, _ = run_cli(*args)
    assert code == 1 and out.startswith("refuted")

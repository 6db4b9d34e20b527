"""The GEC claims (issue 8, part 2): verdicts at the paper's examples, mutation tests that
make each check say `refuted`, and the `attngeom curvature` command (part 3)."""

import json
from dataclasses import replace
from fractions import Fraction

import numpy as np
import pytest
import sympy

from attngeom.geometry_proofs import riemann
from attngeom.geometry_proofs.gating import attention, depth, flatness, gates
from attngeom.geometry_proofs.claims import REGISTRY
from attngeom.core.certificates import split_example
from attngeom.core.claim import CheckContext
from attngeom.core.verdict_format import format_verdict

CLAIM_IDS = ("ungated-flat", "curvature-lower-bound", "gating-second-derivative", "gated-sphere",
             "graph-curvature", "depth-amplification", "vector-graph-curvature",
             "curvature-robustness", "generic-nonflat")


def verify(claim_id, method="auto", backend="numpy", samples=None, **params):
    context = CheckContext(backend=backend, samples=samples)
    return REGISTRY.get(claim_id).verify(params, method, context)


def status(claim_id, **kwargs):
    return verify(claim_id, **kwargs).status.value


def test_every_gec_claim_is_registered_with_its_source():
    assert {c.id for c in REGISTRY} >= set(CLAIM_IDS)
    for claim_id in CLAIM_IDS:
        claim = REGISTRY.get(claim_id)
        assert claim.source.startswith("GEC ") and claim.examples


# -- ungated-flat (Thm 3.1) --------------------------------------------------------------

def test_ungated_flat_symbolic_for_several_k_and_D():
    for k, D in ((1, 3), (2, 3), (3, 5)):
        verdict = verify("ungated-flat", k=k, ambient=D)
        assert verdict.status.value == "proved" and verdict.checked == 2 * k ** 3 + 2 * k ** 4


def test_ungated_flat_numeric_and_hypothesis():
    assert status("ungated-flat", method="numeric", samples=40, k=2, ambient=4) == "consistent"
    assert status("ungated-flat", k=4, ambient=3) == "not-applicable"


def test_ungated_flat_mutation_curved_mean_is_refuted(monkeypatch):
    original = gates.affine_output
    monkeypatch.setattr(gates, "affine_output", lambda phi, a, B, ops: original(phi, a, B, ops)
                        + ops.stack([phi[0] * phi[1]] + [0 * phi[0]] * (len(a) - 1)))
    assert status("ungated-flat", k=2, ambient=3) == "refuted"
    assert status("ungated-flat", method="numeric", samples=20, k=2, ambient=3) == "refuted"


def _riemann_with(sign_of_products, sign_of_derivatives=1):
    """R^r_smn of attngeom.geometry_proofs.riemann with its Gamma Gamma (or d Gamma) terms re-signed."""
    def upper(self):
        d, G, x, simplify = self.dim, self._second, self.coords, self.simplify
        return [[[[simplify(sign_of_derivatives * (sympy.diff(G[r][n][s], x[m])
                                                   - sympy.diff(G[r][m][s], x[n]))
                            + sign_of_products * sum(G[r][m][l] * G[l][n][s] - G[r][n][l] * G[l][m][s]
                                                     for l in range(d)))
                   for n in range(d)] for m in range(d)] for s in range(d)] for r in range(d)]
    return property(upper)


@pytest.mark.parametrize("products,derivatives", [(-1, 1), (0, 1), (1, 0), (2, 1)])
def test_ungated_flat_mutated_riemann_formula_is_refuted_at_every_certified_chart(
        monkeypatch, products, derivatives):
    # a single shear at k = 2 has constant Christoffel symbols (d Gamma = 0, Gamma Gamma = 0):
    # a wrong Riemann formula was proved there; the composed shears see every term at k = 2, 3
    claim = REGISTRY.get("ungated-flat")
    charts = [e for e in claim.examples if "values" not in e]
    assert charts[0] == {"k": 2, "ambient": 3} and len(charts) == 2
    riemann._chain.cache_clear()
    monkeypatch.setattr(riemann._Chain, "_upper", _riemann_with(products, derivatives))
    try:
        for example in charts + [{}]:                     # {} = the defaults
            params, method, samples = split_example(example)
            verdict = claim.verify(params, method, CheckContext(samples=samples))
            assert verdict.status.value == "refuted", example
    finally:
        riemann._chain.cache_clear()


def test_ungated_flat_reparametrization_has_nonconstant_christoffel_symbols():
    verdict = verify("ungated-flat", k=2, ambient=3)
    assert verdict.status.value == "proved"
    assert verdict.evidence["reparametrized_christoffel_nonconstant"] >= 4


@pytest.mark.parametrize("values,expected", [(2, "not-applicable"), (3, "consistent"),
                                             (4, "refuted"), (5, "refuted")])
def test_softmax_family_scope_of_thm_3_1(values, expected):
    verdict = verify("ungated-flat", samples=60, values=values)
    assert verdict.status.value == expected
    if expected == "refuted":
        assert abs(verdict.counterexample["K"]) > 1e-3
        assert "k-dimensional affine chart" in verdict.summary


def test_softmax_family_mutation_bends_the_three_value_layer(monkeypatch):
    original = attention.memory_readout
    # adds y_1 y_2 (1, ..., 1): a saddle over the hull (a function of one coordinate, or a
    # radial rescaling, would give a flat cylinder)
    monkeypatch.setattr(attention, "memory_readout", lambda q, k, v, ops: original(q, k, v, ops)
                        + original(q, k, v, ops)[0] * original(q, k, v, ops)[1])
    assert status("ungated-flat", samples=30, values=3) == "refuted"


# -- curvature-lower-bound (Thm 3.2, Cor 3.3) ----------------------------------------------

def test_lower_bound_refuted_as_printed_with_exact_witness():
    verdict = verify("curvature-lower-bound", variant="printed")
    assert verdict.status.value == "refuted" and verdict.method == "symbolic"
    assert set(verdict.counterexample["realizations"].values()) == {"0"}
    assert status("curvature-lower-bound", method="numeric", samples=30, variant="printed") == "refuted"


def test_lower_bound_holds_for_affine_charts():
    assert status("curvature-lower-bound", variant="affine-chart") == "proved"
    assert status("curvature-lower-bound", method="numeric", samples=30,
                  variant="affine-chart") == "consistent"


def test_lower_bound_mutations(monkeypatch):
    monkeypatch.setattr(flatness, "_affine_chart", flatness._sphere_target)
    assert status("curvature-lower-bound", variant="affine-chart") == "refuted"
    monkeypatch.undo()
    # without ungated realizations of the sphere there is nothing to refute the printed bound
    monkeypatch.setattr(flatness, "_ungated_sphere_realizations",
                        lambda: {"affine chart": flatness._affine_chart})
    assert status("curvature-lower-bound", variant="printed") == "proved"


# -- gating-second-derivative (Lemma 3.5) ------------------------------------------------

def test_lemma_3_5_symbolic_and_numeric():
    assert status("gating-second-derivative", domain_dim=2, ambient=3) == "proved"
    assert status("gating-second-derivative", domain_dim=3, ambient=4) == "proved"
    assert status("gating-second-derivative", method="numeric", samples=30) == "consistent"
    assert status("gating-second-derivative", domain_dim=4, ambient=3) == "not-applicable"


def test_lemma_3_5_mutation_swapped_index(monkeypatch):
    monkeypatch.setattr(gates, "hadamard_second_derivative",
                        lambda Bi, Bj, Y, gi, gj, gij: Bi * gi + Bj * gj + Y * gij)
    verdict = verify("gating-second-derivative", domain_dim=2, ambient=3)
    assert verdict.status.value == "refuted" and verdict.counterexample["residual"] != "0"
    assert status("gating-second-derivative", method="numeric", samples=10) == "refuted"


# -- gated-sphere (Thm 3.6, Cor 3.7, Cor 3.8) ------------------------------------------------

@pytest.mark.parametrize("ambient,values", [(3, 3), (5, 4), (3, 1)])
def test_gated_sphere_symbolic(ambient, values):
    verdict = verify("gated-sphere", ambient=ambient, values=values)
    assert verdict.status.value == "proved"
    assert verdict.evidence["K_gated"] == "1"


def test_gated_sphere_numeric_1000_points_to_1e_10():
    verdict = verify("gated-sphere", method="numeric", ambient=3, values=3)
    assert verdict.status.value == "consistent" and verdict.checked == 1000
    assert verdict.max_residual <= 1e-10 and verdict.evidence["|K_gat - 1|"] <= 1e-10


@pytest.mark.parametrize("backend", ("torch", pytest.param("jax", marks=pytest.mark.slow)))
def test_gated_sphere_numeric_autodiff_backends(backend):
    verdict = verify("gated-sphere", method="numeric", backend=backend, samples=100, ambient=4, values=2)
    assert verdict.status.value == "consistent" and verdict.max_residual <= 1e-10


@pytest.mark.slow
@pytest.mark.parametrize("backend", ("torch", "jax"))
def test_gated_sphere_1000_points_on_autodiff_backends(backend):
    verdict = verify("gated-sphere", method="numeric", backend=backend, ambient=3, values=3)
    assert verdict.status.value == "consistent" and verdict.max_residual <= 1e-10


@pytest.mark.gpu
@pytest.mark.parametrize("backend", ("torch", "jax"))
def test_gated_sphere_1000_points_on_cuda(backend):
    context = CheckContext(backend=backend, device="cuda")
    verdict = REGISTRY.get("gated-sphere").verify({}, "numeric", context)
    assert verdict.status.value == "consistent" and verdict.max_residual <= 1e-10


def test_gated_sphere_not_applicable_below_three():
    assert status("gated-sphere", ambient=2) == "not-applicable"


ORIGINAL_BUILD = attention.build_sphere_witness


def _broken_left_inverse(*args, **kwargs):
    witness = ORIGINAL_BUILD(*args, **kwargs)
    broken = witness.gate_left_inverse.copy()
    broken[0, -1] += Fraction(1, 5)
    return replace(witness, gate_left_inverse=broken)


@pytest.mark.parametrize("method", ("symbolic", "numeric"))
def test_gated_sphere_mutation_wrong_left_inverse(monkeypatch, method):
    monkeypatch.setattr(attention, "build_sphere_witness", _broken_left_inverse)
    assert status("gated-sphere", method=method, samples=50) == "refuted"


def test_gated_sphere_mutation_gate_strength(monkeypatch):
    monkeypatch.setattr(attention, "build_sphere_witness",
                        lambda *a: ORIGINAL_BUILD(*a[:3], gate_strength=Fraction(1, 2)))
    assert status("gated-sphere", method="numeric", samples=50) == "refuted"


# -- graph-curvature and depth-amplification (Lemma 3.10-3.12, Thm 3.13, Cor 3.14) ----------

#: det D^2 psi(0) of the default psi = 1/2 + u^2/8 + u v/16 + v^2/6: 1/4 * 1/3 - 1/16^2
DEFAULT_PSI_DET = Fraction(61, 768)


def test_graph_curvature_examples():
    verdict = verify("graph-curvature", layers=3, amplitudes="1,1/2,2", ambient=5)
    # A_L = 7/2: K(0) = 49/4 det D^2 psi(0)
    assert verdict.status.value == "proved" and verdict.evidence["K(0)"] == str(Fraction(49, 4) * DEFAULT_PSI_DET)
    assert verify("graph-curvature", layers=3, amplitudes="1,1/2,2",
                  psi="1/2 + (u**2 + v**2)/8").evidence["K(0)"] == "49/64"
    assert status("graph-curvature", layers=2, psi="u**2 - v**2 + u*v**3") == "proved"
    assert status("graph-curvature", method="numeric", samples=40) == "consistent"
    assert status("graph-curvature", psi="u + v**2") == "not-applicable"
    assert status("graph-curvature", amplitudes="-1") == "not-applicable"


def test_graph_curvature_mutation_printed_formula(monkeypatch):
    monkeypatch.setattr(depth, "lemma_3_12_formula",
                        lambda fu, fv, fuu, fuv, fvv: (fuu * fvv + fuv ** 2) / (1 + fu ** 2 + fv ** 2) ** 2)
    assert status("graph-curvature") == "refuted"
    assert status("graph-curvature", method="numeric", samples=20,
                  psi="1/2 + u**2/8 + u*v/16 + v**2/8") == "refuted"


def test_depth_amplification_quadratic_in_L():
    verdict = verify("depth-amplification", method="numeric", layers=16, amplitudes="1",
                     psi="1/2 + (u**2 + v**2)/8")
    rows = verdict.evidence["rows"]
    assert verdict.status.value == "consistent"
    assert [round(r["K(0)"], 9) for r in rows] == [L ** 2 / 16 for L in range(1, 17)]
    # the defaults: a_l = 3/4, 1/2, 5/4 repeated, K(0) = A_L^2 det D^2 psi(0)
    verdict = verify("depth-amplification", method="numeric", layers=16)
    amplitudes = [Fraction(a) for a in ("3/4", "1/2", "5/4")] * 6
    assert verdict.status.value == "consistent"
    assert verdict.params["amplitudes"] == ",".join(str(a) for a in amplitudes[:16])
    assert [r["K(0)"] for r in verdict.evidence["rows"]] == pytest.approx(
        [float(sum(amplitudes[:L]) ** 2 * DEFAULT_PSI_DET) for L in range(1, 17)], rel=1e-12)
    assert status("depth-amplification", layers=4) == "proved"
    assert status("depth-amplification", layers=3, amplitudes="1,1/2,3/2", ambient=5) == "proved"
    assert status("depth-amplification", amplitudes="3") == "not-applicable"
    assert status("depth-amplification", ambient=3) == "not-applicable"


def test_depth_amplification_mutation_doubled_residual(monkeypatch):
    original = attention.NormalFormStack.layer
    # each layer adds twice its gated contribution: K(0) = (2 A_L)^2 det, not A_L^2 det
    monkeypatch.setattr(attention.NormalFormStack, "layer",
                        lambda self, h, a, ops: 2 * original(self, h, a, ops) - h)
    assert status("depth-amplification", layers=3) == "refuted"
    assert status("depth-amplification", method="numeric", layers=3) == "refuted"


def test_depth_amplification_examples_see_A_L_replaced_by_L(monkeypatch):
    """Issue 27 (teeth): with unit amplitudes A_L = L, so K(0) = L^2 det passes in place of
    A_L^2 det; the claim's certified examples use unequal amplitudes and must refute it."""
    claim = REGISTRY.get("depth-amplification")

    def with_L(self, params, layers=None):
        amplitudes, _, facts = depth._normal_form_inputs(params)
        return sympy.Rational(len(amplitudes[:layers])) ** 2 * facts["det"]
    monkeypatch.setattr(depth.DepthAmplificationClaim, "expected_curvature", with_L)
    for example in claim.examples:
        params, method, samples = split_example(example)
        verdict = claim.verify(params, method, CheckContext(samples=samples))
        assert verdict.status.value == "refuted", example
    assert claim.verify({"layers": 4, "amplitudes": "1"}).status.value == "proved"   # unit amplitudes are blind
    assert claim.verify({"layers": 4}).status.value == "refuted"   # the default amplitudes are not


# -- vector-graph-curvature (Thm 3.15, Remark 3.16, Cor 3.17) --------------------------------

def test_vector_graph_curvature():
    verdict = verify("vector-graph-curvature", layers=3, ambient=4)
    assert verdict.status.value == "proved"
    witness = verdict.evidence["remark_3_16_witness"]
    assert (witness["K(Phi_1)"], witness["K(Phi_2)"], witness["K(Phi_1 + Phi_2)"]) == ("0", "0", "1")
    assert status("vector-graph-curvature", method="numeric", samples=5, layers=4, ambient=5) == "consistent"
    assert status("vector-graph-curvature", ambient=2) == "not-applicable"


def test_vector_graph_mutation_additive_curvature(monkeypatch):
    additive = lambda hessians: sum(h.det() for layers in hessians for h in layers)
    monkeypatch.setattr(depth, "theorem_3_15_formula", additive)
    assert status("vector-graph-curvature", layers=2, ambient=4) == "refuted"


# -- curvature-robustness (Thm 3.18, Lemmas 3.19, 3.20) -------------------------------------

def test_robustness_printed_proof_step_is_an_erratum_not_a_refutation():
    """Thm 3.18 (ii) is an existence statement and holds (z = s~ ⊘ Y); the proof's printed
    z = s~ ⊙ Y fails: a proof-step erratum, the status stays the statement's."""
    verdict = verify("curvature-robustness", samples=40)
    assert verdict.status.value == "consistent" and verdict.error_kind is None
    [erratum] = verdict.errata
    assert erratum.kind.value == "proof-step" and "s~ ⊘ Y" in erratum.correct
    step = verdict.evidence["proof step as printed"]
    assert step["counterexample"]["z outside (0, 1) at coordinates"] == [1]
    assert "(erratum: proof step)" in format_verdict(verdict).splitlines()[0]


def test_robustness_statement_refuted_when_the_construction_fails(monkeypatch):
    """Mutation: the statement's own construction replaced by the printed product refutes
    it as a false statement, with the proof-step erratum kept behind it."""
    original = gates.build_gate_realization
    monkeypatch.setattr(gates, "build_gate_realization", lambda D, m, printed: original(D, m, True))
    verdict = verify("curvature-robustness", samples=20)
    assert verdict.status.value == "refuted" and verdict.error_kind.value == "false-statement"
    assert [e.kind.value for e in verdict.errata] == ["false-statement", "proof-step"]


def test_robustness_corrected_construction_has_a_neighbourhood():
    verdict = verify("curvature-robustness", samples=40, variant="corrected")
    assert verdict.status.value == "consistent"
    neighbourhood = verdict.evidence["parts"]["neighbourhood"]
    radii = [row["radius"] for row in neighbourhood["rows"] if row["min_K"] >= 0.5]
    assert 2 ** -12 in radii and max(radii) < 1
    assert status("curvature-robustness", ambient=3, gate_dim=2) == "not-applicable"


def test_robustness_mutation_corrected_uses_the_printed_product(monkeypatch):
    original = gates.build_gate_realization
    monkeypatch.setattr(gates, "build_gate_realization", lambda D, m, printed: original(D, m, True))
    assert status("curvature-robustness", samples=20, variant="corrected") == "refuted"


def test_robustness_reverse_mutation_printed_division_is_not_refuted(monkeypatch):
    monkeypatch.setattr(gates.GateRealization, "z",
                        lambda self, phi, ops: self.target(phi, ops)
                        / gates.affine_output(phi, self.offset, self.slope, ops))
    assert status("curvature-robustness", samples=20) == "consistent"


# -- generic-nonflat (Thm 3.21) --------------------------------------------------------------

def test_generic_nonflat():
    verdict = verify("generic-nonflat", domain_dim=2, ambient=3)
    assert verdict.status.value == "proved"
    assert verdict.evidence["instances"]["g = 1/2 (flat)"]["R~_1212(eps)"] == "epsilon**2"
    assert status("generic-nonflat", method="numeric", samples=6) == "consistent"
    assert status("generic-nonflat", domain_dim=2, ambient=2) == "not-applicable"


@pytest.mark.parametrize("method", ("symbolic", "numeric"))
def test_generic_nonflat_mutation_wrong_perturbation(monkeypatch, method):
    original = gates.density_perturbation
    monkeypatch.setattr(gates, "density_perturbation",
                        lambda phi, c, Y, n, mask, eps, ops: original(phi, c, Y, n, mask, eps, ops) * Y * Y)
    assert status("generic-nonflat", method=method, samples=3) == "refuted"


def test_generic_nonflat_mutation_constant_random_gates(monkeypatch):
    flat = lambda sampler, d, D, hidden=8: gates.MLPGate(np.zeros((hidden, d)), np.zeros(hidden),
                                                         np.zeros((D, hidden)), np.zeros(D))
    monkeypatch.setattr(gates, "random_gate", flat)
    assert status("generic-nonflat", method="numeric", samples=3) == "refuted"


# -- show and the CLI --------------------------------------------------------------------------

@pytest.mark.parametrize("claim_id", CLAIM_IDS)
def test_show_every_format(run_cli, claim_id):
    for fmt in ("text", "latex", "m2", "json"):
        code, out, _ = run_cli("show", claim_id, "--format", fmt)
        assert code == 0 and out.strip()
    json.loads(run_cli("show", claim_id, "--format", "json")[1])


def test_cli_verify_exit_codes(run_cli):
    assert run_cli("verify", "gated-sphere")[0] == 0
    assert run_cli("verify", "curvature-lower-bound")[0] == 1
    code, out, err = run_cli("verify", "ungated-flat", "--values", 2, "--samples", 20)
    assert code == 2 and out == "" and err.startswith("attngeom: not-applicable:")


def test_cli_curvature_sphere_1000_points(run_cli):
    code, out, err = run_cli("curvature", "sphere", "--points", 1000, "--json")
    report = json.loads(out)
    assert code == 0 and err == "" and len(report["K"]) == 1000
    assert report["max_abs_deviation"] <= 1e-10 and report["holds"] is True
    code, out, _ = run_cli("curvature", "sphere", "--ambient", 5, "--values", 2, "--points", 30)
    assert code == 0 and "max |K - 1|" in out and "more points" in out


def test_cli_curvature_gate_strength_and_normal_form(run_cli):
    code, out, _ = run_cli("curvature", "sphere", "--gate-strength", 0, "--points", 5, "--json")
    assert code == 0 and json.loads(out)["max_abs_deviation"] <= 1e-10
    code, out, _ = run_cli("curvature", "sphere", "--gate-strength", "1/2", "--points", 5, "--json")
    report = json.loads(out)
    assert code == 0 and report["expected"] is None and report["K_max"] > 1
    code, out, _ = run_cli("curvature", "normal-form", "--layers", 8, "--backend", "torch")
    # default a_l = 3/4, 1/2, 5/4, ...: A_8 = 25/4, K(0) = 625/16 * 61/768
    assert code == 0 and "A_L^2 det D^2 psi(0) = 38125/12288" in out
    code, out, _ = run_cli("curvature", "normal-form", "--layers", 8, "--amplitudes", 1,
                           "--psi", "1/2 + (u**2 + v**2)/8")
    assert code == 0 and "K(0) = 4," in out


@pytest.mark.parametrize("args", [
    ("curvature", "torus"),
    ("curvature", "sphere", "--layers", 3),
    ("curvature", "normal-form", "--gate-strength", 1),
    ("curvature", "sphere", "--points", 0),
    ("curvature", "sphere", "--gate-strength", "x"),
    ("curvature", "normal-form", "--psi", "u+"),
    ("curvature", "normal-form", "--amplitudes", "1,2", "--layers", 3),
    ("curvature", "sphere", "--backend", "torch", "--device", "cuda"),
    ("curvature", "sphere", "--backend", "jax", "--device", "cuda"),
    ("verify", "gated-sphere", "--method", "numeric", "--backend", "torch", "--device", "cuda"),
    ("verify", "curvature-robustness", "--variant", "other"),
    ("verify", "gated-sphere", "--layers", 2),
    ("verify", "ungated-flat", "--values", 4, "--method", "symbolic"),
    ("verify", "gated-sphere", "--method", "numeric", "--samples", 10 ** 9),
    ("verify", "gated-sphere", "--ambient", 100),
    ("verify", "depth-amplification", "--layers", 100000),
    ("curvature", "sphere", "--points", 10 ** 7),
])
def test_cli_bad_input_is_one_line_exit_2(run_cli, args):
    code, out, err = run_cli(*args)
    assert code == 2 and out == ""
    assert err.startswith("attngeom: error:") and err.count("\n") == 1 and "Traceback" not in err


def test_cli_curvature_outside_the_hypotheses_is_not_applicable(run_cli):
    assert run_cli("curvature", "sphere", "--ambient", 2) == (2, "", (
        "attngeom: not-applicable: Thm 3.6 and Cor 3.8 need a decoder dimension D >= 3; got D=2\n"))

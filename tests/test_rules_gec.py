"""GEC and the shared geometry engine: rules the claims' first examples and certificates do
not reach (issue 48, survivors of the mutation campaign).

Each test holds a piece of machinery to an independent reference: the forward pass of the
GEC classifier to a NumPy re-implementation of its docstring (GEC §4 / A.5.1); the split
sizes of the synthetic tasks; the summary of a run with no finite curvature; the strict
ablation ordering of GEC §4.2 on a tie; the hyperbolic reciprocals of the engine's zero
test; the shortening of long expressions in error messages."""

from __future__ import annotations

import numpy as np
import pytest
import sympy

from attngeom.core.claim import CheckContext
from attngeom.core.errors import BadInput
from attngeom.geometry_proofs.gating.experiment import data, model, runner, train
from attngeom.geometry_proofs.gating.experiment.claims import CLAIMS
from attngeom.geometry_proofs.ops import parse_expression
from attngeom.geometry_proofs.riemann import cancel_trig
from attngeom.kernels.backend import get_backend
from attngeom.kernels.sampling import Sampler
from tests.test_gec_experiment import synthetic_rows

CLAIM = {claim.id: claim for claim in CLAIMS}


# --------------------------------------------------------------------------------------
# the GEC experiment's machinery
# --------------------------------------------------------------------------------------

def _numpy_logits(p: dict, x: np.ndarray, variant: model.Variant) -> np.ndarray:
    """GEC A.5.1's classifier written out in NumPy from model.py's docstring."""
    h0 = x @ p["input_weight"] + p["input_bias"]
    scores = (h0 @ p["query"]) @ (h0 @ p["key"]).swapaxes(-1, -2) / np.sqrt(model.HIDDEN)
    weights = np.exp(scores - scores.max(axis=-1, keepdims=True))
    weights /= weights.sum(axis=-1, keepdims=True)
    y = weights @ (h0 @ p["value"]) @ p["output"]
    gate = 1 / (1 + np.exp(-(y @ p["gate_weight"] + p["gate_bias"])))
    y = y * (1.0 + variant.alpha * (gate - 1.0))
    z = h0 + y
    normed = (z - z.mean(-1, keepdims=True)) / np.sqrt(z.var(-1, keepdims=True) + 1e-5)
    pooled = (normed * p["norm_weight"] + p["norm_bias"]).mean(axis=-2)
    features = np.maximum(pooled @ p["head1_weight"] + p["head1_bias"], 0.0)
    return features @ p["head2_weight"] + p["head2_bias"]


def test_logits_match_a_numpy_forward_pass():
    # torch-default draws nonzero biases (LeCun's are 0), so every bias enters the check;
    # a generic gate strength 0.5
    variant = model.Variant("gated", 0.5)
    values = model.initial_parameters(variant, Sampler(21), "torch-default")
    assert all(np.abs(values[name]).min() > 0 for name in ("input_bias", "head1_bias", "gate_bias"))
    torch = get_backend("torch", "cpu").module
    params = model.to_tensors(values, torch, "cpu", torch.float64)
    x = Sampler(22).floats((6, data.SEQUENCE_LENGTH, 2))
    ours = model.logits(params, torch.as_tensor(x), variant, torch).numpy()
    assert np.allclose(ours, _numpy_logits(values, x, variant), rtol=1e-10, atol=1e-12)


def test_splits_of_one_example_and_of_none():
    train_split, test_split = data.make_task("curved", 1, 3, seed=4)
    assert (len(train_split), len(test_split)) == (1, 3)
    assert train_split.sequences.shape == (1, data.SEQUENCE_LENGTH, 2)
    with pytest.raises(BadInput):
        data.make_split("linear", 0, Sampler(4))


def test_summary_of_a_run_without_finite_curvature():
    assert set(train._summary("K_iso", np.array([np.nan, np.inf, -np.inf]))) == {"K_iso_median"}
    summary = train._summary("K_iso", np.array([np.nan, -3.0, 1.0, 2.0]))
    assert summary["K_iso_median"] == 1.0 and summary["K_iso_abs_median"] == 2.0


def test_ablation_ordering_is_strict(tmp_path):
    # GEC §4.2 orders ungated < SiLU strictly: equal mean accuracies refute the ordering
    rows = synthetic_rows()
    ungated = {r["seed"]: r["accuracy"] for r in rows if r["variant"] == "ungated"}
    for row in rows:
        if row["variant"] == "silu":
            row["accuracy"] = ungated[row["seed"]]
    path = runner.write_csv(rows, tmp_path / "tie.csv")
    verdict = CLAIM["gec-ablation-ordering"].verify({"results": str(path)},
                                                    context=CheckContext(seed=0))
    assert verdict.status.value == "refuted", verdict.summary
    assert verdict.counterexample["column"] == "accuracy"
    assert (verdict.counterexample["lower"], verdict.counterexample["higher"]) == ("ungated", "silu")


# --------------------------------------------------------------------------------------
# the engine
# --------------------------------------------------------------------------------------

def test_cancel_trig_decides_hyperbolic_reciprocals():
    x, y = sympy.symbols("x y", real=True)
    assert cancel_trig(sympy.sech(x) * sympy.cosh(x) - 1) == 0
    assert cancel_trig(sympy.csch(y) * sympy.sinh(y) - 1) == 0
    assert cancel_trig(sympy.sech(x) ** 2 + sympy.tanh(x) ** 2 - 1) == 0
    assert cancel_trig(sympy.sech(x) - sympy.csch(x)) != 0


def test_long_expressions_are_shortened_in_messages():
    text = "u +* " + "v" * 80
    with pytest.raises(BadInput) as caught:
        parse_expression(text, ("u", "v"))
    shown = str(caught.value).split("'")[1]
    assert shown.endswith("...") and len(shown) == 60 and text.startswith(shown[:-3])

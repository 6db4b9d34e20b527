"""The single-block attention classifier of GEC §4 / A.5.1 and its output variants (§4.2).

Written functionally (a dict of tensors and plain torch operations, every shape with
leading batch dimensions ``...``), so the same code trains (autograd), evaluates the
finite-difference proxy and gives the jets of the invariant curvature (``torch.func``).
torch comes from :func:`attngeom.kernels.backend.get_backend` (``be.module``).

Forward pass, sequences X shape=[..., 8, 2]:

    H0 = X W_in + b_in                                    shape=[..., 8, 64]
    Y  = softmax(H0 W_Q (H0 W_K)^T / sqrt(64)) H0 W_V W_O  (scaled dot-product attention)
    Y' = variant(Y)                                       (below)
    H  = LayerNorm(H0 + Y')                               (residual + layer normalization)
    logits = W_2 relu(W_1 mean_i H_i + b_1) + b_2          shape=[..., 2]

Variants of Y' (GEC §4, §4.2): ``ungated`` Y; ``silu`` Y ⊙ sigma(Y); ``gated`` with gate
strength alpha Y ⊙ (1 + alpha (sigma(Y W_g + b_g) - 1)); ``gated-sigmoid`` Y ⊙ sigma(Y W_g + b_g)
(identical in form to ``gated`` at alpha = 1); ``gated-nonsparse``
Y ⊙ (0.5 + 0.5 sigma(Y W_g + b_g)).  GEC prints the gate without a bias, sigma(W Y): the
trainable b_g is a deviation (listed in docs/gating.md; sigma(W Y) is the case b_g = 0).  The "attention output mean" whose curvature GEC
measures is m(X) = mean_i Y'_i, shape=[..., 64].
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from attngeom.core.errors import BadInput
from attngeom.kernels.sampling import Sampler

HIDDEN = 64
CLASSES = 2
VARIANT_NAMES = ("ungated", "silu", "gated", "gated-sigmoid", "gated-nonsparse")
#: GEC A.5.1: gate strengths of the ``gated`` variant.
ALPHAS = (0.0, 0.25, 0.5, 1.0, 1.5)


@dataclass(frozen=True)
class Variant:
    """An attention-output variant; ``alpha`` is the gate strength of ``gated`` (None else)."""

    name: str
    alpha: float | None = None

    def __post_init__(self):
        if self.name not in VARIANT_NAMES:
            raise BadInput(f"unknown variant {self.name!r}; choose one of {', '.join(VARIANT_NAMES)}")
        if (self.name == "gated") != (self.alpha is not None):
            raise BadInput("the gate strength alpha belongs to the 'gated' variant only")

    @property
    def has_gate(self) -> bool:
        return self.name.startswith("gated")

    @property
    def label(self) -> str:
        return f"gated(alpha={self.alpha:g})" if self.name == "gated" else self.name


def parameter_shapes(variant: Variant) -> dict[str, tuple[int, ...]]:
    """Names and shapes of the trainable tensors (the gate only for gated variants)."""
    shapes = {"input_weight": (2, HIDDEN), "input_bias": (HIDDEN,),
              "query": (HIDDEN, HIDDEN), "key": (HIDDEN, HIDDEN), "value": (HIDDEN, HIDDEN),
              "output": (HIDDEN, HIDDEN),
              "norm_weight": (HIDDEN,), "norm_bias": (HIDDEN,),
              "head1_weight": (HIDDEN, HIDDEN), "head1_bias": (HIDDEN,),
              "head2_weight": (HIDDEN, CLASSES), "head2_bias": (CLASSES,)}
    if variant.has_gate:
        shapes["gate_weight"] = (HIDDEN, HIDDEN)
        shapes["gate_bias"] = (HIDDEN,)
    return shapes


#: Initialisation schemes (GEC A.5 does not state one; :mod:`readings` runs both).
#: ``lecun-normal`` (the project's default): matrices N(0, 1/fan_in), biases 0.
#: ``torch-default``: what ``torch.nn.Linear`` draws (kaiming_uniform with a = sqrt(5)):
#: matrices and biases U(-1/sqrt(fan_in), 1/sqrt(fan_in)), i.e. weight std 1/sqrt(3 fan_in)
#: (a factor 1/sqrt(3) below LeCun), bias fan_in that of the matrix it is added to.
#: Both keep the layer-norm scale 1 and shift 0.
INIT_SCHEMES = ("lecun-normal", "torch-default")
#: The fan-in of each bias under ``torch-default`` (the width of the layer's input).
_BIAS_FAN_IN = {"input_bias": 2, "head1_bias": HIDDEN, "head2_bias": HIDDEN, "gate_bias": HIDDEN}


def _uniform(sampler: Sampler, shape: tuple[int, ...], bound: float) -> np.ndarray:
    """U(-bound, bound) on a 52-bit grid of the seeded integer stream."""
    grid = 2 ** 52
    return bound * (2.0 * (sampler.integers(shape, 0, grid - 1) + 0.5) / grid - 1.0)


def initial_parameters(variant: Variant, sampler: Sampler,
                       scheme: str = "lecun-normal") -> dict[str, np.ndarray]:
    """Seeded initial values (NumPy float64) under ``scheme`` (:data:`INIT_SCHEMES`):
    ``lecun-normal`` matrices N(0, 1/fan_in), biases 0; ``torch-default`` matrices and
    biases U(+-1/sqrt(fan_in)); the layer-norm scale 1 and shift 0 in both.  Tensor k (in
    name order) draws from ``sampler.spawn(k)``."""
    if scheme not in INIT_SCHEMES:
        raise BadInput(f"unknown initialisation {scheme!r}; choose one of {', '.join(INIT_SCHEMES)}")
    out = {}
    for index, (name, shape) in enumerate(sorted(parameter_shapes(variant).items())):
        if name == "norm_weight":
            out[name] = np.ones(shape)
        elif name == "norm_bias" or (len(shape) == 1 and scheme == "lecun-normal"):
            out[name] = np.zeros(shape)
        elif len(shape) == 1:
            out[name] = _uniform(sampler.spawn(index), shape, 1.0 / np.sqrt(_BIAS_FAN_IN[name]))
        elif scheme == "lecun-normal":
            out[name] = sampler.spawn(index).floats(shape, 1.0 / np.sqrt(shape[0]))
        else:
            out[name] = _uniform(sampler.spawn(index), shape, 1.0 / np.sqrt(shape[0]))
    return out


def to_tensors(values: dict[str, np.ndarray], torch: Any, device: str, dtype: Any,
               trainable: bool = False) -> dict[str, Any]:
    """The parameters as tensors on ``device`` of ``dtype`` (leaves with grad if trainable)."""
    return {name: torch.as_tensor(np.asarray(v), dtype=dtype, device=device).requires_grad_(trainable)
            for name, v in values.items()}


def attention_block(params: dict, sequences, variant: Variant, torch: Any):
    """(H0, Y'): the projected inputs and the variant's attention output, shape=[..., 8, 64]."""
    hidden = sequences @ params["input_weight"] + params["input_bias"]
    queries, keys = hidden @ params["query"], hidden @ params["key"]
    scores = queries @ keys.transpose(-1, -2) / np.sqrt(HIDDEN)
    attended = torch.softmax(scores, dim=-1) @ (hidden @ params["value"]) @ params["output"]
    return hidden, apply_variant(attended, params, variant, torch)


def apply_variant(attended, params: dict, variant: Variant, torch: Any):
    """Y' = variant(Y) (GEC §4, §4.2), Y shape=[..., 64]."""
    if variant.name == "ungated":
        return attended
    if variant.name == "silu":
        return attended * torch.sigmoid(attended)
    gate = torch.sigmoid(attended @ params["gate_weight"] + params["gate_bias"])
    if variant.name == "gated":
        return attended * (1.0 + variant.alpha * (gate - 1.0))
    if variant.name == "gated-sigmoid":
        return attended * gate
    return attended * (0.5 + 0.5 * gate)


def attention_output_mean(params: dict, sequences, variant: Variant, torch: Any):
    """m(X) = mean_i Y'_i(X), the attention-output mean of GEC §4, shape=[..., 64]."""
    return attention_block(params, sequences, variant, torch)[1].mean(dim=-2)


def logits(params: dict, sequences, variant: Variant, torch: Any):
    """Class logits of the classifier, sequences shape=[..., 8, 2] -> shape=[..., 2]."""
    hidden, output = attention_block(params, sequences, variant, torch)
    normed = torch.nn.functional.layer_norm(hidden + output, (HIDDEN,), params["norm_weight"],
                                            params["norm_bias"])
    pooled = normed.mean(dim=-2)
    features = torch.relu(pooled @ params["head1_weight"] + params["head1_bias"])
    return features @ params["head2_weight"] + params["head2_bias"]

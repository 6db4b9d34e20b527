"""The counts GT prints, recomputed from the sizes it states (GT §2.5.1, §3.2, Tables 2-4,
§4.1, §4.3.1, §5.0.5).

Every figure is a :class:`PrintedFigure`: the printed value, the unit of its last printed
digit, and the value recomputed from the paper's stated sizes.  Where the recomputation
starts from other printed figures (V / PPL with PPL = 230, 0.43 s / 0.015 s), those are
themselves rounded: each such input ranges over its rounding interval (x +- 1/2 unit) and
the recomputed value over the resulting interval [low, high] (:func:`from_printed`; every
formula here is monotone in each input, so the corners bound it).  A figure *reproduces*
when some value of [low, high] rounds to it at its last printed digit (its rounding
interval printed +- 1/2 unit meets [low, high]); 218 = V / 230 reproduces because 230 is
any PPL in [229.5, 230.5], V / PPL in [218.03, 218.98].  A figure that does not, but is
some value of [low, high] *truncated* at its digit (5.76M for exactly 5.7665M), holds under
the truncation convention only (:attr:`PrintedFigure.truncated`).

Stated sizes: vocabulary V = 50,257 (GPT-2 BPE), context L = 128, batch 3, 200k steps;
gauge VFE: (mu, Sigma, phi) in R^100 x R^100 x so(20) per token (diagonal Sigma),
theta = {mu_embed, Sigma_embed, phi_embed, W_out} (§3.2, eq 42-43), W_out: R^100 -> R^V;
standard transformers (Table 2): d = 320, 6 layers, FFN 1280; d = 100, 6 layers, FFN 400.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from dataclasses import dataclass

import flint
import numpy as np
import scipy.linalg
from scipy.sparse.csgraph import connected_components

from attngeom.kernels.backend import get_backend
from attngeom.geometry_proofs.gauge.accelerated.kl_attention import block_diagonal, so_basis

VOCABULARY = 50_257
#: A figure rounded at its last printed digit is within half a unit of that digit.
ROUNDING_UNITS = 0.5
#: Slack in units of the printed digit: decimal figures such as 5.76 or 0.01 are not exact
#: binary floats (the gap of an exact half is 0.5 +- 1e-15); no figure is within 1e-9 of a tie.
FIGURE_SLACK = 1e-9
CONTEXT = 128
BATCH = 3
STEPS = 200_000


@dataclass(frozen=True)
class PrintedFigure:
    """One printed number and its recomputation from the stated sizes."""

    name: str
    where: str
    printed: float
    unit: float
    computed: float
    how: str
    #: the recomputed value's range when its inputs are printed (rounded) figures
    low: float | None = None
    high: float | None = None

    @property
    def span(self) -> tuple[float, float]:
        return (self.computed if self.low is None else self.low,
                self.computed if self.high is None else self.high)

    @property
    def gap_in_units(self) -> float:
        """Distance from the printed figure to [low, high], in units of its last digit."""
        low, high = self.span
        return max(low - self.printed, self.printed - high, 0.0) / self.unit

    @property
    def rounded(self) -> float:
        """The recomputed value rounded at the printed digit (half away from zero)."""
        return math.copysign(math.floor(abs(self.computed) / self.unit + 0.5), self.computed) * self.unit

    @property
    def reproduces(self) -> bool:
        """Some value of [low, high] rounds to the printed figure (gap <= 1/2 unit; the
        slack ``FIGURE_SLACK`` only absorbs the binary representation of decimals)."""
        return self.gap_in_units <= ROUNDING_UNITS + FIGURE_SLACK

    @property
    def truncated(self) -> bool:
        """Not rounded, but some value of [low, high] truncated toward zero at the printed
        digit is the printed figure: [printed, printed + unit) meets [low, high]."""
        low, high = (abs(x) / self.unit for x in self.span)
        top = abs(self.printed) / self.unit
        return (not self.reproduces and low < top + 1 - FIGURE_SLACK
                and high >= top - FIGURE_SLACK)

    def as_dict(self) -> dict:
        low, high = self.span
        return {"name": self.name, "where": self.where, "printed": self.printed, "unit": self.unit,
                "computed": self.computed, "range": [low, high], "how": self.how,
                "reproduces": self.reproduces, "truncated": self.truncated}


def from_printed(name: str, where: str, printed: float, unit: float,
                 formula: Callable[..., float], inputs: tuple[tuple[float, float], ...],
                 how: str) -> PrintedFigure:
    """A figure recomputed by ``formula`` from printed ``inputs`` (value, unit of its last
    digit): ``computed`` at the printed values, [low, high] over the corners of the
    inputs' rounding intervals value +- unit/2 (``formula`` is monotone in each input)."""
    values = [formula(*corner) for corner in itertools.product(
        *[(value - unit / 2, value + unit / 2) if unit else (value,) for value, unit in inputs])]
    return PrintedFigure(name, where, printed, unit, formula(*(v for v, _ in inputs)), how,
                         min(values), max(values))


def so_dimension_by_rank(n: int) -> int:
    """dim so(n) as the rank of the span of the generators E_ab - E_ba (exact integer
    matrix, rank over Q by fraction-free elimination in python-flint)."""
    basis = so_basis(n).reshape(-1, n * n).astype(int)
    return int(flint.fmpz_mat(basis.tolist()).rank())


def transport_blocks(heads: int, n: int, sampler) -> list[int]:
    """The sizes of the diagonal blocks of the multi-head transport at a random frame
    (GT eqs 36-37, 45-46): the connected components of the nonzero pattern of
    diag_h exp(phi_h), computed, not assumed."""
    be = get_backend("numpy")
    generators = sampler.floats((heads, n, n), 0.5)
    generators = generators - np.swapaxes(generators, -1, -2)
    rotations = np.stack([scipy.linalg.expm(g) for g in generators])
    pattern = np.abs(block_diagonal(rotations, be)) > 0
    count, labels = connected_components(pattern, directed=False)
    return [int(np.sum(labels == label)) for label in range(count)]


def gauge_parameters(vocabulary: int = VOCABULARY, dim: int = 100, so_n: int = 20,
                     diagonal_sigma: bool = True, output_bias: bool = False) -> int:
    """Parameters of the gauge VFE: per token mu (K), Sigma (K diagonal, or K(K+1)/2), phi
    (dim so(n)); the output projection K x V (+ V bias)."""
    sigma = dim if diagonal_sigma else dim * (dim + 1) // 2
    return vocabulary * (dim + sigma + so_n * (so_n - 1) // 2) + dim * vocabulary + (vocabulary if output_bias else 0)


def transformer_parameters(dim: int, layers: int, ffn: int, vocabulary: int = VOCABULARY,
                           context: int = CONTEXT) -> int:
    """A GPT-style transformer: tied token embedding V x d, learned positions L x d; per layer
    Q, K, V, O (d x d + bias), FFN d -> ffn -> d (+ biases), two LayerNorms (2d each); a
    final LayerNorm."""
    per_layer = 4 * (dim * dim + dim) + (dim * ffn + ffn) + (ffn * dim + dim) + 2 * 2 * dim
    return vocabulary * dim + context * dim + layers * per_layer + 2 * dim


def architecture_figures(sampler) -> list[PrintedFigure]:
    """§2.5.1 and eqs 37, 46: dim so(20) = 190, K = 5 x 20 = 100, H = 5 heads."""
    blocks = transport_blocks(5, 20, sampler)
    return [
        PrintedFigure("dim so(20)", "GT §2.5.1", 190, 1, so_dimension_by_rank(20),
                      "rank of the span of E_ab - E_ba, a < b, in R^{20 x 20}"),
        PrintedFigure("K", "GT eqs (37), (46)", 100, 1, sum(blocks), "size of rho(exp phi) for rho = 5 x fund"),
        PrintedFigure("heads H", "GT eqs (37), (46), §3.3", 5, 1, len(blocks),
                      "diagonal blocks of the transport at a random frame"),
        PrintedFigure("head size", "GT eq (37)", 20, 1, max(blocks), "largest block"),
    ]


def parameter_figures() -> list[PrintedFigure]:
    """Table 2 / Table 3: 24.6M (gauge VFE), 23.5M and 5.76M (standard)."""
    return [
        PrintedFigure("gauge VFE parameters (M)", "GT Tables 2-3", 24.6, 0.1, gauge_parameters() / 1e6,
                      "V (100 + 100 + 190) + 100 V, diagonal Sigma, no output bias"),
        PrintedFigure("standard param-match parameters (M)", "GT Tables 2-3", 23.5, 0.1,
                      transformer_parameters(320, 6, 1280) / 1e6, "d = 320, 6 layers, FFN 1280"),
        PrintedFigure("standard embed-match parameters (M)", "GT Tables 2-3", 5.76, 0.01,
                      transformer_parameters(100, 6, 400) / 1e6, "d = 100, 6 layers, FFN 400"),
    ]


def result_figures() -> list[PrintedFigure]:
    """Table 3 and §4.1: improvement over random (V / PPL), PPL = exp(loss), 77%; the
    printed PPLs and losses enter as rounded inputs (:func:`from_printed`)."""
    def ratio(ppl): return VOCABULARY / ppl
    return [
        from_printed("gauge improvement (x)", "GT abstract, Table 3, §4.1", 218, 1, ratio, ((230, 1),), "V / PPL, PPL 230"),
        from_printed("param-match improvement (x)", "GT Table 3", 282, 1, ratio, ((178, 1),), "V / PPL, PPL 178"),
        from_printed("embed-match improvement (x)", "GT Table 3", 193, 1, ratio, ((260, 1),), "V / PPL, PPL 260"),
        PrintedFigure("random baseline loss", "GT Table 3", 10.82, 0.01, math.log(VOCABULARY), "ln V"),
        from_printed("gauge PPL from loss 5.44", "GT Table 3", 230, 1, math.exp, ((5.44, 0.01),), "exp(loss)"),
        from_printed("param-match PPL from loss 5.18", "GT Table 3", 178, 1, math.exp, ((5.18, 0.01),), "exp(loss)"),
        from_printed("embed-match PPL from loss 5.56", "GT Table 3", 260, 1, math.exp, ((5.56, 0.01),), "exp(loss)"),
        from_printed("77% of the standard's performance", "GT §4.1", 77, 1, lambda a, b: 100 * a / b,
                     ((178, 1), (230, 1)), "PPL ratio 178 / 230"),
    ]


def cost_figures() -> list[PrintedFigure]:
    """Table 4, §4.3.1, §5.0.5: 29x, tokens/s, wall-clock totals, ln 128; the printed step
    times 0.43 s and 0.015 s enter as rounded inputs (:func:`from_printed`)."""
    gauge, standard = (0.43, 0.01), (0.015, 0.001)
    return [
        from_printed("overhead (x)", "GT Table 4, §4.3.1", 29, 1, lambda a, b: a / b, (gauge, standard),
                     "0.43 s / 0.015 s"),
        from_printed("gauge tokens/s", "GT Table 4", 890, 10, lambda t: BATCH * CONTEXT / t, (gauge,),
                     "3 x 128 / 0.43 s"),
        from_printed("standard tokens/s", "GT Table 4", 25_000, 1000, lambda t: BATCH * CONTEXT / t,
                     (standard,), "3 x 128 / 0.015 s"),
        from_printed("standard 200k steps (min)", "GT Table 4", 50, 1, lambda t: STEPS * t / 60, (standard,),
                     "200k x 0.015 s"),
        from_printed("gauge 200k steps (h)", "GT Table 4", 24, 1, lambda t: STEPS * t / 3600, (gauge,),
                     "200k x 0.43 s"),
        PrintedFigure("max attention entropy ln 128", "GT §5.0.5", 4.85, 0.01, math.log(CONTEXT), "ln 128"),
    ]

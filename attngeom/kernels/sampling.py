"""Seeded samplers: floats, small rationals and a prime field.

Every random choice in attngeom goes through a :class:`Sampler` built from an integer seed,
so the same seed gives the same points, and hence the same verdict, on every backend
(floats are drawn in NumPy and only then moved to the requested backend).
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

#: The default prime: the Mersenne prime 2^31 - 1.  Residues are < 2^31, so a product of
#: two fits in int64 and exact arithmetic runs on plain int64 arrays (see attngeom.kernels.primefield).
DEFAULT_PRIME = 2**31 - 1


class Sampler:
    """Independent random streams from one seed.

    ``Sampler(seed).spawn(k)`` gives the k-th independent child stream, so sub-checks of a
    claim do not share randomness by accident.
    """

    def __init__(self, seed: int = 0):
        self.seed = int(seed)
        self._path: tuple[int, ...] = ()
        self._rng = np.random.Generator(np.random.PCG64(self.seed))

    def spawn(self, key: int) -> "Sampler":
        """The child stream ``key``; children of children are distinct from other children
        (the entropy is the whole path seed, key1, key2, ...)."""
        child = Sampler.__new__(Sampler)
        child.seed = self.seed
        child._path = self._path + (int(key),)
        child._rng = np.random.Generator(np.random.PCG64([self.seed, *child._path]))
        return child

    def floats(self, shape, scale: float = 1.0) -> np.ndarray:
        """Standard normal float64 entries times ``scale``."""
        return self._rng.standard_normal(shape) * scale

    def integers(self, shape, low: int, high: int) -> np.ndarray:
        """Uniform integers in [low, high] (inclusive), int64."""
        return self._rng.integers(low, high + 1, size=shape, dtype=np.int64)

    def prime_field(self, shape, prime: int = DEFAULT_PRIME) -> np.ndarray:
        """Uniform residues in [0, p) as int64."""
        return self._rng.integers(0, prime, size=shape, dtype=np.int64)

    def rationals(self, shape, bound: int = 5) -> np.ndarray:
        """Small rationals n/m with |n| <= bound, 1 <= m <= bound, as an object array of Fractions."""
        num = self.integers(shape, -bound, bound)
        den = self.integers(shape, 1, bound)
        out = np.empty(np.shape(num), dtype=object)
        for idx in np.ndindex(out.shape):
            out[idx] = Fraction(int(num[idx]), int(den[idx]))
        return out

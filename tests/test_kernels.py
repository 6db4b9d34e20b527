"""Samplers, prime-field algebra, batched polynomial evaluation, backends, the registry."""

from fractions import Fraction

import numpy as np
import pytest
import sympy
from flint import nmod_mat

from attngeom.kernels.backend import get_backend
from attngeom.core.claim import Claim, ClaimRegistry, Param
from attngeom.core.errors import BackendUnavailable, BadInput
from attngeom.kernels.polyeval import compile_polynomials
from attngeom.kernels.primefield import (PrimeField, det_mod_p, matmul_mod_p, nullspace_mod_p,
                                rank_reaches_mod_p,
                                rank_mod_p, residue)
from attngeom.kernels.sampling import DEFAULT_PRIME, Sampler


def test_sampler_is_reproducible_and_streams_are_independent():
    a, b = Sampler(5), Sampler(5)
    assert np.array_equal(a.prime_field((3, 4)), b.prime_field((3, 4)))
    assert not np.array_equal(Sampler(5).spawn(1).floats(4), Sampler(5).spawn(2).floats(4))
    assert not np.array_equal(Sampler(5).spawn(1).spawn(2).floats(4), Sampler(5).spawn(2).floats(4))
    assert np.array_equal(Sampler(5).spawn(1).spawn(2).floats(4), Sampler(5).spawn(1).spawn(2).floats(4))
    field = Sampler(1).prime_field(1000, 97)
    assert field.min() >= 0 and field.max() < 97
    q = Sampler(2).rationals((2, 2), bound=3)
    assert all(isinstance(x, Fraction) and abs(x.numerator) <= 3 for x in q.ravel())


def test_residue_of_rationals():
    assert residue(Fraction(1, 2), 7) == 4
    assert residue(sympy.Rational(-3, 5), 11) == (-3 * pow(5, -1, 11)) % 11
    with pytest.raises(BadInput):
        residue(Fraction(1, 7), 7)


def test_rank_and_nullspace_mod_p_match_sympy():
    M = np.array([[1, 2, 3, 4], [2, 4, 6, 8], [0, 1, 1, 0]])
    assert rank_mod_p(M, 101) == sympy.Matrix(M).rank() == 2
    kernel = nullspace_mod_p(M, 101)
    assert kernel.shape == (2, 4)
    assert not np.any((M @ kernel.T) % 101)


def test_matmul_mod_p_has_no_overflow():
    rng = Sampler(3)
    left = rng.prime_field((4, 300))
    right = rng.prime_field((300, 5))
    exact = np.array([[sum(int(left[i, k]) * int(right[k, j]) for k in range(300)) % DEFAULT_PRIME
                       for j in range(5)] for i in range(4)], dtype=np.int64)
    assert np.array_equal(matmul_mod_p(left, right, DEFAULT_PRIME), exact)


def test_rank_sketch_decides_like_the_full_rank():
    """rank_reaches_mod_p says yes exactly when the rank is at least the target, on matrices
    of known rank r (products of random R x r and r x P factors), in every shape."""
    p, sampler = DEFAULT_PRIME, Sampler(5)
    for rows, cols, r in [(40, 30, 12), (30, 40, 30), (25, 25, 25), (60, 20, 19)]:
        left = sampler.spawn(rows).prime_field((rows, r), p)
        right = sampler.spawn(cols).prime_field((r, cols), p)
        matrix = matmul_mod_p(left, right, p)
        assert rank_mod_p(matrix, p) == r
        assert rank_reaches_mod_p(matrix, r, p, sampler.spawn(1))
        assert rank_reaches_mod_p(matrix, r - 1, p, sampler.spawn(2))
        # mutation: one more than the rank can never be certified
        assert not rank_reaches_mod_p(matrix, r + 1, p, sampler.spawn(3))
    # entries near p and inner dimensions longer than one exact float64 chunk
    wide = sampler.spawn(7).prime_field((3, 20000), p)
    assert rank_reaches_mod_p(wide, 3, p, sampler.spawn(8))
    assert not rank_reaches_mod_p(np.vstack([wide, wide[:1]]), 4, p, sampler.spawn(9))


def test_det_mod_p_matches_flint_including_singular_matrices():
    P = DEFAULT_PRIME
    sampler = Sampler(3)
    mats = sampler.prime_field((40, 5, 5), P)
    mats[0, :, 0] = 0                       # zero first column
    mats[1, 0, :] = 0                       # zero pivot row: needs a swap
    mats[1, 0, 3] = 5
    mats[2, 3] = mats[1, 3]                 # two equal rows
    mats[2, 1] = mats[2, 3]
    expected = [int(nmod_mat(m.tolist(), P).det()) for m in mats]
    assert det_mod_p(mats, P).tolist() == expected
    assert expected[0] == 0 and expected[2] == 0 and expected[1] != 0


def test_one_prime_field_serves_jacobians_and_structured_families():
    from attngeom.kernels.jacobian import residues
    from attngeom.lightning_alg.invariants.structured import ModPArithmetic
    assert issubclass(ModPArithmetic, PrimeField)
    assert isinstance(residues(np.array([1]), DEFAULT_PRIME).field, PrimeField)
    field = ModPArithmetic(DEFAULT_PRIME)
    a = np.array([DEFAULT_PRIME - 1, 3], dtype=np.int64)
    assert field.mul(a, a).tolist() == [1, 9] and field.sub(a, 3 * a).tolist() == [2, DEFAULT_PRIME - 6]


def test_compiled_family_matches_sympy_exactly_and_in_float():
    x, y, z = sympy.symbols("x y z")
    polys = [x**2 * y - sympy.Rational(3, 2) * z, y * z + 7, sympy.Integer(0)]
    family = compile_polynomials(polys, {x: 0, y: 1, z: 2})
    assert family.degrees == (3, 2, 0)
    pts = Sampler(0).prime_field((6, 3), 10007)
    got = family.evaluate_mod_p(pts, 10007)
    for b in range(6):
        subs = dict(zip((x, y, z), (int(v) for v in pts[b])))
        expected = [residue(sympy.Rational(p.subs(subs)), 10007) for p in polys]
        assert got[b].tolist() == expected
    floats = Sampler(1).floats((5, 3))
    values, scales = family.evaluate_float(floats)
    direct = floats[:, 0] ** 2 * floats[:, 1] - 1.5 * floats[:, 2]
    assert np.allclose(values[:, 0], direct)
    assert np.allclose(scales[:, 0], np.abs(floats[:, 0] ** 2 * floats[:, 1]) + 1.5 * np.abs(floats[:, 2]))


@pytest.mark.parametrize("name", ["torch", "jax"])
def test_backends_agree_with_numpy(name):
    pytest.importorskip(name)
    x, y = sympy.symbols("x y")
    family = compile_polynomials([x * y**2 - x, x + y], {x: 0, y: 1})
    pts = Sampler(4).floats((8, 2))
    be = get_backend(name)
    values, _ = family.evaluate_float(be.asarray(pts), be)
    reference, _ = family.evaluate_float(pts)
    assert np.allclose(be.to_numpy(values), reference, rtol=1e-14)


def test_backend_errors_are_one_line():
    with pytest.raises(BackendUnavailable, match="unknown backend"):
        get_backend("tensorflow")
    with pytest.raises(BackendUnavailable, match="cpu only"):
        get_backend("numpy", "cuda")


def test_params_and_registry():
    p = Param("d", "dimension")
    assert p.parse("3") == 3 and p.parse(None) is None
    with pytest.raises(BadInput, match="at least 1"):
        p.parse("0")
    with pytest.raises(BadInput, match="integer"):
        p.parse("three")
    assert Param("ds", "list", kind="intlist").parse("3,4,5") == (3, 4, 5)

    class Dummy(Claim):
        id, source, params, methods = "dummy", "none", (p,), ("exact",)

    registry = ClaimRegistry([Dummy()])
    with pytest.raises(ValueError):
        registry.register(Dummy())
    with pytest.raises(BadInput, match="did you mean 'dummy'"):
        registry.get("dumy")
    with pytest.raises(BadInput, match="does not take --r"):
        Dummy().resolve({"r": 2})
    with pytest.raises(BadInput, match="no method"):
        Dummy().verify({"d": 2}, "numeric")

"""The vanishing ideal J of the attention variety, degree by degree (ADM Def 8), by
multigraded interpolation over F_p; the variety's dimension against HMK Cor 3.3.

Variety.  One output coordinate (i, j) = (1, col) of lightning self-attention: the image
closure of mu: W -> y(W) (ADM Def 7, eq 3) in its N = C(d+2,3) + (t-1) d C(d+1,2)
coordinates, with rank A <= a (A = K^T Q when a < d, a generic matrix otherwise).

Method.
1. Grading.  phi_W(diag(lambda) X) = phi_W'(X) with W' = (Lambda A Lambda, V Lambda), so
   the variety is stable under y_(k1,k2,k3) -> lambda_k1 lambda_k2 lambda_k3 y_(k1,k2,k3)
   and J is Z^d-graded: each multidegree is an independent block
   (:mod:`attngeom.lightning_alg.ideal.interpolation`).
2. Linear part.  In degree 1 the blocks are the coordinates of one row multiset
   {k1,k2,k3}; their kernel is J_1 and the coordinates that stay independent on the
   variety (the pivots; the cross-column coordinates of one context column come first,
   so for t >= 2 these are exactly the pivots) are a basis of the coordinate ring's
   degree-1 part.  Every other coordinate is a linear combination of pivots modulo J_1.
3. Degree k >= 2.  Modulo J_1 the ring is the polynomial ring in the m pivots and
   J_k = (J_1 S)_k (+) J'_k with J'_k = J_k cap F_p[pivots]_k, computed block by block.
   With HF(k) the Hilbert function (the ranks of the blocks):
   dim J_k = C(N+k-1, k) - HF(k) and dim J'_k = C(m+k-1, k) - HF(k).
4. Minimal generators: dim J_1 in degree 1; in degree k >= 2, dim J'_k minus the
   dimension of (J'_{<k})_k = span{ z_s g : g in J'_{k-1}, z_s a pivot } (an exact rank).
5. Symmetry.  The variety is even GL_d-stable (phi_W(G X) = phi_W'(X) with
   W' = (G^T A G, V G)); a permutation of [d] that permutes the pivots maps block delta
   onto block sigma(delta).  Where no basis is needed, one block per S_d orbit of
   multidegrees is computed and its figures are those of the whole orbit
   (:func:`permutation_stable`; the table says how many blocks were computed).

The answer is exact over F_p (p = 2^31 - 1 by default) with the failure probability of
the fresh-point checks (:mod:`attngeom.lightning_alg.ideal.interpolation`); over Q, dim_Q J_k <= dim_Fp J_k
with equality unless p divides one of finitely many integers (a "bad prime": rerun with
``--prime`` to cross-check; the Macaulay2 export proves the lower bound over Q).

Modules: ``interpolation`` (multigraded interpolation over F_p), ``degree_table`` (the
engine), ``variety`` (the dimension), ``attribution`` (which registered families explain
the generators), ``report`` (``attngeom ideal``'s table), ``m2_export`` (Macaulay2).
"""

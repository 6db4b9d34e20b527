"""RGT: Hu, *Intelligent geometric dynamics* -- hyperbolic geometry, geodesic attention and
tree embeddings.

One module per object (Poincare ball, Lorentz model, products of H, S and E, Frechet means,
attention variants, tree embeddings); ``claims`` lists the RGT claims.
"""

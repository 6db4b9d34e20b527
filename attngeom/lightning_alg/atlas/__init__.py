"""``attngeom atlas``: the vanishing ideal over a grid of (d, t, a, d') and degrees (ADM §6,
first open problem).  :mod:`.grid` parses the grid, :mod:`.sweep` runs its points (with
the machinery of :mod:`attngeom.lightning_alg.ideal`), :mod:`.completeness` checks local
completeness of the families, :mod:`.m2_check` is the Macaulay2 cross-check and
:mod:`.pages` writes the atlas's outputs (table, JSON, CSV, heat map, ``docs/atlas.md``)."""

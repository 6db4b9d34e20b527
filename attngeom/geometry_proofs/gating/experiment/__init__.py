"""GEC §4 and Appendix A.2-A.5: the training experiment, reproduced in torch, with the
invariant (Gauss-equation) curvature of the learned surface beside the paper's proxy.

One module per object:

* ``data``: the synthetic tasks (A.5.3; the curved task of §4, the linear control of A.4);
* ``model``: the single-block attention classifier and its output variants (A.5.1, §4.2);
* ``train``: one seeded training run (A.5.2) and its evaluation;
* ``proxy``: the finite-difference curvature proxy kappa (A.5.4, A.5.5);
* ``invariant``: the Gaussian curvature of c -> mean attention output with the Fisher metric;
* ``runner``: the grid of runs (tasks x variants x seeds), worker processes, the CSV;
* ``statistics``: Pearson / Spearman r, seeded bootstrap intervals, per-group summaries;
* ``figures`` and ``report``: the paper's figures and Table 1, beside its printed values;
* ``claims``: the claims of §4 / A.2-A.4 with verdicts computed from a results CSV.
"""

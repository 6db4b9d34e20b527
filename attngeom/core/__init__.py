"""attngeom's verification contract: what a claim is, how a verdict is decided and shown, and
how a verdict travels (certificates, errata, JUnit).

* claims: :mod:`.claim` (``Claim``, ``Param``, ``ClaimRegistry``, ``CheckContext``)
* verdicts: :mod:`.verdict` (statuses and the decision rules), :mod:`.evidence` (evidence
  kinds and their comparison), :mod:`.erratum` (kinds of wrong); their renderings
  :mod:`.verdict_format` (text), :mod:`.verdict_markdown` and :mod:`.markdown` (Jupyter)
* certificates: :mod:`.certificate_schema`, :mod:`.certificate_compare`,
  :mod:`.certificates`, :mod:`.certificate_jobs`, :mod:`.junit`, :mod:`.atomic_files`;
  the errata report :mod:`.errata_report`
* running: :mod:`.executor` (serial / worker processes / Dask)
* untrusted text: :mod:`.expressions` (the expression grammar), :mod:`.errors` (BadInput and
  the exit codes)

Nothing here imports a paper's package (``lightning_alg``, ``geometry_proofs``): the
registry of every paper's claims is :mod:`attngeom.registry`, above them.  ``core`` uses
``kernels`` (backends, samplers); ``kernels`` uses only :mod:`.errors` of it
(``docs/DEVELOPING.md``, ``tests/test_layout.py``).
"""

__version__ = "0.1.0"

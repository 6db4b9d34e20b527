"""The public Python API: what the ``attngeom`` command computes, as functions for
notebooks and scripts.  ``import attngeom`` gives them (``attngeom.verify``, ...).

Every function validates its arguments as the command line does and raises
:class:`attngeom.BadInput` with the one-line message the command prints after
``attngeom: error:``.  A claim outside its hypotheses is a verdict (status
``not-applicable``) from :func:`verify`; :func:`show` and :func:`curvature` raise
:class:`attngeom.NotApplicable` (a kind of BadInput) instead.

This module imports nothing heavy: the claim modules (SymPy, NumPy, the backends) load on
the first call that needs them, so ``import attngeom`` and the CLI start quickly.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any

from attngeom.core.errors import BadInput, NotApplicable

if TYPE_CHECKING:
    from attngeom.core.errata_report import ErrataReport
    from attngeom.core.verdict import Verdict
    from attngeom.lightning_alg.atlas.pages import AtlasReport
    from attngeom.lightning_alg.ideal.report import IdealReport
    from attngeom.results import (CertificateCheck, CertificateRun, ClaimList, CurvatureReport,
                                  ShownObjects)

__all__ = ["verify", "show", "claims", "ideal", "atlas", "dimension", "curvature", "errata",
           "certify", "check_certificates", "BadInput", "NotApplicable"]

#: ``show``'s formats: the objects themselves, or one of ``attngeom show --format``'s.
SHOW_FORMATS = ("objects", "text", "latex", "m2", "json")
#: The progress display of a long computation: ``progress(iterable, label=..., length=...)``
#: yields the items of ``iterable`` (the CLI passes its terminal bar; None shows nothing).
Progress = Callable[..., Iterable]


def _registry():
    from attngeom.registry import REGISTRY
    return REGISTRY


def _context(seed: int, samples: int | None, backend: str, device: str,
             progress: Progress | None = None):
    from attngeom.core.claim import CheckContext
    return CheckContext(seed=seed, samples=samples, backend=backend, device=device,
                        **({"progress": progress} if progress else {}))


def _integer(name: str, value: Any, minimum: int | None = None) -> int:
    """An integer argument, refused as the claims refuse ``--name`` (no bools, no floats)."""
    from attngeom.core.claim import Param
    if isinstance(value, bool) or isinstance(value, float):
        value = str(value)
    return Param(name, "", minimum=minimum)._int(value)


def _option_text(value: Any) -> Any:
    """A Python value as the command line gives it to a claim: lists and tuples as comma
    lists, numbers as text, None kept (the default)."""
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, (list, tuple)):
        return ",".join(str(item) for item in value)
    return str(value)


def _claim_params(params: dict[str, Any]) -> dict[str, Any]:
    """A claim's parameters as given in Python, lists and tuples joined as the command
    line's comma lists (a text parameter such as ``amplitudes`` reads them so; an integer
    list parses the joined text as it parses the list)."""
    return {name: ",".join(str(item) for item in value) if isinstance(value, (list, tuple))
            else value for name, value in params.items()}


def verify(claim: str, *, method: str = "auto", backend: str = "numpy", device: str = "cpu",
           seed: int = 0, samples: int | None = None, **params: Any) -> Verdict:
    """Check one claim at one parameter point: ``attngeom verify CLAIM --name value ...``.

    Parameters
    ----------
    claim : str
        A claim id, as :func:`claims` lists them (``"linear"``, ``"gated-sphere"``).
    method : {"auto", "symbolic", "exact", "numeric"}
        ``symbolic``: an exact identity (SymPy / FLINT expansion); ``exact``: evaluation at
        random points over F_p (Schwartz-Zippel bound); ``numeric``: floating point within a
        stated tolerance.  ``auto`` is the cheapest sound method the claim offers.
    backend : {"numpy", "torch", "jax"}
        Array backend of ``method="numeric"``.
    device : {"cpu", "cuda"}
        Device of the backend.
    seed : int
        Random seed of the sampled points (the same seed gives the same verdict).
    samples : int, optional
        Number of random points (default: the method's own, at most 10,000).
    **params
        The claim's parameters as Python values: integers (``d=3``), lists or tuples where
        the command line takes a comma list (``d=(3, 2, 1)``), strings, booleans for
        switches.  Unknown names and invalid values raise BadInput.

    Returns
    -------
    Verdict
        ``status`` (proved / verified / consistent / refuted / not-applicable), ``method``,
        ``summary``, ``evidence`` (named sub-verdicts in ``evidence["parts"]``), the
        counterexample of a refutation and the errata it found.  ``str(verdict)`` is the
        text ``attngeom verify`` prints, ``verdict.to_json()`` its ``--json``; Jupyter shows
        it as markdown.

    Raises
    ------
    BadInput
        Unknown claim, parameter or method; a value out of range; a backend or device that
        is not available.  The message is the line ``attngeom verify`` prints.

    Examples
    --------
    >>> import attngeom
    >>> verdict = attngeom.verify("linear", d=3, t=2, a=3)
    >>> verdict.status.value
    'proved'
    >>> verdict.status.holds
    True
    """
    from attngeom.core.claim import METHODS
    if method not in ("auto",) + METHODS:
        raise BadInput(f"unknown method {str(method)[:40]!r}; choose one of "
                       f"{', '.join(('auto',) + METHODS)}")
    return _registry().get(claim).verify(_claim_params(params), method,
                                         _context(seed, samples, backend, device))


def show(claim: str, *, fmt: str = "objects", limit: int | None = None,
         **params: Any) -> ShownObjects | str:
    """The objects a claim is about (polynomials, formulas): ``attngeom show CLAIM``.

    Parameters
    ----------
    claim : str
        A claim id.
    fmt : {"objects", "text", "latex", "m2", "json"}
        ``objects``: for a claim about a family of polynomials of the vanishing ideal J
        (ADM Def 8; every claim with a ``members`` method, e.g. ``linear``, ``veronese``),
        the polynomials as SymPy expressions with their provenance; for every other claim
        (formulas, matrices, tables) the text form, which is what the claim shows.
        The other formats are the text of ``attngeom show --format FMT``.
    limit : int, optional
        Show at most this many objects.
    **params
        The claim's parameters, as for :func:`verify`.

    Returns
    -------
    ShownObjects or str
        ``ShownObjects``: a list of :class:`~attngeom.lightning_alg.invariant.Invariant`
        (``poly``: a SymPy expression in ``coords.symbols``; ``family``, ``source``,
        ``indices``); ``text(fmt)`` renders it as the command does.  Otherwise the text.

    Raises
    ------
    BadInput
        Unknown claim, parameter or format; a claim with nothing to show; a family too
        large to expand.
    NotApplicable
        The parameters violate the claim's hypotheses (the message names the hypothesis).

    Examples
    --------
    >>> import attngeom
    >>> polys = attngeom.show("linear", d=3, t=2, limit=2)
    >>> polys[0].source
    'ADM Prop 9'
    >>> print(attngeom.show("linear", d=3, t=2, limit=1, fmt="m2"))  # doctest: +SKIP
    """
    if fmt not in SHOW_FORMATS:
        raise BadInput(f"unknown format {str(fmt)[:40]!r}; choose one of {', '.join(SHOW_FORMATS)}")
    if limit is not None:
        limit = _integer("limit", limit, minimum=1)
    found = _registry().get(claim)
    resolved = found.resolve(_claim_params(params))
    violation = found.hypothesis_violation(resolved)
    if violation:
        raise NotApplicable(violation)
    if fmt == "objects":
        members = _members(found, resolved, limit)
        return members if members is not None else found.show(resolved, "text", limit)
    return found.show(resolved, fmt, limit)


def _members(claim, params: dict[str, Any], limit: int | None) -> ShownObjects | None:
    """The polynomials of a family claim (its ``members``) with their provenance, or None
    for a claim that shows something else (a formula, or the matrix of ``matrix=True``)."""
    import inspect
    members = getattr(claim, "members", None)
    if not callable(members) or params.get("matrix"):
        return None
    from attngeom.lightning_alg.claims.base import coordinates_of
    from attngeom.results import ShownObjects
    coords = coordinates_of(params)
    if "limit" in inspect.signature(members).parameters:
        found = members(params, coords, limit=limit)
    else:
        found = members(params, coords)
    return ShownObjects(found[:limit], claim.id, params, coords)


def claims(source: str | None = None) -> ClaimList:
    """The registered claims: ``attngeom list``.

    Parameters
    ----------
    source : {"ADM", "HMK", "GEC", "GT", "RGT"}, optional
        Only this paper's claims.

    Returns
    -------
    ClaimList
        A list of dicts ``{"id", "source", "statement", "methods", "params"}`` in the
        papers' order; ``ids`` lists the ids.  It prints as ``attngeom list`` does and
        shows as a table in Jupyter.

    Raises
    ------
    BadInput
        An unknown source.

    Examples
    --------
    >>> import attngeom
    >>> "linear" in attngeom.claims("ADM").ids
    True
    """
    from attngeom import claim_index
    from attngeom.registry import check_source
    from attngeom.results import ClaimList
    source = check_source(source)
    return ClaimList(claim_index.describe(entry) for entry in claim_index.entries()
                     if source is None or entry["source"].startswith(source))


def ideal(d: int, t: int, a: int | None = None, dprime: int = 1, col: int = 1,
          max_degree: int = 4, *, families: str | Sequence[str] = "all",
          family_params: Sequence[str] = (), attribution_budget: float | str | None = 1,
          prime: int | None = None, seed: int = 0, m2_file: str | None = None,
          workers: int | None = None, scheduler: str | None = None,
          progress: Progress | None = None, heads: int | None = None, skip: str | None = None,
          causal: bool = False) -> IdealReport:
    """The vanishing ideal J of one output coordinate's attention variety (ADM Def 8),
    degree by degree: ``attngeom ideal``.

    For each degree k <= ``max_degree``: dim J_k, the Hilbert function, how much of J_k the
    lower degrees generate and the number of minimal generators, computed by interpolation
    over F_p (every kernel checked at fresh points; Schwartz-Zippel failure bound); the
    variety's dimension (Jacobian rank) against HMK Cor 3.3; and which family claims
    account for the generators.

    Parameters
    ----------
    d, t : int
        Embedding dimension and sequence length.
    a : int, optional
        Attention dimension: rank A <= a (default d).
    dprime : int
        Output dimension d'.
    col : int
        Target column j of the output coordinate (1, j).
    max_degree : int
        Largest degree K.
    families : "all", "none", str or sequence of str
        Family claims to attribute the generators to ("none" is fastest).
    family_params : sequence of str
        ``"ID:NAME=VALUE"``: attribute family ID at those parameters.
    attribution_budget : float, "none" or None
        Work the attribution may spend, as a multiple of the ideal's own, counted as at least
        5,000,000 units (None: no limit).
    prime : int, optional
        The prime p < 2^31 (default 2^31 - 1).
    seed : int
        Random seed.
    m2_file : str, optional
        Also write :meth:`IdealReport.to_m2` to this file (``report.export`` says what).
    workers, scheduler
        Where the blocks of each degree run: N local processes, or a Dask scheduler address.
    progress : callable, optional
        A progress display (see :data:`Progress`).
    heads, skip, causal
        A variant layer (issue 24, ``docs/beyond.md``): H heads (points are sums of H
        single-head points), a skip connection ("identity": J = J_f + (z_1 - 1, z_2..z_d),
        "linear": J = J_f F[y, z]; listed in ``notes`` and ``dimension["skip"]``), a causal
        mask (the coordinates of contexts n > j vanish).  ``dimension`` then holds the
        measured dimension, the join's expected value and the check of the coordinates
        against the network's expansion; no ``m2_file``.

    Returns
    -------
    IdealReport
        ``degrees`` (one DegreeTable per k), ``variety_dimension``, ``dimension`` (HMK Cor
        3.3), ``attribution``, ``failure_probability``; ``to_json()``; ``to_m2()`` (bases of
        J_1 and J'_k in Macaulay2 syntax).  Prints as ``attngeom ideal`` does, shows as
        markdown in Jupyter.

    Raises
    ------
    BadInput
        Sizes out of range or too large, an unknown family, a bad budget or prime.

    Examples
    --------
    >>> import attngeom
    >>> report = attngeom.ideal(2, 2, max_degree=2, families="none")
    >>> report.by_degree("minimal_generators", nonzero=True)  # doctest: +SKIP
    """
    from attngeom.core.executor import make_executor
    from attngeom.lightning_alg.claims import family_claims
    from attngeom.lightning_alg.ideal.budget_option import parse_budget
    from attngeom.lightning_alg.ideal.report import compute_ideal

    sizes = {"d": d, "t": t, "dprime": dprime, "col": col, "max_degree": max_degree, "seed": seed}
    d, t, dprime, col, max_degree, seed = (_integer(name, value) for name, value in sizes.items())
    a = None if a is None else _integer("a", a)
    prime = None if prime is None else _integer("prime", prime)
    if not isinstance(families, str):
        if (not isinstance(families, (list, tuple, set, frozenset))
                or not all(isinstance(f, str) for f in families)):
            raise BadInput(f"families: 'all', 'none', an id list 'a,b' or a list of ids; got "
                           f"{type(families).__name__} {str(families)[:40]!r}")
        families = ",".join(families)
    if m2_file is not None:
        from attngeom.core.atomic_files import output_file
        m2_file = str(output_file(m2_file, "--m2", (".m2",)))
    budget = parse_budget("none" if attribution_budget is None else attribution_budget)
    from attngeom.lightning_alg.models.variant import variant_from
    variant = variant_from(None if heads is None else _integer("heads", heads, 1), skip, causal)
    context = _context(seed, None, "numpy", "cpu", progress)
    with make_executor(workers, scheduler) as executor:
        report, engine = compute_ideal(d, t, a, dprime, col, max_degree, family_claims(families),
                                       prime, seed, context, keep=bool(m2_file),
                                       family_params=tuple(family_params),
                                       attribution_budget=budget, executor=executor,
                                       variant=variant)
    if m2_file:
        from attngeom.lightning_alg.ideal.m2_export import export_m2
        report.export = export_m2(engine, max_degree, m2_file)
    return report


def atlas(grid: str | None = None, max_degree: int = 4, *, out: str | None = None,
          families: str | Sequence[str] = "all", attribution_budget: float | str | None = 1,
          seed: int = 0, prime: int | None = None, check_m2: bool = False,
          m2_budget: float = 120.0, workers: int | None = None, scheduler: str | None = None,
          progress: Progress | None = None) -> AtlasReport:
    """The vanishing ideal over a grid of (d, t, a, d') and degrees: ``attngeom atlas``.

    At every point, what :func:`ideal` computes (HF(k), dim J_k, minimal generators per
    degree k <= K, the dimension against HMK Cor 3.3, the family attribution and the
    unexplained generators), plus the local completeness of the families (the rank of the
    Jacobian of all family members at a smooth point against the codimension: equal means
    the variety is an irreducible component of their zero set) and, with ``check_m2``,
    Macaulay2's minimal generators by elimination of the parametrization, compared
    degree by degree.  See ``docs/atlas.md``.

    Parameters
    ----------
    grid : str, optional
        Terms ``d,t,a[,d'][@K]`` separated by ``;``, each field an integer, ``LO..HI`` or
        ``X|Y``; None or ``"default"``: the default grid.
    max_degree : int
        K of the terms without ``@K``.
    out : str, optional
        A folder: each point's record is written to ``out/points/`` as it finishes and
        reused by a later call with the same settings and code; ``atlas.json``,
        ``atlas.csv`` and the heat map ``atlas_unexplained.png`` are written there.
    families, attribution_budget, seed, prime
        As for :func:`ideal`.
    check_m2 : bool
        Also run Macaulay2 at every point (skipped, with a note, when ``M2`` is missing).
    m2_budget : float
        Seconds one point's Macaulay2 run may take; a longer run is stopped (``timeout``).
    workers, scheduler
        Where the points run: N local processes, or a Dask scheduler address.
    progress : callable, optional
        A progress display over the points (see :data:`Progress`).

    Returns
    -------
    AtlasReport
        ``records`` (one dict per point), ``rows()`` (the CSV rows), ``done`` (computed and
        reused points), ``files``, ``notes``; prints as ``attngeom atlas`` does, shows as
        markdown in Jupyter.

    Raises
    ------
    BadInput
        A malformed grid, sizes out of range, an unknown family, a bad budget.

    Examples
    --------
    >>> import attngeom
    >>> report = attngeom.atlas("2,2,1..2", max_degree=2, families="none")  # doctest: +SKIP
    >>> [r["minimal_generators"] for r in report.records]  # doctest: +SKIP
    """
    from attngeom.core.executor import make_executor
    from attngeom.lightning_alg.atlas.sweep import compute_atlas

    max_degree = _integer("max_degree", max_degree)
    seed = _integer("seed", seed)
    prime = None if prime is None else _integer("prime", prime)
    if not isinstance(families, str):
        families = ",".join(families)
    with make_executor(workers, scheduler) as executor:
        return compute_atlas(grid, max_degree, out, families, attribution_budget, seed, prime,
                             check_m2, m2_budget, executor, progress)


def dimension(d: int | Sequence[int], t: int | None = None, a: int | Sequence[int] | None = None,
              *, layers: int | None = None, dprime: int | None = None, softmax: bool = False,
              method: str = "auto", backend: str = "numpy", device: str = "cpu", seed: int = 0,
              samples: int | None = None, workers: int | None = None,
              scheduler: str | None = None, heads: int | None = None, skip: str | None = None,
              causal: bool = False) -> Verdict:
    """Neuromanifold dimension (HMK): parameter count, the paper's formula and the measured
    Jacobian rank of the parametrization: ``attngeom dimension``.

    One layer checks HMK eq (7) (claim ``dimension-single-layer``), several eq (14)
    (``dimension-deep``), ``softmax=True`` eq (16) (``softmax-dimension``).  ``auto`` ranks
    exactly over F_p for lightning attention on the numpy backend, in float64 otherwise.

    Parameters
    ----------
    d : int or sequence of int
        Dimensions d_0..d_l, or one integer.
    t : int
        Sequence length.
    a : int or sequence of int, optional
        Attention dimensions a_1..a_l, or one integer.
    layers : int, optional
        Number of layers l (default: from ``d`` / ``a``).
    dprime : int, optional
        d_l when ``d`` is one integer.
    softmax : bool
        Softmax attention (HMK eq 15) instead of lightning.
    method, backend, device, seed, samples
        As for :func:`verify`.
    workers, scheduler
        Where the rank is computed (a local process or a Dask cluster).
    heads, skip, causal
        H heads, a skip connection ("none", "identity", "linear") and a causal mask
        (claims ``multihead-join``, ``skip-fibre``, ``causal-dimension``; docs/beyond.md).

    Returns
    -------
    Verdict
        The dimension claim's verdict; ``evidence`` holds ``parameters``, ``formula``,
        ``measured_rank``, ``upper_bound_from_symmetries``, ``certified`` and (eq 14)
        ``corrected_formula``.  ``attngeom.lightning_alg.claims.hmk.dimension_report``
        gives the fields ``attngeom dimension --json`` prints.

    Raises
    ------
    BadInput
        Missing or invalid sizes, an exact rank asked for on cuda.

    Examples
    --------
    >>> import attngeom
    >>> verdict = attngeom.dimension(2, 2, 1)  # doctest: +SKIP
    >>> verdict.evidence["measured_rank"]  # doctest: +SKIP
    """
    from functools import partial

    from attngeom.core.claim import CheckContext
    from attngeom.core.executor import make_executor
    from attngeom.lightning_alg.claims.hmk import run_dimension

    raw = {"layers": layers, "d": d, "a": a, "t": t, "dprime": dprime, "heads": heads,
           "skip": skip, "causal": causal}
    point = CheckContext(seed=seed, samples=samples, backend=backend, device=device)
    with make_executor(workers, scheduler) as executor:
        return executor.map(partial(run_dimension, raw, bool(softmax), method), [point],
                            names=["dimension"])[0]


def curvature(witness: str, *, points: int = 10, seed: int = 0, backend: str = "numpy",
              device: str = "cpu", ambient: int | None = None, values: int | None = None,
              gate_strength: float | str | None = None, layers: int | None = None,
              amplitudes: float | str | Sequence[float] | None = None,
              psi: str | None = None) -> CurvatureReport:
    """Gaussian curvature of a named construction of GEC at sampled points:
    ``attngeom curvature WITNESS``.

    ``sphere``: Thm 3.6's gated attention layer, whose output is a unit-sphere patch
    (K = 1; ``gate_strength=0`` is Cor 3.7's constant gate, K = 0).  ``normal-form``: Lemma
    3.11's L-layer gated residual stack, K(0) = A_L^2 det D^2 psi(0) (Lemma 3.12).

    Parameters
    ----------
    witness : {"sphere", "normal-form"}
        The construction.
    points : int
        Number of sampled points (1..10,000).
    seed, backend, device
        As for :func:`verify`.
    ambient : int, optional
        Decoder / stream dimension D.
    values : int, optional
        sphere: number n of tokens.
    gate_strength : number or str, optional
        sphere: the gate sigma(s X_g W_theta) (an exact rational: 1, 0.5, "1/2").
    layers : int, optional
        normal-form: number L of layers.
    amplitudes : number, str or sequence, optional
        normal-form: a_l, one value or one per layer.
    psi : str, optional
        normal-form: psi(u, v), read by the project's expression grammar (never evaluated
        as Python).

    Returns
    -------
    CurvatureReport
        A dict: ``points``, ``K``, ``K_min``, ``K_max``, ``expected``,
        ``max_abs_deviation``, ``holds`` (K within 1e-10 of the known curvature).  Prints
        as ``attngeom curvature`` does.

    Raises
    ------
    BadInput
        Unknown witness, an option the witness does not take, a value out of range.
    NotApplicable
        Parameters outside the theorem's hypotheses.

    Examples
    --------
    >>> import attngeom
    >>> report = attngeom.curvature("sphere", points=3)
    >>> report.holds
    True
    """
    from attngeom.geometry_proofs.gating.witnesses import sample_curvature
    from attngeom.results import CurvatureReport

    options = {"ambient": ambient, "values": values, "gate_strength": _option_text(gate_strength),
               "layers": layers, "amplitudes": _option_text(amplitudes), "psi": psi}
    points = _integer("points", points)
    seed = _integer("seed", seed)
    return CurvatureReport(sample_curvature(witness, options, points, seed, backend, device))


def errata(source: str | None = None, certificates: str | None = None, *,
           workers: int | None = None, scheduler: str | None = None,
           progress: Progress | None = None) -> ErrataReport:
    """Every printed statement found wrong across the papers: ``attngeom errata``.

    Each claim is run at its paper examples (the parameter sets of ``attngeom certify
    --suite paper``) and the errata of the verdicts are gathered, one row per (claim, kind,
    location, printed text): paper, location, kind (misprinted formula, missing
    hypothesis, false statement, proof step, ...), what is printed, what holds, the witness
    and the claim that found it.

    Parameters
    ----------
    source : {"ADM", "HMK", "GEC", "GT", "RGT"}, optional
        Only this paper.
    certificates : str, optional
        A directory of certificates (one per paper example, ``attngeom certify --suite
        paper``): read their verdicts instead of re-running the checks (fast).
    workers, scheduler
        Where the re-runs go: N local processes, or a Dask scheduler address.
    progress : callable, optional
        A progress display (see :data:`Progress`).

    Returns
    -------
    ErrataReport
        ``rows`` (``ErrataRow``: paper, location, kind, printed, correct, check, witness,
        params, claim, status, examples), ``claims``, ``verdicts``, ``origin``;
        ``render("text" | "markdown" | "json")``.  Prints as ``attngeom errata``, shows as
        markdown in Jupyter.

    Raises
    ------
    BadInput
        An unknown source; a certificate missing or invalid.

    Examples
    --------
    >>> import attngeom
    >>> report = attngeom.errata("HMK", certificates="certificates")  # doctest: +SKIP
    >>> {row.kind for row in report.rows}  # doctest: +SKIP
    """
    from attngeom.core.errata_report import collect_errata
    from attngeom.core.executor import make_executor
    from attngeom.registry import REGISTRY, check_source, claims_of, errata_task

    selected = claims_of(check_source(source))
    if certificates:
        return collect_errata(selected, REGISTRY, certificates)
    with make_executor(workers, scheduler) as executor:
        return collect_errata(selected, REGISTRY, None, executor, errata_task, progress)


def certify(claim: str | None = None, *, out: str, suite: str | None = None,
            claim_ids: str | Sequence[str] | None = None, source: str | None = None,
            force: bool = False, method: str = "auto", backend: str = "numpy",
            device: str = "cpu", seed: int = 0, samples: int | None = None,
            workers: int | None = None, scheduler: str | None = None,
            progress: Progress | None = None, **params: Any) -> CertificateRun:
    """Write re-checkable JSON certificates: ``attngeom certify``.

    A certificate records a claim's verdict with everything needed to re-run it (claim,
    parameters, method, seed, samples, backend, device, toolkit version, the digest of the
    claim's objects); :func:`check_certificates` re-runs it and compares each value by its
    evidence kind (docs/certificates.md).  A certificate already in ``out`` that would be
    written again as it is is kept (``skipped``) unless ``force``.

    Parameters
    ----------
    claim : str, optional
        One claim id, certified at ``**params`` (as :func:`verify` takes them) with
        ``method``; or None with ``suite``.
    out : str
        The directory of the certificates (created if missing).
    suite : {"paper"}, optional
        Every registered claim at its paper's examples (each example's own method and
        samples), instead of ``claim``.
    claim_ids : str or sequence of str, optional
        With ``suite``: only these claims (``"linear,syzygy"`` or a list).
    source : {"ADM", "HMK", "GEC", "GT", "RGT"}, optional
        With ``suite``: only this paper's claims.
    force : bool
        Rewrite certificates that are up to date.
    method, backend, device, seed, samples
        As :func:`verify` (``samples`` with ``suite``: for every example).
    workers, scheduler
        Where the checks run: N local processes, or a Dask scheduler address.
    progress : callable, optional
        A progress display (see :data:`Progress`).

    Returns
    -------
    CertificateRun
        One dict per certificate in job order: ``file``, ``claim``, ``status``,
        ``seconds``, ``skipped``.  Prints as ``attngeom certify``, shows as a table in
        Jupyter.

    Raises
    ------
    BadInput
        Neither or both of ``claim`` and ``suite``; ``claim_ids`` or ``source`` without
        ``suite``, or selecting nothing; an unknown claim, parameter or value; a file that
        cannot be written.

    Examples
    --------
    >>> import attngeom
    >>> run = attngeom.certify("linear", d=3, t=2, a=3, out="certs")  # doctest: +SKIP
    >>> run[0]["status"]  # doctest: +SKIP
    'proved'
    """
    from pathlib import Path

    from attngeom.core.certificate_jobs import CertificateJob, suite_jobs, write_certificates
    from attngeom.core.executor import make_executor
    from attngeom.registry import certify_task, check_source, claims_of
    from attngeom.results import CertificateRun

    if (claim is None) == (suite is None):
        raise BadInput("give either a CLAIM or --suite paper")
    seed = _integer("seed", seed)
    samples = None if samples is None else _integer("samples", samples)
    if suite is not None:
        if suite != "paper":
            raise BadInput(f"unknown suite {str(suite)[:40]!r}; the suite is 'paper'")
        if claim_ids is not None and not isinstance(claim_ids, str):
            claim_ids = ",".join(claim_ids)
        selected = claims_of(check_source(source), claim_ids)
        if not selected:
            raise BadInput("--claims and --source together select no claim")
        jobs = suite_jobs(selected, seed, samples, backend, device)
    elif claim_ids is not None or source is not None:
        raise BadInput("--claims and --source choose the claims of --suite")
    else:
        jobs = [CertificateJob(_registry().get(claim).id, _claim_params(params), method, seed,
                               samples, backend, device)]
    with make_executor(workers, scheduler) as executor:
        return CertificateRun(write_certificates(jobs, Path(out), executor, certify_task,
                                                 force, progress))


def check_certificates(directory: str, *, workers: int | None = None,
                       scheduler: str | None = None,
                       progress: Progress | None = None) -> CertificateCheck:
    """Validate and re-run every certificate in a directory: ``attngeom check-certificates``.

    Each ``*.json`` file is validated against the certificate schema (a file that is not a
    valid certificate is never run: text from outside is parsed, never evaluated), re-run
    with its recorded claim, parameters, method, seed, samples, backend and device, and
    every value compared by its evidence kind: exact values exactly, floats within their
    declared tolerance, measured errors against their bound (docs/certificates.md).

    Parameters
    ----------
    directory : str
        A directory of certificates (``attngeom certify --out``).
    workers, scheduler
        The certificates re-run in N local processes, or on the Dask cluster whose
        scheduler is at this address; by default one after another in this process.
    progress : callable, optional
        A progress display (see :data:`Progress`).

    Returns
    -------
    CertificateCheck
        One ``CheckResult`` per file (``path``, ``claim``, ``status``, ``problems``,
        ``ok``, ``invalid``); ``ok`` (all check out), ``failed``, ``invalid``,
        ``to_json()``, ``junit()``.  Prints as ``attngeom check-certificates``, shows as a
        table in Jupyter.  The command's exit code is 0 when ``ok``, 2 when some file is
        ``invalid``, else 1.

    Raises
    ------
    BadInput
        ``directory`` is not a directory, or holds no ``*.json`` file.

    Examples
    --------
    >>> import attngeom
    >>> check = attngeom.check_certificates("certificates")  # doctest: +SKIP
    >>> check.ok  # doctest: +SKIP
    True
    """
    import os
    from pathlib import Path

    from attngeom.core.certificate_jobs import recheck_certificates
    from attngeom.core.certificates import certificate_files
    from attngeom.core.executor import make_executor
    from attngeom.registry import recheck_task
    from attngeom.results import CertificateCheck

    if not isinstance(directory, (str, os.PathLike)):
        raise BadInput(f"directory: a path to a folder of certificates; got "
                       f"{type(directory).__name__}")
    files = certificate_files(Path(directory))
    if not files:
        raise BadInput(f"no *.json certificates in {directory}")
    with make_executor(workers, scheduler) as executor:
        return CertificateCheck(recheck_certificates(files, executor, recheck_task, progress))

"""The Claim interface (the unit of verification) and the registries the CLI merges.

A :class:`Claim` is one checkable statement of a paper: a stable ``id`` used on the command
line, the ``source`` ("ADM Prop 9"), the ``statement`` in one sentence, its parameters with
validation, the methods that can check it (cheapest sound one first) and ``show`` for the
objects it is about.  Subclasses implement ``check_<method>`` for each method they list.
"""

from __future__ import annotations

import difflib
import importlib
import pkgutil
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Iterable

from attngeom.kernels.backend import BACKENDS, DEVICES
from attngeom.core.errors import BadInput
from attngeom.core.evidence import DEFAULT_FLOAT_TOLERANCE
from attngeom.core.erratum import Erratum, ErratumSpec, ErrorKind
from attngeom.core.verdict import Status, Verdict, not_applicable, with_erratum

if TYPE_CHECKING:
    from attngeom.kernels.sampling import Sampler

METHODS = ("symbolic", "exact", "numeric")
#: Longest integer parameter (digits and sign): every size fits an int64, and text such as
#: a 5000-digit number is refused before Python converts it.
MAX_INT_DIGITS = 18
FORMATS = ("text", "latex", "m2", "json")


@dataclass(frozen=True)
class Param:
    """A claim parameter, given on the command line as ``--<name>``.

    kind: ``int`` (with ``minimum`` and, where a larger value would not fit, ``maximum``),
    ``intlist`` (one integer or a comma list), ``flag`` (boolean switch) or ``str``.
    """

    name: str
    help: str
    default: Any = None
    kind: str = "int"
    minimum: int | None = 1
    maximum: int | None = None

    @property
    def option(self) -> str:
        return "--" + self.name.replace("_", "-")

    def parse(self, raw: Any) -> Any:
        if raw is None:
            return self.default
        if self.kind == "flag":
            return bool(raw)
        if self.kind == "str":
            return str(raw)
        if self.kind == "intlist":
            items = raw if isinstance(raw, (list, tuple)) else str(raw).split(",")
            return tuple(self._int(item) for item in items)
        return self._int(raw)

    def _int(self, raw: Any) -> int:
        text = str(raw).strip()
        try:
            value = int(text) if len(text) <= MAX_INT_DIGITS else None
        except ValueError:
            value = None
        if value is None:
            shown = ascii(text if len(text) <= 40 else text[:37] + "...")
            raise BadInput(f"{self.option} must be an integer of at most {MAX_INT_DIGITS} "
                           f"digits; got {shown}")
        if self.minimum is not None and value < self.minimum:
            raise BadInput(f"{self.option} must be at least {self.minimum}; got {value}")
        if self.maximum is not None and value > self.maximum:
            raise BadInput(f"{self.option} must be at most {self.maximum}; got {value}")
        return value


def _identity_progress(iterable: Iterable, label: str = "", length: int | None = None) -> Iterable:
    return iterable


@dataclass
class CheckContext:
    """How to check: seed, number of sample points, backend and device, progress display."""

    seed: int = 0
    samples: int | None = None
    backend: str = "numpy"
    device: str = "cpu"
    progress: Callable[..., Iterable] = field(default=_identity_progress)

    @property
    def sampler(self) -> Sampler:
        from attngeom.kernels.sampling import Sampler    # NumPy: loaded by the checks only
        return Sampler(self.seed)


#: The most sample points a check may be asked for (``--samples``, a certificate's
#: ``samples``): beyond it no check finishes in reasonable time.
MAX_SAMPLES = 10_000
#: Seeds are integers in [0, MAX_SEED] (NumPy's SeedSequence takes any non-negative
#: integer; the bound keeps a seed a machine word in every backend).
MAX_SEED = 2**63 - 1


def validate_context(context: CheckContext) -> CheckContext:
    """``context`` when its seed, samples, backend and device are in range (the same
    limits for ``attngeom verify`` options and for a certificate's fields), else BadInput."""
    if not isinstance(context.seed, int) or not 0 <= context.seed <= MAX_SEED:
        raise BadInput(f"--seed must be an integer in [0, 2^63 - 1]; got {str(context.seed)[:40]}")
    if context.samples is not None and not 1 <= context.samples <= MAX_SAMPLES:
        raise BadInput(f"--samples must be between 1 and {MAX_SAMPLES:,}; got {str(context.samples)[:40]}")
    if context.backend not in BACKENDS:
        raise BadInput(f"unknown backend {str(context.backend)[:40]!r}; choose one of {', '.join(BACKENDS)}")
    if context.device not in DEVICES:
        raise BadInput(f"unknown device {str(context.device)[:40]!r}; choose one of {', '.join(DEVICES)}")
    return context


class Claim:
    """Base class of every registered claim.  Subclasses set the class attributes and
    implement ``check_symbolic`` / ``check_exact`` / ``check_numeric`` (or one ``check``
    taking the method) and ``show``."""

    id: str = ""
    source: str = ""
    statement: str = ""
    params: tuple[Param, ...] = ()
    methods: tuple[str, ...] = ()
    #: Parameter sets of the source paper's own examples (and a few larger sizes): the
    #: certificate suite (``attngeom certify --suite paper``) checks the claim at each.
    examples: tuple[dict[str, Any], ...] = ()
    #: How the floats of this claim's verdicts compare when a certificate is re-checked
    #: (:mod:`attngeom.core.evidence`: ``|a - b| <= rel_tol * scale + abs_tol``); a value that
    #: rounding moves by more is a :class:`~attngeom.core.evidence.Bound` or measured, not a float.
    float_tolerance: dict[str, float] = DEFAULT_FLOAT_TOLERANCE
    #: What kind of wrong a refutation of the printed statement is, and the parameters
    #: under which the correction (condition, convention) is checked (:mod:`attngeom.core.erratum`).
    erratum_spec: ErratumSpec | None = None
    #: Parameters whose default or a paper example sits at an identity value (kappa = 1,
    #: curvature c = 1, unit amplitudes, radius 1, ...) on purpose: name -> why the claim is
    #: about that value.  Read only by ``tests/test_generic_examples.py``, which fails on any
    #: other identity value (a factor or exponent on such a parameter is invisible there);
    #: it changes no verdict, output or certificate.
    identity_values: dict[str, str] = {}

    # -- parameters --------------------------------------------------------------------
    def resolve(self, raw: dict[str, Any]) -> dict[str, Any]:
        """Parse and validate raw parameters (None = default); unknown names are errors."""
        known = {p.name: p for p in self.params}
        for name, value in raw.items():
            if value is not None and name not in known:
                option = "--" + name.replace("_", "-")
                takes = ", ".join(p.option for p in self.params) or "no parameters"
                raise BadInput(f"claim {self.id!r} does not take {option} (it takes {takes})")
        values = {name: p.parse(raw.get(name)) for name, p in known.items()}
        self.validate(values)
        return values

    def validate(self, params: dict[str, Any]) -> None:
        """Raise BadInput for parameter combinations that make no sense at all."""

    def hypothesis_violation(self, params: dict[str, Any]) -> str | None:
        """The hypothesis of the source theorem that ``params`` violate, or None."""
        return None

    def certificate_violation(self, params: dict[str, Any]) -> str | None:
        """Why ``params`` may not come from a certificate (untrusted input), or None.

        A certificate is self-contained and its re-check bounded: a claim whose parameters
        can read a local file or start a training run says so here (the certificate
        validator also refuses any text parameter that names an existing file)."""
        return None

    # -- checking ----------------------------------------------------------------------
    def auto_method(self, params: dict[str, Any]) -> str:
        """The cheapest sound method for these parameters (default: the first listed)."""
        return self.methods[0]

    def verify(self, raw: dict[str, Any], method: str = "auto",
               context: CheckContext | None = None) -> Verdict:
        """Validate, check the hypotheses, run the chosen method, stamp the verdict."""
        params = self.resolve(raw)
        context = validate_context(context or CheckContext())
        start = time.perf_counter()
        violation = self.hypothesis_violation(params)
        vacuous = None if violation else self.vacuous_verdict(params)
        if violation:
            verdict = not_applicable(violation)
        elif vacuous is not None:
            verdict = vacuous
        else:
            if method == "auto":
                method = self.auto_method(params)
            if method not in self.methods:
                offered = ", ".join(self.methods)
                raise BadInput(f"claim {self.id!r} has no method {method!r} (it offers {offered})")
            verdict = self.check(method, params, context)
            if verdict.status.holds and not verdict.checked:
                verdict = not_applicable(
                    f"the {method} check of {self.id} examined nothing (checked 0: no member, "
                    f"sample or point): a statement holds vacuously there, so no verdict holds "
                    f"(it said {verdict.status.value}: {verdict.summary})")
        verdict.claim, verdict.source, verdict.params = self.id, self.source, params
        if verdict.status is Status.REFUTED and verdict.error_kind is None and self.erratum_spec:
            self._check_erratum(verdict, method, params, context)
        if verdict.status is Status.REFUTED and verdict.error_kind is None:
            with_erratum(verdict, Erratum(ErrorKind.FALSE_STATEMENT, self.source,
                                          self.statement or self.source))
        verdict.float_tolerance = dict(self.float_tolerance)
        verdict.seconds = round(time.perf_counter() - start, 4)
        return verdict

    def vacuous_verdict(self, params: dict[str, Any]) -> Verdict | None:
        """The verdict where the objects the claim is about are empty at ``params`` (a family
        with no member, a sweep with no point), known before any check: a statement about
        them would hold vacuously, so it must not be a holding verdict (issue 48).  None
        (the default): there is something to check."""
        return None

    def _check_erratum(self, verdict: Verdict, method: str, params: dict[str, Any],
                       context: CheckContext) -> None:
        """Run the claim under ``erratum_spec.check_params`` (the correction, the missing
        condition, the other convention) at the same seed; when it holds, the refutation is
        of the spec's kind, and the check's outcome is kept in ``evidence["erratum check"]``.
        A correction outside the claim's hypotheses is not-applicable there: it grants no kind
        (the refutation stays a false statement)."""
        spec = self.erratum_spec
        if all(params.get(name) == value for name, value in spec.check_params.items()):
            return                                   # the correction itself was refuted
        corrected = self.resolve({**params, **spec.check_params})
        violation = self.hypothesis_violation(corrected)
        outcome = not_applicable(violation) if violation else self.check(method, corrected, context)
        given = " ".join(f"--{name.replace('_', '-')} {value}"
                         for name, value in spec.check_params.items())
        verdict.evidence["erratum check"] = {"params": dict(spec.check_params),
                                          "status": outcome.status.value,
                                          "method": outcome.method, "summary": outcome.summary}
        if outcome.status.holds:
            with_erratum(verdict, spec.erratum(self.source, f"{given}: {outcome.status.value}, "
                                                            f"{outcome.summary}"))

    def check(self, method: str, params: dict[str, Any], context: CheckContext) -> Verdict:
        """Run one method; by default ``check_<method>``.  A claim whose methods share one
        procedure overrides this instead of defining the three."""
        return getattr(self, f"check_{method}")(params, context)

    def show(self, params: dict[str, Any], fmt: str = "text", limit: int | None = None) -> str:
        raise BadInput(f"claim {self.id!r} has nothing to show")

    def digest_text(self, params: dict[str, Any]) -> str:
        """A canonical text of the objects the claim is about (for certificate digests):
        the sorted lines of ``show --format m2``; empty when the claim shows nothing."""
        try:
            return "\n".join(sorted(self.show(params, "m2").splitlines()))
        except BadInput:
            return ""

    def describe(self) -> dict[str, Any]:
        return {"id": self.id, "source": self.source, "statement": self.statement,
                "methods": list(self.methods), "params": [p.name for p in self.params]}


class ClaimRegistry:
    """Claims by id.  Each package exposes one; the CLI merges them."""

    def __init__(self, claims: Iterable[Claim] = ()):
        self._claims: dict[str, Claim] = {}
        for claim in claims:
            self.register(claim)

    def register(self, claim: Claim) -> Claim:
        if claim.id in self._claims:
            raise ValueError(f"claim id {claim.id!r} registered twice")
        self._claims[claim.id] = claim
        return claim

    def get(self, claim_id: str) -> Claim:
        if not isinstance(claim_id, str):
            raise BadInput(f"a claim id is a string such as 'linear'; got "
                           f"{type(claim_id).__name__} {str(claim_id)[:40]!r}")
        try:
            return self._claims[claim_id]
        except KeyError:
            close = difflib.get_close_matches(claim_id, list(self._claims), n=1)
            hint = f"; did you mean {close[0]!r}?" if close else "; `attngeom list` shows them"
            raise BadInput(f"unknown claim {claim_id!r}{hint}") from None

    def __iter__(self):
        return iter(self._claims.values())

    def __len__(self) -> int:
        return len(self._claims)

    @staticmethod
    def merge(*registries: "ClaimRegistry") -> "ClaimRegistry":
        return ClaimRegistry(claim for registry in registries for claim in registry)

    def all_params(self) -> dict[str, Param]:
        """Every parameter name used by some claim.

        The CLI passes option values through as text and each claim parses its own (so
        ``--d`` may be an integer for one claim and a comma list for another); only a
        switch (flag) must be a switch for every claim that uses the name.
        """
        out: dict[str, Param] = {}
        for claim in self:
            for p in claim.params:
                if p.name in out and (out[p.name].kind == "flag") != (p.kind == "flag"):
                    raise ValueError(f"parameter {p.name!r} is a flag for one claim only")
                out.setdefault(p.name, p)
        return out


def collect_claims(package: str, order: tuple[str, ...] = (), suffix: str = "") -> list[Claim]:
    """The ``CLAIMS`` lists of the modules of ``package`` (those whose names end with
    ``suffix``; a module without ``CLAIMS`` adds none), concatenated: the modules named in
    ``order`` first, in that order, then the rest alphabetically.  Adding a claim module
    needs no edit elsewhere."""
    path = importlib.import_module(package).__path__
    names = sorted(m.name for m in pkgutil.iter_modules(path) if m.name.endswith(suffix))
    names.sort(key=lambda name: order.index(name) if name in order else len(order))
    return [claim for name in names
            for claim in getattr(importlib.import_module(f"{package}.{name}"), "CLAIMS", ())]

"""The ``--attribution-budget`` option of ``attngeom ideal`` and ``attngeom atlas``: a factor
of the ideal's own work (:class:`~attngeom.lightning_alg.ideal.attribution.AttributionBudget`),
or ``none``."""

from __future__ import annotations

import math

from attngeom.core.errors import BadInput
from attngeom.lightning_alg.ideal.attribution import AttributionBudget

#: Largest finite budget factor (1e308 overflowed the work count): beyond it, ``none``.
MAX_BUDGET_FACTOR = 1e6


def parse_budget(text) -> float | None:
    """``--attribution-budget``: a nonnegative number (a multiple of the ideal's own work),
    or ``none`` for no limit."""
    if str(text).strip().lower() == "none":
        return None
    try:
        value = float(text)
    except ValueError:
        raise BadInput(f"--attribution-budget must be a nonnegative number or 'none'; "
                       f"got {text!r}") from None
    if value > MAX_BUDGET_FACTOR and math.isfinite(value):
        raise BadInput(f"--attribution-budget {text} is above {MAX_BUDGET_FACTOR:g}; write "
                       f"'none' for no limit")
    AttributionBudget(0, value)   # refuses negative and infinite factors
    return value

"""An on/off switch for a fast path (a compiled or GPU kernel) and the context that turns it
off, used by the tests' and benchmarks' A/B against the code it replaces."""

from __future__ import annotations

import contextlib


class Switch:
    """On until :meth:`disabled` is entered (nested contexts stack)."""

    def __init__(self) -> None:
        self._states = [True]

    def enabled(self) -> bool:
        """False inside :meth:`disabled`."""
        return self._states[-1]

    @contextlib.contextmanager
    def disabled(self):
        """Within it the fast path is off."""
        self._states.append(False)
        try:
            yield
        finally:
            self._states.pop()

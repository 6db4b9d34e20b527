"""Exceptions that reach the user as one line and exit code 2."""


class BadInput(ValueError):
    """Invalid user input: bad dimensions, unknown claim or label, a size that would not fit.

    The message is a single line meant for the terminal; the CLI prints it on stderr and
    exits with code 2, never with a traceback.
    """


class BackendUnavailable(BadInput):
    """The requested array backend or device is not installed or not present."""


class NotApplicable(BadInput):
    """Parameters outside a claim's hypotheses, raised by the CLI after any JSON verdict is
    printed: the message is the hypothesis, printed as ``attngeom: not-applicable: ...``
    on stderr (exit code 2)."""

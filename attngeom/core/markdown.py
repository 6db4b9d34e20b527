"""Markdown tables for Jupyter's rich display (``_repr_markdown_``): one cell escaper and
one table builder, shared by the verdict, the claim list and the ideal report."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

#: Longest cell text shown in full (the text and JSON forms show everything).
MAX_CELL_CHARS = 300


def cell(value: Any, limit: int = MAX_CELL_CHARS) -> str:
    """``value`` as one table cell: one line, pipes escaped, cut at ``limit`` characters."""
    text = value if isinstance(value, str) else _plain(value)
    text = " ".join(text.split())
    if len(text) > limit:
        text = text[:limit - 3] + "..."
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("*", "\\*").replace("_", "\\_")


def code(value: Any, limit: int = MAX_CELL_CHARS) -> str:
    """``value`` as inline code in a table cell (underscores and stars kept as they are)."""
    text = value if isinstance(value, str) else _plain(value)
    text = " ".join(text.split())
    if len(text) > limit:
        text = text[:limit - 3] + "..."
    return "`" + text.replace("`", "'").replace("|", "\\|") + "`"


def table(headers: Sequence[str], rows: Iterable[Sequence[str]]) -> str:
    """A markdown table; the cells must already be escaped (:func:`cell`, :func:`code`)."""
    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def _plain(value: Any) -> str:
    import json
    return json.dumps(value, default=str)

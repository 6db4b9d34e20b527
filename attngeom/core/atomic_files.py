"""Writing a file so that a reader never sees half of it.

The text goes to a temporary file in the same directory (so on the same file system), is
flushed to disk, and replaces the target with ``os.replace``, which is atomic on POSIX and
Windows: an interrupted run leaves either the old file or the new one, never a torn one,
and no temporary file behind.
"""

from __future__ import annotations

import os
import uuid
from pathlib import Path


def write_text_atomically(path: Path, text: str) -> Path:
    """Write ``text`` (UTF-8) to ``path`` atomically, creating its directory if needed."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    # ".NAME.XXXXXXXX.tmp": hidden, not matched by the "*.json" of certificate_files, and
    # created by open() so that it gets the usual permissions (umask), unlike mkstemp's 0600
    temporary = path.parent / f".{path.name}.{uuid.uuid4().hex[:8]}.tmp"
    try:
        with open(temporary, "x", encoding="utf-8") as out:
            out.write(text)
            out.flush()
            os.fsync(out.fileno())
        os.replace(temporary, path)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise
    return path

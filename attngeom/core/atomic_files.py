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


def output_file(path: str | Path, what: str = "output file",
                suffixes: tuple[str, ...] | None = None) -> Path:
    """``path`` as a file this toolkit may write (issue 49): normalized first (``..`` and
    doubled separators folded), and refused with one line (:class:`BadInput`) when it is a
    symbolic link, or exists as anything but a regular file (a device such as /dev/null, a
    FIFO, a directory), or lies under /proc or /sys, or (with ``suffixes``) has another
    suffix.  Nothing is created or opened here."""
    import stat

    from attngeom.core.errors import BadInput

    text = os.fspath(path)
    if not text or "\x00" in text:
        raise BadInput(f"{what}: an empty or NUL-containing path")
    normal = Path(os.path.normpath(os.path.abspath(text)))
    if normal.parts[1:2] in (("proc",), ("sys",), ("dev",)):
        raise BadInput(f"{what} {text}: under /{normal.parts[1]}, not a place for output")
    if suffixes is not None and normal.suffix.lower() not in suffixes:
        raise BadInput(f"{what} {text}: the suffix must be one of {', '.join(suffixes)}")
    try:
        info = os.lstat(normal)
    except FileNotFoundError:
        return normal
    except OSError as error:
        raise BadInput(f"{what} {text}: {error.strerror or error}") from None
    if stat.S_ISLNK(info.st_mode):
        raise BadInput(f"{what} {text}: a symbolic link (give the file itself)")
    if not stat.S_ISREG(info.st_mode):
        raise BadInput(f"{what} {text}: exists and is not a regular file; refusing to replace it")
    return normal


def write_text_atomically(path: Path, text: str) -> Path:
    """Write ``text`` (UTF-8) to ``path`` atomically, creating its directory if needed.
    A target that is a symbolic link or not a regular file is refused
    (:func:`output_file`), never replaced."""
    path = output_file(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    # ".NAME.XXXXXXXX.tmp": hidden, not matched by the "*.json" of certificate_files, and
    # created by open() so that it gets the usual permissions (umask), unlike mkstemp's 0600
    temporary = path.parent / f".{path.name}.{uuid.uuid4().hex[:8]}.tmp"
    try:
        with open(temporary, "x", encoding="utf-8") as out:
            out.write(text)
            out.flush()
            os.fsync(out.fileno())
        output_file(path)        # again just before the replace: nothing swapped in since
        os.replace(temporary, path)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise
    return path

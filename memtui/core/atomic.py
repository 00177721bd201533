"""Atomic file writes (DESIGN.md §4 invariant 1).

A write goes to a temporary file in the same folder, is flushed and fsynced, then renamed
over the target, and the folder is fsynced, so a crash at any moment leaves either the old
or the new bytes, never a truncated file. The target's permission bits are kept.
"""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path


def _fsync_dir(folder: Path) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:  # pragma: no cover - platforms without directory fds
        return
    try:
        os.fsync(fd)
    except OSError:  # pragma: no cover
        pass
    finally:
        os.close(fd)


def write_bytes(path: str | os.PathLike[str], data: bytes, *, mode: int | None = None) -> None:
    """Replace the file at ``path`` with ``data`` atomically.

    Args:
        path: the target file; its folder must exist.
        data: the complete new content.
        mode: permission bits for a new file (default 0o644 less the umask); an existing
            file keeps its own bits.

    Raises:
        OSError: the folder is missing or not writable; the target is then untouched.
    """
    target = Path(path)
    folder = target.parent
    try:
        keep_mode = stat.S_IMODE(os.stat(target).st_mode)
    except FileNotFoundError:
        if mode is None:
            umask = os.umask(0)
            os.umask(umask)
            keep_mode = 0o666 & ~umask
        else:
            keep_mode = mode
    fd, tmp_name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp_name, keep_mode)
        os.replace(tmp_name, target)
    except BaseException:
        try:
            os.unlink(tmp_name)
        except FileNotFoundError:
            pass
        raise
    _fsync_dir(folder)


def write_text(path: str | os.PathLike[str], text: str, *, encoding: str = "utf-8",
               mode: int | None = None) -> None:
    """Encode ``text`` (no newline translation) and write it with :func:`write_bytes`."""
    write_bytes(path, text.encode(encoding), mode=mode)

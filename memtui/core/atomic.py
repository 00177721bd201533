"""Atomic file writes (DESIGN.md §4 invariant 1).

A write goes to a temporary file in the same folder, is flushed and fsynced, then renamed
over the target, and the folder is fsynced, so a crash at any moment leaves either the old
or the new bytes, never a truncated file. The target's permission bits are kept.

The temporary file is named ``.<target name>.<random>.tmp``; a writer killed before the
rename leaves it behind (never the target half-written). :func:`leftovers` finds such
files and :func:`remove_leftovers` removes them; only the holder of the writer lock
(:mod:`memtui.core.lock`) may call the latter, so it never removes a live writer's file.
Proven by ``tests/test_atomic.py`` (SIGKILL of a writer subprocess at every step and at
random moments).
"""

from __future__ import annotations

import hashlib
import os
import stat
import tempfile
from pathlib import Path


def sha256(data: bytes) -> str:
    """The SHA-256 of ``data`` as 64 lowercase hex digits: the content hash memtui records."""
    return hashlib.sha256(data).hexdigest()


def leftovers(path: str | os.PathLike[str]) -> list[Path]:
    """Temporary files an interrupted :func:`write_bytes` of ``path`` left in its folder.

    Returns:
        Paths of ``.<name>.*.tmp`` files beside ``path``, sorted; ``[]`` when the folder is
        missing or unreadable.
    """
    target = Path(path)
    prefix = f".{target.name}."
    try:
        names = os.listdir(target.parent)
    except OSError:
        return []
    return sorted(target.parent / n for n in names if n.startswith(prefix) and n.endswith(".tmp"))


def remove_leftovers(path: str | os.PathLike[str]) -> list[Path]:
    """Delete the files :func:`leftovers` lists (call only while holding the writer lock).

    Returns:
        The paths removed. Files that vanish or cannot be removed are skipped silently.
    """
    removed = []
    for leftover in leftovers(path):
        try:
            if leftover.is_file() and not leftover.is_symlink():
                leftover.unlink()
                removed.append(leftover)
        except OSError:
            continue
    return removed


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


def write_bytes(path: str | os.PathLike[str], data: bytes, *, mode: int | None = None,
                durable: bool = True) -> None:
    """Replace the file at ``path`` with ``data`` atomically.

    Args:
        path: the target file; its folder must exist.
        data: the complete new content.
        mode: permission bits for a new file (default 0o644 less the umask); an existing
            file keeps its own bits.
        durable: fsync the file and its folder (``False`` only for advisory files, such as
            the lock's holder record, where a lost update after a power cut is harmless: the
            rename is still atomic).

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
            if durable:
                os.fsync(handle.fileno())
        os.chmod(tmp_name, keep_mode)
        os.replace(tmp_name, target)
    except BaseException:
        try:
            os.unlink(tmp_name)
        except FileNotFoundError:
            pass
        raise
    if durable:
        _fsync_dir(folder)


def write_text(path: str | os.PathLike[str], text: str, *, encoding: str = "utf-8",
               mode: int | None = None) -> None:
    """Encode ``text`` (no newline translation) and write it with :func:`write_bytes`."""
    write_bytes(path, text.encode(encoding), mode=mode)

"""Reading workspace files safely: size limits, UTF-8 checks, BOM and CRLF, confinement.

Every reader in ``memtui.core`` goes through :func:`read_text` so that a binary, huge or
mis-encoded file becomes a finding (invariant 10) and no read leaves the workspace
through ``..``, an absolute path or a symbolic link (invariant 4).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from memtui.core.errors import ConfinementError
from memtui.core.findings import Finding

#: Default size limit of a file read whole (bytes). ``memtui.toml`` ``[limits] max_file_bytes``.
DEFAULT_MAX_FILE_BYTES = 2 * 1024 * 1024


def rel(root: Path, path: Path) -> str:
    """``path`` relative to ``root`` with ``/`` separators (``path`` itself if outside)."""
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return path.as_posix()


def text_name(name: str) -> bool:
    """True when the file name ``name`` (as ``os`` gives it: undecodable bytes as lone
    surrogates, PEP 383) is valid UTF-8 text.

    memtui shows, searches, indexes and edits only files whose whole path is text: a name
    that is not text is left out of the memory tree, the skills catalogue and the
    search, and reported once by the audit (``name-not-utf8``, :mod:`memtui.core.strays`);
    backups keep it byte for byte.
    """
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def is_inside(root: Path, path: Path) -> bool:
    """True when ``path``, with every symlink resolved, lies inside ``root`` (resolved)."""
    try:
        Path(os.path.realpath(path)).relative_to(os.path.realpath(root))
    except ValueError:
        return False
    return True


def confine(root: Path, candidate: str | os.PathLike[str], base: Path | None = None) -> Path:
    """Resolve ``candidate`` against ``base`` (default ``root``) and check confinement.

    Args:
        root: the workspace folder.
        candidate: a relative path (``..`` allowed while it stays inside) or absolute path.
        base: the folder a relative ``candidate`` is relative to.

    Returns:
        The normalised absolute path (symlinks are not followed in the returned value).

    Raises:
        ConfinementError: the path, or what a symlink on it points to, is outside ``root``.
    """
    base = base or root
    joined = Path(os.path.normpath(os.path.join(base, candidate)))
    root_abs = Path(os.path.normpath(os.path.abspath(root)))
    try:
        joined.relative_to(root_abs)
    except ValueError:
        raise ConfinementError(
            f"{os.fspath(candidate)!r} leads outside the workspace {root_abs}; "
            "memtui only reads and writes inside it."
        ) from None
    if not is_inside(root_abs, joined):
        raise ConfinementError(
            f"{rel(root_abs, joined)!r} is a symbolic link (or lies behind one) that points "
            f"outside the workspace, to {os.path.realpath(joined)}; memtui does not follow it."
        )
    return joined


@dataclass(slots=True)
class TextFile:
    """A file read by :func:`read_text`.

    Attributes:
        text: the decoded text without the BOM ("" when unreadable); a file over the limit
            holds its first ``limit`` bytes only.
        size: the file's size in bytes.
        truncated: only the first ``limit`` bytes were read.
        ok: the text is usable (valid UTF-8, read).
        bom: the file starts with a UTF-8 BOM.
        crlf: the file contains CRLF line ends.
        findings: problems met while reading (not UTF-8, too large, BOM/CRLF as info).
    """

    text: str = ""
    size: int = 0
    truncated: bool = False
    ok: bool = True
    bom: bool = False
    crlf: bool = False
    findings: list[Finding] = field(default_factory=list)


def read_text(path: str | os.PathLike[str], shown: str, limit: int = DEFAULT_MAX_FILE_BYTES,
              note_encoding: bool = True) -> TextFile:
    """Read a UTF-8 text file, turning every problem into a finding.

    Args:
        path: the file (already confined by the caller).
        shown: the path to put in findings (relative to the workspace).
        limit: read at most this many bytes; a larger file gets ``file-too-large``.
        note_encoding: add ``bom``/``crlf`` info findings.

    Returns:
        A :class:`TextFile`; never raises. An unreadable file (permissions, vanished)
        returns ``ok=False`` and a ``file-unreadable`` finding.
    """
    out = TextFile()
    try:
        with open(path, "rb") as handle:
            data = handle.read(limit + 1)
            out.size = len(data) if len(data) <= limit else os.fstat(handle.fileno()).st_size
    except OSError as exc:
        out.ok = False
        out.findings.append(Finding.make(
            "file-unreadable", shown, f"cannot be read: {exc.strerror or exc}",
            "check that the file exists and that you may read it"))
        return out
    if len(data) > limit:
        data = data[:limit]
        out.truncated = True
        out.findings.append(Finding.make(
            "file-too-large", shown,
            f"{out.size:,} bytes, over the {limit:,}-byte limit; only the first part is read",
            "split the file, or raise [limits] max_file_bytes in memtui.toml"))
    if b"\x00" in data[:8192]:
        out.ok = False
        out.findings.append(Finding.make(
            "not-utf8", shown, "is a binary file (it contains NUL bytes), not text",
            "move binary files out of the memory tree"))
        return out
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        if out.truncated and exc.start >= len(data) - 4:
            text = data[: exc.start].decode("utf-8")
        else:
            line = data[: exc.start].count(b"\n") + 1
            out.ok = False
            out.findings.append(Finding.make(
                "not-utf8", shown,
                f"is not valid UTF-8 (byte 0x{data[exc.start]:02x} at offset {exc.start})",
                "re-save the file as UTF-8", line=line))
            return out
    if text.startswith("\ufeff"):
        out.bom = True
        text = text[1:]
        if note_encoding:
            out.findings.append(Finding.make(
                "bom", shown, "starts with a UTF-8 byte order mark (read correctly)",
                "nothing to do; memtui keeps the mark when it saves"))
    if "\r\n" in text:
        out.crlf = True
        if note_encoding:
            out.findings.append(Finding.make(
                "crlf", shown, "uses CRLF line ends (read correctly)",
                "nothing to do; memtui keeps CRLF when it saves"))
    out.text = text
    return out

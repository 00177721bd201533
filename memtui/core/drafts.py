"""Drafts of unsaved notes: what the member typed survives a closed terminal.

An editor keeps a swap file; memtui keeps a draft of an editor's unsaved text in the user
data folder (never in the workspace: opening a workspace writes nothing there, DESIGN.md §2),
one file per workspace file, written a moment after each change and at once when the TUI is
stopped by a signal (SIGINT, SIGTERM, SIGHUP). The next Notes area that opens that file
offers the draft; saving or discarding it removes it.

A draft remembers the hash of the file it was based on, so restoring it over a file that
changed since is a conflict the member sees (DESIGN.md §4 invariant 3), never a silent
overwrite.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path

from memtui.core import atomic, jsonio

FORMAT = 1


def folder() -> Path:
    """``<user data folder>/drafts`` (``$MEMTUI_DATA_DIR`` in tests)."""
    from memtui.paths import data_dir

    return data_dir() / "drafts"


@dataclass(frozen=True, slots=True)
class Draft:
    """An editor's unsaved text of one workspace file.

    Attributes:
        workspace: the workspace folder (absolute).
        shown: the file, workspace-relative.
        base: SHA-256 hex of the file's bytes the text was based on (``None``: it was absent).
        text: the unsaved text.
        saved_at: when the draft was written (ISO 8601, UTC).
        why: ``"typing"`` (kept while editing) or the signal's name that stopped memtui.
    """

    workspace: str
    shown: str
    base: str | None
    text: str
    saved_at: str
    why: str = "typing"


def _path(workspace: str | os.PathLike[str], shown: str) -> Path:
    key = hashlib.sha256(f"{os.fspath(workspace)}\0{shown}".encode("utf-8", "surrogateescape")).hexdigest()[:24]
    return folder() / f"{key}.json"


def save(workspace: str | os.PathLike[str], shown: str, base: str | None, text: str, why: str = "typing") -> Path:
    """Keep ``text`` as the draft of ``shown`` (atomically; it replaces an older draft).

    Returns:
        The draft file.

    Raises:
        OSError: the user data folder cannot be written.
    """
    now = _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).isoformat()
    record = {"format": FORMAT, "workspace": os.fspath(workspace), "file": shown, "base": base, "text": text,
              "saved_at": now, "why": why}
    target = _path(workspace, shown)
    target.parent.mkdir(parents=True, exist_ok=True)
    atomic.write_bytes(target, json.dumps(record).encode("ascii"), mode=0o600)  # ASCII: any text, even lone surrogates
    return target


def load(workspace: str | os.PathLike[str], shown: str) -> Draft | None:
    """The draft of ``shown`` in ``workspace``, or ``None`` (also for an unreadable draft file)."""
    try:
        data = jsonio.loads(_path(workspace, shown).read_bytes())
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("format") != FORMAT or data.get("file") != shown \
            or data.get("workspace") != os.fspath(workspace) or not isinstance(data.get("text"), str):
        return None
    base = data.get("base")
    return Draft(os.fspath(workspace), shown, base if isinstance(base, str) else None, data["text"],
                 str(data.get("saved_at", "")), str(data.get("why", "typing")))


def discard(workspace: str | os.PathLike[str], shown: str) -> None:
    """Remove the draft of ``shown`` (nothing when there is none)."""
    try:
        _path(workspace, shown).unlink()
    except FileNotFoundError:
        pass

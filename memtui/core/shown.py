"""Copies of the member notes memtui showed or saved, so a later save can be merged.

A script reads the notes (`notes show --hash`, `notes show`), edits its copy and sets it
with `--base-hash H`; an agent may append meanwhile. To merge, memtui needs the bytes H
names, so it keeps a copy of every version of the member notes it showed or saved, in the
user cache folder (never the workspace: opening writes nothing there), one file per
version named by its SHA-256, the newest SHOWN_KEEP and at most SHOWN_MAX_BYTES per
workspace. A base older than that cannot be merged; the conflict then names the lines a
save would remove (never a silent overwrite).
"""

from __future__ import annotations

import os
from pathlib import Path

from memtui.core import atomic
from memtui.core.workspace import Workspace

#: Copies of the member notes memtui showed (:func:`keep`) kept per workspace: at most
#: this many versions …
SHOWN_KEEP = 32
#: … and at most this many bytes in all (the oldest go first); a larger version is not kept.
SHOWN_MAX_BYTES = 16 * 1024 * 1024


def _folder(ws: Workspace, shown: str) -> Path:
    from memtui.paths import cache_dir

    key = atomic.sha256(os.fsencode(os.path.realpath(ws.root)) + b"\0" + shown.encode("utf-8", "surrogateescape"))
    return cache_dir() / "notes-shown" / key[:24]


def keep(ws: Workspace, shown: str, data: bytes) -> None:
    """Keep a copy of ``data`` (a version of the notes file ``shown`` that memtui showed or
    saved) so a later save based on it can be merged (:func:`copy`), then prune the
    copies to :data:`SHOWN_KEEP` versions and :data:`SHOWN_MAX_BYTES`. A cache: a failure to
    write it (a full or read-only cache folder) is ignored."""
    if not data or len(data) > SHOWN_MAX_BYTES:
        return
    folder = _folder(ws, shown)
    target = folder / atomic.sha256(data)
    try:
        if target.is_file():
            os.utime(target)  # shown again: the newest
        else:
            folder.mkdir(parents=True, exist_ok=True, mode=0o700)
            atomic.write_bytes(target, data, mode=0o600, durable=False)
        _prune(folder)
    except OSError:
        return


def _prune(folder: Path) -> None:
    copies = []
    for entry in os.scandir(folder):
        if len(entry.name) == 64 and entry.is_file(follow_symlinks=False):
            st = entry.stat(follow_symlinks=False)
            copies.append((st.st_mtime_ns, entry.name, st.st_size))
    copies.sort(reverse=True)
    total = 0
    for rank, (_mtime, name, size) in enumerate(copies):
        total += size
        if rank >= SHOWN_KEEP or total > SHOWN_MAX_BYTES:
            try:
                os.unlink(folder / name)
            except OSError:
                pass


def copy(ws: Workspace, shown: str, sha: object) -> bytes | None:
    """The bytes of the version ``sha`` of ``shown`` that memtui kept (:func:`keep`),
    checked against their hash; ``None`` when it has none."""
    if not isinstance(sha, str) or len(sha) != 64:
        return None
    try:
        data = (_folder(ws, shown) / sha).read_bytes()
    except (OSError, ValueError):
        return None
    return data if atomic.sha256(data) == sha else None

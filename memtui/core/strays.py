"""Files as files: names that are not UTF-8, and temporary files a killed write left.

One walk of the whole workspace (symbolic links not followed; ``.git`` folders and the search
index skipped) contributes to the audit (:data:`memtui.core.audit.CHECKS`):

- ``name-not-utf8``: a file or folder whose name is not valid UTF-8. memtui leaves it out of
  everything it shows, searches and edits (:func:`memtui.core.files.text_name`); this finding
  is where the user learns it is there. Backups keep it byte for byte.
- ``temp-file-leftover``: a ``.<name>.<random>.tmp`` file of :mod:`memtui.core.atomic` that a
  killed writer left. It never holds the only copy of anything; the next guarded write of its
  file removes it, and backups leave it out.
"""

from __future__ import annotations

import datetime as _dt
import os
import stat

from functools import partial

from memtui.core import atomic
from memtui.core.files import text_name
from memtui.core.findings import Finding
from memtui.core.folders import findings_after
from memtui.core.text import visible
from memtui.core.workspace import Workspace

#: Folders the walk does not enter (relative to the workspace): memtui's rebuildable index.
SKIPPED = frozenset({".memtui/index", ".memtui/evals"})


def _bad_byte(name: str) -> str:
    """The first byte of ``name`` that is not UTF-8, as ``0xE5``."""
    for char in name:
        if "\udc80" <= char <= "\udcff":
            return f"0x{ord(char) - 0xDC00:02X}"
    return "?"  # pragma: no cover - only called for names that are not UTF-8


def _rename_hint(shown: str, folder_shown: str, name: str) -> str:
    raw = os.fsencode(name)
    quoted = "".join(f"\\x{b:02x}" if b >= 0x80 or b < 0x20 or b in b"'\\" else chr(b) for b in raw)
    fixed = raw.decode("utf-8", "ignore") or "renamed"
    prefix = f"{folder_shown}/" if folder_shown else ""
    return f"rename it to a UTF-8 name: mv $'{prefix}{quoted}' '{prefix}{fixed}'"


def audit_findings(ws: Workspace) -> list[Finding]:
    """The ``name-not-utf8`` and ``temp-file-leftover`` findings of ``ws`` (never raises).

    A folder whose name is not UTF-8 is reported once and not entered.
    """
    return audit_findings_after(ws, {}, None)


def audit_findings_after(ws: Workspace, memo: dict, changed: list[str] | None) -> list[Finding]:
    """The findings of :func:`audit_findings` after ``changed`` paths changed, looking again
    only at the folders that hold them (:func:`memtui.core.folders.findings_after`).

    Args:
        ws: the workspace.
        memo: this check's findings by folder from the last call (``{}`` the first time).
        changed: workspace-relative paths (``/``) added, changed or removed since that call;
            ``None`` walks the whole workspace.

    Returns:
        The findings a whole walk gives now, given that every change is in ``changed`` (the
        watcher reports no temporary file: a leftover shows once its folder changes again).
    """
    root = os.fspath(ws.root)
    return findings_after(memo, changed, partial(_folder, root), partial(_reachable, root))


def _reachable(root: str, rel_dir: str) -> bool:
    """True when the whole walk enters ``rel_dir`` (real folders only, names in UTF-8, no
    ``.git``, not :data:`SKIPPED`)."""
    if not rel_dir:
        return True
    parts = rel_dir.split("/")
    for n in range(1, len(parts) + 1):
        name, rel = parts[n - 1], "/".join(parts[:n])
        if not text_name(name) or name.lower() == ".git" or rel in SKIPPED:
            return False
        full = os.path.join(root, rel)
        if os.path.islink(full) or not os.path.isdir(full):
            return False
    return True


def _folder(root: str, rel_dir: str) -> tuple[list[Finding], list[str]] | None:
    """The findings of the entries directly in ``rel_dir`` and its sub-folders the walk enters;
    ``None`` when it cannot be listed (another check's finding)."""
    findings: list[Finding] = []
    subdirs: list[str] = []
    try:
        with os.scandir(os.path.join(root, rel_dir) if rel_dir else root) as it:
            entries = sorted(it, key=lambda e: e.name)
    except OSError:
        return None
    for entry in entries:
        rel = f"{rel_dir}/{entry.name}" if rel_dir else entry.name
        try:  # the type the folder listing gives: no stat of each of the workspace's files
            is_dir = entry.is_dir(follow_symlinks=False)
        except OSError:
            continue
        if not text_name(entry.name):
            what = "folder" if is_dir else "file"
            shown = visible(rel)
            findings.append(Finding.make(
                "name-not-utf8", shown,
                f"the {what} name is not valid UTF-8 (byte {_bad_byte(entry.name)}); memtui leaves it out of "
                "the memory tree, the skills and the search (backups keep it as it is)",
                _rename_hint(shown, visible(rel_dir), entry.name)))
            continue
        if is_dir:
            if entry.name.lower() != ".git" and rel not in SKIPPED:
                subdirs.append(rel)
            continue
        if not atomic.is_leftover(entry.name):
            continue
        try:
            st = entry.stat(follow_symlinks=False)
        except OSError:
            continue
        if stat.S_ISREG(st.st_mode):
            match = atomic.LEFTOVER_NAME.match(entry.name)
            target = match.group("target") if match else "?"
            when = _dt.datetime.fromtimestamp(st.st_mtime, _dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
            findings.append(Finding.make(
                "temp-file-leftover", visible(rel),
                f"a temporary file that an interrupted memtui write of {visible(target)} left behind "
                f"({st.st_size:,} bytes, {when}); it holds no data of its own",
                f"delete it, or let memtui remove it at its next write of {visible(target)}"))
    return findings, subdirs

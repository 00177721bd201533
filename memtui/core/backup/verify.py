"""Verify a backup: restore it into a temporary folder, render again, compare.

The round trip of DESIGN.md §4 invariant 9 and seed 004 ("restore the shipped backup,
render again, and diff -r the two trees — zero differences"): the backup tree read from git
is restored by :func:`~memtui.core.backup.restore.restore_tree` into a temporary folder,
that folder is rendered by :func:`~memtui.core.backup.render.render`, and the two trees are
compared byte for byte (executable bits included); the store rebuilt from the store files is
compared with the tables those files hold, record for record. Verification passes only with
zero differences and zero restore findings.
"""

from __future__ import annotations

import difflib
from pathlib import Path
import json
import os
import tempfile
from dataclasses import dataclass, field
from typing import Any, Callable

from memtui.core.backup import render as rd
from memtui.core.backup.git import BackupRepo, Limits, check_subdir
from memtui.core.backup.restore import left_out_note, restore_tree
from memtui.core.findings import Finding
from memtui.core.store import STORE_NAME, parse as parse_store

#: Lines of a unified diff kept per differing file.
MAX_DIFF_LINES = 200


@dataclass(frozen=True, slots=True)
class Difference:
    """One differing file: ``path`` (shown form), ``kind`` (``missing``: in the backup, not in
    the new render; ``extra``; ``content``; ``mode``; ``store``) and a unified ``diff``."""

    path: str
    kind: str
    diff: str

    def to_json(self) -> dict[str, str]:
        return {"path": self.path, "kind": self.kind, "diff": self.diff}


@dataclass(slots=True)
class VerifyResult:
    """The outcome: ``commit``, ``files`` compared, ``records`` compared, ``differences``,
    ``findings`` of the restore; :attr:`ok` only when both lists are empty."""

    commit: str | None = None
    files: int = 0
    records: int = 0
    differences: list[Difference] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    #: backed-up files whose secrets the backup leaves out (by design; a restore lacks them)
    left_out: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.differences and not self.findings

    def notes(self) -> list[str]:
        """A sentence per file whose secrets the backup leaves out (see :mod:`memtui.core.backup.redact`)."""
        return [left_out_note(path) for path in self.left_out]

    def to_json(self) -> dict[str, Any]:
        return {"commit": self.commit, "ok": self.ok, "files": self.files, "records": self.records,
                "differences": [d.to_json() for d in self.differences],
                "findings": [f.to_json() for f in self.findings], "left_out": self.left_out,
                "notes": self.notes()}


def unified(a: bytes, b: bytes, path: str, before: str = "backup", after: str = "re-rendered") -> str:
    """A unified diff of two byte strings (decoded as UTF-8, bad bytes shown as ``\\xNN``)."""
    left = a.decode("utf-8", "backslashreplace").splitlines(keepends=True)
    right = b.decode("utf-8", "backslashreplace").splitlines(keepends=True)
    lines = list(difflib.unified_diff(left, right, f"{before}/{path}", f"{after}/{path}"))
    if not lines and a != b:  # same text lines: the difference is in line ends
        lines = [f"--- {before}/{path}\n", f"+++ {after}/{path}\n",
                 f"line ends differ: {a[-40:]!r} / {b[-40:]!r}\n"]
    if len(lines) > MAX_DIFF_LINES:
        lines = lines[:MAX_DIFF_LINES] + [f"… {len(lines) - MAX_DIFF_LINES} more diff lines\n"]
    return "".join(line if line.endswith("\n") else line + "\n" for line in lines)


def compare(backup: dict[bytes, rd.Entry], again: dict[bytes, rd.Entry]) -> list[Difference]:
    """Every path whose bytes or executable bit differ between two backup trees, sorted."""
    out = []
    for path in sorted(set(backup) | set(again)):
        left, right = backup.get(path), again.get(path)
        name = rd.shown(path)
        if left is None or right is None:
            if left is not None:
                out.append(Difference(name, "missing", unified(left.data, b"", name)))
            elif right is not None:
                out.append(Difference(name, "extra", unified(b"", right.data, name)))
        elif left.data != right.data:
            out.append(Difference(name, "content", unified(left.data, right.data, name)))
        elif left.executable != right.executable:
            out.append(Difference(name, "mode", f"executable: {left.executable} in the backup, "
                                                f"{right.executable} after the round trip\n"))
    return out


def compare_store(rendered: dict[str, dict[str, Any]], restored: dict[str, dict[str, Any]]) -> list[Difference]:
    """Records that differ between the tables of the store files and the restored store."""
    out = []
    for name in sorted(set(rendered) | set(restored)):
        left, right = rendered.get(name, {}), restored.get(name, {})
        for doc_id in sorted(set(left) | set(right)):
            if left.get(doc_id) != right.get(doc_id):
                a = json.dumps(left.get(doc_id), ensure_ascii=False, indent=1, sort_keys=True) + "\n"
                b = json.dumps(right.get(doc_id), ensure_ascii=False, indent=1, sort_keys=True) + "\n"
                out.append(Difference(f"store {name} record {doc_id}", "store",
                                      unified(a.encode(), b.encode(), f"{name}/{doc_id}", "rendered", "restored")))
    return out


def verify_tree(files: dict[bytes, rd.Entry], progress: Callable[[str], None] | None = None) -> VerifyResult:
    """Round-trip the backup tree ``files`` through a temporary folder and compare.

    Returns:
        :class:`VerifyResult`; the temporary folder is removed.

    Raises:
        BackupFormatError: the tree cannot be read at all (no MANIFEST, a broken store file).
    """
    result = VerifyResult(files=sum(1 for p in files if p.startswith(rd.FILES)))
    with tempfile.TemporaryDirectory(prefix="memtui-verify-") as tmp:
        target = os.path.join(tmp, "workspace")
        if progress:
            progress("restoring into a temporary folder")
        restored = restore_tree(files, target)
        result.findings, result.left_out = restored.findings, restored.left_out
        if progress:
            progress("rendering the restored workspace")
        again = rd.render(target)
        if progress:
            progress("comparing")
        result.differences = compare(files, again.files)
        rendered_tables = {rd.table_name(p): rd.parse_table(e.data, rd.shown(p))
                           for p, e in files.items() if p.startswith(rd.STORE) and p.endswith(b".md")}
        store_file = os.path.join(target, ".memtui", STORE_NAME)
        restored_tables = parse_store(Path(store_file).read_bytes(), Path(store_file)) \
            if os.path.exists(store_file) else {}
        result.differences += compare_store(rendered_tables, restored_tables)
        result.records = sum(len(t) for t in rendered_tables.values())
    return result


def verify(repo: str | os.PathLike[str], rev: str | None, subdir: str,
           progress: Callable[[str], None] | None = None, limits: Limits | None = None) -> VerifyResult:
    """Verify the backup at ``rev`` (default ``HEAD``) of ``repo``'s ``subdir``.

    Args:
        limits: the largest file and total read (default: ``memtui.toml [backup]``'s defaults).

    Raises:
        GitError: not a repository, no such commit, nothing under ``subdir``.
        TooLarge: the backup exceeds ``limits``; nothing was verified (exit 3).
        BackupFormatError: the backup tree cannot be read at all.
    """
    subdir = check_subdir(subdir)
    backup_repo = BackupRepo.open(repo)
    commit = backup_repo.resolve(rev)
    if progress:
        progress(f"reading {commit[:7]}")
    files, refused = backup_repo.read_tree(commit, subdir, limits, doing="verified")
    result = verify_tree(files, progress)
    result.commit = commit
    result.findings[:0] = refused
    return result

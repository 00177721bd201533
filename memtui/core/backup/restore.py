"""Restore a backup tree into a folder, offline (DESIGN.md §4 invariants 4 and 9).

:func:`restore_tree` turns a backup tree (``{path: Entry}``, as read from git by
:meth:`~memtui.core.backup.git.BackupRepo.read_tree`) into a workspace:

- ``files/<path>`` are written byte for byte, with their executable bit; empty folders
  listed in ``MANIFEST`` are made;
- ``store/<table>.md`` are parsed back (:func:`~memtui.core.backup.render.parse_table`) into
  ``.memtui/store.json``, written atomically, record for record with the same doc ids;
- the search index is not restored: memtui rebuilds it on first use.

Every entry that would land outside the target (``..``, an absolute path), inside a
``.git`` folder or ``.memtui/``, or that is not a plain file (a symbolic link, a submodule),
is refused with a ``restore-refused`` finding naming it, and nothing is written through a
symbolic link (files are opened with ``O_NOFOLLOW``; folders on the way are checked).
A file of the tree (workspace files, store table files, ``.gitattributes``) whose sha256
differs from its ``MANIFEST`` line, or a ``MANIFEST`` file missing from the tree, is a
``restore-mismatch`` finding (the restore goes on; exit 1 in the CLI). A restore that raises
leaves nothing half-written: a target folder it created is removed, an empty one it wrote
into is emptied again.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import stat
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from memtui.core import atomic
from memtui.core.backup import redact, render as rd
from memtui.core.backup.git import BackupRefused, BackupRepo, Limits, check_subdir, first_missing
from memtui.core.findings import Finding
from memtui.core.store import STORE_NAME

Progress = Callable[[int, int], None]


@dataclass(slots=True)
class RestoreResult:
    """What a restore did.

    Attributes:
        target: the folder restored into.
        commit: the backup commit restored (hex), or ``None`` for a tree given directly.
        files: workspace files written.
        records: store records written (0 when the backup has no store).
        tables: table name → records written.
        findings: refused entries and mismatches (empty on a clean restore).
        left_out: restored workspace files whose secrets the backup left out (``config.json``'s
            tokens; :meth:`notes` says how to put them back). Not a failure: by design.
    """

    target: Path
    commit: str | None = None
    files: int = 0
    records: int = 0
    tables: dict[str, int] = field(default_factory=dict)
    findings: list[Finding] = field(default_factory=list)
    left_out: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """True when nothing was refused and nothing mismatched."""
        return not self.findings

    def notes(self) -> list[str]:
        """What the restored workspace lacks by design: a sentence per file whose secrets the
        backup left out (:mod:`memtui.core.backup.redact`), saying how to put them back."""
        return [left_out_note(path) for path in self.left_out]

    def to_json(self) -> dict[str, Any]:
        return {"target": str(self.target), "commit": self.commit, "files": self.files,
                "records": self.records, "tables": self.tables, "ok": self.ok,
                "findings": [f.to_json() for f in self.findings], "left_out": self.left_out,
                "notes": self.notes()}


def left_out_note(path: str) -> str:
    """The sentence for a restored ``path`` whose secret header values the backup left out."""
    return (f"{path} has no token: the backup leaves the Authorization header of its MCP server blocks out "
            "(a secret), so the remote graph refuses this copy until you put the token back with "
            "`memtui secret set graph-token`, or the proxy writes its memory block again.")


def unsafe_reason(rel: bytes) -> str | None:
    """Why the workspace-relative path ``rel`` may not be written, or ``None`` when it may."""
    if not rel:
        return "has an empty name"
    if rel.startswith(b"/") or (os.name == "nt" and len(rel) > 1 and rel[1:2] == b":" and rel[:1].isalpha()):
        return "is an absolute path"
    if b"\0" in rel or (b"\\" in rel and os.name == "nt"):
        return "holds a character a file name cannot hold"
    parts = rel.split(b"/")
    if any(p in (b"", b".", b"..") for p in parts):
        return "holds `..`, `.` or an empty part and would land outside its folder"
    if any(p.lower() == b".git" for p in parts):
        return "lies inside a .git folder"
    if parts[0] == b".memtui":
        return "lies inside .memtui/ (memtui's own state comes from the store files)"
    return None


def _refuse(result: RestoreResult, path: bytes, why: str) -> None:
    result.findings.append(Finding.make(
        "restore-refused", rd.shown(path), f"{why}; not written",
        "nothing to do: the rest of the backup was restored; inspect the backup if you expected it"))


def _folder(target: bytes, rel_dir: bytes) -> bytes | None:
    """Make ``target/rel_dir`` one part at a time; ``None`` when a part is a link or a file."""
    current = target
    for part in rel_dir.split(b"/") if rel_dir else []:
        current = os.path.join(current, part)
        try:
            st = os.lstat(current)
        except FileNotFoundError:
            os.mkdir(current)
            continue
        if not stat.S_ISDIR(st.st_mode):
            return None
    return current


#: Threads that write restored files (file creation is bound by the disk, and overlaps well).
WRITERS = 4


def _write(job: tuple[bytes, bytes, rd.Entry]) -> str | None:
    """Write one restored file without following a link; the error text, or ``None``."""
    _, full, entry = job
    mode = 0o755 if entry.executable else 0o644
    try:
        fd = os.open(full, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0), mode)
        with os.fdopen(fd, "wb") as handle:
            os.fchmod(handle.fileno(), mode)
            handle.write(entry.data)
    except OSError as exc:
        return exc.strerror or str(exc)
    return None


def check_target(target: str | os.PathLike[str], force: bool) -> Path:
    """Check (and create) the restore folder.

    Raises:
        BackupRefused: ``target`` is a symbolic link or a file, or is not empty and ``force``
            is false.
    """
    path = Path(target).expanduser()
    if path.is_symlink():
        raise BackupRefused(f"{path} is a symbolic link; restore into a real folder "
                            "(memtui never writes through a link).")
    if path.exists() and not path.is_dir():
        raise BackupRefused(f"{path} is a file; restore into an empty or new folder.")
    if path.is_dir() and any(path.iterdir()) and not force:
        raise BackupRefused(f"{path} is not empty; restore into an empty or new folder, or add --force "
                            "to write into it (files of the backup replace files of the same name; "
                            "nothing else is removed).")
    path.mkdir(parents=True, exist_ok=True)
    return path


def restore_tree(files: dict[bytes, rd.Entry], target: str | os.PathLike[str], *, force: bool = False,
                 progress: Progress | None = None) -> RestoreResult:
    """Write the backup tree ``files`` into ``target`` as a workspace.

    Args:
        files: backup-relative path → :class:`~memtui.core.backup.render.Entry`.
        target: an empty or new folder (a non-empty one needs ``force``).
        force: write into a non-empty folder.
        progress: called with ``(done, total)`` files.

    Returns:
        :class:`RestoreResult` (refusals and mismatches are findings, not exceptions).

    Raises:
        BackupRefused: the target is not usable (see :func:`check_target`).
        BackupFormatError: ``MANIFEST`` is missing, unreadable or of a newer format, or a store
            file cannot be parsed (the message names the file and line).
    """
    if rd.MANIFEST not in files:
        raise rd.BackupFormatError("the backup has no MANIFEST: it is not a memtui backup tree "
                                   "(check --path)")
    manifest = rd.parse_manifest(files[rd.MANIFEST].data)
    created = first_missing(Path(target).expanduser())
    root = check_target(target, force)
    was_empty = created is None and not any(root.iterdir())
    try:
        return _restore_into(files, manifest, root, progress)
    except BaseException:
        # a failed restore leaves nothing half-written: what it created goes, an empty folder
        # it wrote into is emptied again; a non-empty folder (--force) is left as it is
        if created is not None:
            shutil.rmtree(created, ignore_errors=True)
        elif was_empty:
            _empty(root)
        raise


def _empty(root: Path) -> None:
    """Remove everything inside ``root`` (never following a link)."""
    for child in root.iterdir():
        if child.is_dir() and not child.is_symlink():
            shutil.rmtree(child, ignore_errors=True)
        else:
            try:
                child.unlink()
            except OSError:
                pass


def _check_sum(result: RestoreResult, manifest: rd.Manifest, path: bytes, entry: rd.Entry) -> None:
    """A ``restore-mismatch`` finding when ``path`` is not in MANIFEST or its sum differs."""
    expected = manifest.files.get(path)
    if expected is None:
        result.findings.append(Finding.make("restore-mismatch", rd.shown(path),
                                            "is in the backup but not in its MANIFEST",
                                            "the backup was edited by hand; check it"))
    elif expected[0] != hashlib.sha256(entry.data).hexdigest() or expected[2] != len(entry.data):
        result.findings.append(Finding.make("restore-mismatch", rd.shown(path),
                                            "differs from the sha256 its MANIFEST gives",
                                            "the backup was edited by hand or damaged; restore an older commit"))


def _restore_into(files: dict[bytes, rd.Entry], manifest: rd.Manifest, root: Path,
                  progress: Progress | None) -> RestoreResult:
    root_b = os.fsencode(os.path.realpath(root))
    result = RestoreResult(root)
    tables: dict[str, dict[str, Any]] = {}
    jobs: list[tuple[bytes, bytes, rd.Entry]] = []
    total = len(files)
    for done, path in enumerate(sorted(files), start=1):
        if progress and done % 500 == 0:
            progress(done, total)
        job = _plan_entry(result, manifest, root_b, path, files[path], tables)
        if job is not None:
            jobs.append(job)
    with ThreadPoolExecutor(max_workers=WRITERS) as pool:  # creating files waits on the disk, not the CPU
        for path, error in zip([j[0] for j in jobs], pool.map(_write, jobs), strict=False):
            if error is None:
                result.files += 1
            else:
                _refuse(result, path, f"could not be written ({error})")
    _check_complete(result, manifest, files, tables, root_b)
    if manifest.store_present or tables:
        _write_store(result, manifest, tables, root_b)
    if progress:
        progress(total, total)
    return result


def _plan_entry(result: RestoreResult, manifest: rd.Manifest, root_b: bytes, path: bytes, entry: rd.Entry,
                tables: dict[str, dict[str, Any]]) -> tuple[bytes, bytes, rd.Entry] | None:
    """What to do with one entry of the backup tree: the ``(path, target, entry)`` to write,
    or ``None`` (a store table, parsed into ``tables``; the MANIFEST; a refused entry, reported
    in ``result``). Every written or parsed entry is checked against its MANIFEST sum."""
    if path == rd.MANIFEST:
        return None
    if path == rd.GITATTRIBUTES:
        _check_sum(result, manifest, path, entry)
        return None
    if path.startswith(rd.STORE) and path.endswith(b".md") and path.count(b"/") == 1:
        _check_sum(result, manifest, path, entry)  # a store file is checked like any file
        tables[rd.table_name(path)] = rd.parse_table(entry.data, rd.shown(path))
        return None
    if path == rd.REMOTE_GRAPH:  # the remote graph's snapshot: kept as memtui's own state
        if _folder(root_b, b".memtui") is None:
            _refuse(result, path, ".memtui is a symbolic link or a file in the target")
            return None
        _check_sum(result, manifest, path, entry)
        return path, os.path.join(root_b, os.fsencode(rd.REMOTE_STATE)), entry
    if not path.startswith(rd.FILES):
        _refuse(result, path, "is not part of a memtui backup tree (neither files/ nor store/)")
        return None
    rel = path[len(rd.FILES):]
    why = unsafe_reason(rel)
    if why:
        _refuse(result, path, why)
        return None
    if _folder(root_b, os.path.dirname(rel)) is None:
        _refuse(result, path, "has a folder on its way that is a symbolic link or a file")
        return None
    full = os.path.join(root_b, rel)
    if os.path.islink(full) or os.path.isdir(full):
        _refuse(result, path, "would replace a symbolic link or a folder in the target")
        return None
    _check_sum(result, manifest, path, entry)
    if b"/" not in rel and redact.left_out(rel, entry.data):
        result.left_out.append(rd.shown(rel))
    return path, full, entry


def _check_complete(result: RestoreResult, manifest: rd.Manifest, files: dict[bytes, rd.Entry],
                    tables: dict[str, dict[str, Any]], root_b: bytes) -> None:
    """Report what the MANIFEST lists but the backup lacks (files, tables, record counts), and
    make its empty folders (refused when unsafe or in the way of a link)."""
    for path in sorted(set(manifest.files) - set(files)):
        result.findings.append(Finding.make("restore-mismatch", rd.shown(path),
                                            "is listed in MANIFEST but missing from the backup",
                                            "the backup is incomplete; restore an older commit"))
    for folder in manifest.empty_folders:
        why = unsafe_reason(folder)
        if why:
            _refuse(result, rd.FILES + folder, why)
        elif _folder(root_b, folder) is None:
            _refuse(result, rd.FILES + folder, "has a folder on its way that is a symbolic link or a file")
    for name, count in manifest.tables.items():
        if name not in tables:
            result.findings.append(Finding.make("restore-mismatch", rd.shown(rd.table_file(name)),
                                                f"MANIFEST lists table {name!r} ({count} records) but its file is missing",
                                                "the backup is incomplete; restore an older commit"))
        elif len(tables[name]) != count:
            result.findings.append(Finding.make("restore-mismatch", rd.shown(rd.table_file(name)),
                                                f"holds {len(tables[name])} records, MANIFEST says {count}",
                                                "the backup was edited by hand; check it"))


def _write_store(result: RestoreResult, manifest: rd.Manifest, tables: dict[str, dict[str, Any]],
                 root_b: bytes) -> None:
    """Write the store the tables make into the target's ``.memtui`` (refused when that is a
    link or a file), and count its records in ``result``."""
    state = _folder(root_b, b".memtui")
    if state is None:
        _refuse(result, b".memtui/" + STORE_NAME.encode(), ".memtui is a symbolic link or a file in the target")
        return
    atomic.write_bytes(os.fsdecode(os.path.join(state, STORE_NAME.encode())), rd.store_json(tables, list(manifest.tables)))
    result.tables = {name: len(t) for name, t in sorted(tables.items())}
    result.records = sum(result.tables.values())


def restore(repo: str | os.PathLike[str], rev: str | None, subdir: str, target: str | os.PathLike[str],
            *, force: bool = False, progress: Progress | None = None, limits: Limits | None = None) -> RestoreResult:
    """Restore the backup at ``rev`` (default ``HEAD``) of ``repo``'s ``subdir`` into ``target``.

    Reads git objects directly (no checkout, no network), so it works on a detached HEAD,
    an old commit (that day's workspace, its store included) or a bare clone. A remote
    graph's snapshot lands in ``.memtui/remote-graph.jsonl`` with the backup's commit and date
    beside it (:data:`~memtui.core.backup.render.REMOTE_ABOUT`), where the graph's read commands
    find it offline (:func:`memtui.core.graph.snapshot.find`).

    Args:
        limits: the largest file and total read (default: ``memtui.toml [backup]``'s defaults).

    Raises:
        GitError: not a repository, no such commit, nothing under ``subdir`` (exit 4).
        BackupRefused: the target is not usable (exit 3).
        TooLarge: the backup exceeds ``limits``; nothing was read or written (exit 3).
        BackupFormatError: the backup tree cannot be read (exit 1).
    """
    subdir = check_subdir(subdir)
    backup_repo = BackupRepo.open(repo)
    commit = backup_repo.resolve(rev)
    files, refused = backup_repo.read_tree(commit, subdir, limits)
    result = restore_tree(files, target, force=force, progress=progress)
    result.commit = commit
    result.findings[:0] = refused
    if rd.REMOTE_GRAPH in files and os.path.isfile(result.target / rd.REMOTE_STATE):
        # which backup the remote graph's snapshot is from: read commands label it with this
        about = {"commit": commit, "date": backup_repo.commit_date(commit)}
        atomic.write_bytes(result.target / rd.REMOTE_ABOUT, json.dumps(about).encode("utf-8") + b"\n")
    return result

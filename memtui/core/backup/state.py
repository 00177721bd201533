"""What the last backup read and wrote, so the next one reads only what changed.

A backup records, in the user cache folder (never in the workspace nor the repository), the
``stat`` (size, modification and change times, inode, mode) and SHA-256 of every file it
rendered from the workspace and of every file of the backup folder after writing, and, for the
store, its ``stat``, each table's record count, the SHA-256 and size of its rendered table and
the store records' secret findings. The next backup to the same folder takes a file whose
``stat`` is as recorded as holding the recorded bytes (:class:`~memtui.core.backup.render.Known`),
the way ``git status`` trusts its index:

- a file is vouched for only when its modification and change times are both older than the
  moment the record was begun by :data:`MARGIN_NS` (a write in the same clock tick as the
  record's ``stat`` would leave the ``stat`` as it was; git calls such entries "racily clean");
- the change time and the inode cannot be set back by a program (``touch -d``, ``cp -p`` and
  ``rsync -t`` set the modification time, not these), so a rewrite with the old size and time
  is still seen;
- top-level files (``config.json``, ``memtui.toml``) are always read.

A file read on demand that no longer hashes as recorded raises
:class:`~memtui.core.backup.render.StaleEntry`, and the backup renders again reading every file.
A changed memtui version, scan rule set, workspace or backup folder drops the record whole.
"""

from __future__ import annotations

import json
import os
import time
from typing import Any

from memtui.core.backup.render import BackupTree, Known, KeptStore, table_file
from memtui.core.workspace import Workspace

#: Record format; a record of another format is dropped.
FORMAT = 1
#: How much older than the record's start a file's times must be to be vouched for (filesystem
#: timestamps are as coarse as 2 s on FAT; ext4, XFS, btrfs and tmpfs keep a kernel clock tick).
MARGIN_NS = 2_000_000_000
FOLDER = "backup-state"


def stamp(st: os.stat_result) -> list[int]:
    """What a record compares of a ``stat``: size, mtime, ctime (ns), inode, mode."""
    return [st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, st.st_mode]


def now() -> int:
    """The start of a record (``time.time_ns()``): take it before the first ``stat``."""
    return time.time_ns()


class BackupState(Known):
    """The record of one backup of a workspace into one backup folder (see the module docstring).

    Attributes:
        taken: when the recorded ``stat`` calls began (ns since the epoch).
        files: workspace-relative path → ``stamp + [sha256]``.
        dest: backup-folder path → ``stamp + [sha256]``.
        kept_store: ``{"stamp", "tables": {name: [records, sha256, size]}, "findings"}`` or ``None``.
    """

    def __init__(self, taken: int = 0, files: dict[str, list] | None = None, dest: dict[str, list] | None = None,
                 kept_store: dict[str, Any] | None = None) -> None:
        self.taken = taken
        self.files = files or {}
        self.dest_files = dest or {}
        self.kept_store = kept_store

    def _vouched(self, record: list | None, st: os.stat_result) -> str | None:
        if record is None or record[:5] != stamp(st) or max(st.st_mtime_ns, st.st_ctime_ns) >= self.taken - MARGIN_NS:
            return None
        return record[5]

    def file(self, rel: bytes, st: os.stat_result) -> str | None:
        return self._vouched(self.files.get(os.fsdecode(rel)), st)

    def dest(self, path: bytes, st: os.stat_result) -> str | None:
        return self._vouched(self.dest_files.get(os.fsdecode(path)), st)

    def store(self, st: os.stat_result) -> KeptStore | None:
        kept = self.kept_store
        if not kept or self._vouched([*kept["stamp"], ""], st) is None:
            return None
        from memtui.core.tree.audit import _finding_from

        return KeptStore({name: (int(v[0]), str(v[1]), int(v[2])) for name, v in kept["tables"].items()},
                         [_finding_from(d) for d in kept["findings"]])

    @staticmethod
    def _head(ws: Workspace, dest: str | os.PathLike[str]) -> list:
        from memtui import __version__
        from memtui.core import scan

        return [FORMAT, __version__, os.fspath(ws.root), os.path.realpath(dest), scan.rules_fingerprint()]

    @classmethod
    def load(cls, ws: Workspace, dest: str | os.PathLike[str]) -> "BackupState":
        """The record of the last backup of ``ws`` into the folder ``dest`` (empty when there is
        none, it cannot be read, or it is of another version, rule set or folder)."""
        from memtui.core.tree.audit import cache_file

        try:  # memtui's own file, flat lists in one object: the plain decoder (no depth walk)
            data = json.loads(cache_file(FOLDER, ws).read_text(encoding="utf-8"))
        except (OSError, ValueError, RecursionError):
            return cls()
        if not isinstance(data, dict) or data.get("head") != cls._head(ws, dest) or not isinstance(data.get("taken"), int):
            return cls()
        try:
            return cls(data["taken"], dict(data["files"]), dict(data["dest"]), data.get("store"))
        except (KeyError, TypeError, ValueError):
            return cls()

    @classmethod
    def of(cls, taken: int, tree: BackupTree, written: dict[bytes, os.stat_result]) -> "BackupState":
        """The record of a backup begun at ``taken`` that rendered ``tree`` (its ``stats``) and left
        the backup folder's files with the ``stat`` of ``written``."""
        from memtui.core.backup.render import FILES

        files: dict[str, list] = {}
        for rel, st in tree.stats.items():
            entry = tree.files.get(FILES + rel)
            if entry is not None and entry.size == st.st_size:
                files[os.fsdecode(rel)] = [*stamp(st), entry.digest]
        dest = {os.fsdecode(path): [*stamp(st), tree.files[path].digest]
                for path, st in written.items() if path in tree.files}
        kept: dict[str, Any] | None = None
        store_st = tree.stats.get(b".memtui/store.json")
        if store_st is not None and tree.store_findings is not None and tree.store_present:
            tables = {name: [count, tree.files[table_file(name)].digest, tree.files[table_file(name)].size]
                      for name, count in tree.table_sizes().items() if table_file(name) in tree.files}
            kept = {"stamp": stamp(store_st), "tables": tables,
                    "findings": [f.to_json() for f in tree.store_findings]}
        return cls(taken, files, dest, kept)

    def save(self, ws: Workspace, dest: str | os.PathLike[str]) -> None:
        """Write the record atomically; a failure to write is ignored (it only saves time)."""
        from memtui.core.atomic import write_text
        from memtui.core.tree.audit import cache_file

        file = cache_file(FOLDER, ws)
        try:
            file.parent.mkdir(parents=True, exist_ok=True)
            write_text(file, json.dumps({"head": self._head(ws, dest), "taken": self.taken, "files": self.files,
                                         "dest": self.dest_files, "store": self.kept_store},
                                        separators=(",", ":")))
        except (OSError, ValueError):
            pass


def forget(ws: Workspace) -> None:
    """Drop the record of ``ws`` (the next backup reads every file)."""
    from memtui.core.tree.audit import cache_file

    try:
        cache_file(FOLDER, ws).unlink()
    except OSError:
        pass


__all__ = ["BackupState", "FOLDER", "MARGIN_NS", "forget", "now", "stamp"]

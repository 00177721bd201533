"""The workspace session and the one guarded write (DESIGN.md §4 invariants 1–3, 7).

A :class:`Session` is an opened workspace with its store, its audit log and the acting
profile. It holds **no lock**: a TUI open for hours blocks nobody. Every change to a
workspace file or to the store goes through :meth:`Session.write`, the only implementation
of the write discipline:

1. take ``.memtui/lock`` (``flock``) for this write alone, waiting a little for another
   process's write to finish (:data:`LOCK_WAIT`);
2. read the store afresh (one copy for the whole write, :meth:`Store.begin`) and finish any
   change an interrupted memtui left pending (an *intent*);
3. honour the client id (seed 004 round 2): a retry with the same id and the same request
   returns the first result without doing anything again; the same id with another request
   is a :class:`~memtui.core.auditlog.ClientIdConflict` and the first entry stays;
4. let the caller's ``apply`` function describe the change on a :class:`Tx`: it re-reads what
   the change depends on (:meth:`Tx.read`, confined to the workspace), states the bytes each
   file must still hold (the lost-update rule: :meth:`Tx.replace` raises
   :class:`~memtui.core.errors.ConflictError` with the current bytes otherwise), and changes
   store tables;
5. write: one file is replaced atomically, then the store (its records and the one audit
   entry) in one atomic store write; several files are first recorded as an intent in that
   same store write, then replaced, then the intent is removed — so a SIGKILL at any moment
   leaves the old state or a pending intent that the next write (or open) completes. Each
   file is replaced exactly as it was read (:func:`memtui.core.atomic.replace_exact`): a
   process outside memtui that changes it meanwhile makes the write a conflict, and lines
   appended to a file written with ``carry_appends`` are carried into the new file;
6. release the lock.

Nothing is written when ``apply`` raises, and a conflict never overwrites anything.

A session is **read-only** only for a real reason: ``read_only=True`` (``--read-only``), a
workspace memtui may not write (permissions, a read-only file system, ``.memtui`` leading
outside), or a damaged store. :attr:`Session.reason` says which, and every write refuses
with it (:class:`~memtui.core.errors.ReadOnlyError`).

Usage::

    session = Session.open(workspace, purpose="cli notes set")
    def change(tx: Tx) -> str:
        before = tx.read("memory/MEMORY_CUSTOM.md")
        tx.replace("memory/MEMORY_CUSTOM.md", new_bytes, base=loaded_sha)
        return "saved"
    done = session.write("notes.set", "memory/MEMORY_CUSTOM.md", change,
                         client_id=cid, request={"after": sha256(new_bytes)})
"""

from __future__ import annotations

import base64
import datetime as _dt
import os
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Generic, TypeVar

from tinydb import Query
from tinydb.table import Table

from memtui.core import atomic, lock
from memtui.core.auditlog import AuditEntry, AuditLog, ClientIdConflict, request_key
from memtui.core.errors import BusyError, ConflictError, DiskFullError, MemtuiError, ReadOnlyError, write_failure
from memtui.core.files import confine
from memtui.core.findings import Finding
from memtui.core.store import Store
from memtui.core.workspace import Workspace

#: Environment variable naming the acting profile (wins over ``[user] profile``).
PROFILE_ENV = "MEMTUI_PROFILE"
#: Seconds a write waits for another process's write to finish (one write takes milliseconds).
LOCK_WAIT = 10.0
#: The store table of changes spanning several files that an interrupted write left.
T_INTENTS = "intents"

T = TypeVar("T")

#: Sentinel for :meth:`Tx.replace`: the caller checked nothing (only for memtui's own state).
UNCHECKED = object()


def resolve_profile(ws: Workspace, given: str | None = None) -> str | None:
    """The acting profile: ``given``, else ``$MEMTUI_PROFILE``, else ``[user] profile``, else None."""
    for candidate in (given, os.environ.get(PROFILE_ENV), ws.config.profile):
        if candidate and candidate.strip():
            return candidate.strip()
    return None


@dataclass(slots=True)
class _FileChange:
    shown: str       # workspace-relative path
    path: Path       # absolute, confined
    old: str | None  # sha256 the file must hold now (None: absent)
    new: bytes | None  # None: remove the file
    snapshot: atomic.Snapshot | None = None  # the file as read (None: it was absent)
    carry: bool = False  # carry other processes' appends into the new file
    installed: bytes | None = None  # what the write left in the file (new bytes + carried appends)
    carried: bytes = b""  # the other processes' appends carried


class Tx:
    """What one :meth:`Session.write` changes, described by its ``apply`` function.

    Attributes:
        session: the session writing.
        audit_before, audit_after: the content hashes the audit entry records (default: the
            first replaced file's old and new hash).
        detail: extra JSON-safe facts for the audit entry.
    """

    def __init__(self, session: "Session") -> None:
        self.session = session
        self.files: list[_FileChange] = []
        self.audit_before: str | None = None
        self.audit_after: str | None = None
        self.detail: dict[str, Any] = {}
        self._hashes_set = False
        self._auto_hashes = False  # the hashes came from the first file, not from hashes()
        self._snapshots: dict[str, atomic.Snapshot | None] = {}

    # -- reading, under the lock ---------------------------------------------------------------
    def path(self, shown: str) -> Path:
        """The absolute path of the workspace-relative ``shown``, confined (invariant 4), with
        symbolic links inside the workspace resolved (so a write replaces the file a link
        points at, and the link stays).

        Raises:
            ConfinementError: it leads outside the workspace (also through a symbolic link).
        """
        return Path(os.path.realpath(confine(self.session.ws.root, shown)))

    def read(self, shown: str) -> bytes | None:
        """The bytes of workspace-relative ``shown`` now (``None`` when absent), read under
        the lock. A file this write already replaced reads as its new bytes.

        Raises:
            ConfinementError: the path leads outside the workspace.
        """
        for change in reversed(self.files):
            if change.shown == shown:
                return change.new
        snapshot = self._snapshot(shown)
        return None if snapshot is None else snapshot.data

    def _snapshot(self, shown: str) -> atomic.Snapshot | None:
        """The file as first read in this write, its descriptor kept open (the write checks
        against that very inode; :func:`memtui.core.atomic.replace_exact`)."""
        if shown not in self._snapshots:
            self._snapshots[shown] = atomic.Snapshot.take(self.path(shown))
        return self._snapshots[shown]

    def touched(self) -> list[Path]:
        """The files this write read or replaces (absolute, confined)."""
        paths = {change.path for change in self.files}
        paths.update(self.path(shown) for shown in self._snapshots)
        return sorted(paths)

    def _close(self) -> None:
        for snapshot in self._snapshots.values():
            if snapshot is not None:
                snapshot.close()
        self._snapshots.clear()

    def sha(self, shown: str) -> str | None:
        """The SHA-256 hex of :meth:`read` (``None`` when absent)."""
        data = self.read(shown)
        return None if data is None else atomic.sha256(data)

    # -- changing --------------------------------------------------------------------------------
    def replace(self, shown: str, data: bytes | None, *, base: str | None | object,
                carry_appends: bool = False) -> bool:
        """Replace the file ``shown`` with ``data`` (``None`` removes it) when it still holds
        the bytes ``base`` names (the lost-update rule, invariant 3).

        The rule holds against processes that take no memtui lock too (an agent, an MCP
        memory server): the file is replaced exactly as read (:meth:`read`), and a change
        another process makes to it until the new file is in place is refused as a
        :class:`ConflictError` (nothing of this write stays), or, with ``carry_appends``,
        carried into the new file when it is an append
        (:func:`memtui.core.atomic.replace_exact`).

        Args:
            shown: workspace-relative path.
            data: the complete new content, or ``None`` to remove the file.
            base: SHA-256 hex of the bytes the change was based on; ``None`` means the file
                must be absent. :data:`UNCHECKED` skips the check (memtui's own files only).
            carry_appends: the file is one agents append lines to (``graph.jsonl``, session
                histories): lines appended while memtui writes are kept, after the new content.

        Returns:
            False when the file already holds ``data`` (nothing to do), else True.

        Raises:
            ConflictError: the file no longer holds ``base``; ``exc.current`` has its bytes.
            ConfinementError: the path leads outside the workspace.
            (At the write: ConflictError when another process changes the file meanwhile,
            BusyError when one keeps it open for writing past :data:`atomic.WRITER_WAIT`.)
        """
        path = self.path(shown)
        current = self.read(shown)
        current_sha = None if current is None else atomic.sha256(current)
        if base is not UNCHECKED and current_sha != base:
            raise ConflictError(
                f"{shown} changed on disk since it was loaded (loaded {_short(base)}, now "
                f"{_short(current_sha)}); nothing was written. Reload it, look at the difference, "
                "or keep yours knowingly.", path=path, current=current, current_hash=current_sha)
        if current == data:
            return False
        for change in self.files:  # one change per file: the first base, the last bytes
            if change.shown == shown:
                change.new = data
                change.carry = change.carry or carry_appends
                if self._auto_hashes and change is self.files[0]:
                    self.audit_after = None if data is None else atomic.sha256(data)
                return True
        self.files.append(_FileChange(shown, path, current_sha, data, self._snapshot(shown), carry_appends))
        if not self._hashes_set:
            self.audit_before = current_sha
            self.audit_after = None if data is None else atomic.sha256(data)
            self._hashes_set = self._auto_hashes = True
        return True

    def table(self, name: str) -> Table:
        """The store table ``name``, to read and change within this write (changes land in
        the same atomic store write as the audit entry)."""
        return self.session.store.table(name)

    def hashes(self, before: str | None, after: str | None) -> None:
        """Set the hashes the audit entry records (for a write whose subject is a record)."""
        self.audit_before, self.audit_after = before, after
        self._hashes_set, self._auto_hashes = True, False

    @property
    def changed(self) -> bool:
        """True when the write replaces a file or touched the store."""
        return bool(self.files) or self.session.store.storage.dirty


@dataclass(slots=True)
class Written(Generic[T]):
    """What :meth:`Session.write` did.

    Attributes:
        result: what ``apply`` returned (``None`` for a retry: see :attr:`entry`).
        entry: the audit entry of this write, or of the first write a retry repeats; ``None``
            when nothing changed.
        retried: the client id had already recorded this very request: nothing was done again.
        files: workspace-relative paths of the files written.
        carried: ``{path: bytes}`` of other processes' appends kept in a file written with
            ``carry_appends``.
        installed: ``{path: bytes}`` each file's content as the write left it (its new bytes
            followed by any carried appends).
    """

    result: T | None
    entry: AuditEntry | None
    retried: bool = False
    files: list[str] = field(default_factory=list)
    carried: dict[str, bytes] = field(default_factory=dict)
    installed: dict[str, bytes] = field(default_factory=dict)

    @property
    def written(self) -> bool:
        """True when this call changed something."""
        return self.entry is not None and not self.retried


class Session:
    """An opened workspace: its store, audit log and acting profile; writes go through
    :meth:`write`.

    Attributes:
        ws: the workspace.
        store: the store.
        audit: the audit log, recording entries as :attr:`profile`.
        profile: the acting profile (see :func:`resolve_profile`), or ``None``.
        purpose: what this process is, shown to others while it writes (``"tui"``).
        reason: why the session is read-only (a complete sentence), or ``None``.
        findings: ``workspace-read-only`` / ``store-damaged`` / ``governance-pending`` findings
            met on opening.
        wait: seconds a write waits for another process's write.
    """

    def __init__(self, ws: Workspace, store: Store, profile: str | None, reason: str | None,
                 findings: list[Finding], purpose: str = "cli", wait: float = LOCK_WAIT) -> None:
        self.ws = ws
        self.store = store
        self.profile = profile
        self.reason = reason
        self.findings = findings
        self.purpose = purpose
        self.wait = wait
        self.audit = AuditLog(store, profile)
        self.disk_full = False  # the reason is a full disk (writes raise DiskFullError, exit code 4)
        self._closed = False

    @classmethod
    def open(cls, workspace: Workspace | str | os.PathLike[str], *, purpose: str = "cli",
             wait: float | None = None, profile: str | None = None, read_only: bool = False) -> "Session":
        """Open a session on ``workspace`` (no lock is taken and nothing is held).

        Args:
            workspace: an opened :class:`Workspace` or its folder.
            purpose: recorded with the lock while this process writes: ``"tui"`` or
                ``"cli <command>"``.
            wait: seconds each write waits for another process's write to finish (default
                :data:`LOCK_WAIT`).
            profile: the acting profile (see :func:`resolve_profile`).
            read_only: refuse every write (``--read-only``).

        Returns:
            A :class:`Session`; never raises for an unwritable workspace or a damaged store
            (it is then read-only with :attr:`reason`). A change an interrupted memtui left
            pending is completed now, under the lock, when the session may write.

        Raises:
            WorkspaceError: the folder cannot be opened.
        """
        ws = workspace if isinstance(workspace, Workspace) else Workspace.open(workspace)
        findings: list[Finding] = []
        reason: str | None = None
        full = False
        if read_only:
            reason = "This memtui opened the workspace read-only (--read-only)."
        else:
            try:
                lock.probe(ws.root)
            except (ReadOnlyError, DiskFullError) as exc:  # browse anyway; every write says why not
                reason = str(exc)
                full = isinstance(exc, DiskFullError)
                findings.append(Finding.make("workspace-read-only", ".memtui/lock", reason,
                                             "make the workspace folder writable to edit here"))
        store = Store.open(ws, read_only=reason is not None, reason=reason)
        if store.damaged:
            findings.extend(store.findings)
            reason = store.reason
        session = cls(ws, store, resolve_profile(ws, profile), reason, findings, purpose,
                      LOCK_WAIT if wait is None else wait)
        session.disk_full = full and reason is not None and not store.damaged
        if reason is None and T_INTENTS in store.tables():
            try:
                session.recover()
            except MemtuiError as exc:
                findings.append(Finding.make("governance-pending", ".memtui/store.json", str(exc),
                                             "look at the file named, then run the command again"))
        return session

    @property
    def read_only(self) -> bool:
        """True when writes refuse (see :attr:`reason`)."""
        return self.reason is not None

    def require_writable(self) -> None:
        """Raise :class:`ReadOnlyError` with :attr:`reason` unless this session may write
        (:class:`DiskFullError` when the reason is a full disk)."""
        if self.reason is not None:
            raise (DiskFullError if self.disk_full else ReadOnlyError)(self.reason)
        if self._closed:
            raise ReadOnlyError("This memtui session is closed; open the workspace again to write.")

    @property
    def lock_path(self) -> Path:
        """``<workspace>/.memtui/lock``."""
        return self.ws.state_dir / lock.LOCK_NAME

    # -- the one guarded write -----------------------------------------------------------------
    def earlier(self, client_id: str | None, action: str, target: str, request: Any = None
                ) -> AuditEntry | None:
        """The audit entry a retry of this request repeats, or ``None`` (the rule
        :meth:`write` applies under the lock; callers use it to skip a question on a retry).

        Raises:
            ClientIdConflict: ``client_id`` names an entry of another request (it stays).
        """
        if not client_id:
            return None
        earlier = self.audit.find(client_id)
        if earlier is None:
            return None
        if earlier.same_request(action, target, request_key(action, target, request)):
            return earlier
        raise ClientIdConflict(
            f"client id {client_id!r} was already used on {earlier.time} for {earlier.action} on "
            f"{earlier.target} with another request; that entry stays and nothing was written. "
            "Use a new client id for a new change.", earlier)

    def write(self, action: str, target: str, apply: Callable[[Tx], T], *,
              client_id: str | None = None, request: Any = None) -> Written[T]:
        """Make one change to the workspace under the write discipline (module docstring).

        Args:
            action: the audit action, ``<area>.<verb>`` (``notes.set``, ``graph.rename-entity``).
            target: what the change is about, workspace-relative (the audit entry's target).
            apply: called once under the lock with a fresh :class:`Tx`; it reads what the
                change depends on, raises to refuse (nothing is written), and describes the
                change. Its return value is :attr:`Written.result`.
            client_id: the caller's id for this request (seed 004); a random one when ``None``.
            request: a JSON-able description of what was asked (not of the outcome): a retry
                is recognised by the same client id with the same ``action``, ``target`` and
                ``request``.

        Returns:
            :class:`Written`. When ``apply`` changed nothing, nothing is written and no audit
            entry is made (``entry`` is ``None``).

        Raises:
            ReadOnlyError: the session may not write (``lock.LockBusyError`` when another
                process kept the lock past :attr:`wait`). ClientIdConflict: the client id names
                another request (the first entry stays). ConflictError: a file no longer holds
                the bytes the change was based on. ConfinementError: a path leads outside the
                workspace. Whatever ``apply`` raises. Nothing is written in each case.
            OSError: a write failed; a single file is put back, several stay as a pending
                intent that the next write completes.
        """
        self.require_writable()
        key = request_key(action, target, request)
        with lock.acquire(self.ws.root, self.purpose, wait=self.wait):
            for own in (self.store.path, self.ws.state_dir / "backups" / "-"):  # memtui's own folders: all
                atomic.remove_leftovers(own, whole_folder=True)  # a killed writer's litter (under the lock)
            self.store.begin()
            try:
                self._recover()
                earlier = self.earlier(client_id, action, target, request)
                if earlier is not None:
                    self.store.rollback()
                    return Written(None, earlier, retried=True)
                tx = Tx(self)
                try:
                    result = apply(tx)
                    for touched in tx.touched():  # a killed writer's litter (under the lock), written or not
                        atomic.remove_leftovers(touched, whole_folder=self._own(touched))
                    if not tx.changed:
                        self.store.rollback()
                        return Written(result, None)
                    if len(tx.files) <= 1:
                        recorded = self._write_one(tx, action, target, client_id, key)
                    else:
                        recorded = self.audit.append(action, target, tx.audit_before, tx.audit_after,
                                                     client_id=client_id, request=key, detail=tx.detail)
                        self._write_many(tx, recorded.id)
                finally:
                    tx._close()
            except BaseException:
                if self.store.storage.in_batch:
                    self.store.rollback()
                raise
        return Written(result, recorded, files=[c.shown for c in tx.files],
                       carried={c.shown: c.carried for c in tx.files if c.carried},
                       installed={c.shown: c.installed for c in tx.files if c.installed is not None})

    def _own(self, path: Path) -> bool:
        """True when ``path`` lies in memtui's own state folder (``.memtui/``)."""
        try:
            path.relative_to(os.path.realpath(self.ws.state_dir))
        except ValueError:
            return False
        return True

    def _write_one(self, tx: Tx, action: str, target: str, client_id: str | None, key: str) -> AuditEntry:
        """One file (or none): the file, then the audit entry and the store in one store write;
        a failed store write puts the file back."""
        if not tx.files:
            recorded = self.audit.append(action, target, tx.audit_before, tx.audit_after,
                                         client_id=client_id, request=key, detail=tx.detail)
            self.store.commit()
            return recorded
        change = tx.files[0]
        _apply_file(change)
        if change.carried:  # other processes' appends kept in the new file: say so in the entry
            tx.detail["carried"] = {change.shown: {"bytes": len(change.carried),
                                                   "lines": change.carried.count(b"\n")}}
        try:
            recorded = self.audit.append(action, target, tx.audit_before, tx.audit_after,
                                         client_id=client_id, request=key, detail=tx.detail)
            self.store.commit()
        except BaseException as failed:
            try:  # put the file back: the write did not happen (appends of others stay)
                _put_back(change)
            except OSError as exc:  # a full disk may refuse that too: then say what the file holds
                if isinstance(failed, OSError) and write_failure(failed) is not None:
                    raise type(write_failure(failed))(  # type: ignore[misc]
                        f"{write_failure(failed)} {change.shown} was saved, but its audit record could "
                        f"not be (and the old bytes could not be put back: {exc.strerror or exc}).") from failed
            raise
        return recorded

    def _write_many(self, tx: Tx, entry_id: int) -> None:
        """Several files: an intent lands with the store's changes, then the files, then the
        intent goes (each step atomic; :meth:`_recover` finishes an interrupted one)."""
        intent_id = uuid.uuid4().hex
        intent = {"id": intent_id, "entry": entry_id, "time": _now(), "files": [
            {"path": c.shown, "old": c.old, "carry": c.carry,
             "new": None if c.new is None else base64.b64encode(c.new).decode("ascii")}
            for c in tx.files]}
        self.store.table(T_INTENTS).insert(intent)
        self.store.commit()
        for change in tx.files:
            _apply_file(change)
        self.store.begin()
        self.store.table(T_INTENTS).remove(Query().id == intent_id)
        self.store.commit()

    def _recover(self, strict: bool = False) -> None:
        """Finish the file writes of pending intents (inside a batch, under the lock).

        An intent whose file holds neither its old nor its new bytes (someone else changed it
        meanwhile) stays pending and nothing of it is overwritten; it does not block other
        writes.

        Raises:
            ConflictError: with ``strict``, when an intent stays pending (the message names
                its files).
        """
        if T_INTENTS not in self.store.tables():
            return
        table = self.store.table(T_INTENTS)
        stuck: list[str] = []
        for intent in list(table.all()):
            try:
                self._finish(intent)
            except ConflictError as exc:
                stuck.append(str(exc))
                continue
            except OSError as exc:  # a full disk, a permission: try again at the next write
                stuck.append(f"a pending change could not be finished ({exc.strerror or exc}).")
                continue
            table.remove(Query().id == intent["id"])
        if stuck and strict:
            raise ConflictError(" ".join(stuck))

    def _finish(self, intent: dict[str, Any]) -> None:
        if "files" not in intent or "entry" not in intent:
            raise ConflictError(
                f"an interrupted change of an older memtui ({intent.get('action', '?')} on "
                f"{intent.get('target', '?')}) is pending in .memtui/store.json; finish it with "
                "that memtui version, or set the store aside (`memtui store set-aside`).")
        for item in intent["files"]:
            new = None if item["new"] is None else base64.b64decode(item["new"])
            path = confine(self.ws.root, item["path"])
            atomic.remove_leftovers(path)  # the interrupted write's own temporary file (under the lock)
            snapshot = atomic.Snapshot.take(path)
            try:
                current = None if snapshot is None else snapshot.data
                now = None if current is None else atomic.sha256(current)
                if current == new:
                    continue
                if now != item["old"]:
                    raise ConflictError(
                        f"{item['path']} changed on disk while a memtui change was pending (expected "
                        f"{_short(item['old'])}, found {_short(now)}); that change stays pending and "
                        "nothing of it was written. Look at the file: put back the expected content to "
                        "let memtui finish, or set the change aside with `memtui store check`.", path=path)
                _apply_file(_FileChange(item["path"], path, item["old"], new, snapshot,
                                        bool(item.get("carry"))))
            finally:
                if snapshot is not None:
                    snapshot.close()

    def recover(self) -> None:
        """Finish what an interrupted memtui left pending, under the lock.

        Raises:
            ConflictError: an intent cannot be finished (see :meth:`_recover`).
            ReadOnlyError: the session may not write.
        """
        self.require_writable()
        with lock.acquire(self.ws.root, self.purpose, wait=self.wait):
            self.store.begin()
            try:
                self._recover(strict=True)
            finally:
                if self.store.storage.in_batch:
                    self.store.commit()

    def set_aside_store(self) -> tuple[Path, AuditEntry | None]:
        """Rename a damaged store aside and start a fresh one that records the act.

        Returns:
            ``(new path of the old file, audit entry in the fresh store or None)``.

        Raises:
            FileNotFoundError: there is no store file. LockBusyError, ReadOnlyError: the lock
            cannot be taken or the workspace cannot be written.
        """
        from memtui.core import store as store_mod

        with lock.acquire(self.ws.root, self.purpose, wait=self.wait):
            path = self.ws.state_dir / store_mod.STORE_NAME
            before = atomic.sha256(path.read_bytes())
            moved = store_mod.set_aside(self.ws)
            fresh = Store.open(self.ws)
            entry = None
            if not fresh.read_only:
                fresh.begin()
                entry = AuditLog(fresh, self.profile).append(
                    "store.set-aside", ".memtui/" + store_mod.STORE_NAME, before, None,
                    detail={"moved_to": self.ws.shown(moved)})
                fresh.commit()
            self.store.close()
            self.store, self.audit, self.reason = fresh, AuditLog(fresh, self.profile), fresh.reason
            return moved, entry

    def close(self) -> None:
        """Close the store (idempotent); later writes refuse."""
        self.store.close()
        self._closed = True

    def __enter__(self) -> "Session":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _apply_file(change: _FileChange) -> None:
    """Install one file change exactly as checked (:func:`memtui.core.atomic.replace_exact`).

    Raises:
        ConflictError: another process changed, replaced or created the file meanwhile;
            nothing of this change stays. BusyError: one kept it open for writing.
        OSError: the write failed.
    """
    try:
        if change.new is None:
            if change.snapshot is not None:
                atomic.remove_exact(change.path, change.snapshot, wait=atomic.WRITER_WAIT)
            return
        if change.snapshot is None:
            change.path.parent.mkdir(parents=True, exist_ok=True)
            atomic.create_exact(change.path, change.new)
            change.installed = change.new
            return
        done = atomic.replace_exact(change.path, change.new, change.snapshot, carry=change.carry,
                                    wait=atomic.WRITER_WAIT)
    except atomic.RaceError as exc:
        raise _race(change, exc) from exc
    change.installed, change.carried = done.data, done.carried


def _race(change: _FileChange, exc: atomic.RaceError) -> MemtuiError:
    """The error to raise for a write :func:`atomic.replace_exact` refused."""
    if exc.busy:
        return BusyError(
            f"{change.shown}: {exc}; nothing was written, because what that process writes after "
            "memtui's save would be lost. Try again when it has closed the file.")
    try:
        current: bytes | None = change.path.read_bytes()
    except OSError:
        current = None
    return ConflictError(
        f"{change.shown}: {exc}; nothing was written and the file keeps the other process's "
        "version. Reload it, look at the difference, and try again.", path=change.path, current=current,
        current_hash=None if current is None else atomic.sha256(current))


def _put_back(change: _FileChange) -> None:
    """Undo an installed change after its store write failed, keeping what others appended:
    the old bytes, the appends carried, and what was appended to the new file since."""
    if change.snapshot is None:
        change.path.unlink(missing_ok=True)
        return
    old = change.snapshot.data + change.carried
    try:
        now = change.path.read_bytes()
    except FileNotFoundError:
        now = b""
    if change.installed is not None and now.startswith(change.installed):
        old += now[len(change.installed):]
    atomic.write_bytes(change.path, old)


def _short(sha: object) -> str:
    return "absent" if sha is None else str(sha)[:12]


def _now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat()



"""Back a workspace up to git: render, write, commit only the backup path, push.

:func:`backup` is the one core call behind ``memtui backup`` and the TUI's "Backup now".

**No writer lock.** A backup reads the workspace and writes only the repository: it takes no
:class:`~memtui.core.session.Session` and records no audit entry (an entry would change the
store and make every backup stale at once). The store is read from ``store.json``, which
every writer replaces atomically, so a backup sees a whole old or new store; a file edited
during the render is taken as it was when read, and the next backup takes the change.

Settings (``memtui.toml``, all optional; command-line options win): ``[backup] repo``,
``path`` (default ``memtui-backup``), ``remote``; ``[git] name``, ``email`` (the author).
"""

from __future__ import annotations

import hashlib
import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from memtui.core.text import mask_url, visible
from memtui.core import secrets
from memtui.core.backup import render as rd
from memtui.core.backup.git import (BackupRefused, BackupRepo, GitError, Identity, PushResult, check_subdir, first_missing,
                                    find_identity)
from memtui.core.errors import MemtuiError, RefusedError, write_failure
from memtui.core.findings import Finding
from memtui.core.workspace import Workspace

DEFAULT_PATH = "memtui-backup"


class BackupBlocked(MemtuiError):
    """The workspace holds what a backup may not commit (exit 1): an open secret finding or a
    rewritten session history. Nothing was written to the repository.

    Attributes:
        findings: each place (``secret`` findings show masked values only).
    """

    def __init__(self, message: str, findings: list[Finding]) -> None:
        super().__init__(message)
        self.findings = findings

Progress = Callable[[str, float], None]


@dataclass(frozen=True, slots=True)
class Settings:
    """Where backups go: ``repo`` (``None`` when not configured), ``path``, ``remote``,
    whether to ``push`` after each backup, and the ``[git]`` identity table."""

    repo: str | None
    path: str
    remote: str | None
    git: dict[str, Any]
    push: bool = False


def settings(ws: Workspace, repo: str | None = None, path: str | None = None,
             remote: str | None = None, push: bool | None = None) -> Settings:
    """The backup settings: the given values, else ``memtui.toml [backup]`` (the typed
    :class:`~memtui.core.config.BackupSettings`), else defaults.

    A relative ``[backup] repo`` is relative to the workspace folder. The CLI and the TUI
    both call this, so ``[backup] push`` means the same in both.
    """
    configured = ws.config.backup
    if repo is None and configured.repo:
        repo = str((ws.root / os.path.expanduser(configured.repo)).resolve())
    identity = {k: v for k, v in (("name", ws.config.git.name), ("email", ws.config.git.email)) if v}
    return Settings(repo, path or configured.path or DEFAULT_PATH, remote or configured.remote, identity,
                    configured.push if push is None else push)


@dataclass(slots=True)
class BackupResult:
    """What a backup did.

    Attributes:
        repo: the repository folder. path: the backup path in it. branch: the branch.
        commit: the new commit (hex), or ``None`` when nothing changed.
        identity: the author used. counts: the tree's counts (files, bytes, tables, records).
        written, removed: backup-tree paths rewritten / removed (shown form).
        findings: workspace entries not backed up (symlinks, …).
        push: the push outcome, when asked. notes: other facts for the user (keyring fallback).
    """

    repo: Path
    path: str
    branch: str
    commit: str | None
    identity: Identity
    counts: dict[str, Any]
    written: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    push: PushResult | None = None
    notes: list[str] = field(default_factory=list)
    #: why the workspace's remote graph is not in this backup (it could not be read), or ``""``
    remote_missing: str = ""

    @property
    def ok(self) -> bool:
        """False only when a push was asked for and failed."""
        return self.push is None or self.push.ok

    def to_json(self) -> dict[str, Any]:
        return {"repo": str(self.repo), "path": self.path, "branch": self.branch, "commit": self.commit,
                "changed": self.commit is not None, "author": str(self.identity),
                "author_source": self.identity.source, "counts": self.counts,
                "written": self.written, "removed": self.removed, "ok": self.ok,
                "push": None if self.push is None else {"ok": self.push.ok, "remote": self.push.remote,
                                                        "url": self.push.url, "message": self.push.message},
                "notes": self.notes, "findings": [f.to_json() for f in self.findings],
                "remote_missing": self.remote_missing or None}


def message_for(tree: rd.BackupTree, written: int, removed: int, subject: str | None) -> str:
    """The commit message: a subject, then the counts (files, bytes, records per table, changes)."""
    counts = tree.counts()
    head = visible(subject) if subject else f"memtui backup: {counts['files']} files, {counts['records']} store records"
    lines = [head, "", f"files: {counts['files']}", f"bytes: {counts['bytes']}",
             f"empty folders: {counts['empty_folders']}", f"store records: {counts['records']}"]
    # table names are user data: escaped so a NUL or newline cannot break git's commit message
    lines += [f"table {visible(name)}: {n}" for name, n in counts["tables"].items()]
    lines += [f"changed in the backup tree: {written} written, {removed} removed"]
    return "\n".join(lines) + "\n"


def prepare(repo_path: str | os.PathLike[str], subdir: str, git_table: dict[str, Any] | None = None,
            *, create: bool = True) -> tuple[BackupRepo, str, str, Identity]:
    """Open (or create) the repository and check it can take a backup commit.

    Returns:
        ``(repo, clean subdir, branch, identity)``.

    Raises:
        GitError: the repository cannot be opened or created.
        BackupRefused: a bare repository, a detached HEAD, an unborn branch beside branches
            that have commits, no identity, or a backup path that is a symbolic link.
    """
    subdir = check_subdir(subdir)
    folder = Path(repo_path).expanduser()
    if create and (not os.path.lexists(folder) or (folder.is_dir() and not any(folder.iterdir()))):
        find_identity(git_table)  # refused before `git init`: a refusal leaves no new repository
    repo = BackupRepo.open(repo_path, create=create)
    if repo.bare:
        raise BackupRefused(f"{repo.root} is a bare repository (no working folder); make backups in a "
                            "clone of it and push to it (add it as a remote and use --push).")
    head = repo.head()
    if head.detached:
        branches = ", ".join(head.branches) or "none"
        raise BackupRefused(
            f"the backup repository {repo.root} is on a detached HEAD at commit {(head.commit or '')[:7]} "
            f"(someone checked out an older commit). memtui makes backups on a branch only, so no "
            f"backup commit belongs to no branch: switch back with `git -C {repo.root} switch "
            f"{head.branches[0] if head.branches else 'BRANCH'}` (branches: {branches}), then back up "
            f"again. To look at an old backup, `memtui restore --repo {repo.root}@COMMIT --to DIR` "
            "needs no checkout.")
    if head.unborn and head.branches:
        raise BackupRefused(
            f"the backup repository {repo.root} is on branch {head.branch}, which has no commits, while "
            f"{', '.join(head.branches)} {'has' if len(head.branches) == 1 else 'have'} commits. memtui "
            "does not start a second history beside it: switch to the branch that holds the backups "
            f"(`git -C {repo.root} switch {head.branches[0]}`), or create {head.branch} from it "
            f"(`git -C {repo.root} branch {head.branch} {head.branches[0]}`).")
    identity = repo.identity(git_table)
    dest = repo.root / subdir
    if os.path.realpath(dest) != os.path.normpath(os.path.join(os.path.realpath(repo.root), subdir)):
        raise BackupRefused(f"{dest} is (or lies behind) a symbolic link; the backup path must be a "
                            "real folder of the repository.")
    return repo, subdir, head.branch or "main", identity


def backup(ws: Workspace, repo_path: str | os.PathLike[str], subdir: str = DEFAULT_PATH, *,
           message: str | None = None, push: bool = False, remote: str | None = None,
           git_table: dict[str, Any] | None = None, progress: Progress | None = None,
           session: Any = None, accept_rewrite: Any = ()) -> BackupResult:
    """Back ``ws`` up into ``repo_path`` under ``subdir``.

    Steps: check the repository (:func:`prepare`), render the workspace (:func:`render.render`),
    rewrite only changed files of the backup folder (:func:`render.write_tree`), stage and commit
    only ``subdir`` (nothing when nothing changed), ``gc --auto`` in the foreground, then push
    when asked (never forced; an https remote gets the ``git-token`` secret).

    Args:
        ws: the workspace (only read).
        repo_path: the repository; created with ``git init`` only when the folder does not exist
            yet (or is empty), which ``result.notes`` says ("created a new git repository at
            …"); the identity is checked before, so a refusal leaves no new repository.
        subdir: the backup path inside the repository.
        message: the commit subject (the counts are always in the body).
        push: push the branch to ``remote`` afterwards.
        remote: the remote name (default: the branch's upstream, else ``origin``).
        git_table: ``memtui.toml [git]`` (``name``, ``email``) for the author.
        progress: called with ``(step description, fraction done 0..1)``.
        session: a :class:`~memtui.core.session.Session` of ``ws``: what memtui sees of the
            session histories is recorded through it before the render (seed 002's append-only
            check, :func:`memtui.core.sessions.record`); ``None`` or a read-only one records
            nothing (the check still runs against the last record).
        accept_rewrite: session keys whose rewrite the operator accepts (``--accept-rewrite``).

    Returns:
        :class:`BackupResult`; a failed push is ``result.push.ok == False`` (never "complete").

    Raises:
        BackupRefused: see :func:`prepare`; the workspace lies inside the backup folder, or the
            backup repository inside a folder memtui reads (the memory tree, skills, sessions).
        BackupBlocked: an open secret finding or a rewritten session history (nothing written).
        GitError: git failed.
        StoreDamagedError: the store cannot be read (a backup without it would be incomplete).
    """
    def step(what: str, fraction: float) -> None:
        if progress:
            progress(what, fraction)

    step("checking the backup repository", 0.0)
    wanted = Path(os.path.realpath(Path(repo_path).expanduser()))
    read = [ws.memory, *(ws.root / name for name in ("skills", "shared-skills", "sessions"))]
    inside = next((folder for folder in read if wanted.is_relative_to(os.path.realpath(folder))), None)
    if inside is not None:
        # its copies would be read as the workspace's own files: the audit and the search would see
        # every article twice (a repository at the workspace's top, beside these folders, is fine)
        raise BackupRefused(f"the backup repository {repo_path} lies inside {inside}, which memtui reads as the "
                            "workspace's own files; its copies would be audited and searched as such. Choose a "
                            "folder outside it.")
    created = first_missing(Path(repo_path).expanduser())
    repo, subdir, branch, identity = prepare(repo_path, subdir, git_table)
    dest = repo.root / subdir
    if Path(os.path.realpath(ws.root)).is_relative_to(os.path.realpath(dest)):
        if created is not None:  # a refused backup leaves no repository it just made
            shutil.rmtree(created, ignore_errors=True)
        raise BackupRefused(f"the workspace {ws.root} lies inside the backup folder {dest}; "
                            "choose another --path or --repo.")
    step("checking the session histories", 0.05)
    try:
        _record_sessions(ws, session, accept_rewrite)
    except BackupBlocked:
        if created is not None:
            shutil.rmtree(created, ignore_errors=True)
        raise
    step("reading the remote graph", 0.05)
    remote_graph, remote_missing = _remote_snapshot(ws)
    from memtui.core.backup.state import BackupState

    known = BackupState.load(ws, dest)
    try:
        taken, tree, blocked, stats = _render_scan_write(ws, dest, subdir, remote_graph, known, step)
    except rd.StaleEntry:  # a file changed under the backup: everything is read again
        taken, tree, blocked, stats = _render_scan_write(ws, dest, subdir, remote_graph, None, step)
    if blocked:
        if created is not None:  # a refused backup leaves no repository it just made
            shutil.rmtree(created, ignore_errors=True)
        places = "; ".join(f"{f.place} {f.message.split('(')[-1].rstrip(')')}" for f in blocked[:20])
        more = f" and {len(blocked) - 20} more" if len(blocked) > 20 else ""
        raise BackupBlocked(
            f"the workspace holds {len(blocked)} open secret finding{'s' if len(blocked) != 1 else ''}, so "
            f"nothing was written to the backup repository: {places}{more}. Remove each secret (and revoke "
            "it), or, for a false positive, `memtui audit allow secret PLACE --reason …`.", blocked)
    assert stats is not None
    step("committing the backup path", 0.6)
    commit = repo.commit_path(subdir, message_for(tree, len(stats.written), len(stats.removed), message),
                              identity)
    BackupState.of(taken, tree, stats.stats).save(ws, dest)  # what the next backup need not read
    if commit:
        step("tidying the repository (git gc --auto)", 0.8)
        repo.gc()
    result = BackupResult(repo.root, subdir, branch, commit, identity, tree.counts(),
                          [rd.shown(p) for p in stats.written], [rd.shown(p) for p in stats.removed],
                          tree.findings, remote_missing=remote_missing)
    for rel, count in sorted(tree.left_out.items()):
        result.notes.append(f"{rd.shown(rel)}: {count} Authorization header value{'s' if count != 1 else ''} "
                            "left out of the backup (a secret); a restore of it has no token")
    if repo.created:
        result.notes.insert(0, f"created a new git repository at {repo.root}")
    if push:
        step("pushing", 0.85)
        result.push = _push(repo, branch, remote, result.notes)
    step("done", 1.0)
    return result


def _render_scan_write(ws: Workspace, dest: Path, subdir: str, remote_graph: bytes | None, known: Any,
                       step: Callable[[str, float], None]) -> tuple[int, rd.BackupTree, list[Finding],
                                                                     rd.WriteStats | None]:
    """Render the workspace (reading only what ``known`` does not vouch for), look for open
    secrets, and, when there is none, write the changed files of the backup folder.

    Returns:
        ``(when the render began, tree, open secret findings, write stats or None when blocked)``.

    Raises:
        StaleEntry: a file ``known`` vouched for holds other bytes (call again without it).
    """
    from memtui.core.backup.state import now

    taken = now()
    step("rendering the workspace", 0.1)
    tree = rd.render(ws.root, skip=[dest], remote_graph=remote_graph, known=known)
    step("looking for secrets", 0.3)
    blocked = _open_secrets(ws, tree)
    if blocked:
        return taken, tree, blocked, None
    step("writing the changed files of the backup tree", 0.4)
    try:
        stats = rd.write_tree(tree, dest, known)
    except OSError as exc:  # a full disk, a read-only repository: a sentence, and no commit
        failure = write_failure(exc, dest)
        if failure is None:
            raise
        failure.args = (f"{failure} No backup commit was made: the repository's history is as it was, "
                        f"and the next backup rewrites the files of {subdir}/.",)
        raise failure from exc
    return taken, tree, blocked, stats


def _record_sessions(ws: Workspace, session: Any, accept: Any) -> None:
    """Record the session histories as seen (or refuse a rewritten one): see :func:`backup`."""
    from memtui.core import sessions
    from memtui.core.store import Store

    accepted = set(accept or ())
    if session is not None and not session.read_only:
        try:
            sessions.record(session, accept=accepted)
        except RefusedError as exc:
            found = [f for f in sessions.rewrites(ws, session.store) if f.path.rsplit("/", 1)[-1][:-6] not in accepted]
            raise BackupBlocked(f"{exc} Nothing was written to the backup repository.", found) from exc
        return
    store = Store.open(ws, read_only=True)
    found = [f for f in sessions.rewrites(ws, None if store.damaged else store)
             if f.path.rsplit("/", 1)[-1][:-6] not in accepted]
    if found:
        raise BackupBlocked(
            "session histories were rewritten since memtui last saw them: "
            + "; ".join(f"{f.place}" for f in found) + ". Nothing was written to the backup repository; "
            "accept the new content with --accept-rewrite KEY (that needs a writable workspace).", found)


def _open_secrets(ws: Workspace, tree: rd.BackupTree) -> list[Finding]:
    from memtui.core.scan.backup import open_secrets
    from memtui.core.store import Store

    def store() -> Any:
        opened = Store.open(ws, read_only=True)
        return None if opened.damaged else opened

    return open_secrets(ws, tree, store)


def compared(state: dict[str, Any]) -> str:
    """``"2 ahead, 0 behind the remote as of its last fetch on 2026-12-01 10:04"`` for a
    :func:`status` (``""`` without counts): the counts compare with the remote-tracking branch,
    which only a fetch (or a push) updates, so the sentence says which and when rather than
    reading as current."""
    counts = state.get("ahead_behind")
    if not counts:
        return ""
    words = f"{counts[0]} ahead, {counts[1]} behind"
    seen = state.get("compared_with")
    if not seen:
        return f"{words} as last fetched (no record of when; `git fetch` to compare with the remote now)"
    when = str(seen.get("date", "")).replace("T", " ")[:16]
    if seen.get("how") == "fetch":
        return f"{words} as of the last fetch, {when}"
    what = "push" if seen.get("how") == "push" else "update"
    return (f"{words} as of the last {what}, {when}; never fetched since, so newer commits on the remote are "
            "not counted (`git fetch` to compare with the remote now)")


def _push(repo: BackupRepo, branch: str, remote: str | None, notes: list[str]) -> PushResult:
    """Push ``branch`` to ``remote`` (never forced); an https remote gets the ``git-token``
    secret. Where the token came from is added to ``notes``."""
    name = repo.remote_for(branch, remote)
    url = repo.remote_url(name)
    token = None
    if url.startswith("https://"):
        found = secrets.get("git-token")
        token = found.value
        if found.note:
            notes.append(found.note)
        if found.source:
            notes.append(f"the git token came from the {found.source}")
    return repo.push(name, branch, token)


def push(repo_path: str | os.PathLike[str], subdir: str = DEFAULT_PATH, remote: str | None = None,
         git_table: dict[str, Any] | None = None) -> tuple[PushResult, list[str]]:
    """Push the backups already committed (the TUI's Push, after a push that failed or when
    ``[backup] push`` is on); the same checks as :func:`backup` first, nothing committed.

    Returns:
        ``(push result, notes)``.

    Raises:
        BackupRefused: see :func:`prepare`. GitError: git failed (no remote, …).
    """
    repo, _subdir, branch, _identity = prepare(repo_path, subdir, git_table, create=False)
    notes: list[str] = []
    return _push(repo, branch, remote, notes), notes


@dataclass(frozen=True, slots=True)
class Pending:
    """What changed in the workspace since the last backup.

    Attributes:
        commit: the last backup's commit.
        files: workspace-relative paths added, changed or removed since it.
        tables: store tables whose records changed since it.
        compared: how many workspace files and store tables were compared.
    """

    commit: str
    files: list[str]
    tables: list[str]
    compared: int

    @property
    def count(self) -> int:
        """Files and store tables that differ."""
        return len(self.files) + len(self.tables)

    def sentence(self) -> str:
        """``"3 files changed since the last backup"`` (store tables counted as files)."""
        if not self.count:
            return "nothing changed since the last backup"
        what = f"{self.count} file{'s' if self.count != 1 else ''}"
        return f"{what} changed since the last backup"


def _blob_sha(data: bytes) -> bytes:
    """The git blob id of ``data`` (hex, as ``git ls-tree`` prints it)."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest().encode()  # noqa: S324 - git's id


def pending(ws: Workspace, repo_path: str | os.PathLike[str], subdir: str = DEFAULT_PATH) -> Pending | None:
    """Compare the workspace as a backup would render it with the last backup's tree.

    Reads only: renders the workspace (:func:`render.render`, as :func:`backup` does, without
    reading a remote graph: its snapshot is left out of the comparison) and compares git blob
    ids with ``git ls-tree`` of the newest commit of ``subdir``; nothing is written.

    Returns:
        A :class:`Pending`, or ``None`` when there is no repository or no backup yet.

    Raises:
        GitError: git failed.
        StoreDamagedError: the store cannot be read.
    """
    try:
        subdir = check_subdir(subdir)
        repo = BackupRepo.open(repo_path)
    except (GitError, BackupRefused):
        return None
    newest = repo.history(subdir, 1)
    if not newest:
        return None
    commit = newest[0].commit
    _, out, _ = repo.git("ls-tree", "-r", "-z", "--full-tree", commit, "--", subdir)
    prefix = subdir.encode("utf-8") + b"/"
    backed: dict[bytes, bytes] = {}
    for item in out.split(b"\0"):
        if item:
            meta, _, path = item.partition(b"\t")
            backed[path[len(prefix):] if path.startswith(prefix) else path] = meta.split(b" ")[2]
    tree = rd.render(ws.root, skip=[repo.root / subdir], remote_graph=None)
    files: list[str] = []
    tables: list[str] = []
    names = (set(backed) | set(tree.files)) - {rd.MANIFEST}
    if rd.REMOTE_GRAPH not in tree.files:
        names.discard(rd.REMOTE_GRAPH)  # the remote graph is not read here (no network for a status)
    compared = 0
    for name in sorted(names):
        entry = tree.files.get(name)
        compared += 1
        if entry is not None and backed.get(name) == _blob_sha(entry.data):
            continue
        if name.startswith(rd.FILES):
            files.append(rd.shown(name[len(rd.FILES):]))
        else:
            tables.append(rd.shown(name))
    return Pending(commit, files, tables, compared)


__all__ = ["BackupBlocked", "BackupRefused", "BackupResult", "DEFAULT_PATH", "GitError", "Pending", "Settings",
           "backup", "compared", "message_for", "pending", "prepare", "push", "settings"]


def status(repo_path: str | os.PathLike[str] | None, subdir: str = DEFAULT_PATH,
           remote: str | None = None, history_limit: int = 50, history_offset: int = 0) -> dict[str, Any]:
    """The state of the backup repository, for ``memtui backup --status`` and the TUI.

    Never raises for an ordinary state: no repository yet, no commits, a detached HEAD,
    an unborn branch, no remote; each is described in ``state`` (a sentence).

    Args:
        history_limit: most backups in ``history`` (1 or more).
        history_offset: how many of the newest backups ``history`` skips (a later page).

    Returns:
        ``{"repo", "path", "exists", "state", "branch", "head", "detached", "remote", "url" (its
        credentials masked), "ahead_behind", "compared_with": {"how": "fetch"|"push"|"other",
        "date"} | None (when the remote-tracking branch the counts compare with was last
        updated), "last": {commit, date, author, subject, changed, counts} | None,
        "uncommitted": [names], "history": [HistoryEntry.to_json()], "history_total": int,
        "problem": str | None}``.
    """
    out: dict[str, Any] = {"repo": mask_url(str(repo_path)) if repo_path else None, "path": subdir,
                           "exists": False, "state": "", "branch": None, "head": None, "detached": False,
                           "remote": None, "url": None, "ahead_behind": None, "compared_with": None,
                           "last": None, "uncommitted": [], "history": [], "history_total": 0, "problem": None}
    if not repo_path:
        out["state"] = ("no backup repository is configured: give --repo, or set [backup] repo in "
                        "memtui.toml")
        return out
    if not Path(repo_path).expanduser().exists():  # not a problem: the first backup makes it
        out["state"] = mask_url(f"{repo_path} does not exist yet; the first backup creates a git repository there")
        return out
    try:
        subdir = check_subdir(subdir)
        repo = BackupRepo.open(repo_path)
    except (GitError, BackupRefused) as exc:
        out["state"] = mask_url(f"not ready: {exc}")
        out["problem"] = mask_url(str(exc))
        return out
    out["exists"] = True
    if repo.bare:  # looked fine until a backup was tried: said at once
        out["problem"] = (f"{repo.root} is a bare repository (no working folder), so no backup can be made "
                          "in it; make backups in a clone of it and push to it")
    head = repo.head()
    out.update(branch=head.branch, head=head.commit, detached=head.detached, state=head.describe())
    history = repo.history(subdir, history_limit, skip=history_offset)
    out["history"] = [h.to_json() for h in history]
    out["history_total"] = repo.history_count(subdir)
    newest = history[:1] if not history_offset else repo.history(subdir, 1)
    if newest:
        last = newest[0].to_json()
        _, data, _ = repo.git("show", f"{newest[0].commit}:{subdir}/MANIFEST", check=False)
        try:
            manifest = rd.parse_manifest(data)
            last["counts"] = {"files": len([p for p in manifest.files if p.startswith(rd.FILES)]),
                              "tables": manifest.tables, "records": sum(manifest.tables.values())}
        except rd.BackupFormatError:
            last["counts"] = None
        out["last"] = last
    else:
        out["state"] += "; no backups yet"
    out["uncommitted"] = [rd.shown(n) for n in repo.changes(subdir)] if not repo.bare else []
    try:
        name = repo.remote_for(head.branch, remote)
        out["remote"] = name
        out["url"] = mask_url(repo.remote_url(name))
        if head.branch:
            out["ahead_behind"] = repo.ahead_behind(name, head.branch)
            updated = repo.tracking_updated(name, head.branch) if out["ahead_behind"] is not None else None
            out["compared_with"] = ({"how": updated[0], "date": updated[1]} if updated else None)
    except GitError:
        pass
    return out


def _remote_snapshot(ws) -> tuple[bytes | None, str]:  # noqa: ANN001 - Workspace
    """The workspace's remote graph in server file form, read now, every field of every record
    kept; ``None`` when its graph is the local file (that one is backed up under ``files/``).

    Returns:
        ``(bytes or None, why it is missing)``: a remote that cannot be read (unreachable, no
        ``read_graph``, an answer that is not a whole graph) does not stop the backup of the rest
        of the workspace; the sentence says plainly that the remote part is missing, and the
        backup is reported as not complete (:attr:`BackupResult.remote_missing`).
    """
    from memtui.core.errors import ExternalError
    from memtui.core.graph.remote import RemoteGraph, resolve, view_bytes, view_of

    endpoint = resolve(ws)
    if endpoint is None:
        return None, ""
    remote = RemoteGraph(endpoint)
    try:
        return view_bytes(view_of(remote.load(), extras=True)), ""
    except ExternalError as exc:
        return None, (f"the remote graph at {endpoint.shown} is NOT in this backup, because it could not be read "
                      f"({exc}); the rest of the workspace was backed up. Back up again when the remote can be read.")
    finally:
        remote.close()

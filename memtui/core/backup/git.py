"""The backup repository (DESIGN.md §4 invariants 8 and 12).

Every git command, finding the repository included, runs through :meth:`BackupRepo.git` (or
:func:`memtui.core.backup.safegit.run` before there is one): nothing the repository names runs
(hooks, ``core.fsmonitor``, filters, helpers — see :mod:`.safegit`).
Its settings:

- ``core.quotepath=false`` and ``-z`` output: names come back as bytes, never as octal
  escapes, and a name that is not UTF-8 is never decoded (GitPython's
  ``untracked_files`` raises ``UnicodeDecodeError`` on one);
- ``--literal-pathspecs`` and ``--`` before paths: a name starting with ``-`` or holding
  ``*`` is a name, not an option or a pattern;
- ``core.autocrlf=false``: line ends are never converted (the backup tree also carries
  ``* -text`` in its ``.gitattributes``);
- ``gc.auto=0`` and ``maintenance.auto=false``: git never starts a background gc in the
  middle of our commands (LIBRARY-NOTES: "gc is already running"); memtui runs
  ``gc --auto`` itself, in the foreground, after a backup commit (:meth:`BackupRepo.gc`);
- bulk staging with ``git add -A -- <path>`` (LIBRARY-NOTES: ``index.add`` is 10× slower).

Commits name only the backup path (``git commit -- <path>``), so changes elsewhere in the
repository, staged or not, stay exactly as they were. The author is never made up: it comes
from ``memtui.toml [git] name/email``, the ``GIT_AUTHOR_*`` variables or git's own
``user.name``/``user.email`` (GitPython's ``index.commit`` invents ``root@host``).
A detached HEAD, or an unborn branch beside branches that have commits, is refused with
advice. Pushes are never forced; a rejection is an error with the remote's reason.
"""

from __future__ import annotations

import os
import stat
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memtui.core import atomic
from memtui.core.backup import safegit
from memtui.core.backup.render import FILES, Entry, shown
from memtui.core.errors import ExternalError, MemtuiError, RefusedError
from memtui.core.findings import Finding
from memtui.core.text import mask_url

#: Options given to every git command (see the module docstring and :mod:`.safegit`).
GIT_OPTIONS = safegit.OPTIONS


class GitError(ExternalError):
    """A git command failed, or the repository cannot be used; ``str(exc)`` says why (exit 4)."""


class NotABackupError(MemtuiError):
    """The commit asked for holds no backup under the backup folder: a problem with what was
    asked, not a failure of git (exit 1)."""


class BackupRefused(RefusedError):
    """The backup would do something wrong (detached HEAD, no identity, unsafe path): exit 3."""


class TooLarge(BackupRefused):
    """A backup holds a file, or files in all, larger than the restore limits (``[backup]
    max_restore_file_bytes`` / ``max_restore_bytes``); nothing was read or written (exit 3)."""


@dataclass(frozen=True, slots=True)
class Limits:
    """How much a restore or verify reads: ``file`` (bytes, any one file) and ``total`` (bytes,
    all files: a restore holds them in memory). From ``memtui.toml [backup]``
    (:class:`~memtui.core.config.BackupSettings`)."""

    file: int
    total: int

    @classmethod
    def of(cls, settings: Any = None) -> "Limits":
        """The limits of a :class:`~memtui.core.config.BackupSettings` (default: its defaults)."""
        from memtui.core.config import BackupSettings

        settings = settings or BackupSettings()
        return cls(settings.max_restore_file_bytes, settings.max_restore_bytes)


@dataclass(frozen=True, slots=True)
class Identity:
    """The author and committer of backup commits and where it came from."""

    name: str
    email: str
    source: str

    def __str__(self) -> str:
        return f"{self.name} <{self.email}>"


@dataclass(frozen=True, slots=True)
class HeadState:
    """Where HEAD is.

    Attributes:
        branch: the branch HEAD names (``None`` when detached).
        commit: the commit HEAD points at (``None`` when the branch has no commit yet).
        detached: HEAD points at a commit, not a branch.
        unborn: HEAD names a branch with no commit yet.
        branches: the local branches that exist (have commits).
    """

    branch: str | None
    commit: str | None
    detached: bool
    unborn: bool
    branches: tuple[str, ...]

    def describe(self) -> str:
        """A sentence for people: ``on branch main at 1a2b3c4``, ``detached at …``."""
        if self.detached:
            return f"detached HEAD at {self.commit[:7] if self.commit else '?'}"
        if self.unborn:
            return f"on branch {self.branch}, which has no commits yet"
        return f"on branch {self.branch} at {self.commit[:7] if self.commit else '?'}"


@dataclass(frozen=True, slots=True)
class HistoryEntry:
    """One backup commit: ``commit`` (hex), ``date`` (ISO 8601), ``author``, ``subject``,
    ``changed`` (files under the backup path the commit touched)."""

    commit: str
    date: str
    author: str
    subject: str
    changed: int

    def to_json(self) -> dict[str, Any]:
        return {"commit": self.commit, "date": self.date, "author": self.author,
                "subject": self.subject, "changed": self.changed}


@dataclass(slots=True)
class PushResult:
    """A push: ``ok``, the ``remote`` name, the ``url`` shown (no secret), ``message``."""

    ok: bool
    remote: str
    url: str
    message: str


def split_spec(spec: str) -> tuple[str, str | None]:
    """Split ``PATH[@REV]`` into ``(path, rev)``.

    The first ``@`` whose left part is an existing folder separates them, so folders and
    revisions holding ``@`` (``HEAD@{1}``) both work; ``rev`` is ``None`` without ``@REV``.
    """
    if os.path.isdir(spec):
        return spec, None
    for i, ch in enumerate(spec):
        if ch == "@" and i and os.path.isdir(spec[:i]):
            return spec[:i], spec[i + 1:] or None
    return spec, None


def first_missing(path: Path) -> Path | None:
    """The topmost folder of ``path`` (itself or an ancestor) that does not exist yet, so a
    failed backup or restore removes only what it created; ``None`` when ``path`` exists."""
    missing = None
    for candidate in (path, *path.parents):
        if os.path.lexists(candidate):
            break
        missing = candidate
    return missing


def check_subdir(subdir: str) -> str:
    """The backup path as a clean relative path with ``/``.

    Raises:
        BackupRefused: it is empty, absolute, holds ``..`` or names a ``.git`` folder.
    """
    parts = [p for p in subdir.replace("\\", "/").split("/") if p not in ("", ".")]
    if not parts or subdir.startswith("/") or any(p == ".." or p.lower() == ".git" for p in parts):
        raise BackupRefused(f"the backup path {subdir!r} must be a folder inside the repository "
                            "(relative, without `..` or `.git`), for example `memtui-backup`.")
    return "/".join(parts)


class BackupRepo:
    """A git repository holding backups, found by git itself (``git rev-parse``, through
    :mod:`.safegit`: GitPython's own config reader follows an ``include.path`` of ``/dev/zero``
    for ever, where git stops at once with "bad config line").

    Args:
        root: the top folder (the repository folder itself when bare).
        bare: no working folder.
        git_dir: the ``.git`` folder (the repository folder when bare).
    """

    def __init__(self, root: Path, bare: bool, git_dir: Path) -> None:
        self.root = root
        self.bare = bare
        self.git_dir = git_dir
        #: this :meth:`open` ran ``git init`` (a new repository, which the user is told about)
        self.created = False
        self._listing: list[safegit.Entry] | None = None

    @classmethod
    def open(cls, path: str | os.PathLike[str], *, create: bool = False) -> "BackupRepo":
        """Open the repository at ``path`` (its top folder, or a bare repository).

        Args:
            path: the repository folder.
            create: run ``git init`` when ``path`` is not a repository (the folder is made).

        Raises:
            GitError: not a repository (and ``create`` is false), ``path`` lies inside another
                repository's tree without being its top, git cannot read the repository (its
                configuration, its ownership: git's words), or git cannot be run.
        """
        folder = Path(path).expanduser()
        if not folder.exists():
            if not create:
                raise GitError(f"{folder} does not exist; give the path of a git repository.")
            folder.mkdir(parents=True, exist_ok=True)
            return cls._init(folder)
        if not folder.is_dir():
            raise GitError(f"{folder} is a file, not a git repository; give the folder of a git repository.")
        found = cls._locate(folder)
        if found is not None:
            return found
        if not create:
            raise GitError(f"{folder} is not a git repository; run `memtui backup --repo {folder}` "
                           "to create one, or `git init` it.")
        if any(folder.iterdir()):
            raise BackupRefused(
                f"{folder} is a folder but not a git repository; memtui creates a repository only "
                f"in a new (or empty) folder. `git init {folder}` it yourself if it should hold the "
                "backups, or give another --repo.")
        return cls._init(folder)

    @classmethod
    def _locate(cls, folder: Path) -> "BackupRepo | None":
        """The repository whose top (or bare) folder ``folder`` is; ``None`` when ``folder`` is in
        no repository.

        Raises:
            GitError: ``folder`` lies inside a repository without being its top; git failed.
        """
        def rev_parse(*args: str) -> tuple[int, str, str]:
            try:
                status, out, err = safegit.run(folder, ["rev-parse", *args], safegit.overrides([]))
            except FileNotFoundError as exc:
                raise GitError(f"git cannot be run ({exc}); install git.") from exc
            return status, out.decode("utf-8", "surrogateescape"), err.decode("utf-8", "replace").strip()

        status, out, err = rev_parse("--is-bare-repository", "--absolute-git-dir")
        if status != 0:
            if "not a git repository" in err:
                return None
            raise GitError(f"git cannot open {folder}: {err or f'exit status {status}'}")
        bare_word, git_dir = (out.split("\n") + ["", ""])[:2]
        here = os.path.realpath(folder)
        if bare_word == "true":
            if os.path.realpath(git_dir) == here:
                return cls(folder, True, Path(git_dir))
            raise GitError(f"{folder} is inside the bare git repository {git_dir}; give that folder as --repo.")
        status, top, _err = rev_parse("--show-toplevel")
        top = top.strip()
        if status != 0 or not top:
            top = os.path.dirname(git_dir.rstrip("/"))
        if os.path.realpath(top) != here:
            raise GitError(f"{folder} is inside the git repository {top}; give that folder as --repo "
                           f"and the backup folder with --path.")
        return cls(folder, False, Path(git_dir))

    @classmethod
    def _init(cls, folder: Path) -> "BackupRepo":
        try:
            # the path as absolute: git resolves a relative one against its working folder, which
            # is ``folder`` itself (`--repo repo` made repo/repo and then found no repository)
            status, _out, err = safegit.run(folder, ["init", "-q", "--", os.path.abspath(folder)],
                                            safegit.overrides([]))
        except FileNotFoundError as exc:
            raise GitError(f"git cannot be run ({exc}); install git.") from exc
        if status != 0:
            raise GitError(f"cannot create a git repository in {folder}: "
                           f"{err.decode('utf-8', 'replace').strip() or f'exit status {status}'}")
        made = cls._locate(folder)
        if made is None:
            raise GitError(f"cannot create a git repository in {folder}: git made none")
        made.created = True
        return made

    # -- running git ---------------------------------------------------------------------------
    def safe_config(self, *, no_credential_helper: bool = False) -> list[tuple[str, str]]:
        """The configuration every git command here runs with (:func:`safegit.overrides` of
        this repository's config, listed once).

        Raises:
            GitError: git cannot read the repository's configuration (a broken or looping include).
        """
        if self._listing is None:
            try:
                status, entries, err = safegit.listing(self.root)
            except FileNotFoundError as exc:
                raise GitError(f"git cannot be run ({exc}); install git.") from exc
            if status != 0:
                raise GitError(f"git cannot read the configuration of {self.root}: "
                               f"{err.decode('utf-8', 'replace').strip() or f'exit status {status}'}")
            self._listing = entries
        return safegit.overrides(self._listing, no_credential_helper=no_credential_helper)

    def git(self, *args: str | bytes, env: dict[str, str] | None = None, stdin: Any = None,
            check: bool = True, secret: str | None = None,
            config: list[tuple[str, str]] | None = None) -> tuple[int, bytes, bytes]:
        """Run ``git <GIT_OPTIONS> <args>`` in the repository through :func:`safegit.run`
        (nothing the repository names runs).

        Args:
            args: the command and its arguments (bytes for names that are not UTF-8).
            env: extra environment variables for this command only.
            stdin: a file object to feed to the command.
            check: raise :class:`GitError` when the command fails.
            secret: a value scrubbed (``***``) from any message.
            config: the safe configuration (default :meth:`safe_config`).

        Returns:
            ``(status, stdout bytes, stderr bytes)``.

        Raises:
            GitError: the command failed (with git's own words, secret scrubbed) and ``check``.
        """
        pairs = self.safe_config() if config is None else config
        try:
            status, out, err_b = safegit.run(self.root, args, pairs, self._listing or (), extra=env, stdin=stdin)
        except FileNotFoundError as exc:
            raise GitError(f"git cannot be run ({exc}); install git.") from exc
        if check and status != 0:
            words = " ".join(a.decode("utf-8", "backslashreplace") if isinstance(a, bytes) else a
                             for a in args[:2])
            message = err_b.decode("utf-8", "replace").strip() or f"exit status {status}"
            raise GitError(mask_url(scrub(f"`git {words}` failed in {self.root}: {message}", secret)))
        return status, out, err_b

    # -- state ---------------------------------------------------------------------------------
    def head(self) -> HeadState:
        """Where HEAD is, without the exceptions GitPython raises for ordinary states."""
        status, out, _ = self.git("symbolic-ref", "-q", "HEAD", check=False)
        branch = out.decode("utf-8", "replace").strip().removeprefix("refs/heads/") if status == 0 else None
        status, out, _ = self.git("rev-parse", "-q", "--verify", "HEAD^{commit}", check=False)
        commit = out.decode().strip() if status == 0 else None
        _, out, _ = self.git("for-each-ref", "--format=%(refname:short)", "refs/heads/", check=False)
        branches = tuple(b for b in out.decode("utf-8", "replace").split("\n") if b)
        return HeadState(branch, commit, branch is None, branch is not None and commit is None, branches)

    def identity(self, configured: dict[str, Any] | None = None) -> Identity:
        """The author of backup commits; never made up.

        Args:
            configured: the ``[git]`` table of ``memtui.toml`` (``name``, ``email``), if any.

        Returns:
            The first complete identity of: ``memtui.toml [git]``, ``$GIT_AUTHOR_NAME`` with
            ``$GIT_AUTHOR_EMAIL``, git's ``user.name`` with ``user.email``.

        Raises:
            BackupRefused: none is complete; the message says what is missing and how to set it.
        """
        return find_identity(configured, lambda *args: self.git(*args, check=False), self.root)

    def changes(self, subdir: str) -> list[bytes]:
        """Uncommitted changes under ``subdir`` (staged or not, untracked included), as names."""
        _, out, _ = self.git("status", "--porcelain=v1", "-z", "--untracked-files=all", "--ignore-submodules=all",
                             "--", subdir)
        names, parts, i = [], out.split(b"\0"), 0
        while i < len(parts):
            item = parts[i]
            if len(item) > 3:
                names.append(item[3:])
                if item[:1] in (b"R", b"C") or item[1:2] in (b"R", b"C"):
                    i += 1
            i += 1
        return names

    # -- backup --------------------------------------------------------------------------------
    def protect(self, subdir: str) -> None:
        """Make git store every file under ``subdir`` as its bytes, whatever the tree says.

        A workspace may carry its own ``.gitattributes`` (``* text``, ``filter=lfs``), which
        would convert the copies under ``files/`` on ``git add``; ``$GIT_DIR/info/attributes``
        outranks every ``.gitattributes``, so one line there (``/<subdir>/** -text -filter
        -ident -working-tree-encoding``) keeps the promise. Only that line is added, once.
        Ignored files are staged anyway (``git add --force``): a workspace ``.gitignore`` must
        not drop files from the backup.
        """
        line = f"/{subdir}/** -text -filter -ident -working-tree-encoding\n"
        _, out, _ = self.git("rev-parse", "--git-path", "info/attributes")
        path = self.root / os.fsdecode(out.rstrip(b"\n"))  # relative to the top folder, or absolute
        path.parent.mkdir(exist_ok=True)
        try:
            current = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            current = ""
        if line not in current.splitlines(keepends=True):
            atomic.write_text(path, current + ("" if not current or current.endswith("\n") else "\n") + line)

    def commit_path(self, subdir: str, message: str, identity: Identity) -> str | None:
        """Stage ``subdir`` and commit it alone.

        Returns:
            The new commit's hex id, or ``None`` when nothing under ``subdir`` changed
            (no commit is made).

        Raises:
            GitError: git failed (nothing is half-committed: git's commit is atomic).
        """
        self.protect(subdir)
        self.git("add", "-A", "--force", "--", subdir)
        status, _, _ = self.git("diff", "--cached", "--quiet", "--no-ext-diff", "--no-textconv", "--", subdir,
                                     check=False)
        if status == 0:
            return None
        env = {"GIT_AUTHOR_NAME": identity.name, "GIT_AUTHOR_EMAIL": identity.email,
               "GIT_COMMITTER_NAME": identity.name, "GIT_COMMITTER_EMAIL": identity.email}
        with tempfile.TemporaryFile() as handle:
            handle.write(message.encode("utf-8"))
            handle.seek(0)
            self.git("commit", "-q", "--no-verify", "-F", "-", "--", subdir, env=env, stdin=handle)
        _, out, _ = self.git("rev-parse", "HEAD")
        return out.decode().strip()

    def gc(self) -> None:
        """``git gc --auto`` in the foreground, after our commit, so no background gc races us."""
        self.git("gc", "--auto", "--quiet", check=False)  # gc.autoDetach=false: safegit.FIXED

    def remote_for(self, branch: str | None, wanted: str | None = None) -> str:
        """The remote to push to: ``wanted``, else the branch's upstream remote, else ``origin``.

        Raises:
            GitError: there is no such remote (with how to add one).
        """
        _, out, _ = self.git("remote", check=False)
        remotes = out.decode("utf-8", "replace").split()
        name = wanted
        if not name and branch:
            status, got, _ = self.git("config", "--get", f"branch.{branch}.remote", check=False)
            name = got.decode().strip() if status == 0 else None
        name = name or ("origin" if "origin" in remotes else (remotes[0] if len(remotes) == 1 else None))
        if not name or name not in remotes:
            raise GitError(f"the backup repository {self.root} has no remote "
                           f"{('named ' + repr(name)) if name else 'to push to'}; add one with "
                           f"`git -C {self.root} remote add origin URL` (a local bare repository works offline).")
        return name

    def remote_url(self, remote: str) -> str:
        """The remote's push URL."""
        _, out, _ = self.git("remote", "get-url", "--push", remote)
        return out.decode("utf-8", "replace").strip()

    def push(self, remote: str, branch: str, token: str | None = None) -> PushResult:
        """Push ``branch`` to the same branch on ``remote``; never forced.

        A token (for https remotes) reaches git only through the environment of this one
        command: a ``GIT_ASKPASS`` helper script in a private temporary folder prints
        ``$MEMTUI_ASKPASS_SECRET``; the script holds no secret, nothing is written to the repo
        config, and every credential helper is dropped so none stores it (invariant 8). Without a
        token, git asks the credential helpers of your own config (never the repository's).
        The remote's ``receive-pack`` is git's own (:func:`safegit.receive_pack`).

        Returns:
            :class:`PushResult`; ``ok`` is false when the remote rejected the push (with the
            reason and what to do) — LIBRARY-NOTES: GitPython's ``push()`` would return normally.
        """
        url = self.remote_url(remote)
        receive_pack, env = safegit.receive_pack(url, self.root)  # never the program remote.<name>.receivepack names
        helper_dir = None
        if token:
            helper_dir = tempfile.mkdtemp(prefix="memtui-askpass-")
            script = Path(helper_dir) / "askpass.sh"
            script.write_text('#!/bin/sh\ncase "$1" in\n  Username*) printf "%s\\n" "${MEMTUI_ASKPASS_USER:-x-access-token}" ;;\n'
                              '  *) printf "%s\\n" "$MEMTUI_ASKPASS_SECRET" ;;\nesac\n')
            os.chmod(script, stat.S_IRWXU)
            env.update({"GIT_ASKPASS": str(script), "MEMTUI_ASKPASS_SECRET": token,
                        "MEMTUI_ASKPASS_USER": os.environ.get("MEMTUI_GIT_USER", "x-access-token"),
                        "SSH_ASKPASS": str(script)})
        try:
            status, out, err = self.git("push", "--porcelain", f"--receive-pack={receive_pack}", "--", remote,
                                        f"refs/heads/{branch}:refs/heads/{branch}", env=env, check=False,
                                        secret=token, config=self.safe_config(no_credential_helper=bool(token)))
        finally:
            if helper_dir:
                for name in os.listdir(helper_dir):
                    os.unlink(os.path.join(helper_dir, name))
                os.rmdir(helper_dir)
        text = mask_url(scrub((out + b"\n" + err).decode("utf-8", "replace"), token))
        shown_url = mask_url(scrub(url, token))
        if status == 0:
            return PushResult(True, remote, shown_url, f"pushed {branch} to {remote} ({shown_url})")
        reason = next((line.split("\t")[-1] for line in text.splitlines() if line.startswith("!")), "")
        said = [line.removeprefix("remote:").strip() for line in text.splitlines() if line.startswith("remote:")]
        said = [line for line in said if line]
        if reason:
            advice = (f"the remote {remote} ({shown_url}) rejected the push of {branch}: {reason}."
                      + (f" The remote says: {' / '.join(said)}." if said else "")
                      + " " + push_advice(reason, said, self.root, remote, branch) + " memtui never force-pushes.")
        else:
            detail = " ".join(line.strip() for line in text.splitlines() if line.strip())
            advice = (f"the push of {branch} to {remote} ({shown_url}) failed: {detail or 'exit status ' + str(status)}. "
                      "Check the remote's address and your access (for https: `memtui secret set git-token`, "
                      "or MEMTUI_GIT_TOKEN).")
        return PushResult(False, remote, shown_url, advice)

    def tracking_updated(self, remote: str, branch: str) -> tuple[str, str] | None:
        """How and when ``remote/branch`` (the remote-tracking ref the ahead/behind counts
        compare with) was last updated: ``("fetch" | "push" | "other", ISO date)``, or
        ``None`` when git has no record of it ("0 behind" is only as fresh
        as that update)."""
        import datetime as _dt

        found: tuple[str, str] | None = None
        status, out, _ = self.git("log", "-g", "-1", "--format=%gs%x00%gd", "--date=iso-strict",
                                  f"refs/remotes/{remote}/{branch}", check=False)
        if status == 0 and b"\0" in out:
            subject, _, ref = out.decode("utf-8", "replace").strip().partition("\0")
            how = "fetch" if subject.startswith(("fetch", "pull")) else "push" if "push" in subject else "other"
            found = (how, ref[ref.find("{") + 1:ref.rfind("}")] if "{" in ref else "")
        # a fetch that brought nothing new updates no ref, but it does write FETCH_HEAD
        status, out, _ = self.git("rev-parse", "--git-path", "FETCH_HEAD", check=False)
        if status == 0:
            fetch_head = Path(out.decode("utf-8", "replace").strip())
            if not fetch_head.is_absolute():
                fetch_head = self.root / fetch_head
            try:
                fetched = _dt.datetime.fromtimestamp(fetch_head.stat().st_mtime).astimezone().isoformat(
                    timespec="seconds")
            except OSError:
                fetched = ""
            if fetched and (found is None or _later_or_same(fetched, found[1])):
                found = ("fetch", fetched)
        return found

    def ahead_behind(self, remote: str, branch: str) -> tuple[int, int] | None:
        """``(ahead, behind)`` of ``branch`` against ``remote/branch`` as last fetched, or ``None``."""
        status, out, _ = self.git("rev-list", "--left-right", "--count",
                                  f"refs/heads/{branch}...refs/remotes/{remote}/{branch}", check=False)
        if status != 0:
            return None
        left, right = out.decode().split()
        return int(left), int(right)

    # -- reading backups -----------------------------------------------------------------------
    def resolve(self, rev: str | None) -> str:
        """The commit id of ``rev`` (default ``HEAD``).

        Raises:
            GitError: there is no such commit (or no commit at all yet).
        """
        name = rev or "HEAD"
        status, out, _ = self.git("rev-parse", "-q", "--verify", "--end-of-options", f"{name}^{{commit}}",
                                  check=False)
        if status != 0:
            if rev is None:
                raise GitError(f"the backup repository {self.root} has no commits yet: there is no backup "
                               "to read. Run `memtui backup` first.")
            raise GitError(f"{rev!r} is not a commit of {self.root}; `memtui backup --history` lists the backups.")
        return out.decode().strip()

    def commit_date(self, commit: str) -> str:
        """When ``commit`` was made (its committer date, ISO 8601 with its offset); ``""`` when
        git cannot say."""
        status, out, _ = self.git("log", "-1", "--no-walk", "--format=%cI", commit, "--", check=False)
        return out.decode("utf-8", "replace").strip() if status == 0 else ""

    def history(self, subdir: str, limit: int | None = None, skip: int = 0) -> list[HistoryEntry]:
        """Commits that touched ``subdir``, newest first, with their changed-file counts: at
        most ``limit`` (all when ``None``) after the newest ``skip``.

        Returns ``[]`` for a repository with no commits (an ordinary state, not an error).
        """
        if self.head().commit is None and not self.head().branches:
            return []
        args = ["log", "-z", "--format=%x1e%H%x1f%an <%ae>%x1f%aI%x1f%s", "--name-only"]
        if limit is not None:
            args.append(f"-n{limit}")
        if skip:
            args.append(f"--skip={skip}")
        ref = "HEAD" if self.head().commit else "--all"
        status, out, _ = self.git(*args, ref, "--", subdir, check=False)
        if status != 0:
            return []
        entries = []
        for chunk in out.split(b"\x1e")[1:]:
            head, _, names = chunk.partition(b"\0")
            commit, author, date, subject = head.decode("utf-8", "replace").split("\x1f", 3)
            changed = sum(1 for n in names.split(b"\0") if n.strip(b"\n"))
            entries.append(HistoryEntry(commit, date, author, subject, changed))
        return entries

    def history_count(self, subdir: str) -> int:
        """How many commits :meth:`history` lists in all (0 for a repository with no commits)."""
        if self.head().commit is None and not self.head().branches:
            return 0
        status, out, _ = self.git("rev-list", "--count", "HEAD" if self.head().commit else "--all",
                                  "--", subdir, check=False)
        return int(out.strip() or 0) if status == 0 else 0

    def read_tree(self, commit: str, subdir: str, limits: Limits | None = None,
                  doing: str = "restored") -> tuple[dict[bytes, Entry], list[Finding]]:
        """The files under ``subdir`` at ``commit``, relative to ``subdir``.

        Entries that are not plain files (symbolic links, submodules) are left out with a
        ``restore-refused`` finding each (invariant 4). The sizes are checked against
        ``limits`` (default :meth:`Limits.of` the defaults) before any file is read; the files
        are then read one at a time from one ``git cat-file --batch`` stream, so a file costs
        its own size in memory once.

        Args:
            doing: the word for the refusal (``nothing was <doing>``).

        Raises:
            GitError: git failed, or ``subdir`` holds nothing at ``commit``.
            TooLarge: a file, or all of them, exceed ``limits`` (nothing read).
        """
        limits = limits or Limits.of()
        _, out, _ = self.git("ls-tree", "-r", "-l", "-z", "--full-tree", commit, "--", subdir)
        prefix = subdir.encode("utf-8") + b"/"
        wanted: list[tuple[bytes, bytes, bool, int]] = []
        findings: list[Finding] = []
        for item in out.split(b"\0"):
            if not item:
                continue
            meta, _, path = item.partition(b"\t")
            mode, kind, sha, listed = meta.split()
            rel = path[len(prefix):] if path.startswith(prefix) else path
            if kind != b"blob" or mode not in (b"100644", b"100755"):
                what = "a symbolic link" if mode == b"120000" else f"a {kind.decode()} (mode {mode.decode()})"
                findings.append(Finding.make("restore-refused", shown(rel),
                                             f"is {what} in the backup; not written",
                                             "nothing to do: a restore writes plain files only"))
                continue
            wanted.append((rel, sha, mode == b"100755", int(listed)))
        if not wanted and not findings:
            raise NotABackupError(f"commit {commit[:7]} of {self.root} holds nothing under {subdir}/; "
                           "check --path (the folder the backups were made into).")
        self._check_limits(commit, wanted, limits, doing)
        files: dict[bytes, Entry] = {}
        with tempfile.TemporaryFile() as handle:
            handle.write(b"".join(sha + b"\n" for _, sha, _, _ in wanted))
            handle.seek(0)
            try:
                proc = safegit.popen(self.root, ["cat-file", "--batch"], self.safe_config(), self._listing or (),
                                     stdin=handle)
            except FileNotFoundError as exc:
                raise GitError(f"git cannot be run ({exc}); install git.") from exc
            stream = proc.stdout
            assert stream is not None
            err = b""
            try:
                for rel, sha, executable, size in wanted:
                    header = stream.readline().split()
                    if len(header) != 3 or header[0] != sha or header[1] != b"blob" or int(header[2]) != size:
                        raise GitError(f"`git cat-file` in {self.root} did not give {shown(rel)} ({sha.decode()}) "
                                       f"as listed: {b' '.join(header).decode('utf-8', 'replace') or 'nothing'}")
                    data = stream.read(size)  # one bytes object of the file's size: no second copy
                    if len(data) != size or stream.read(1) != b"\n":
                        raise GitError(f"`git cat-file` in {self.root} stopped in the middle of {shown(rel)}")
                    files[rel] = Entry(data, executable)
            finally:
                stream.close()
                status = proc.wait()
                if proc.stderr is not None:
                    proc.stderr.seek(0)
                    err = proc.stderr.read()
                    proc.stderr.close()
            if status != 0:
                raise GitError(f"`git cat-file --batch` failed in {self.root}: "
                               f"{err.decode('utf-8', 'replace').strip() or f'exit status {status}'}")
        return files, findings

    def _check_limits(self, commit: str, wanted: list[tuple[bytes, bytes, bool, int]], limits: Limits,
                      doing: str) -> None:
        """Raise :class:`TooLarge` naming the first file over ``limits.file``, or the total."""
        where = f"the backup {commit[:7]} of {self.root}"
        for rel, _sha, _x, size in wanted:
            if size > limits.file:
                name = shown(rel[len(FILES):] if rel.startswith(FILES) else rel)
                raise TooLarge(f"{where} holds the file {name} ({size:,} bytes), over the limit of {limits.file:,} "
                               f"bytes a file ([backup] max_restore_file_bytes in memtui.toml); nothing was "
                               f"{doing}. Raise that limit in the memtui.toml of the workspace you run this from "
                               "(-w) to read it.")
        total = sum(size for *_rest, size in wanted)
        if total > limits.total:
            raise TooLarge(f"{where} holds {total:,} bytes in {len(wanted):,} files, over the limit of "
                           f"{limits.total:,} bytes in all ([backup] max_restore_bytes in memtui.toml; a restore "
                           f"holds the files in memory); nothing was {doing}. Raise that limit in the memtui.toml "
                           "of the workspace you run this from (-w) to read it.")

    def fsck(self) -> tuple[bool, str]:
        """``git fsck --full --strict``: ``(passed, output)``."""
        status, out, err = self.git("fsck", "--full", "--strict", check=False)
        return status == 0, (out + err).decode("utf-8", "replace")


def _later_or_same(a: str, b: str) -> bool:
    """``a >= b`` for two ISO 8601 times (any offsets); True when ``b`` cannot be read."""
    import datetime as _dt

    try:
        return _dt.datetime.fromisoformat(a) >= _dt.datetime.fromisoformat(b)
    except ValueError:
        return True


def push_advice(reason: str, said: list[str], root: Path, remote: str, branch: str) -> str:
    """What to do about a push the remote rejected, from git's reason (``[rejected]
    (fetch first)``, ``[remote rejected] (pre-receive hook declined)`` …) and the remote's own
    ``remote:`` lines (a hook's refusal is not answered with "fetch and
    merge")."""
    words = (reason + " " + " ".join(said)).lower()
    if "fetch first" in words or "non-fast-forward" in words or "stale info" in words:
        return (f"It has commits this repository does not; fetch and merge them "
                f"(`git -C {root} pull --no-rebase {remote} {branch}`), then back up again.")
    if "protected" in words:
        return (f"{branch} is a protected branch of the remote: push the backups to another branch (check out "
                f"one in {root} and back up again), or ask the remote's administrator to let this account push.")
    if "hook" in words:
        return ("A hook of the remote refused it; its message says why (above). Change what it objects to, or "
                "ask the remote's administrator; fetching and merging will not help.")
    if "permission" in words or "denied" in words or "forbidden" in words or "403" in words:
        return ("The remote does not let this account push there: check your access (for https: "
                "`memtui secret set git-token`, or MEMTUI_GIT_TOKEN).")
    return "Read the remote's reason above; fix what it names, then back up again."


def scrub(text: str, secret: str | None) -> str:
    """``text`` with every occurrence of ``secret`` replaced by ``***`` (no-op without one)."""
    return text.replace(secret, "***") if secret else text


def find_identity(configured: dict[str, Any] | None = None, run_git: Any = None,
                  root: Path | None = None) -> Identity:
    """The author of backup commits, looked up without needing a repository.

    Args:
        configured: ``memtui.toml [git]`` (``name``, ``email``).
        run_git: ``(*args) -> (status, stdout, stderr)``; default runs ``git`` outside any
            repository (global and system config only), so the identity can be checked
            before ``git init``.
        root: the repository named in the refusal's advice (``None``: no repository yet).

    Raises:
        BackupRefused: no complete identity; the message says what is missing and how to set it.
    """
    if run_git is None:
        def run_git(*args: str) -> tuple[int, bytes, bytes]:
            folder = safegit.outside()  # new and empty: git reads your global and system config only
            try:
                return safegit.run(folder, args, safegit.overrides([]),
                                   extra={"GIT_CEILING_DIRECTORIES": str(folder.parent)})
            except FileNotFoundError as exc:
                raise GitError(f"git cannot be run ({exc}); install git.") from exc
            finally:
                os.rmdir(folder)
    configured = configured or {}
    name, email = configured.get("name"), configured.get("email")
    if isinstance(name, str) and name.strip() and isinstance(email, str) and email.strip():
        return Identity(name.strip(), email.strip(), "memtui.toml [git]")
    if os.environ.get("GIT_AUTHOR_NAME") and os.environ.get("GIT_AUTHOR_EMAIL"):
        return Identity(os.environ["GIT_AUTHOR_NAME"], os.environ["GIT_AUTHOR_EMAIL"],
                        "GIT_AUTHOR_NAME/GIT_AUTHOR_EMAIL")
    found = {}
    for key in ("user.name", "user.email"):
        status, out, _ = run_git("config", "--get", key)
        value = out.decode("utf-8", "replace").strip()
        if status == 0 and value:
            found[key] = value
    if len(found) == 2:
        return Identity(found["user.name"], found["user.email"], "git config")
    missing = " and ".join(k for k in ("user.name", "user.email") if k not in found)
    raise BackupRefused(
        f"git has no identity to sign the backup commit with ({missing} not set), and memtui "
        "never invents an author. Set it with `git config --global user.name \"Your Name\"` and "
        "`git config --global user.email you@example.org`"
        + (f" (add `-C {root}` instead of --global for this repository only)" if root else "")
        + ", or in the workspace's "
        "memtui.toml:\n  [git]\n  name = \"Your Name\"\n  email = \"you@example.org\"")

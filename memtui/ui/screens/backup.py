"""The Backup area: status, Backup now, history, Restore of a chosen commit, Verify.

- The status panel shows the repository, backup path, branch (or the detached HEAD / unborn
  branch in words), remote and ahead/behind, the last backup and its counts, and the
  uncommitted changes under the backup path.
- ``b`` Backup now: render, commit only the backup path, and push when ``[backup] push =
  true``; progress in a bar. ``v`` Verify the highlighted backup (or the newest): the diff
  viewer lists every differing file with its unified diff, or says "zero differences".
  ``r`` Restore the highlighted commit into a folder you type (empty or new).
  ``e`` change the repository folder (remembered in ``memtui.toml`` through the guarded write);
  ``p`` push the backups now (asked first when ``[backup] push`` is off); ``ctrl+l`` reload the
  status. A backup made by another process (the CLI, cron) shows within seconds.
- The status says how many files changed since the last backup (a render compared with the
  last backup's tree, :func:`memtui.core.backup.commit.pending`), and a bare repository is
  said to be one at once, not when ``b`` fails.
- The history table lists the backups (git log of the backup path) with their changed-file
  counts, newest first.

Everything that touches git runs in a worker thread (``@work(thread=True)``) and talks to
widgets through ``call_from_thread``; failures are shown with their reason (the sentence of
the core's ``BackupRefused``/``GitError``), never a traceback. User text (paths, subjects,
authors, diffs) is passed as :class:`rich.text.Text` or loaded into a read-only
:class:`TextArea`, never parsed as markup (invariant 11). The backup takes no writer lock:
it only reads the workspace (:mod:`memtui.core.backup.commit`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.widgets import Button, DataTable, Header, ProgressBar, Static, TextArea

from memtui.core.backup import commit as core
from memtui.core.backup.follow import head_signature
from memtui.core.backup.git import BackupRefused, GitError, Limits
from memtui.core.backup.render import BackupFormatError
from memtui.core.backup.restore import restore
from memtui.core.backup.verify import verify
from memtui.core.errors import MemtuiError
from memtui.core.store import StoreDamagedError
from memtui.ui.widgets import KeyFooter
from memtui.ui.widgets import AreaBar, DataTextArea
from memtui.ui.widgets import AskText, Confirm
from memtui.core.text import plural
from memtui.ui.text import as_data, safe
from memtui.ui.screens.base import AreaScreen

#: Backups listed in the history table (newest first).
HISTORY_ROWS = 200
#: Seconds between two looks at the backup repository for a backup made elsewhere (CLI, cron).
FOLLOW_SECONDS = 2.0
_FAILURES = (BackupRefused, GitError, BackupFormatError, StoreDamagedError, MemtuiError, OSError)


class BackupScreen(AreaScreen):
    """Back the workspace up to git, browse the backups, restore one, verify one."""

    DEFAULT_CSS = """
    BackupScreen #backup-status { height: auto; max-height: 9; padding: 0 1; border: round $primary; }
    BackupScreen #backup-bar { height: 3; }
    BackupScreen #backup-progress { width: 1fr; padding: 1 1 0 1; }
    BackupScreen #backup-message { height: auto; padding: 0 1; }
    BackupScreen #backup-main { height: 1fr; }
    BackupScreen #history { width: 1fr; }
    BackupScreen #diff { width: 1fr; }
    """

    BINDINGS = [
        Binding("b", "backup", "Backup now", id="backup.backup"),
        Binding("v", "verify", "Verify", id="backup.verify"),
        Binding("r", "restore", "Restore…", id="backup.restore"),
        Binding("e", "edit_repo", "Repository…", tooltip="choose the backup repository (remembered in memtui.toml)",
                id="backup.edit-repo"),
        Binding("p", "push", "Push", tooltip="push the backups to the remote now", id="backup.push"),
        Binding("ctrl+l", "reload", "Reload", id="backup.reload"),
    ]

    def __init__(self) -> None:
        super().__init__()
        self.state: dict[str, Any] | None = None
        self.repo: str | None = None
        self.subdir: str = core.DEFAULT_PATH
        self.last_message: str = ""
        self.busy = False

    def compose(self) -> ComposeResult:
        yield Header()
        yield AreaBar()
        yield Static(id="backup-status")
        with Horizontal(id="backup-bar"):
            yield Button(Text("Backup now (b)"), id="do-backup", variant="primary")
            yield Button(Text("Verify (v)"), id="do-verify")
            yield Button(Text("Restore… (r)"), id="do-restore")
            yield ProgressBar(total=100, show_eta=False, id="backup-progress")
        yield Static(id="backup-message")
        with Horizontal(id="backup-main"):
            yield DataTable(id="history", cursor_type="row", zebra_stripes=True)
            yield DataTextArea(id="diff", read_only=True, show_line_numbers=False)
        yield KeyFooter()

    def on_mount(self) -> None:
        conf = core.settings(self.app.ws)
        self.repo, self.subdir = conf.repo, conf.path
        table = self.query_one("#history", DataTable)
        for name in ("commit", "date", "changed", "author", "subject"):
            table.add_column(name, key=name)
        self.sub_title = f"{getattr(self.app, 'badge', '')}Backup"
        self._stale = False
        if hasattr(self.app, "workspace_changed"):
            self.app.workspace_changed.subscribe(self, self._on_changes)
        self._seen_head = head_signature(self.repo)
        self.set_interval(FOLLOW_SECONDS, self._follow_repository)
        self.action_reload()

    def _follow_repository(self) -> None:
        """A backup made by another process (the CLI, cron) moves the repository's head, which
        is outside the workspace the watcher follows: look at the head's files (metadata only,
        no git command) and reload when they moved."""
        seen = head_signature(self.repo)
        if seen == self._seen_head:
            return
        self._seen_head = seen
        if self.busy:
            return  # this area's own backup, push or restore: it reloads when it ends
        if self.app.screen is self:
            self.action_reload()
        else:
            self._stale = True

    def _on_changes(self, changes) -> None:  # noqa: ANN001 - memtui.core.watch.Changes
        """The workspace changed: read the backup state again (now if this area is shown, else
        when it is next shown), so the status never describes an older workspace."""
        if self.app.screen is self:
            self.action_reload()
        else:
            self._stale = True

    def on_screen_resume(self) -> None:
        if getattr(self, "_stale", False):
            self._stale = False
            self.action_reload()

    def _repo(self) -> str:
        """The backup repository's folder.

        Raises:
            BackupRefused: none is chosen yet (the area offers ``e`` to choose one).
        """
        if not self.repo:
            raise BackupRefused("no backup repository yet: press e to choose its folder")
        return self.repo

    # -- status --------------------------------------------------------------------------------
    def action_reload(self) -> None:
        """Read the repository's state again (in a worker)."""
        self._say(Text("reading the backup repository…", style="dim"))
        self.load_status()

    @work(thread=True, exclusive=True, group="backup-status")
    def load_status(self) -> None:
        state = core.status(self.repo, self.subdir, core.settings(self.app.ws).remote, HISTORY_ROWS)
        if state["exists"] and state["last"] and not state["problem"]:
            try:  # what a backup now would change: a render compared with the last backup's tree
                state["pending"] = core.pending(self.app.ws, self._repo(), self.subdir)
            except _FAILURES as exc:
                state["pending_error"] = str(exc)
        self.from_worker(self._show_status, state)

    def _show_status(self, state: dict[str, Any]) -> None:
        self.state = state
        lines = Text()
        lines.append("repository: ", style="bold")
        if state["repo"]:
            lines.append_text(safe(state["repo"]))
        else:
            lines.append("none yet: press e to choose a folder", style="yellow")
        lines.append("   path: ", style="bold")
        lines.append_text(safe(state["path"]))
        lines.append("/")
        lines.append("\nstate: ", style="bold")
        if not state["repo"]:
            lines.append("no backup made yet", style="dim")
        else:
            lines.append_text(safe(state["state"], "yellow" if state["detached"] or state["problem"] else ""))
        if state["problem"]:
            lines.append("\n")
            lines.append_text(safe(state["problem"], "bold yellow"))
        if state["remote"]:
            lines.append("\nremote: ", style="bold")
            against = core.compared(state)
            lines.append_text(safe(f"{state['remote']} ({state['url']})" + (f" — {against}" if against else "")))
        last = state["last"]
        lines.append("\nlast backup: ", style="bold")
        if last:
            counts = last.get("counts") or {}
            lines.append(f"{last['commit'][:10]} {last['date']} by ")
            lines.append_text(safe(last["author"]))
            lines.append(f" — {counts.get('files', '?')} files, {counts.get('records', '?')} store records")
            pending = state.get("pending")
            if pending is not None:
                lines.append("\nsince then: ", style="bold")
                lines.append(pending.sentence() + (" (press b to back them up)" if pending.count else ""),
                             style="bold yellow" if pending.count else "green")
            elif state.get("pending_error"):
                lines.append("\nsince then: ", style="bold")
                lines.append_text(safe(f"cannot tell ({state['pending_error']})", "yellow"))
        else:
            lines.append("none yet", style="dim")
        if state["uncommitted"]:
            lines.append("\nuncommitted changes under the backup path: ", style="bold")
            lines.append(str(len(state["uncommitted"])), style="yellow")
        self.query_one("#backup-status", Static).update(lines)
        table = self.query_one("#history", DataTable)
        table.clear()
        for entry in state["history"]:
            table.add_row(safe(entry["commit"][:10]), safe(entry["date"]), safe(str(entry["changed"])),
                          safe(entry["author"]), safe(entry["subject"]), key=entry["commit"])
        if not state["history"]:
            self._say(Text("no backups yet: press b to make the first" if state["repo"] else
                           "press e to choose the backup repository folder", style="dim"))
        elif not self.busy:
            self._say(Text(self.last_message or plural(len(state["history"]), "backup"), style="dim"))

    def _say(self, message: Text) -> None:
        """Show ``message`` (it may quote git or a repository: its controls are shown as data)."""
        if as_data(message.plain) != message.plain:
            message = Text(as_data(message.plain), style=message.style)
        self.query_one("#backup-message", Static).update(message)

    def _progress(self, fraction: float) -> None:
        self.query_one("#backup-progress", ProgressBar).update(progress=round(fraction * 100))

    def _selected_commit(self) -> str | None:
        table = self.query_one("#history", DataTable)
        if not self.state or not self.state["history"] or table.row_count == 0:
            return None
        row = table.cursor_row if table.cursor_row is not None else 0
        return self.state["history"][min(max(row, 0), len(self.state["history"]) - 1)]["commit"]

    def _start(self, what: str) -> bool:
        if self.busy:
            self.app.notify("a backup task is already running", severity="warning", markup=False)
            return False
        if not self.repo:
            self.app.notify("no backup repository yet: press e to choose its folder", severity="warning",
                            timeout=8, markup=False)
            return False
        self.busy = True
        self._progress(0)
        self._say(Text(what, style="dim"))
        return True

    def _failed(self, message: str) -> None:
        self.busy = False
        self.last_message = message
        self._say(safe(message, "red"))
        self.app.notify(message, title="Backup", severity="error", timeout=12, markup=False)

    # -- backup --------------------------------------------------------------------------------
    @on(Button.Pressed, "#do-backup")
    def action_backup(self) -> None:
        """Back the workspace up now (in a worker)."""
        if self._start("backing up…"):
            self.run_backup()

    @work(thread=True, exclusive=True, group="backup-task")
    def run_backup(self) -> None:
        ws = self.app.ws
        conf = core.settings(ws, self.repo, self.subdir)

        def progress(step: str, fraction: float) -> None:
            self.from_worker(self._progress, fraction)
            self.from_worker(self._say, Text(step + "…", style="dim"))

        try:
            result = core.backup(ws, conf.repo or self._repo(), conf.path, push=conf.push, remote=conf.remote, git_table=conf.git,
                                 progress=progress, session=self.app.session)
        except core.BackupBlocked as exc:  # a secret or a rewritten history: see the Audit area
            self.from_worker(self._failed, f"backup not made: {exc}")
            return
        except _FAILURES as exc:
            self.from_worker(self._failed, f"backup failed: {exc}")
            return
        self.from_worker(self._backup_done, result)

    def _backup_done(self, result: core.BackupResult) -> None:
        self.busy = False
        self._progress(1.0)
        counts = result.counts
        if result.commit:
            message = (f"backed up {counts['files']} files and {counts['records']} store records as "
                       f"{result.commit[:10]} ({len(result.written)} written, {len(result.removed)} removed), "
                       f"author {result.identity}")
        else:
            message = "nothing changed since the last backup; no commit made"
        if result.push is not None:
            message += "; " + (result.push.message if result.push.ok else f"backup NOT complete: {result.push.message}")
        if result.findings:
            message += (f"; {plural(len(result.findings), 'entry', 'entries')} not backed up: "
                        + "; ".join(f.summary() for f in result.findings[:3]))
        self.last_message = message
        self.app.notify(message, title="Backup", severity="information" if result.ok else "error",
                        timeout=10, markup=False)
        self.load_status()

    # -- verify --------------------------------------------------------------------------------
    @on(Button.Pressed, "#do-verify")
    def action_verify(self) -> None:
        """Verify the highlighted backup (the newest when none is highlighted)."""
        commit = self._selected_commit()
        if commit is None:
            self.app.notify("there is no backup to verify yet", severity="warning", markup=False)
            return
        if self._start(f"verifying {commit[:10]}…"):
            self.run_verify(commit)

    @work(thread=True, exclusive=True, group="backup-task")
    def run_verify(self, commit: str) -> None:
        steps = iter((0.1, 0.4, 0.7, 0.9))

        def progress(step: str) -> None:
            self.from_worker(self._progress, next(steps, 0.95))
            self.from_worker(self._say, Text(step + "…", style="dim"))

        try:
            result = verify(self._repo(), commit, self.subdir, progress,
                            limits=Limits.of(self.app.ws.config.backup))
        except _FAILURES as exc:
            self.from_worker(self._failed, f"verify failed: {exc}")
            return
        self.from_worker(self._verify_done, result)

    def _verify_done(self, result) -> None:  # noqa: ANN001 - VerifyResult
        self.busy = False
        self._progress(1.0)
        lines = []
        for finding in result.findings:
            lines.append(finding.summary() + "\n")
        for diff in result.differences:
            lines.append(f"differs ({diff.kind}): {diff.path}\n{diff.diff}\n")
        verdict = ("zero differences" if result.ok else
                   f"{plural(len(result.differences), 'difference')}, "
                   f"{plural(len(result.findings), 'restore finding')}")
        head = (f"verified backup {result.commit[:10]}: restored it into a temporary folder, rendered that "
                f"again and compared {plural(result.files, 'file')} and {plural(result.records, 'store record')} "
                f"byte for byte with the backup: {verdict}. This checks the backup, not the workspace")
        pending = (self.state or {}).get("pending")
        if pending is not None and pending.commit == result.commit:
            head += f"; in the workspace, {pending.sentence()}" + (" (press b)" if pending.count else "")
        head += ".\n\n"
        self.query_one("#diff", TextArea).load_text(head + "".join(lines))
        self.last_message = head.strip()
        self._say(safe(self.last_message, "green" if result.ok else "red"))
        self.app.notify(self.last_message, title="Verify", severity="information" if result.ok else "error", markup=False)

    # -- restore -------------------------------------------------------------------------------
    @on(Button.Pressed, "#do-restore")
    def action_restore(self) -> None:
        """Ask for a folder, then restore the highlighted commit into it."""
        commit = self._selected_commit()
        if commit is None:
            self.app.notify("there is no backup to restore yet", severity="warning", markup=False)
            return
        suggestion = str(Path(self.app.ws.root).parent / f"{Path(self.app.ws.root).name}-restored-{commit[:7]}")

        def chosen(folder: str | None) -> None:
            if folder and folder.strip() and self._start(f"restoring {commit[:10]}…"):
                self.run_restore(commit, folder.strip())

        self.app.push_screen(AskText(f"Restore backup {commit[:10]} into which folder? (empty or new)",
                                     suggestion), chosen)

    @work(thread=True, exclusive=True, group="backup-task")
    def run_restore(self, commit: str, folder: str) -> None:
        def progress(done: int, total: int) -> None:
            self.from_worker(self._progress, done / max(total, 1))

        try:
            result = restore(self._repo(), commit, self.subdir, folder, progress=progress,
                             limits=Limits.of(self.app.ws.config.backup))
        except _FAILURES as exc:
            self.from_worker(self._failed, f"restore failed: {exc}")
            return
        self.from_worker(self._restore_done, result)

    def _restore_done(self, result) -> None:  # noqa: ANN001 - RestoreResult
        self.busy = False
        self._progress(1.0)
        message = (f"restored {result.commit[:10]} into {result.target}: {result.files} files, "
                   f"{result.records} store records"
                   + (f"; {len(result.findings)} entries refused or mismatched (listed on the right)"
                      if result.findings else ""))
        if result.findings or result.left_out:
            self.query_one("#diff", TextArea).load_text(
                "".join(f.summary() + "\n" for f in result.findings) + "".join(
                    f"note: {note}\n" for note in result.notes()))
        if result.left_out:
            message += f"; {', '.join(result.left_out)}: no token (see the note)"
        self.last_message = message
        self._say(safe(message, "green" if result.ok else "yellow"))
        self.app.notify(message, title="Restore", severity="information" if result.ok else "warning", markup=False)

    # -- repository ----------------------------------------------------------------------------
    def action_edit_repo(self) -> None:
        """Type the backup repository folder; it is remembered as ``[backup] repo`` in
        ``memtui.toml`` (the choice was lost on restart)."""
        def chosen(value: str | None) -> None:
            if value and value.strip():
                self.repo = str(Path(value.strip()).expanduser().absolute())
                self.action_reload()
                self.remember_repo(self.repo)

        self.app.push_screen(AskText("Backup repository folder (created on the first backup):", self.repo or ""),
                             chosen)

    @work(thread=True, exclusive=True, group="backup-remember")
    def remember_repo(self, repo: str) -> None:
        """Write ``[backup] repo`` into memtui.toml (the guarded write); say what happened."""
        from memtui.core.config import set_setting

        session = self.app.session
        if session.read_only:
            self.from_worker(self.app.notify, f"using {repo} for now; it is not remembered because "
                                      f"{session.reason}", title="Backup", severity="warning", markup=False)
            return
        try:
            done = set_setting(session, "backup", "repo", repo)
        except (ValueError, MemtuiError, OSError) as exc:
            self.from_worker(self.app.notify, f"using {repo} for now; it could not be remembered: {exc}",
                                      title="Backup", severity="warning", timeout=10, markup=False)
            return
        if done.written:
            self.from_worker(self.app.notify, f"memtui.toml now remembers the backup repository {repo}",
                                      title="Backup", timeout=6, markup=False)

    # -- push ----------------------------------------------------------------------------------
    def action_push(self) -> None:
        """Push the backups committed so far. With ``[backup] push`` off (no push after each
        backup), this is a one-off push: asked first, the setting unchanged."""
        conf = core.settings(self.app.ws, self.repo, self.subdir)
        if conf.push:
            if self._start("pushing…"):
                self.run_push()
            return

        def answered(yes: bool | None) -> None:
            if yes and self._start("pushing…"):
                self.run_push()

        self.app.push_screen(Confirm("Push the backups to the remote now? This once: backups are not pushed "
                                     "by themselves (push = true under [backup] in memtui.toml does that).",
                                     yes="Push"), answered)

    @work(thread=True, exclusive=True, group="backup-task")
    def run_push(self) -> None:
        conf = core.settings(self.app.ws, self.repo, self.subdir)
        try:
            result, notes = core.push(conf.repo or self._repo(), conf.path, conf.remote, conf.git)
        except _FAILURES as exc:
            self.from_worker(self._failed, f"push failed: {exc}")
            return
        self.from_worker(self._push_done, result, notes)

    def _push_done(self, result, notes: list[str]) -> None:  # noqa: ANN001 - PushResult
        self.busy = False
        self._progress(1.0)
        message = result.message + ("; " + "; ".join(notes) if notes else "")
        self.last_message = message
        self._say(safe(message, "green" if result.ok else "red"))
        self.app.notify(message, title="Push", severity="information" if result.ok else "error",
                        timeout=10, markup=False)
        self.load_status()


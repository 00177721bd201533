"""The Migrate area: each domain's migration of an inherited memory folder (seed 000 §7) — its
pass state and its report — and the key that runs its next pass in a worker, with progress.

The table lists every domain whose migration was started (status, last pass done, items,
proposals); the pane under it shows the highlighted domain's report. ``n`` runs the next
pass: the inventory asks for the inherited folder (the first time) and the domain; classify
asks whether to accept every suggested class (per-item choices are `memtui migrate classify
--set`); index asks the owner to confirm the one-liners; the gate asks for the held-out cases
file (the first time). ``i`` starts the migration of another domain. Every pass is the same
guarded, audited write the CLI makes (:mod:`memtui.core.migrate`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widgets import DataTable, Header, ProgressBar, Static
from textual.worker import get_current_worker

from memtui.core import migrate
from memtui.core.errors import MemtuiError
from memtui.ui.screens.base import AreaScreen
from memtui.ui.text import as_data, safe
from memtui.ui.widgets import AreaBar, AskText, Confirm, KeyFooter, left_behind


class MigrateScreen(AreaScreen):
    """Migrations by domain, the highlighted one's report, and its next pass."""

    DEFAULT_CSS = """
    MigrateScreen #mig-bar { height: 1; padding: 0 1; background: $panel; }
    MigrateScreen #mig-status { width: 1fr; }
    MigrateScreen #mig-progress { width: 30; }
    MigrateScreen #mig-table { height: auto; max-height: 8; }
    MigrateScreen #mig-report-pane { height: 1fr; padding: 0 1; }
    """

    BINDINGS = [
        Binding("n", "next_pass", "Next pass", id="migrate.next-pass",
                tooltip="run the highlighted domain's next pass (inventory, classify, rewrite, index, gate)"),
        Binding("i", "start", "New migration", id="migrate.start",
                tooltip="start migrating an inherited folder into another domain"),
        Binding("r", "reload", "Reload", id="migrate.reload"),
    ]

    def __init__(self) -> None:
        super().__init__()
        self._records: list[dict[str, Any]] = []
        self.current: dict[str, Any] | None = None
        self.running = False

    def compose(self) -> ComposeResult:
        yield Header()
        yield AreaBar()
        with Horizontal(id="mig-bar"):
            yield Static(Text("", style="dim"), id="mig-status")
            yield ProgressBar(total=1, id="mig-progress", show_eta=False)
        with Vertical():
            yield DataTable(id="mig-table", cursor_type="row", zebra_stripes=True)
            with VerticalScroll(id="mig-report-pane"):
                yield Static(Text("no migration was started: press i to migrate an inherited folder into a domain",
                                  style="dim"), id="mig-report")
        yield KeyFooter()

    def on_mount(self) -> None:
        self.query_one("#mig-table", DataTable).add_columns("domain", "status", "last pass", "items", "proposals")
        self.query_one("#mig-progress", ProgressBar).display = False
        self.load()

    def on_screen_resume(self) -> None:
        self.sub_title = f"{self.app.badge}{self.app.ws.root} · acting as {self.app.session.profile or '(no profile)'}"

    # -- reading -------------------------------------------------------------------------------
    def load(self, select: str | None = None) -> None:
        """Read every migration record (a small table) and fill the table."""
        self._records = migrate.all_states(self.app.session.store)
        table = self.query_one("#mig-table", DataTable)
        table.clear()
        for rec in self._records:
            rep = migrate.report(rec)
            table.add_row(safe(rep["domain"]), safe(rep["status"] or "—"), safe(rep["step"] or "none"),
                          Text(str(rep["counts"]["items"])), Text(str(len(rep["proposals"]))), key=rep["domain"])
        self.on_screen_resume()
        if not self._records:
            self.current = None
            self._status("no migration yet · i: migrate an inherited folder into a domain")
            return
        index = next((i for i, r in enumerate(self._records) if r["domain"] == select), 0)
        table.move_cursor(row=index)
        self._show(self._records[index])

    def _show(self, record: dict[str, Any]) -> None:
        self.current = record
        rep = migrate.report(record)
        self.query_one("#mig-report", Static).update(Text(as_data(migrate.markdown(rep, limit=15))))
        nxt = f"n: run {rep['next']}" if rep["next"] else "every pass is done"
        self._status(f"{rep['domain']}: {rep['status']} · {nxt}")

    def _status(self, line: str) -> None:
        self.query_one("#mig-status", Static).update(safe(line))

    @on(DataTable.RowHighlighted, "#mig-table")
    def _highlighted(self, event: DataTable.RowHighlighted) -> None:
        if left_behind(event):
            return
        if 0 <= event.cursor_row < len(self._records):
            self._show(self._records[event.cursor_row])

    # -- passes ----------------------------------------------------------------------------------
    def _writable(self) -> bool:
        if self.app.session.read_only:
            self.notify(self.app.session.reason or "read-only", title="Read-only", severity="warning", markup=False)
            return False
        if self.running:
            self.notify("a pass is running; wait for it to finish", markup=False)
            return False
        return True

    def action_reload(self) -> None:
        self.load(self.current["domain"] if self.current else None)

    def action_start(self) -> None:
        if not self._writable():
            return

        def got_domain(domain: str | None) -> None:
            if not domain or not domain.strip():
                return

            def got_folder(folder: str | None) -> None:
                if folder and folder.strip():
                    self._inventory(migrate.normal_domain(domain), folder.strip())
            self.app.push_screen(AskText("The inherited folder to migrate from (only read)", required="a folder"),
                                 got_folder)
        self.app.push_screen(AskText("The domain to migrate into (its node, relative to memory/)", required="a node"),
                             got_domain)

    def _inventory(self, domain: str, folder: str) -> None:
        if not Path(folder).expanduser().is_dir():
            self.notify(f"{folder} is not a folder; nothing was done", severity="error", markup=False)
            return
        self.run_pass(domain, "inventory", lambda s, progress: migrate.inventory(s, domain, folder, progress=progress))

    def action_next_pass(self) -> None:
        if not self._writable() or self.current is None:
            if self.current is None and not self.running:
                self.action_start()
            return
        rec = self.current
        domain = rec["domain"]
        step = migrate.report(rec)["next"]
        if step is None:
            self.notify(f"every pass of {domain} is done ({rec.get('status')})", markup=False)
        elif step == "inventory":
            self._inventory(domain, rec.get("v1") or "")
        elif step == "classify":
            waiting = sum(1 for i in rec.get("items", []) if not i.get("confirmed"))

            def accept(yes: bool | None) -> None:
                if yes:
                    self.run_pass(domain, step, lambda s, _p: migrate.classify_items(s, domain, accept_suggested=True))
            self.app.push_screen(Confirm(f"Accept the suggested class of {waiting} items of {domain}, acting as "
                                         f"{self.app.session.profile or '(no profile)'}? (One by one: memtui migrate "
                                         "classify --set FILE=CLASS)"), accept)
        elif step == "rewrite":
            self.run_pass(domain, step, lambda s, _p: migrate.rewrite(s, domain))
        elif step == "index":
            lines = migrate.index_lines(rec)

            def confirm(yes: bool | None) -> None:
                if yes:
                    self.run_pass(domain, step, lambda s, _p: migrate.index(s, domain, confirm=True))
            shown = "\n".join(ln["line"] for ln in lines[:8]) + (f"\n… and {len(lines) - 8} more" if len(lines) > 8 else "")
            self.app.push_screen(Confirm(Text(f"Confirm these {len(lines)} one-liners of {domain} as its owner, acting "
                                              f"as {self.app.session.profile or '(no profile)'}?\n\n{shown}")), confirm)
        elif step == "gate":
            known = (rec.get("gate") or {}).get("cases_file", "")

            def got_cases(path: str | None) -> None:
                if not path or not path.strip():
                    return
                if not Path(path.strip()).expanduser().is_file():
                    self.notify(f"{path} is not a file; nothing was done", severity="error", markup=False)
                    return
                self.run_pass(domain, step, lambda s, _p: migrate.gate(s, domain, Path(path.strip()).expanduser()))
            self.app.push_screen(AskText("The held-out cases file (triage JSON lines)", known,
                                         required="a cases file"), got_cases)

    @work(thread=True, exclusive=True, group="migrate-pass")
    def run_pass(self, domain: str, step: str, action: Callable[[Any, Any], Any]) -> None:
        """Run one pass in a thread with progress; then reload and say how it ended."""
        worker = get_current_worker()
        self.running = True
        self.from_worker(self._progress, step, 0, 0)

        def progress(phase: str, done: int, total: int) -> None:
            if not worker.is_cancelled:
                self.from_worker(self._progress, phase, done, total)

        try:
            record = action(self.app.session, progress)
            error = None
        except (MemtuiError, ValueError, OSError) as exc:
            record, error = None, str(exc)
        finally:
            self.running = False
        if not worker.is_cancelled:
            self.from_worker(self._done, domain, step, record, error)

    def _progress(self, phase: str, done: int, total: int) -> None:
        bar = self.query_one("#mig-progress", ProgressBar)
        bar.display = True
        bar.update(total=total or None, progress=done)
        self._status(f"{phase}: {done:,}" + (f"/{total:,}" if total else "") + " …")

    def _done(self, domain: str, step: str, record: dict[str, Any] | None, error: str | None) -> None:
        bar = self.query_one("#mig-progress", ProgressBar)
        bar.display = False
        bar.update(total=1, progress=0)  # a hidden bar of unknown total would still redraw 15 times a second
        if error is not None:
            self.notify(error, title=f"{step} of {domain}", severity="error", timeout=10, markup=False)
        elif record is not None:
            rep = migrate.report(record)
            self.notify(f"{step} of {domain} done: {rep['status']}", markup=False)
        self.load(domain)

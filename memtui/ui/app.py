"""The memtui application shell: header, footer with keys, command palette, one mode per area.

The workspace is opened before the app starts (:mod:`memtui.ui.launch`). On mount the app
audits the whole workspace in a worker thread and publishes the report on
:attr:`MemtuiApp.audit_ready`; screens subscribe to it, so browsing starts at once. In another
worker it brings the search index (``.memtui/index``, the only thing opening may write besides
the lock, DESIGN.md §2) up to date with the files, publishing progress on
:attr:`MemtuiApp.index_progress` and the report on :attr:`MemtuiApp.index_ready`.

A third worker follows the workspace (:func:`memtui.core.watch.watch`): every batch of changes,
made by this process or any other (an agent, the CLI, cron), is published on
:attr:`MemtuiApp.workspace_changed` for the screens whose data it touches, the changed files are
re-indexed, and the audit runs again (coalesced: a burst of changes gives one more audit, not
one per change), so counts, queues and tables follow without a key press (DESIGN.md §4
invariant 2).
"""

from __future__ import annotations

import threading
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Iterable

from textual import work
from textual.app import App, SystemCommand
from textual.binding import Binding
from textual.screen import Screen
from textual.signal import Signal
from textual.worker import get_current_worker

from memtui.core.errors import MemtuiError
from memtui.core.session import Session
from memtui.core.tree.model import MemoryTree
from memtui.core.workspace import Workspace
from memtui.ui.areas import AREAS
from memtui.ui.context import WorkspaceApp
from memtui.themes import DEFAULT_THEME, load_themes

if TYPE_CHECKING:
    from textual.command import Provider

    from memtui.core.audit import AuditReport
    from memtui.core.search.index import IndexReport, SearchIndex
    from memtui.core.tree.audit import ArticleCache
    from memtui.core.watch import Changes


def _search_commands() -> type[Provider]:
    """The palette's search provider, imported when the palette first opens: the search
    modules (Whoosh, the query parser) are not needed to draw the first screen."""
    from memtui.ui.screens.search import SearchCommands

    return SearchCommands


def _new_screen(area) -> Screen:  # noqa: ANN001 - memtui.ui.areas.Area
    """A new screen of ``area``, its module imported now (when the area is first shown)."""
    return area.load()()


class MemtuiApp(WorkspaceApp):
    """The TUI over one workspace.

    Args:
        workspace: the opened workspace.
        theme: a theme name to start with (falls back to ``memtui-dark`` with a warning).
        remember_theme: called with the theme name whenever the user changes it.
        session: the writer session to use; default: one opened here (purpose ``tui``) and
            closed when the app exits.
    """

    CSS_PATH = str(Path(__file__).with_name("memtui.tcss"))  # absolute: subclasses may live anywhere
    TITLE = "memtui"
    COMMANDS = App.COMMANDS | {_search_commands}  # type a query in the palette
    BINDINGS = [
        # shown in the AreaBar under the header instead of in every footer
        *(Binding(a.key, f"switch_mode('{a.mode}')", a.title, show=False, id=f"area.{a.mode}") for a in AREAS),
        Binding("question_mark,f1", "help", "Keys", key_display="?", id="app.help",
                tooltip="every key of this area and the global ones"),
        Binding("ctrl+r", "reaudit", "Re-audit", tooltip="read the whole workspace again and list the findings",
                id="app.reaudit"),
        Binding("q", "quit", "Quit", id="app.quit"),
        # j/k move in lists and tables; the widgets' own bindings keep the arrows
        Binding("j", "cursor(1)", "Down", show=False, id="app.down"),
        Binding("k", "cursor(-1)", "Up", show=False, id="app.up"),
    ]

    def __init__(self, workspace: Workspace, theme: str | None = None, remember_theme=None,
                 session: Session | None = None):
        super().__init__()
        self.ws = workspace
        #: the writer session (lock, store, audit log); read-only when another memtui holds
        #: the lock, with the sentence saying who (DESIGN.md §4 invariant 2)
        self.session: Session = session if session is not None else Session.open(workspace, purpose="tui")
        self.tree_model = MemoryTree(workspace)
        self.report: AuditReport | None = None
        #: findings of the last audit by workspace-relative path
        self.findings_by_path: dict[str, list] = {}
        #: findings of the last audit by the workspace-relative folder of their file
        self.findings_by_folder: dict[str, list] = {}
        #: what the last audit changed, for the areas to redraw only that: the workspace-relative
        #: paths whose findings differ from the audit before (``None``: take everything as
        #: changed, after the first or a whole audit) and the changed paths it audited
        self.findings_changed: set[str] | None = None
        self.audited_changes: frozenset[str] = frozenset()
        self.audit_ready: Signal[AuditReport] = Signal(self, "audit-ready")
        self.audit_progress: Signal[tuple[int, int]] = Signal(self, "audit-progress")
        #: the workspace's search index (:attr:`search_index`), made on first use
        self._search_index: SearchIndex | None = None
        self._search_index_lock = threading.Lock()
        #: held by every index update of this process (Whoosh allows one writer at a time)
        self.index_lock = threading.Lock()
        #: the report of the last finished index update, ``None`` while the first one runs
        self.index_report: IndexReport | None = None
        #: why the last index update failed (another process indexing, disk full), else ``None``
        self.index_error: str | None = None
        #: whether an index of this schema was there before the first update (``None`` until
        #: the index worker has looked): then it can be searched while it catches up
        self.index_existed: bool | None = None
        self.index_ready: Signal[IndexReport] = Signal(self, "index-ready")
        self.index_progress: Signal[tuple[int, int]] = Signal(self, "index-progress")
        #: every batch of workspace changes (any process), for the screens that show that data
        self.workspace_changed: Signal[Changes] = Signal(self, "workspace-changed")
        #: set when the app ends: the watcher stops
        self._stop_watching = threading.Event()
        #: an audit was asked for while one ran: run once more when it ends
        self._audit_again = False
        self._auditing = False
        #: paths changed since the shown report was started (what the next audit re-audits)
        self._unaudited: set[str] = set()
        #: one audit at a time (a superseded worker thread runs to its end first)
        self._audit_lock = threading.Lock()
        #: the article cache the audits after changes share (loaded by the first of them)
        self._audit_cache: ArticleCache | None = None
        self._remember_theme = None  # set after the first theme, so only user changes are saved
        self._startup_warnings: list[str] = []
        loaded = load_themes()
        self._startup_warnings.extend(loaded.warnings)
        for item in loaded.themes.values():
            self.register_theme(item)
        wanted = theme or DEFAULT_THEME
        if wanted not in self.available_themes:
            self._startup_warnings.append(
                f"theme {wanted!r} is not known; using {DEFAULT_THEME if DEFAULT_THEME in self.available_themes else 'textual-dark'}"
                " (ctrl+p, then Theme, lists the themes)")
            wanted = DEFAULT_THEME if DEFAULT_THEME in self.available_themes else "textual-dark"
        self.theme = wanted
        self._remember_theme = remember_theme
        self._apply_user_keys()
        self.sub_title = str(workspace.root)
        for area in AREAS:  # a screen's module is imported when its area is first shown
            self.add_mode(area.mode, partial(_new_screen, area))

    def _apply_user_keys(self) -> None:
        """Rebind keys from the user config's ``[keys]`` table (binding id = key).

        The ids are checked against every screen's bindings, which imports every screen: only
        when the table has entries, so a config without ``[keys]`` opens without that cost."""
        from memtui import userconfig

        broken = userconfig.problem()
        if broken:  # said at start, not only when a theme change cannot be remembered
            self._startup_warnings.append(f"{broken}: its keys and theme are not used, and memtui will not write "
                                          "over it; fix it by hand")
        table = userconfig.table("keys")
        if table is None or table == {}:  # anything else is checked (a value that is not a table says so)
            return
        from memtui.ui.keys import all_ids, keymap_from

        keymap, warnings = keymap_from(table, all_ids(type(self)))
        self._startup_warnings.extend(warnings)
        if keymap:
            self.set_keymap(keymap)

    @property
    def search_index(self) -> SearchIndex:  # type: ignore[override]
        """The workspace's search index, searched by the Search area and the command palette;
        made on first use (in a worker: it imports the search engine, which the first screen
        does not need)."""
        index = self._search_index
        if index is None:
            with self._search_index_lock:
                if self._search_index is None:
                    from memtui.core.search.index import SearchIndex

                    self._search_index = SearchIndex(self.ws)
                index = self._search_index
        return index

    #: the key pressed before the last one (``"escape"`` twice in a row clears a filter box)
    previous_key: str | None = None
    _last_key: str | None = None

    async def on_event(self, event) -> None:  # noqa: ANN001 - textual.events.Event
        from textual import events

        if isinstance(event, events.Key) and not event.is_forwarded:  # once per key press (it bubbles back)
            self.previous_key, self._last_key = self._last_key, event.key
        await super().on_event(event)

    def notify(self, message: str, *args, **kwargs):  # noqa: ANN002, ANN003, ANN201 - Textual's signature
        """Every toast as the TUI says it: a name or value inside is data, its control and
        escape characters are shown (:func:`memtui.ui.text.as_data`), never sent to the
        terminal. Core sentences carry no references (those are in the error's ``reference``)."""
        from memtui.ui.text import as_data

        if isinstance(kwargs.get("title"), str):
            kwargs["title"] = as_data(kwargs["title"])
        return super().notify(as_data(message) if isinstance(message, str) else message, *args, **kwargs)

    def action_help(self) -> None:
        """Show every key of the current area and the global ones (``?``, ``F1``)."""
        from memtui.ui.keys import KeysHelp

        if isinstance(self.screen, KeysHelp):
            return
        self.push_screen(KeysHelp(self.screen))

    def action_cursor(self, step: int) -> None:
        """``j``/``k``: move the focused list, table or tree down/up one row (a text viewer scrolls)."""
        widget = self.focused
        if widget is None:
            return
        name = "down" if step > 0 else "up"
        for action in (f"action_cursor_{name}", f"action_scroll_{name}"):
            handler = getattr(widget, action, None)
            if handler is not None:
                handler()
                return

    def on_mount(self) -> None:
        if self.session.read_only:
            self.sub_title = f"READ-ONLY · {self.ws.root}"
            self.notify(self.session.reason or "read-only", title="Read-only", severity="warning",
                        timeout=15, markup=False)
        for warning in self._startup_warnings:
            title = "Keys" if warning.startswith("[keys]") else "Theme"
            self.notify(warning, title=title, severity="warning", timeout=8, markup=False)
        self._catch_stop_signals()
        self.switch_mode(AREAS[0].mode)
        # the audit and the index catch-up walk the whole tree in threads that share the GIL
        # with the UI: start them once the first frame is on screen, so it is not delayed
        self.call_after_refresh(self._start_background_work)

    #: Signals that stop the TUI with its unsaved text kept as drafts:
    #: ``kill``, ``kill -INT``, and SIGHUP when the terminal is closed.
    STOP_SIGNALS = ("SIGINT", "SIGTERM", "SIGHUP")

    def _catch_stop_signals(self) -> None:
        import asyncio
        import signal

        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # pragma: no cover - on_mount runs in the app's loop
            return
        for name in self.STOP_SIGNALS:
            number = getattr(signal, name, None)
            if number is None:
                continue
            try:
                loop.add_signal_handler(number, self._stopped_by_signal, number)
            except (NotImplementedError, RuntimeError, ValueError):  # not the main thread, or Windows
                continue

    def keep_drafts(self, why: str) -> int:
        """Keep the unsaved text of every screen that has some as a draft (see
        :mod:`memtui.core.drafts`); returns how many were kept."""
        kept = 0
        for stack in getattr(self, "_screen_stacks", {}).values():
            for screen in stack:
                keep = getattr(screen, "keep_draft", None)
                if keep is not None and keep(why):
                    kept += 1
        return kept

    def _stopped_by_signal(self, number: int) -> None:
        """A stop signal: keep the drafts at once, then exit (exit status 128 + signal). A
        terminal that is gone may stop the exit from finishing; a timer ends the process
        then, after the drafts are on disk."""
        import os
        import signal
        import threading

        self.keep_drafts(signal.Signals(number).name)
        timer = threading.Timer(3.0, os._exit, (128 + number,))
        timer.daemon = True
        timer.start()
        self.exit(128 + number)

    def _start_background_work(self) -> None:
        self.run_audit()
        self.run_index()
        self.watch_workspace()

    async def action_area(self, mode: str) -> None:
        """Open area ``mode`` as its key does: a screen that must ask first (the Notes editor
        with unsaved changes) asks (a click on the area bar)."""
        leave = getattr(self.screen, "action_leave", None)
        if leave is not None:
            leave(mode)
        elif mode != self.current_mode:
            await self.switch_mode(mode)

    async def action_quit(self) -> None:
        """Quit, but first let a screen with unsaved changes ask (the Notes editor):
        ``ctrl+q`` and the palette's Quit once dropped an unsaved note without a word."""
        stacks = getattr(self, "_screen_stacks", {})
        for mode, stack in stacks.items():
            for screen in stack:
                if getattr(screen, "dirty", False) and hasattr(screen, "action_leave"):
                    if self.current_mode != mode:
                        await self.switch_mode(mode)
                    screen.action_leave("")
                    return
        self.exit()

    def on_unmount(self) -> None:
        self._stop_watching.set()
        self.session.close()

    def watch_theme(self, theme: str) -> None:
        if self._remember_theme is not None:
            try:
                self._remember_theme(theme)
            except OSError as exc:
                self.notify(f"could not remember the theme: {exc}", severity="warning", markup=False)

    # -- following the workspace -------------------------------------------------------------
    @work(thread=True, exclusive=True, group="watch")
    def watch_workspace(self) -> None:
        """Follow the workspace in a thread (see the module docstring) until the app ends."""
        from memtui.core.watch import watch

        try:
            for changes in watch(self.ws, self._stop_watching):
                self.call_from_thread(self._workspace_changed, changes)
        except OSError as exc:  # the inotify watch limit, a vanished folder
            if not self._stop_watching.is_set():
                self.call_from_thread(
                    self.notify, f"memtui cannot follow changes to the workspace ({exc}); press ctrl+r "
                    "to read it again after outside changes", title="Not following changes",
                    severity="warning", timeout=12, markup=False)

    def _workspace_changed(self, changes: Changes) -> None:
        """A batch of changes arrived: reload the settings, re-index, re-audit, tell the screens."""
        if "config" in changes.topics:
            from memtui.core.config import load as load_config

            self.ws.config, config_findings = load_config(self.ws.root / "memtui.toml")
            self.ws.findings = [f for f in self.ws.findings if f.code != "config-invalid"] + config_findings
        if changes.topics & {"tree", "store", "notes", "skills", "graph", "config", "sessions"}:
            self.tree_model = MemoryTree(self.ws)
            self._unaudited.update(changes.paths)
            self.request_audit()
        indexable = [p for topic in ("tree", "notes", "skills", "graph", "sessions") for p in changes.of(topic)]
        if indexable and self.index_report is not None:
            self.index_saved(indexable)
        self.workspace_changed.publish(changes)

    def request_audit(self) -> None:
        """Run the audit again; when one is running, once more after it (never one per change)."""
        if self._auditing:
            self._audit_again = True
            return
        self.run_audit()

    # -- audit -----------------------------------------------------------------------------
    def run_audit(self, live: bool = False) -> None:
        """Audit the workspace in a thread, publishing progress and the final report.

        A remote graph is read only when ``live`` (the Re-audit key): the audits that follow
        changes and the first one use its last read kept (the Graph area keeps each read it
        makes), said so by a note, so no file change waits on the network. After outside
        changes only the nodes the changed paths can affect are audited again
        (:func:`memtui.core.audit.rerun`: the same findings as a whole audit)."""
        base = None if live else self.report
        self._audit_worker(live, base, frozenset(self._unaudited))

    @work(thread=True, exclusive=True, group="audit")
    def _audit_worker(self, live: bool, base: AuditReport | None, changed: frozenset[str]) -> None:
        self._auditing = True
        worker = get_current_worker()

        def progress(done: int, total: int) -> None:
            if not worker.is_cancelled:
                self.call_from_thread(self.audit_progress.publish, (done, total))

        from memtui.core import audit
        from memtui.core.tree.audit import ArticleCache

        try:
            with self._audit_lock:
                if base is not None and base.by_node:
                    if self._audit_cache is None:
                        self._audit_cache = ArticleCache.load(self.ws)
                    report = audit.rerun(self.ws, base, changed, tree=MemoryTree(self.ws), cache=self._audit_cache)
                else:
                    report = audit.run(self.ws, progress, tree=MemoryTree(self.ws), offline=not live)
                    self._audit_cache = None  # the whole audit saved its own; read it again when needed
        finally:
            self._auditing = False
        if not worker.is_cancelled:
            self.call_from_thread(self._audit_done, report, changed)

    def _audit_done(self, report: AuditReport, changed: frozenset[str] = frozenset()) -> None:
        self._unaudited -= changed  # what changed since this audit started stays to do
        before = self.findings_by_path if self.report is not None and changed else None
        self.report = report
        self.findings_by_path = report.by_path()
        if before is None:
            self.findings_changed = None
        else:
            now = self.findings_by_path
            self.findings_changed = {p for p in before.keys() | now.keys() if before.get(p) != now.get(p)}
        self.audited_changes = changed
        self.findings_by_folder = {}
        for path, found in self.findings_by_path.items():
            folder = path.rsplit("/", 1)[0] if "/" in path else "."
            self.findings_by_folder.setdefault(folder, []).extend(found)
        self.audit_ready.publish(report)
        if self._audit_again:
            self._audit_again = False
            self.run_audit()

    def action_rebuild_index(self) -> None:
        """Rebuild the search index from every file (in a worker)."""
        self.notify("rebuilding the search index…", timeout=3, markup=False)
        self.run_index(rebuild=True)

    def action_reaudit(self) -> None:
        """Run the audit again (after editing files outside memtui)."""
        self.tree_model = MemoryTree(self.ws)
        self.notify("auditing the workspace again…", timeout=2, markup=False)
        self.run_audit(live=True)

    # -- search index ----------------------------------------------------------------------
    @work(thread=True, exclusive=True, group="index")
    def run_index(self, rebuild: bool = False) -> None:
        """Catch the search index up with the files in a thread (never blocks browsing),
        publishing ``(done, total)`` source-file counts and the final :class:`IndexReport`."""
        worker = get_current_worker()

        def progress(done: int, total: int) -> None:
            if not worker.is_cancelled:
                self.call_from_thread(self.index_progress.publish, (done, total))

        if self.index_existed is None:
            self.index_existed = self.search_index.exists()  # reads the manifest: not on the UI thread
        with self.index_lock:
            try:
                report = self.search_index.update(progress=progress, rebuild=rebuild)
            except MemtuiError as exc:  # another process indexing, disk full, read-only folder
                if not worker.is_cancelled:
                    self.call_from_thread(self._index_failed, str(exc))
                return
        if not worker.is_cancelled:
            self.call_from_thread(self._index_done, report)

    def index_saved(self, paths: list[str]) -> None:
        """Make files just saved in memtui searchable at once (workspace-relative ``paths``).

        Runs :meth:`SearchIndex.update` with ``only=paths`` in a worker; waits for a running
        full update first (the saved file's new mtime makes that one or this one index it).
        """
        self._index_only(list(paths))

    @work(thread=True, group="index-saved")
    def _index_only(self, paths: list[str]) -> None:
        with self.index_lock:
            try:
                report = self.search_index.update(only=paths)
            except MemtuiError as exc:
                self.call_from_thread(self._index_failed, str(exc))
                return
        self.call_from_thread(self._index_done, report)

    def _index_done(self, report: IndexReport) -> None:
        self.index_report = report
        self.index_error = None
        self.index_ready.publish(report)

    def _index_failed(self, message: str) -> None:
        self.index_error = message
        self.notify(message, title="Search index", severity="warning", timeout=8, markup=False)
        if self.index_report is None:
            from memtui.core.search.index import IndexReport

            self.index_report = IndexReport()
        self.index_ready.publish(self.index_report)

    # -- command palette -------------------------------------------------------------------
    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        """Textual's commands (theme, quit, maximise) with memtui's help and screenshot, then
        every area (``Area: Open``) and every action of every area (``Area: Action``)."""
        from memtui.ui.keys import palette_commands

        for command in super().get_system_commands(screen):
            if command.title in ("Keys", "Screenshot"):
                continue  # memtui's own below: the grouped help; a screenshot saved where it can be
            yield command
        yield SystemCommand("Keys", "every key of this area and the global ones (? or F1)", self.action_help)
        yield SystemCommand("Screenshot", "save an SVG picture of the screen under memtui's data folder",
                            lambda: self.set_timer(0.1, self.save_screen_picture))
        for area in AREAS:
            yield SystemCommand(f"{area.title}: Open", f"{area.help} (key {area.key})",
                                partial(self.switch_mode, area.mode))
        yield SystemCommand("Audit: Run again", "re-read the whole workspace and list the findings (ctrl+r)",
                            self.action_reaudit)
        yield SystemCommand("Search: Find in the workspace", "or type words here: the best results are offered",
                            partial(self.switch_mode, "search"))
        yield SystemCommand("Search: Rebuild the index", "read every file again into a new search index "
                            "(after a failed search); searching goes on meanwhile", self.action_rebuild_index)
        for title, help_text, mode, action in palette_commands(self):
            yield SystemCommand(title, help_text, partial(self._run_in_area, mode, action))

    async def _run_in_area(self, mode: str, action: str) -> None:
        """Open area ``mode`` and run ``action`` on its screen (a palette command); when the
        screen has the action off now (``check_action``), say why instead of doing nothing."""
        if self.current_mode != mode:
            await self.switch_mode(mode)
        screen = self.screen
        if not await self.run_action(action, screen):
            why = getattr(screen, "why_unavailable", None)
            reason = why(action.partition("(")[0]) if why is not None else None
            if reason:
                self.notify(reason, severity="warning", timeout=5, markup=False)

    def save_screen_picture(self) -> str | None:
        """Save an SVG of the screen under the user data folder and say where (the palette's
        Screenshot failed when ``~/Downloads`` was missing). Returns the path, or ``None``."""
        import datetime as _dt

        from memtui.paths import data_dir

        folder = data_dir() / "screenshots"
        name = f"memtui-{_dt.datetime.now().strftime('%Y%m%d-%H%M%S')}.svg"
        try:
            folder.mkdir(parents=True, exist_ok=True)
            path = self.save_screenshot(filename=name, path=str(folder))
        except OSError as exc:
            self.notify(f"the screenshot could not be saved in {folder}: {exc.strerror or exc}",
                        title="Screenshot", severity="error", timeout=10, markup=False)
            return None
        self.notify(f"saved {path}", title="Screenshot", timeout=10, markup=False)
        return path

"""The Consolidate area: the scheduled consolidation pass (seed 000 §4 step 5) as a list of
candidates by node and owner, each with the key that settles it, and version pins (§7.4b).

An area of its own rather than a part of Audit: the audit lists what is wrong with files,
read-only, for anyone; a consolidation candidate is a decision its owner takes (merge,
contest, resolve, re-verify, retire, refresh a one-liner), each a governed write that asks
for confirmation, and the pass reads every article's text, which the audit does not need.

Left tab **Candidates**: the pass runs in a worker thread with a progress bar (``r`` runs it
again). Keys act on the row under the cursor: ``m`` merge (a proposal, approved in
Proposals), ``c`` contest, ``v`` resolve, ``e`` re-verify (a passing check), ``t`` retire,
``o`` refresh the one-liner, ``u`` undo the last refresh, ``p`` the pins of the article's
active version, ``H`` the harvest of the candidate's case (nothing proposed). Every action is
refused for a non-owner before anything is asked.

Tab **Pins**: type a case id (the versions it relied on, with their state now) or a version
id ``article@N`` (the cases that pinned it).
"""

from __future__ import annotations

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.widgets import DataTable, Header, Input, ProgressBar, Static, TabbedContent, TabPane
from textual.worker import get_current_worker

from memtui.core import consolidate
from memtui.core import governance as gov
from memtui.core.errors import MemtuiError
from memtui.ui.text import join, safe
from memtui.ui import clock
from memtui.ui.widgets import KeyFooter, left_behind
from memtui.ui.widgets import AreaBar, AskText, Confirm
from memtui.ui.screens.base import AreaScreen
from memtui.ui.screens.harvest_report import show_harvest

_KIND_STYLE = {"duplicate": "cyan", "contested": "bold red", "conflict": "magenta", "stale": "yellow",
               "one-liner": "dim", "ladder": "green",
               "skill-defect": "bold yellow"}


class ConsolidateScreen(AreaScreen):
    """Candidates of the consolidation pass, and version pins."""

    DEFAULT_CSS = """
    ConsolidateScreen #cons-bar { height: 1; padding: 0 1; background: $panel; }
    ConsolidateScreen #cons-tabs { height: 1fr; }
    ConsolidateScreen TabPane { height: 1fr; padding: 0; }
    ConsolidateScreen TabPane > Vertical { height: 1fr; }
    ConsolidateScreen #cons-status { width: 1fr; }
    ConsolidateScreen #cons-progress { width: 30; }
    ConsolidateScreen #cons-table { height: 1fr; }
    ConsolidateScreen #cons-detail { height: auto; max-height: 9; padding: 0 1; background: $panel; }
    ConsolidateScreen #pins-table { height: 1fr; }
    ConsolidateScreen #pins-head { height: auto; padding: 0 1; }
    """

    BINDINGS = [
        Binding("m", "merge", "Merge", id="consolidate.merge"),
        Binding("c", "contest", "Contest", id="consolidate.contest"),
        Binding("v", "resolve", "Resolve", id="consolidate.resolve"),
        Binding("e", "reverify", "Re-verify", id="consolidate.reverify"),
        Binding("t", "retire", "Retire", id="consolidate.retire"),
        Binding("o", "refresh_line", "Refresh line", id="consolidate.refresh-line"),
        Binding("u", "undo_refresh", "Undo refresh", id="consolidate.undo-refresh"),
        Binding("p", "pins", "Pins", id="consolidate.pins"),
        Binding("r", "rescan", "Run again", id="consolidate.rescan"),
        Binding("H", "harvest", "Harvest", key_display="H",
                tooltip="what the candidate's case learned, reused and missed (nothing is proposed)",
                id="consolidate.harvest"),
    ]

    def __init__(self) -> None:
        super().__init__()
        self._rows: list[consolidate.Candidate] = []
        self.report: consolidate.Report | None = None
        #: the article whose one-liner was refreshed last here (its row is gone once fixed)
        self._refreshed: str | None = None

    def compose(self) -> ComposeResult:
        yield Header()
        yield AreaBar()
        with Horizontal(id="cons-bar"):
            yield Static(Text("consolidating…", style="dim"), id="cons-status")
            yield ProgressBar(total=1, id="cons-progress", show_eta=False)
        with TabbedContent(id="cons-tabs"):
            with TabPane("Candidates", id="tab-candidates"), Vertical():
                yield DataTable(id="cons-table", cursor_type="row", zebra_stripes=True)
                yield Static(Text(""), id="cons-detail")
            with TabPane("Pins", id="tab-pins"), Vertical():
                yield Input(placeholder="a case id (what it relied on) or a version id article@N (who pinned it)",
                            id="pins-query")
                yield Static(Text(""), id="pins-head")
                yield DataTable(id="pins-table", cursor_type="row", zebra_stripes=True)
        yield KeyFooter()

    def on_mount(self) -> None:
        self.query_one("#cons-table", DataTable).add_columns("kind", "node", "owner", "articles", "action")
        self.query_one("#pins-table", DataTable).add_columns("version", "case", "state now", "pinned", "")
        self.scan()

    def on_screen_resume(self) -> None:
        self.sub_title = f"{self.app.badge}{self.app.ws.root} · acting as {self.app.session.profile or '(no profile)'}"

    # -- the pass ------------------------------------------------------------------------------
    @work(thread=True, exclusive=True, group="consolidate-scan")
    def scan(self, select: str | None = None) -> None:
        """Run the pass in a thread, publishing progress, then fill the table."""
        worker = get_current_worker()

        def progress(phase: str, done: int, total: int) -> None:
            if not worker.is_cancelled:
                self.from_worker(self._progress, phase, done, total)

        report = consolidate.scan(self.app.ws, self.app.session.store, progress=progress, today=clock.today())
        if not worker.is_cancelled:
            self.from_worker(self._fill, report, select)

    def _progress(self, phase: str, done: int, total: int) -> None:
        bar = self.query_one("#cons-progress", ProgressBar)
        bar.display = True
        bar.update(total=total, progress=done)
        self.query_one("#cons-status", Static).update(Text(f"consolidating: {phase} {done:,}/{total:,}", style="dim"))

    def _fill(self, report: consolidate.Report, select: str | None) -> None:
        self.report = report
        self._rows = list(report.candidates)
        self.query_one("#cons-progress", ProgressBar).display = False
        self.query_one("#cons-status", Static).update(Text(f"{report.summary()} ({clock.took(report.seconds)})"))
        table = self.query_one("#cons-table", DataTable)
        table.clear()
        for i, c in enumerate(self._rows):
            table.add_row(Text(c.kind, style=_KIND_STYLE.get(c.kind, "")), safe(c.node or "(root)"),
                          safe(c.owner or "—"), safe(" · ".join(a.rsplit("/", 1)[-1] for a in c.articles)),
                          safe(c.action.split(" (")[0]), key=str(i))
        self.on_screen_resume()
        index = next((i for i, c in enumerate(self._rows) if c.key == select), 0)
        if self._rows:
            table.move_cursor(row=index)
        self._detail(index)

    @on(DataTable.RowHighlighted, "#cons-table")
    def _highlighted(self, event: DataTable.RowHighlighted) -> None:
        if left_behind(event):
            return
        self._detail(event.cursor_row)

    def _detail(self, row: int) -> None:
        target = self.query_one("#cons-detail", Static)
        c = self.current_at(row)
        if c is None:
            target.update(Text("Nothing to consolidate." if self.report else "", style="dim"))
            return
        text = join(Text(c.kind, style=_KIND_STYLE.get(c.kind, "bold")), Text("  "),
                    safe(", ".join(c.articles), "bold"), Text("\n"), safe(c.reason), Text("\n"))
        text.append(Text("owner: ", style="dim"))
        text.append(safe(" and ".join(sorted({o or "(none)" for o in c.owners})) or "(none)"))
        text.append(Text(f"  ·  you act as {self.app.session.profile or '(no profile)'}\n", style="dim"))
        for article, counts in c.counters.items():  # the distinct counters (seed 000 §5)
            text.append(Text("counters ", style="dim"))
            text.append(safe(article.rsplit("/", 1)[-1]))
            text.append(Text(": " + " · ".join(f"{name.replace('_', ' ')} {counts[name]['count']}" for name in
                                                ("occurrences", "verified_reuses", "clean_executions")) + "\n"))
        text.append(Text(f"settle it: {_KEYS.get(c.kind, '')}", style="green"))
        target.update(text)

    def current_at(self, row: int) -> consolidate.Candidate | None:
        return self._rows[row] if 0 <= row < len(self._rows) else None

    @property
    def current(self) -> consolidate.Candidate | None:
        """The candidate under the cursor."""
        return self.current_at(self.query_one("#cons-table", DataTable).cursor_row)

    def action_rescan(self) -> None:
        self.scan(self.current.key if self.current else None)

    # -- acting ----------------------------------------------------------------------------------
    def _acting(self) -> str:
        return self.app.session.profile or "(no profile)"

    def _may(self, articles: list[str], what: str) -> bool:
        """Refuse at once (read-only, not the owner): before anything is asked."""
        session = self.app.session
        if session.read_only:
            self.notify(session.reason or "read-only", title="Read-only", severity="warning", markup=False)
            return False
        try:
            consolidate.check_owner(session, articles, what)
        except MemtuiError as exc:
            self.notify(str(exc), title="Refused", severity="error", timeout=8, markup=False)
            return False
        return True

    def _pick(self, kinds: tuple[str, ...], what: str) -> consolidate.Candidate | None:
        c = self.current
        if c is None:
            self.notify("no candidate selected", markup=False)
            return None
        if kinds and c.kind not in kinds:
            self.notify(f"{what} settles {' or '.join(kinds)} candidates; this one is {c.kind}", markup=False)
            return None
        return c

    def _confirm(self, question: str, run) -> None:  # noqa: ANN001
        def done(yes: bool | None) -> None:
            if yes:
                run()
        self.app.push_screen(Confirm(f"{question}, acting as {self._acting()}?"), done)

    def action_merge(self) -> None:
        c = self._pick(("duplicate",), "Merge")
        if c is None or not self._may(c.articles, "merge articles"):
            return
        keep, drop = c.articles
        self._confirm(f"Propose merging {drop} into {keep} (approving it in Proposals retires {drop} and "
                      "leaves a redirect line)",
                      lambda: self._run("merge", lambda s: consolidate.merge(s, keep, drop, reason=c.reason),
                                        [keep, drop], c.key))

    def action_contest(self) -> None:
        c = self._pick((), "Contest")
        if c is None:
            return
        article = c.articles[0]
        against = c.articles[1] if c.kind == "conflict" and len(c.articles) > 1 else None
        if not self._may([article], "mark knowledge contested"):
            return

        def got_case(case: str | None) -> None:
            if case is None:
                return
            if not case.strip() and against is None:
                self.notify("name the contradicting case; nothing was recorded", severity="error", markup=False)
                return

            def got_reason(reason: str | None) -> None:
                if not reason or not reason.strip():
                    return
                self._confirm(f"Mark {article} contested: {reason}",
                              lambda: self._run("contest", lambda s: consolidate.contest(
                                  s, article, reason=reason, case=case or None, against=against), [article], c.key))
            self.app.push_screen(AskText(f"Why is {article} contested? (recorded)",
                                         c.reason if against else "", required="a reason"), got_reason)
        if against is not None:
            got_case("")
        else:
            self.app.push_screen(AskText(f"Which case contradicts {article}? (case id)"), got_case)

    def action_resolve(self) -> None:
        c = self._pick(("contested",), "Resolve")
        if c is None or not self._may(c.articles, "resolve contested knowledge"):
            return
        article = c.articles[0]

        def got(why: str | None) -> None:
            if not why or not why.strip():
                return
            self._confirm(f"Resolve the contests of {article}: {why}",
                          lambda: self._run("resolve", lambda s: consolidate.resolve(s, article, why=why),
                                            [article], c.key))
        self.app.push_screen(AskText(f"Why is {article} no longer contested? (recorded)", required="a reason"),
                             got)

    def action_reverify(self) -> None:
        c = self._pick(("stale",), "Re-verify")
        if c is None or not self._may(c.articles, "re-verify entries"):
            return
        article = c.articles[0]

        def got_ids(ids: str | None) -> None:
            words = (ids or "").replace(",", " ").split()
            if ids is None:
                return
            if len(words) != 2:
                self.notify("give the case id and the source-request id, two words", severity="error", markup=False)
                return

            def got_check(check: str | None) -> None:
                if not check or not check.strip():
                    return

                def got_version(version: str | None) -> None:
                    if version is None:
                        return
                    self._confirm(f"Record that case {words[0]} re-verified {article} (passed: {check})",
                                  lambda: self._run("re-verify", lambda s: consolidate.reverify(
                                      s, article, case=words[0], source_request=words[1], verdict="pass",
                                      check=check, observed_version=version.strip() or None), [article], c.key))
                self.app.push_screen(AskText("The version running there now (empty: not checked)",
                                             str(c.detail.get("running_version") or "")), got_version)
            self.app.push_screen(AskText(f"The check performed on {article} (it passed; a contradiction is "
                                         "recorded with c, contest)", required="the check"), got_check)
        self.app.push_screen(AskText("Case id and source-request id of the re-verifying case"), got_ids)

    def action_retire(self) -> None:
        c = self._pick(("stale", "contested"), "Retire")
        if c is None or not self._may(c.articles, "retire articles"):
            return
        article = c.articles[0]

        def got(reason: str | None) -> None:
            if not reason or not reason.strip():
                return
            self._confirm(f"Retire {article} (its file and index line leave the tree; the record stays): "
                          f"{reason.strip()}",
                          lambda: self._run("retire", lambda s: gov.retire(s, article, reason), [article], c.key))
        self.app.push_screen(AskText(f"Why retire {article}? (recorded)", c.reason, required="a reason"), got)

    def action_refresh_line(self) -> None:
        c = self._pick(("one-liner",), "Refresh line")
        if c is None or not self._may(c.articles, "refresh the node's one-liners"):
            return
        article = c.articles[0]
        self._confirm(f"Set the index one-liner of {article} to its summary {c.detail.get('summary')!r}",
                      lambda: self._run("refresh", lambda s: consolidate.refresh_line(s, article), [article], c.key))

    def action_undo_refresh(self) -> None:
        c = self.current
        article = c.articles[0] if c is not None and c.kind == "one-liner" else self._refreshed
        if article is None:
            self.notify("no one-liner refreshed here to undo", markup=False)
            return
        if not self._may([article], "refresh the node's one-liners"):
            return
        self._confirm(f"Put back the one-liner of {article} that the last refresh replaced",
                      lambda: self._run("undo refresh", lambda s: consolidate.undo_refresh_line(s, article),
                                        [article], None))

    def _run(self, what: str, action, articles: list[str], select: str | None) -> None:  # noqa: ANN001
        """Run ``action(session)`` in a worker, then make the articles searchable again."""
        session = self.app.session

        def run() -> tuple[object, list[str]]:
            result = action(session)
            problems = [gov.refresh_search(session.ws, gov.touched_paths(session.ws, a)) for a in articles]
            return result, [p for p in problems if p]

        def done(outcome: tuple[object, list[str]]) -> None:
            result, problems = outcome
            for problem in problems:
                self.notify(problem, severity="warning", markup=False)
            note = f"{what}: done"
            if what == "refresh":
                self._refreshed = articles[0]
                note = "refresh: done (u puts the previous one-liner back)"
            if what == "merge":
                note = f"merge proposed as {getattr(result, 'id', '?')}: approve it in Proposals (7) to retire {articles[1]}"
            self._after(note, select)

        self.run_core(run, done, group="consolidate-write", title=f"{what} refused")

    def _after(self, note: str, select: str | None) -> None:
        from memtui.core.tree.model import MemoryTree

        self.notify(note, timeout=6, markup=False)
        self.app.tree_model = MemoryTree(self.app.ws)
        self.scan(select)

    # -- harvest -------------------------------------------------------------------------------
    def action_harvest(self) -> None:
        """The harvest of the candidate's case (a dry run); a candidate of no single case says
        how to harvest one from the command line."""
        c = self.current
        cases = [str(x) for x in (c.detail.get("cases") or []) if x] if c is not None else []
        case = str(c.detail.get("case") or "") if c is not None else ""
        case = case or (cases[0] if len(cases) == 1 else "")
        if not case:
            self.notify("this candidate names no single case: run memtui harvest CASE for one", markup=False)
            return
        show_harvest(self, case)

    # -- pins ------------------------------------------------------------------------------------
    def action_pins(self) -> None:
        c = self.current
        tabs = self.query_one("#cons-tabs", TabbedContent)
        tabs.active = "tab-pins"
        box = self.query_one("#pins-query", Input)
        if c is not None:
            active = gov.Ledger(self.app.session.store).active(c.articles[0])
            if active is not None:
                box.value = active.id
                self._load_pins(active.id)
        box.focus()

    @on(Input.Submitted, "#pins-query")
    def _pins_submitted(self, event: Input.Submitted) -> None:
        self._load_pins(event.value.strip())

    def _load_pins(self, query: str) -> None:
        """The pins of ``query`` (a version ``article@N`` or a case id), read in a worker; a
        refusal (an unknown version) is said in the pins' heading."""
        if not query:
            return
        ledger = gov.Ledger(self.app.session.store)

        def read() -> tuple[list[consolidate.Pinned], str]:
            if "@" in query:
                return consolidate.version_pins(ledger, query), f"cases that pinned {query}"
            return consolidate.case_pins(ledger, query), f"versions case {query} relied on"

        def refused(exc: Exception) -> bool:
            self._fill_pins([], str(exc))
            return True

        self.run_core(read, lambda found: self._fill_pins(*found), group="consolidate-pins", failed=refused)

    def _fill_pins(self, pins: list[consolidate.Pinned], head: str) -> None:
        self.query_one("#pins-head", Static).update(safe(f"{head}: {len(pins)}"))
        table = self.query_one("#pins-table", DataTable)
        table.clear()
        for i, p in enumerate(pins):
            style = "red" if "contested" in p.marks or p.state == "retired" else ""
            table.add_row(safe(p.version), safe(p.case), safe(p.status, style), safe(p.time),
                          Text("" if p.same_content else "saw another hash", style="yellow"), key=str(i))


#: What settles each kind, in keys (shown under the candidate).
_KEYS = {
    "duplicate": "m merge (a proposal; approve it in Proposals)",
    "contested": "v resolve, naming why · t retire · a new version clears it too",
    "conflict": "c contest one against the other · or merge them",
    "stale": "k re-verify (a passing check) · t retire · c contest",
    "one-liner": "o refresh the one-liner from the summary · u undo the last refresh",
    "ladder": "propose a skill (memtui propose --skill) or an article (memtui propose) with these cases",
    "skill-defect": "close the case: amended skill, delivered work, memory entry · or ask the owner",
}

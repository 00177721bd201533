"""The Proposals area: the queue of proposals and an article's version history.

Left: the queue (node, article, proposer, age, eligibility, untrusted mark); ``s`` shows
every state instead of only ``proposed``. The queue shows one page of :data:`PAGE` rows
("1–200 of 10,000 open proposals"; ``[``/``]`` page), read with its eligibility in a worker:
a table of every row costs 1.4 s per 10,000 rows to fill, and a queue can hold that many.
The history tab lists an article's newest :data:`HISTORY_ROWS` versions and says how many
older ones ``memtui versions`` lists. Right, for the selected proposal: its diff against
the active version (coloured unified, and side by side), its provenance, its uses and
assigned validation cases with the eligibility and the reason why not yet, and the version
history of its article with a diff between any two versions (``m`` marks the base version;
the diff goes from the mark, else the previous version, to the row under the cursor).

Actions (all ask for confirmation naming the acting profile, and run in a worker thread
through :mod:`memtui.core.governance` with the app's writer session ``app.session``):
``a`` approve (a human approving here is the human review when uses do not make it
eligible), ``x`` reject with a reason, ``c`` assign validation cases, ``b`` roll back to the
history row under the cursor, ``t`` retire the article (asking why). ``e`` shows the promotion
rules measured (what became of the versions promoted by two uses and by review, per node). A
read-only session refuses with its reason. All user text reaches widgets as :class:`rich.text.Text` (never markup).

Skill proposals (:mod:`memtui.core.skills.versions`) follow the articles on the queue's last
page, their state column saying the test state of their content; the Diff tab shows the diff
against the published version. On such a row ``a`` publishes it (the checks of
:func:`~memtui.core.skills.versions.check_publish` first, their sentence shown when refused;
a skill the modules gate on is measured on its eval set first, as an approval is, and the
Provenance tab shows the evaluation kept with it) and ``x`` rejects it with a reason; the
other actions concern articles only.
"""

from __future__ import annotations

import datetime as _dt
import time
from typing import Callable

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widgets import DataTable, Header, Static, TabbedContent, TabPane

from memtui.core import text
from memtui.core import classify
from memtui.core import governance as gov
from memtui.core.errors import MemtuiError
from memtui.core.skills import versions as skill_versions
from memtui.core.skills.versions import SkillLedger, SkillVersion
from memtui.ui import clock
from memtui.ui.widgets import KeyFooter, left_behind
from memtui.ui.widgets import AreaBar
from memtui.ui.widgets import AskText, Confirm, ValueViewer
from memtui.ui.text import as_data, join, safe
from memtui.ui.screens.base import AreaScreen


def age(created: str) -> str:
    """``"3d"``, ``"5h"``, ``"12m"`` since ``created`` (ISO 8601), or ``"?"``."""
    try:
        then = _dt.datetime.fromisoformat(created)
    except (TypeError, ValueError):
        return "?"
    seconds = max(0, int((clock.now() - then).total_seconds()))
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{seconds // size}{unit}"
    return f"{seconds}s"


def unified_text(patch: str) -> Text:
    """A unified diff as coloured :class:`Text` (added green, removed red, hunks cyan)."""
    out = Text()
    for line in patch.splitlines(keepends=True):
        style = ""
        if line.startswith(("+++", "---")):
            style = "bold"
        elif line.startswith("@@"):
            style = "cyan"
        elif line.startswith("+"):
            style = "green"
        elif line.startswith("-"):
            style = "red"
        out.append(Text(as_data(line), style=style))
    return out or Text("no difference", style="dim")


#: Rows of the queue on one page (a page is read, judged and drawn in well under a key's time).
PAGE = 200
#: Rows of an article's history shown (the newest; ``memtui versions`` pages through all).
HISTORY_ROWS = 200

#: Each half of the side-by-side diff needs at least this many cells; below, the tab shows the
#: unified diff instead (a fixed 60-cell half wrapped into duplicated lines).
SIDE_MIN = 30


def evaluation_text(record: dict, cases: int = 5) -> Text:
    """A recorded evaluation (:meth:`memtui.core.governance.gate.Evaluation.to_json`) as text:
    per domain the figures before → after (worse ones in red), then the first ``cases`` case
    changes and how many more there are."""
    out = Text()
    for line in gov.gate.lines({**record, "domains": [{**d, "changes": []} for d in record.get("domains") or []]},
                               cases=False):
        out.append(as_data(line), style="bold red" if line.rstrip().endswith("worse") else "")
        out.append("\n")
    changes = [c for d in record.get("domains") or [] for c in d.get("changes") or []]
    for c in changes[:cases]:
        out.append(as_data("  " + str(c.get("sentence"))), style="red" if c.get("worse") else "green")
        out.append("\n")
    more = sum(int(d.get("cases_changed") or 0) for d in record.get("domains") or []) - min(cases, len(changes))
    if more > 0:
        out.append(f"  … {more} more cases changed (memtui versions, or the Provenance tab once decided)\n", style="dim")
    out.rstrip()
    return out


def side_text(rows: list[tuple[str, str, str]], width: int = 60) -> Text:
    """Side-by-side diff rows (:func:`memtui.core.text.side_by_side`) as two coloured columns of
    ``width`` cells each; a longer line is cut with ``…`` (never wrapped into the other column)."""
    out = Text(no_wrap=True, overflow="ellipsis")
    styles = {"equal": ("", ""), "replace": ("red", "green"), "delete": ("red", "dim"), "insert": ("dim", "green")}
    for tag, left, right in rows:
        ls, rs = styles[tag]
        mark = " " if tag == "equal" else "│"
        cell = safe(left, ls)
        cell.truncate(width, overflow="ellipsis", pad=True)
        out.append_text(cell)
        out.append(Text(f" {mark} ", style="yellow" if tag != "equal" else "dim"))
        cell = safe(right, rs)
        cell.truncate(width, overflow="ellipsis")
        out.append_text(cell)
        out.append("\n")
    return out if rows else Text("no difference", style="dim")


class ProposalsScreen(AreaScreen):
    """Governed memory: review proposals, decide, and walk version histories."""

    DEFAULT_CSS = """
    ProposalsScreen #prop-area { height: 1fr; }
    ProposalsScreen #prop-left { width: 45%; min-width: 40; border-right: tall $panel; }
    ProposalsScreen #prop-queue { height: 1fr; }
    ProposalsScreen #prop-count { height: auto; padding: 0 1; background: $panel; }
    ProposalsScreen #prop-right { width: 1fr; }
    ProposalsScreen #prop-head { height: auto; max-height: 6; padding: 0 1; background: $panel; }
    ProposalsScreen .prop-scroll { height: 1fr; padding: 0 1; }
    ProposalsScreen #prop-history { height: 12; }
    """

    BINDINGS = [
        Binding("a", "approve", "Approve", id="proposals.approve"),
        Binding("x", "reject", "Reject", id="proposals.reject"),
        Binding("c", "assign", "Assign cases", id="proposals.assign"),
        Binding("b", "rollback", "Roll back", id="proposals.rollback"),
        Binding("t", "retire", "Retire", id="proposals.retire"),
        Binding("m", "mark", "Mark base", id="proposals.mark"),
        Binding("s", "toggle_states", "All states", id="proposals.toggle-states"),
        Binding("f", "cycle_class", "Class filter", id="proposals.class-filter",
                tooltip="show only the proposals of one class (mechanic, article, experience …), in turn"),
        Binding("e", "promotion", "Promotion rules", id="proposals.promotion"),
        Binding("right_square_bracket", "page(1)", "Next page", show=False, id="proposals.next-page"),
        Binding("left_square_bracket", "page(-1)", "Previous page", show=False, id="proposals.previous-page"),
        Binding("r", "reload", "Reload", id="proposals.reload"),
    ]

    def __init__(self) -> None:
        super().__init__()
        self.all_states = False
        #: only proposals of this class (``f``), or ``None`` for all
        self.class_filter: str | None = None
        #: the rows of the page shown, where the page starts in the queue, and the queue's length
        self._rows: list[gov.Version | SkillVersion] = []
        #: the test state of each skill proposal on the page (``tests passed`` …), by id
        self._skill_tests: dict[str, str] = {}
        #: the skill proposal under the cursor (``current`` is then ``None``)
        self.current_skill: SkillVersion | None = None
        #: what the side-by-side tab diffs: (base, content, base label, version id)
        self._diff_pair: tuple[str, str, str, str] | None = None
        self._offset = 0
        self._total = 0
        self._history: list[gov.Version] = []
        self.current: gov.Version | None = None
        self._mark: int | None = None

    def compose(self) -> ComposeResult:
        yield Header()
        yield AreaBar()
        with Horizontal(id="prop-area"):
            with Vertical(id="prop-left"):
                yield DataTable(id="prop-queue", cursor_type="row", zebra_stripes=True)
                yield Static(Text("reading proposals…", style="dim"), id="prop-count")
            with Vertical(id="prop-right"):
                yield Static(Text(""), id="prop-head")
                with TabbedContent(id="prop-tabs"):
                    with TabPane("Diff", id="tab-diff"), VerticalScroll(classes="prop-scroll"):
                        yield Static(Text(""), id="prop-diff")
                    with TabPane("Side by side", id="tab-side"), VerticalScroll(classes="prop-scroll"):
                        yield Static(Text(""), id="prop-side")
                    with TabPane("Provenance", id="tab-prov"), VerticalScroll(classes="prop-scroll"):
                        yield Static(Text(""), id="prop-prov")
                    with TabPane("Uses", id="tab-uses"), VerticalScroll(classes="prop-scroll"):
                        yield Static(Text(""), id="prop-uses")
                    with TabPane("History", id="tab-history"):
                        yield DataTable(id="prop-history", cursor_type="row")
                        with VerticalScroll(classes="prop-scroll"):
                            yield Static(Text(""), id="prop-history-diff")
        yield KeyFooter()

    def on_mount(self) -> None:
        self.query_one("#prop-queue", DataTable).add_columns(  # what decides first
            "article", "state / eligibility", "age", "node", "proposer")
        self.query_one("#prop-history", DataTable).add_columns("version", "state", "provenance", "by", "created", "")
        if hasattr(self.app, "workspace_changed"):
            self.app.workspace_changed.subscribe(self, self._on_changes)
        self.load()

    def _on_changes(self, changes) -> None:  # noqa: ANN001 - memtui.core.watch.Changes
        """The store or the inbox changed (an agent filed a proposal, the CLI approved one):
        read the queue again, keeping the selection."""
        if changes.topics & {"store", "tree"}:
            table = self.query_one("#prop-queue", DataTable)
            rows = getattr(self, "_rows", [])
            current = rows[table.cursor_row].id if 0 <= table.cursor_row < len(rows) else None
            self.load(select=current)

    def on_screen_resume(self) -> None:
        self.sub_title = f"{self.app.badge}{self.app.ws.root} · acting as {self.app.session.profile or '(no profile)'}"

    # -- loading ---------------------------------------------------------------------------
    @property
    def ledger(self) -> gov.Ledger:
        return gov.Ledger(self.app.session.store)

    @work(thread=True, exclusive=True, group="proposals-load")
    def load(self, select: str | None = None, offset: int | None = None) -> None:
        """Read one page of the queue and its rows' eligibility in a thread, then fill the table.

        Args:
            select: the proposal to select: the page holding it is shown (else the page
                ``offset`` or the one shown, and its first row).
            offset: where the page starts in the queue (a multiple of :data:`PAGE`).
        """
        ledger = self.ledger
        with ledger.store.reading():
            queue = ledger.queue(None if self.all_states else "proposed")
            if self.class_filter:
                queue = classify.of_class(queue, self.class_filter)  # type: ignore[assignment]
            start = self._offset if offset is None else offset
            at = next((i for i, v in enumerate(queue) if v.id == select), None) if select and self.class_filter \
                else queue.position(select) if select else None
            if at is not None:
                start = at
            start = max(0, min(start, len(queue) - 1)) // PAGE * PAGE
            articles = queue[start:start + PAGE]
            verdicts = {v.id: gov.eligibility(ledger, v) for v in articles if v.state == "proposed"}
            rows: list[gov.Version | SkillVersion] = list(articles)
            skills = SkillLedger(ledger.store)
            # skill proposals have no class; they follow the articles, on the last page
            pending = [] if self.class_filter else skills.proposals(None if self.all_states else "proposed")
            if start + PAGE >= len(queue):
                rows.extend(pending)
            tests = {v.id: skills.test_state(v) for v in pending}
        self.from_worker(self._fill, rows, verdicts, select, start, len(queue) + len(pending), tests)

    def _fill(self, rows: list[gov.Version | SkillVersion], verdicts: dict[str, gov.Eligibility],
              select: str | None, offset: int | None = None, total: int | None = None,
              tests: dict[str, str] | None = None) -> None:
        self._rows = rows
        if tests is not None:
            self._skill_tests = tests
        self._verdicts = verdicts
        if offset is not None:
            self._offset = offset
        if total is not None:
            self._total = total
        table = self.query_one("#prop-queue", DataTable)
        table.clear()
        width = self.query_one("#prop-left").size.width or max(40, int(self.app.size.width * 0.45))
        # the article's name gives way so its state and eligibility stay in view
        name_width = max(12, width - 2 - 2 * 2 - len("review only · untrusted"))
        for v in rows:
            if isinstance(v, SkillVersion):
                state = self._skill_tests.get(v.id, v.state) if v.state == "proposed" else v.state
                # the skill's name (its id is cut at 80 columns), marked as a skill where the state is
                status = join(Text("skill · ", style="dim"),
                              Text(state, style={"tests passed": "green", "tests failed": "red",
                                                 "not tested": "yellow"}.get(state, "dim")))
                name = safe(v.skill)
                name.truncate(name_width, overflow="ellipsis")
                table.add_row(name, status, Text(age(v.created)), safe(v.node or "(root)"), safe(v.author or "—"),
                              key=v.id)
                continue
            e = verdicts.get(v.id)
            if e is None:
                status = Text(v.state, style="dim")
            elif e.by_uses:
                status = Text("eligible by uses", style="green")
            else:
                status = Text("review only", style="yellow")
            name = safe(v.article.rsplit("/", 1)[-1])
            name.truncate(name_width, overflow="ellipsis")
            if v.untrusted:  # in the state column: it must be seen with it, at any width
                status = join(status, Text(" · untrusted", style="bold red"))
            table.add_row(name, status, Text(age(v.created)), safe(v.node or "(root)"), safe(v.author or "—"),
                          key=v.id)
        self.query_one("#prop-count", Static).update(Text(self.count_line(), style="dim"))
        self.on_screen_resume()
        if not rows:
            self.current = self.current_skill = None
            self.query_one("#prop-head", Static).update(Text("no proposals", style="dim"))
            return
        index = next((i for i, v in enumerate(rows) if v.id == select), 0)
        table.move_cursor(row=index)
        self.show(rows[index])

    def count_line(self) -> str:
        """What the queue shows: ``"3 open proposals · s: all states"``, or for a queue longer
        than a page ``"201–400 of 10,000 open proposals ([ ] pages) · s: all states"``."""
        what = "proposal" if self.all_states else "open proposal"
        counted = text.plural(self._total, what)
        if self.class_filter:
            counted += f" · class {self.class_filter}"
        if self._total > PAGE:
            last = self._offset + len(self._rows)
            counted = f"{self._offset + 1:,}–{last:,} of {counted} ([ ] pages)"
        return f"{counted} (all states) · s: open only" if self.all_states else f"{counted} · s: all states"

    def action_page(self, step: int) -> None:
        """Show the next (``step`` 1) or previous (-1) page of the queue."""
        offset = self._offset + step * PAGE
        if 0 <= offset < self._total:
            self.load(offset=offset)

    @on(DataTable.RowHighlighted, "#prop-queue")
    def _highlighted(self, event: DataTable.RowHighlighted) -> None:
        if left_behind(event):
            return
        if 0 <= event.cursor_row < len(self._rows):
            self.show(self._rows[event.cursor_row])

    def show(self, v: gov.Version | SkillVersion) -> None:
        """Fill the right side for proposal ``v`` (its reads: one look at the store)."""
        with self.app.session.store.reading():
            if isinstance(v, SkillVersion):
                self._show_skill(v)
            else:
                self._show(v)

    def _show_skill(self, v: SkillVersion) -> None:
        """The right side for a skill proposal: its diff against the published version (plain
        text), its provenance; no uses or history tab content (``memtui skills versions``)."""
        self.current, self.current_skill, self._diff_pair = None, v, None
        skills = SkillLedger(self.app.session.store)
        active = skills.active(v.skill)
        owner, how = gov.owner_of(self.app.ws, v.node)
        head = join(safe(v.skill, "bold"), Text("  "), safe(v.id, "dim"), Text("  [skill]", style="dim"))
        head.append("\nowner: ")
        head.append(safe(owner or "none — nobody may publish here", "bold" if owner else "yellow"))
        head.append(Text(f"  ·  you act as {self.app.session.profile or '(no profile)'}", style="dim"))
        head.append("\n")
        head.append(safe(skills.test_state(v) if v.state == "proposed"
                         else f"{v.state}: {(v.decision or {}).get('why', '')}", "dim"))
        self.query_one("#prop-head", Static).update(head)
        if active is None:
            shown = safe("no published version to compare with; it holds: " + ", ".join(sorted(v.files)), "dim")
        else:
            # line by line (as_data per line): safe() would fold the lines into one with ⏎ marks
            shown = unified_text(skill_versions.diff(skills, v.skill, active.number, v.number))
        self.query_one("#prop-diff", Static).update(shown)
        self.query_one("#prop-side", Static).update(shown.copy())
        prov = Text()
        for label, value in (("kind", "skill proposal"), ("case", v.provenance.get("case")),
                             ("source request", v.provenance.get("source_request")), ("author", v.author),
                             ("created", v.created), ("based on version", v.based_on),
                             ("content", v.sha256[:12]), ("owner resolved", how)):
            prov.append(Text(f"{label}: ", style="bold"))
            prov.append(safe(value if value not in (None, "") else "—"))
            prov.append("\n")
        if v.provenance.get("evaluation"):  # a gated skill's eval set, measured as it was published
            prov.append(Text("evaluation:\n", style="bold"))
            prov.append(evaluation_text(v.provenance["evaluation"], cases=20))
        self.query_one("#prop-prov", Static).update(prov)
        self.query_one("#prop-uses", Static).update(Text("uses of skill versions: memtui skills versions", style="dim"))
        self._fill_history([])

    def _show(self, v: gov.Version) -> None:
        self.current, self.current_skill = v, None
        self._mark = None
        ledger = self.ledger
        active = ledger.active(v.article)
        owner, how = gov.owner_of(self.app.ws, v.node)
        e = gov.eligibility(ledger, v)
        head = join(safe(v.title, "bold"), Text("  "), safe(v.id, "dim"))
        head.append("\nowner: ")
        head.append(safe(owner or "none — nobody may activate here", "bold" if owner else "yellow"))
        head.append(Text(f"  ·  you act as {self.app.session.profile or '(no profile)'}", style="dim"))
        head.append("\n")
        if v.state == "proposed":
            head.append(Text(e.summary, style="green" if e.by_uses else "yellow"))
        else:
            head.append(safe(f"{v.state}: {(v.decision or {}).get('why', '')}", "dim"))
        if v.untrusted:
            head.append(Text("  ·  UNTRUSTED provenance", style="bold red"))
        self.query_one("#prop-head", Static).update(head)
        base = active.content if active else ""
        label = f"{v.article}@{active.number} (active)" if active else "(no active version)"
        self.query_one("#prop-diff", Static).update(unified_text(text.unified_diff(base, v.content, label, v.id)))
        self._diff_pair = (base, v.content, label, v.id)
        self._draw_side()
        self.query_one("#prop-prov", Static).update(self._provenance(v, how))
        self.query_one("#prop-uses", Static).update(self._uses(ledger, v, e))
        self._fill_history(ledger.versions(v.article))

    def _draw_side(self) -> None:
        """The side-by-side tab at the width it has now; unified when the halves would not fit."""
        pair = getattr(self, "_diff_pair", None)
        if pair is None:
            return
        base, content, label, vid = pair
        width = self.query_one("#prop-right").size.width or int(self.app.size.width * 0.55)
        half = (width - 2 - 3 - 1) // 2  # padding, the middle mark, the scrollbar
        side = self.query_one("#prop-side", Static)
        if half >= SIDE_MIN:
            side.update(side_text(text.side_by_side(base, content), half))
        else:
            note = Text(f"Too narrow for side by side (each half needs {SIDE_MIN} columns): the unified "
                        "diff instead.\n\n", style="dim italic")
            side.update(join(note, unified_text(text.unified_diff(base, content, label, vid))))

    #: the tabs' labels, full and short: every tab stays whole in a narrow pane (at 80 columns
    #: "History" was cut to "H")
    TAB_LABELS = {"tab-diff": ("Diff", "Diff"), "tab-side": ("Side by side", "Sides"),
                  "tab-prov": ("Provenance", "Prov."), "tab-uses": ("Uses", "Uses"),
                  "tab-history": ("History", "History")}

    def _fit_tab_labels(self) -> None:
        tabs = self.query_one("#prop-tabs", TabbedContent)
        width = tabs.size.width or self.app.size.width // 2
        full = sum(len(long) + 2 for long, _short in self.TAB_LABELS.values())
        for pane_id, (long, short) in self.TAB_LABELS.items():
            tabs.get_tab(pane_id).label = long if full <= width else short

    def on_resize(self) -> None:
        self._fit_tab_labels()
        self._draw_side()
        if getattr(self, "_verdicts", None) is not None and self._rows:
            table = self.query_one("#prop-queue", DataTable)
            current = self._rows[table.cursor_row].id if 0 <= table.cursor_row < len(self._rows) else None
            self._fill(self._rows, self._verdicts, current)

    def _provenance(self, v: gov.Version, how: str) -> Text:
        p = v.provenance
        out = Text()
        for label, value in (("kind", p.get("kind")), ("case", p.get("case")),
                             ("source request", p.get("source_request")), ("author", v.author),
                             ("profile version", v.profile_version), ("created", v.created),
                             ("based on version", v.based_on), ("human reviewed", p.get("human_reviewed")),
                             ("untrusted chain", p.get("untrusted")), ("owner resolved", how),
                             ("index line", f"[{v.title}] — {v.one_liner}")):
            out.append(Text(f"{label}: ", style="bold"))
            out.append(safe(value if value not in (None, "") else "—"))
            out.append("\n")
        for source in p.get("sources") or []:
            out.append(Text("source: ", style="bold"))
            out.append(safe(source))
            out.append("\n")
        if v.classification:
            out.append(Text("class: ", style="bold"))
            out.append(safe(f"{v.classification.get('class')} — {v.classification.get('reason')}"))
            out.append("\n")
        if v.new_node:
            out.append(Text("new node: ", style="bold"))
            out.append(safe(f"owner {v.new_node.get('owner')} — {v.new_node.get('title')}"))
            out.append("\n")
        for label, record in (("evaluation", p.get("evaluation")),
                              ("evaluation of its retirement", (v.retirement or {}).get("evaluation"))):
            if record:
                out.append(Text(f"{label}:\n", style="bold"))
                out.append(evaluation_text(record, cases=20))
                out.append("\n")
        return out

    def _uses(self, ledger: gov.Ledger, v: gov.Version, e: gov.Eligibility) -> Text:
        out = Text()
        out.append(Text(e.summary + "\n", style="green" if e.by_uses else "yellow"))
        for reason in e.reasons:  # app sentences naming user values: shown as they are, lines kept
            out.append(join("  · ", safe(reason), "\n"))
        uses = ledger.uses(v.id)
        out.append(Text(f"\n{text.plural(len(uses), 'use')}\n", style="bold"))
        for u in uses:
            style = "green" if u.verdict == "pass" else "red"
            out.append(Text(f"{u.verdict:<13}", style=style))
            out.append(join(" case ", safe(u.case), " · source request ", safe(u.source_request), " · ",
                            safe(u.origin), *((" of ", safe(u.origin_of)) if u.origin_of else ()),
                            f" · hash {u.hash[:12]}\n    check: ", safe(u.check), "\n"))
        cases = ledger.assignments(v.id)
        out.append(Text(f"\nassigned validation cases: {len(cases)}\n", style="bold"))
        for a in cases:
            out.append(join("  ", safe(a["case"]), " (by ", safe(a["by"]), f", {a['time']})\n"))
        return out

    def _fill_history(self, versions: list[gov.Version]) -> None:
        self._history_hidden = max(0, len(versions) - HISTORY_ROWS)
        if self._history_hidden:  # the newest (a table of every row costs a key's time)
            versions = versions[-HISTORY_ROWS:]
        table = self.query_one("#prop-history", DataTable)
        if versions == self._history and table.row_count == len(versions):
            # the same article's history, unchanged and drawn already: back to the newest row
            table.move_cursor(row=len(versions) - 1)
            self._history_diff(len(versions) - 1)
            return
        self._history = versions
        table.clear()
        for h in versions:
            table.add_row(Text(str(h.number)), Text(h.state), safe(h.provenance.get("kind") or ""),
                          safe(h.author or "—"), Text(h.created), Text("untrusted", style="red") if h.untrusted else Text(""),
                          key=str(h.number))
        if versions:
            table.move_cursor(row=len(versions) - 1)  # the newest, diffed against the one before
        self._history_diff(len(versions) - 1)

    @on(DataTable.RowHighlighted, "#prop-history")
    def _history_row(self, event: DataTable.RowHighlighted) -> None:
        if left_behind(event):  # the refilled table's first row, the cursor already on the newest
            return
        self._history_diff(event.cursor_row)

    def _history_diff(self, row: int) -> None:
        target = self.query_one("#prop-history-diff", Static)
        if not (0 <= row < len(self._history)):
            target.update(Text(""))
            return
        new = self._history[row]
        base = next((h for h in self._history if h.number == self._mark), None)
        if base is None:
            base = self._history[row - 1] if row > 0 else None
        patch = text.unified_diff(base.content if base else "", new.content, base.id if base else "(none)", new.id)
        shown = unified_text(patch)
        hidden = getattr(self, "_history_hidden", 0)
        if hidden:
            shown = join(Text(f"The newest {len(self._history):,} versions are listed; "
                              f"{text.plural(hidden, 'older version')}: memtui versions ", style="dim italic"),
                         safe(new.article, "dim italic"), Text("\n\n"), shown)
        target.update(shown)

    def history_diff_text(self) -> str:
        """The plain text of the history diff shown (for tests)."""
        return str(self.query_one("#prop-history-diff", Static).render())

    # -- actions ---------------------------------------------------------------------------
    def _acting(self) -> str:
        return self.app.session.profile or "(no profile)"

    def _writable(self) -> bool:
        if self.app.session.read_only:
            self.notify(self.app.session.reason or "read-only", title="Read-only", severity="warning", markup=False)
            return False
        return True

    def action_toggle_states(self) -> None:
        self.all_states = not self.all_states
        self.load(offset=0)

    def action_cycle_class(self) -> None:
        """Show only the proposals of the next class (:data:`memtui.core.classify.CLASSES`),
        then all again."""
        order: list[str | None] = [None, *classify.CLASSES]
        self.class_filter = order[(order.index(self.class_filter) + 1) % len(order)]
        self.load(offset=0)

    def action_reload(self) -> None:
        shown = self.current or self.current_skill
        self.load(shown.id if shown else None)

    def action_mark(self) -> None:
        table = self.query_one("#prop-history", DataTable)
        if 0 <= table.cursor_row < len(self._history):
            self._mark = self._history[table.cursor_row].number
            self.notify(f"diffs now start from version {self._mark}", timeout=3, markup=False)

    def _owner_refuses(self, node: str, what: str) -> bool:
        """Refuse at once when the acting profile does not own ``node``: before anything is asked."""
        try:
            gov.require_owner(self.app.session, node, what)
        except MemtuiError as exc:
            self.notify(str(exc), title="Refused", severity="error", timeout=10, markup=False)
            return True
        return False

    def _publish_skill(self, v: SkillVersion) -> None:
        """``a`` on a skill proposal: every check of publishing first (the refusal's sentence as
        the toast), then a confirmation, then the publication in a worker."""
        e = gov.eligibility(self.ledger, v.as_version())
        reviewed = not e.by_uses  # a human publishing here is the human review, as for articles
        try:
            skill_versions.check_publish(self.app.session, v.id, reviewed=reviewed)
        except MemtuiError as exc:
            self.notify(str(exc), title="Publish refused", severity="error", timeout=10, markup=False)
            return

        # a skill the modules gate on is measured on its eval set first, as an article's approval is
        self._gate(
            "publish", lambda s, p: skill_versions.evaluate_change(s, "publish", v.skill, ref=v.id, reviewed=reviewed,
                                                                   progress=p),
            join(f"Publish {v.id}, acting as ", safe(self._acting()), "? Its files will replace the skill's folder."),
            lambda ev, why: (lambda s: skill_versions.publish(s, v.id, reviewed=reviewed, evaluation=ev,
                                                              accept_regression=why)), None, v.id)

    def _ask_reject(self, version_id: str, outcome: str, reject: Callable[..., object]) -> None:
        """Ask why, confirm, then ``reject(session, reason)`` in a worker (an article's or a skill's
        proposal; ``outcome`` is what it will not be: activated, published)."""
        def got_reason(reason: str | None) -> None:
            if reason is None:
                return

            def confirmed(yes: bool | None) -> None:
                if yes:
                    self._run("reject", lambda s: reject(s, reason), None, version_id)
            self.app.push_screen(Confirm(join(f"Reject {version_id}, acting as ", safe(self._acting()),
                                              ", with the reason: ", safe(reason), f"? It will not be {outcome}.")),
                                 confirmed)
        self.app.push_screen(AskText(f"Why reject {version_id}? (the reason is recorded)", required="a reason"),
                             got_reason)

    def _reject_skill(self, v: SkillVersion) -> None:
        if self._owner_refuses(v.node, f"reject a proposal of the skill {v.skill}"):
            return

        self._ask_reject(v.id, "published", lambda s, reason: skill_versions.reject(s, v.id, reason))

    def action_approve(self) -> None:
        skill = self.current_skill
        if skill is not None:
            if skill.state == "proposed" and self._writable():
                self._publish_skill(skill)
            return
        v = self.current
        if v is None or v.state != "proposed" or not self._writable():
            return
        e = gov.eligibility(self.ledger, v)
        try:  # every check approve makes (owner, state, disk, base): before the question, not after
            gov.check_approval(self.app.session, v.id, reviewed=not e.by_uses)
        except MemtuiError as exc:
            self.notify(str(exc), title="Approve refused", severity="error", timeout=10, markup=False)
            return
        how = "eligible by uses" if e.by_uses else "as human review (not eligible by uses: " + "; ".join(e.reasons) + ")"
        question = join(f"Approve {v.id} {how}, acting as ", safe(self._acting()),
                        "? It will become the active version in the shared tree.")
        if v.untrusted:  # said where the decision is made, not only in the pane behind the dialog
            question = join(question, Text("\n\nUNTRUSTED: ", style="bold red"),
                            "its provenance carries an untrusted source; read its diff and sources first.")
        reviewed = not e.by_uses
        self._gate(
            "approve", lambda s, p: gov.evaluate_change(s, "approve", version_id=v.id, reviewed=reviewed, progress=p),
            question, lambda ev, why: (lambda s: gov.approve(s, v.id, reviewed=reviewed, evaluation=ev,
                                                            accept_regression=why)), v.article, v.id)

    def _gate(self, what: str, measure, question: Text, act, article: str | None,  # noqa: ANN001
                  select: str | None) -> None:
        """Measure the change on the eval sets of its domains in a worker (seed 000 §7.4b),
        then ask: the figures before → after and the cases that changed go into the question;
        a regression first asks for the reason it is accepted with (Escape: nothing changes)."""
        self.notify("measuring this change on the eval sets of its domains …", timeout=3, markup=False)
        self._measure_change(what, measure, question, act, article, select)

    @work(thread=True, exclusive=True, group="proposals-measure")
    def _measure_change(self, what: str, measure, question: Text, act, article: str | None,  # noqa: ANN001
                 select: str | None) -> None:
        shown: list[str] = [""]
        at: list[float] = [0.0]

        def progress(stage: str, done: int, total: int) -> None:
            # each stage, then at most a few updates a second (a 10,000-article evaluation runs
            # hundreds of searches)
            line = f"{stage}: {done}/{total}"
            now = time.monotonic()
            if line != shown[0] and (not shown[0].startswith(stage + ":") or done >= total or now - at[0] > 0.25):
                shown[0], at[0] = line, now
                self.from_worker(self._show_measuring, line)

        try:
            ev = measure(self.app.session, progress)
        except MemtuiError as exc:
            self.from_worker(self.notify, str(exc), title=f"{what} refused", severity="error",
                                      timeout=10, markup=False)
            return
        finally:
            self.from_worker(self._show_measuring, None)
        self.from_worker(self._ask_measured, what, ev, question, act, article, select)

    def _show_measuring(self, line: str | None) -> None:
        """The evaluation's stage under the queue while it runs (``None``: the count again)."""
        self.query_one("#prop-count", Static).update(
            Text(self.count_line(), style="dim") if line is None else Text(f"measuring the change · {line}"))

    def _ask_measured(self, what: str, ev, question: Text, act, article: str | None,  # noqa: ANN001
                      select: str | None) -> None:
        figures = evaluation_text(ev.to_json()) if ev is not None else None

        def confirmed(why: str | None) -> Callable[[bool | None], None]:
            def done(yes: bool | None) -> None:
                if yes:
                    self._run(what, act(ev, why), article, select)
            return done

        if ev is None or not ev.regressed:
            self.app.push_screen(Confirm(join(question, "\n\n", figures) if figures else question), confirmed(None))
            return
        worse = "; ".join(f"{d.node or '.'} ({', '.join(gov.gate.label(n) for n in d.worse)})"
                          for d in ev.domains if d.worse)

        def got_reason(reason: str | None) -> None:
            if reason:
                self.app.push_screen(Confirm(join(question, Text("\n\nWorse eval figures: ", style="bold red"),
                                                  safe(worse), "\nAccepted because: ", safe(reason)),
                                             yes="Accept and go"), confirmed(reason))
        self.app.push_screen(AskText(join(Text("This change makes a domain's eval figures WORSE.\n", style="bold red"),
                                          figures or "", "\n\nTo make it anyway, type why the regression is "
                                          "accepted (recorded with the evaluation); Escape leaves everything as it is."),
                                     required="a reason"), got_reason)

    def action_reject(self) -> None:
        skill = self.current_skill
        if skill is not None:
            if skill.state == "proposed" and self._writable():
                self._reject_skill(skill)
            return
        v = self.current
        if v is None or v.state != "proposed" or not self._writable() or self._owner_refuses(v.node, "reject"):
            return

        self._ask_reject(v.id, "activated", lambda s, reason: gov.reject(s, v.id, reason))

    def action_assign(self) -> None:
        v = self.current
        if v is None or v.state != "proposed" or not self._writable() or self._owner_refuses(v.node, "assign cases"):
            return

        def got(cases: str | None) -> None:
            if not cases:
                return
            names = [c.strip() for c in cases.replace(",", " ").split() if c.strip()]

            def confirmed(yes: bool | None) -> None:
                if yes:
                    self._run("assign", lambda s: gov.assign(s, v.id, names), None, v.id)
            self.app.push_screen(Confirm(join("Assign ", safe(", ".join(names)), f" to {v.id}, acting as ",
                                              safe(self._acting()), "? They will validate it.")), confirmed)
        self.app.push_screen(AskText("Validation cases (case ids, separated by spaces or commas)"), got)

    def _rollback_target(self) -> tuple[str, int] | None:
        """``(article, version number)`` to roll back to: the History tab's row when that table
        has the focus; else, for the version picked in the queue, that version when it is
        retired, or the accepted version before it when it is the active one ("roll this
        article back"). The History cursor alone once decided, whatever row was picked."""
        table = self.query_one("#prop-history", DataTable)
        if table.has_focus and 0 <= table.cursor_row < len(self._history):
            h = self._history[table.cursor_row]
            return h.article, h.number
        v = self.current
        if v is None or v.state not in ("active", "retired"):
            return None
        if v.state == "retired":
            return v.article, v.number
        earlier = [h for h in self.ledger.versions(v.article)
                   if h.number < v.number and h.decision is not None and h.state in ("active", "retired")]
        return (v.article, earlier[-1].number) if earlier else None

    def action_rollback(self) -> None:
        if not self._writable():
            return
        target = self._rollback_target()
        if target is None:
            self.notify("pick what to roll back: an active version with an earlier one in the queue (s shows "
                        "every state), or the version to go back to in the History tab", severity="warning",
                        markup=False)
            return
        article, number = target
        try:  # refused before asking: nobody confirms what is then refused
            gov.check_rollback(self.app.session, article, number)
        except MemtuiError as exc:
            self.notify(str(exc), title="rollback refused", severity="warning", timeout=10, markup=False)
            return

        self._gate(
            "rollback", lambda s, p: gov.evaluate_change(s, "rollback", article=article, to=number, progress=p),
            join("This will publish a new version of ", safe(article), f" holding version {number}'s content, "
                 "acting as ", safe(self._acting()), ". Go ahead?"),
            lambda ev, why: (lambda s: gov.rollback(s, article, number, evaluation=ev, accept_regression=why)),
            article, self.current.id if self.current else None)

    def action_retire(self) -> None:
        v = self.current
        if v is None or not self._writable():
            return
        active = self.ledger.active(v.article)
        if active is None:
            self.notify(f"{v.article} has no active version to retire", severity="warning", markup=False)
            return
        if self._owner_refuses(active.node, "retire"):
            return

        def got(reason: str | None) -> None:
            if not reason or not reason.strip():
                return
            self._gate(
                "retire", lambda s, p: gov.evaluate_change(s, "retire", article=v.article, progress=p),
                join(f"Retire {active.id}, acting as ", safe(self._acting()),
                     "? Its file and its index line will leave the tree. Reason: ", safe(reason.strip())),
                lambda ev, why: (lambda s: gov.retire(s, v.article, reason, evaluation=ev, accept_regression=why)),
                v.article, v.id)
        self.app.push_screen(AskText(f"Why retire {active.id}? (the reason is recorded)", required="a reason"),
                             got)

    def action_promotion(self) -> None:
        """Show what became of the versions promoted by two uses and by review, per node and rule
        (the measurement of ``memtui eval promotion``, without held-out cases)."""
        self.notify("measuring the promotion rules…", timeout=2, markup=False)
        self._measure_promotion()

    @work(thread=True, exclusive=True, group="proposals-promotion")
    def _measure_promotion(self) -> None:
        from memtui.core.governance import promotion

        promoted = promotion.history(self.app.session.store)
        rows = promotion.summarise(promoted)
        required = {n: promotion.required_rule(self.app.ws, n) for n in sorted({p.node for p in promoted})}
        lines = promotion.report_lines(promoted, rows, required, None, compact=True)
        if not promoted:
            lines.append("nothing was promoted by uses or by review yet")
        lines.append("held-out cases: memtui eval promotion --cases FILE --domain NODE")
        self.from_worker(self.app.push_screen, ValueViewer("Promotion rules measured", "\n".join(lines)))

    def _run(self, what: str, action, article: str | None, select: str | None) -> None:  # noqa: ANN001
        """Run ``action(session)`` in a worker, then make the article searchable again."""
        session = self.app.session

        def run() -> str:
            action(session)
            return (gov.refresh_search(session.ws, gov.touched_paths(session.ws, article)) if article else None) or ""

        def done(problem: str) -> None:
            if problem:
                self.notify(problem, severity="warning", markup=False)
            self._after(what, select)

        self.run_core(run, done, group="proposals-write", title=f"{what} refused")

    def _after(self, what: str, select: str | None) -> None:
        self.notify(f"{what}: done", timeout=3, markup=False)
        from memtui.core.tree.model import MemoryTree

        self.app.tree_model = MemoryTree(self.app.ws)
        self.load(select)

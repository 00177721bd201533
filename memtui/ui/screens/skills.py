"""The Skills area: the catalogue as a table, the selected SKILL.md rendered, its findings,
the files beside it, the budget view of the index an agent gets (seed 002), and the skill's
governance: its node and owner, manifest, state, versions and the test result of each
version's content (seed 000 Part II §10), and for a skill the modules gate on, the evaluation
of its eval set kept with each version.

The catalogue is read in a worker thread (:func:`memtui.core.skills.load_catalogue`); every
name, description and message reaches widgets as :class:`rich.text.Text` via
:func:`memtui.ui.text.safe`, never as markup.
"""

from __future__ import annotations

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widgets import DataTable, Header, Markdown, Static, TabbedContent, TabPane

from memtui.core.skills import DEFAULT_INDEX_BUDGET, Catalogue, Skill, build_index, load_catalogue
from memtui.core.skills.status import SkillStatus, governed, skill_status
from memtui.core.governance import gate
from memtui.core.skills.versions import SkillLedger, SkillVersion
from memtui.ui.screens.proposals import evaluation_text
from memtui.ui.widgets import KeyFooter, left_behind
from memtui.ui.widgets import AreaBar, DataMarkdown
from memtui.ui.text import join, safe, severity_text
from memtui.ui.screens.base import AreaScreen

#: Characters of a SKILL.md body rendered as Markdown; the rest is announced.
PREVIEW_LIMIT = 64 * 1024






class SkillsScreen(AreaScreen):
    """The skills catalogue of the open workspace."""

    DEFAULT_CSS = """
    #skills-area { height: 1fr; }
    #skills-left { width: 45%; min-width: 30; border-right: tall $panel; }
    #skills-table { height: 1fr; }
    #skills-count { height: auto; padding: 0 1; background: $panel; }
    #skills-right { width: 1fr; }
    #skill-head { height: auto; max-height: 8; padding: 0 1; background: $panel; }
    #skill-body-scroll, #skill-findings-scroll, #skill-files-scroll, #skill-budget-scroll, #skill-gov-scroll {
        height: 1fr; padding: 0 1;
    }
    """

    BINDINGS = [
        Binding("r", "reload", "Reload", id="skills.reload"),
        Binding("b", "show_budget", "Budget", id="skills.show-budget"),
        Binding("v", "show_versions", "Versions", id="skills.show-versions"),
        Binding("plus", "budget(1024)", "Budget +1 KiB", show=False, id="skills.budget-up"),
        Binding("minus", "budget(-1024)", "Budget −1 KiB", show=False, id="skills.budget-down"),
    ]

    def __init__(self) -> None:
        super().__init__()
        self.catalogue: Catalogue | None = None
        self.budget = DEFAULT_INDEX_BUDGET
        self._rows: list[Skill] = []
        #: per skill path: its governance and its versions with their test result, read with the catalogue
        self._governance: dict[str, tuple[SkillStatus, list[tuple[SkillVersion, dict | None]]]] = {}
        #: the workspace-relative path a jump asked for before the catalogue was read
        self._wanted: str | None = None

    def compose(self) -> ComposeResult:
        yield Header()
        yield AreaBar()
        with Horizontal(id="skills-area"):
            with Vertical(id="skills-left"):
                yield DataTable(id="skills-table", cursor_type="row", zebra_stripes=True)
                yield Static(Text("reading skills…", style="dim"), id="skills-count")
            with Vertical(id="skills-right"):
                yield Static(Text(""), id="skill-head")
                with TabbedContent(id="skill-tabs"):
                    with TabPane("SKILL.md", id="tab-body"), VerticalScroll(id="skill-body-scroll"):
                        yield DataMarkdown("", id="skill-body", open_links=False)
                    with TabPane("Findings", id="tab-findings"), VerticalScroll(id="skill-findings-scroll"):
                        yield Static(Text(""), id="skill-findings")
                    with TabPane("Files", id="tab-files"), VerticalScroll(id="skill-files-scroll"):
                        yield Static(Text(""), id="skill-files")
                    with TabPane("Budget", id="tab-budget"), VerticalScroll(id="skill-budget-scroll"):
                        yield Static(Text(""), id="skill-budget")
                    with TabPane("Versions", id="tab-versions"), VerticalScroll(id="skill-gov-scroll"):
                        yield Static(Text(""), id="skill-governance")
        yield KeyFooter()

    def on_mount(self) -> None:
        table = self.query_one("#skills-table", DataTable)
        for name in ("name", "root/scope", "valid", "shadowed", "description"):
            table.add_column(name, key=name)
        if hasattr(self.app, "workspace_changed"):
            self.app.workspace_changed.subscribe(self, self._on_changes)
        self.load()

    def _on_changes(self, changes) -> None:  # noqa: ANN001 - memtui.core.watch.Changes
        """A skill folder changed (any process): read the catalogue again."""
        if changes.topics & {"skills", "store"}:
            self.load()

    # -- loading ---------------------------------------------------------------------------
    def load(self) -> None:
        """Read the catalogue and the skills' governance in a worker; fill the area after."""
        self.run_core(self._read, lambda read: self._fill(*read), group="skills", title="Skills not read")

    def _read(self) -> tuple[Catalogue, dict[str, tuple[SkillStatus, list[tuple[SkillVersion, dict | None]]]]]:
        catalogue = load_catalogue(self.app.ws)
        governance: dict[str, tuple[SkillStatus, list[tuple[SkillVersion, dict | None]]]] = {}
        store = self.app.session.store
        with store.reading():
            ledger = SkillLedger(store)
            for skill in governed(catalogue):
                status = skill_status(self.app.ws, skill, store)
                versions = [(v, ledger.last_test(v.skill, v.sha256)) for v in ledger.versions(skill.key)] \
                    if skill.root == "skills" else []
                governance[skill.path] = (status, versions)
        return catalogue, governance

    def _fill(self, catalogue: Catalogue,
              governance: dict[str, tuple[SkillStatus, list[tuple[SkillVersion, dict | None]]]] | None = None) -> None:
        self.catalogue = catalogue
        self._governance = governance or {}
        self._rows = list(catalogue.skills)
        table = self.query_one("#skills-table", DataTable)
        table.clear()
        for i, skill in enumerate(self._rows):
            valid = Text("yes", style="green") if skill.valid else Text("NO", style="bold red")
            description = " ".join((skill.description or "").split())
            table.add_row(safe(skill.shown_name), safe(skill.root_scope), valid,
                          safe(skill.standing), safe(description[:120] or "—"), key=str(i))
        count = Text(catalogue.count_line())
        if catalogue.findings:
            count.append(Text(f" · {len(catalogue.findings)} cascade findings", style="yellow"))
        if not self._rows:
            count = Text("no skills: this workspace has no skills/ or shared-skills/ folder", style="dim")
        self.query_one("#skills-count", Static).update(count)
        self._show_budget()
        self._show(0)
        if self._wanted is not None:
            wanted, self._wanted = self._wanted, None
            self.reveal(wanted)

    # -- jumps from other areas ------------------------------------------------------------
    def reveal(self, path: str) -> bool:
        """Select the skill that holds the workspace-relative ``path`` (its ``SKILL.md`` or any
        file in its folder: the innermost skill when one lies inside another); before the
        catalogue is read, the jump waits for it. Returns whether a skill was selected."""
        if self.catalogue is None:
            self._wanted = path
            return False
        best, depth = None, -1
        for i, skill in enumerate(self._rows):
            folder = skill.path.rsplit("/", 1)[0] if "/" in skill.path else ""
            inside = path == skill.path or path.endswith("/" + skill.path) or (
                bool(folder) and (path.startswith(folder + "/") or path == folder))
            if inside and folder.count("/") > depth:
                best, depth = i, folder.count("/")
        table = self.query_one("#skills-table", DataTable)
        table.focus()
        if best is None:
            self.notify(f"no skill holds {path}; the skills are listed here", severity="warning", markup=False)
            return False
        table.move_cursor(row=best)
        self._show(best)
        return True

    # -- detail ----------------------------------------------------------------------------
    def _show(self, row: int) -> None:
        head = self.query_one("#skill-head", Static)
        if not (0 <= row < len(self._rows)):
            head.update(Text(""))
            return
        skill = self._rows[row]
        text = join(safe(skill.shown_name, "bold"), Text("  "), safe(skill.path, "underline"),
                    Text(f"  {skill.root_scope}" + ("  read-only" if skill.read_only else ""), style="dim"))
        text.append("\n")
        text.append(safe(" ".join((skill.description or "— no description —").split())))
        for label, value in (("shadowed by", skill.shadowed_by), ("nested in", skill.nested_in)):
            if value:
                text.append(Text(f"\n{label}: ", style="bold"))
                text.append(safe(value))
        head.update(text)
        body = skill.body
        if len(body) > PREVIEW_LIMIT:
            body = body[:PREVIEW_LIMIT] + f"\n\n*… {len(skill.body) - PREVIEW_LIMIT:,} more characters not shown*\n"
        self.query_one("#skill-body", Markdown).update(body)
        findings = Text()
        for f in skill.findings:
            findings.append(severity_text(f.severity.value))
            findings.append(Text(" "))
            findings.append(safe(f.code, "bold"))
            findings.append(Text("  "))
            findings.append(safe(f.place, "underline"))
            findings.append(Text("\n  "))
            findings.append(safe(f.message))
            if f.fix:
                findings.append(Text("\n  fix: ", style="bold"))
                findings.append(safe(f.fix))
            findings.append("\n")
        if not skill.findings:
            findings = Text("No findings.", style="dim")
        self.query_one("#skill-findings", Static).update(findings)
        files = skill.files_beside()
        listing = Text(f"{len(files)} file{'s' if len(files) != 1 else ''} beside SKILL.md\n", style="bold")
        for name in files[:500]:
            listing.append(safe(name))
            listing.append("\n")
        if len(files) > 500:
            listing.append(Text(f"… and {len(files) - 500} more", style="dim"))
        self.query_one("#skill-files", Static).update(listing)
        self.query_one("#skill-governance", Static).update(self._governance_text(skill))

    def _governance_text(self, skill: Skill) -> Text:
        """Node and owner, manifest, state, and each version with its test result."""
        found = self._governance.get(skill.path)
        if found is None:
            return Text("Not governed here: a nested or source copy of a skill.", style="dim")
        status, versions = found
        b = status.binding
        text = Text("bound to  ", style="bold")
        if b.node is None:
            text.append(Text("nothing: nobody owns this skill", style="yellow"))
        else:
            text.append(safe(f"{b.node or 'the root node'} ({b.how})"))
            text.append(Text("\nowner     ", style="bold"))
            text.append(safe(f"{b.owner} ({b.owner_how})" if b.owner else "none set on the node or above it"))
        text.append(Text("\nmanifest  ", style="bold"))
        text.append(Text("complete", style="green") if status.manifest.complete
                    else safe("not publishable: " + status.manifest.why_not(), "yellow"))
        if status.gated_on:  # a skill the modules gate on: its eval set re-runs before a version is used
            text.append(Text("\ngated on  ", style="bold"))
            text.append(safe("the eval set of " + ", ".join(n or "the root node" for n in status.gated_on)))
        text.append(Text("\nstate     ", style="bold"))
        text.append(safe(status.state + (f" ({status.published})" if status.published else "")))
        test = status.last_test
        text.append(Text("\ntests     ", style="bold"))
        if test is None:
            text.append(Text("not run on this content", style="dim"))
        else:
            text.append(Text("passed", style="green") if test.get("passed")
                        else safe(f"failed: {test.get('why')}", "bold red"))
            text.append(safe(f"  {test.get('time')}"))
        text.append(Text(f"\n\n{len(versions)} version{'s' if len(versions) != 1 else ''}\n", style="bold"))
        for v, run in reversed(versions):  # newest first, two lines each: what it is, then who and when
            text.append(safe(f"@{v.number} ", "bold"))
            text.append(safe(v.state, "green" if v.state == "active" else ""))
            prov = v.provenance
            how = str(prov.get("kind") or "")
            if prov.get("rollback_of"):
                how += f" of @{prov['rollback_of']}"
            text.append(safe(f"  {how}  "))
            if run is None:
                text.append(Text("not tested", style="dim"))
            else:
                text.append(Text("tests passed", style="green") if run.get("passed") else Text("tests failed", style="red"))
            text.append("\n   ")
            text.append(safe(f"{v.author or '-'}  {v.created[:16].replace('T', ' ')}  {v.sha256[:12]}", "dim"))
            text.append("\n")
            record = prov.get("evaluation")
            if record:  # a gated skill: its eval set before → after this version, as the Proposals area shows it
                text.append(safe(f"   {gate.verdict(record)}", "red" if record.get("regressed") else "green"))
                text.append("\n")
                text.append(evaluation_text(record, cases=5))
                text.append("\n")
        if not versions and skill.root == "skills":
            text.append(Text("none recorded: `memtui skills adopt` records the folder as version 1", style="dim"))
        return text

    def _show_budget(self) -> None:
        if self.catalogue is None:
            return
        index = build_index(self.catalogue, self.budget)
        over = index.full_size > index.budget
        text = Text(f"Skill index: {index.size:,} of {index.budget:,} bytes "
                    f"({len(index.lines)} skills)", style="bold")
        if over:
            text.append(Text(f" · the whole index would be {index.full_size:,} bytes", style="yellow"))
        text.append(Text("   + / − change the budget by 1 KiB\n\n", style="dim"))
        for line in index.text.splitlines():  # one index line per screen line (safe() would
            text.append(safe(line))             # draw the newlines as ⏎ and run them together)
            text.append("\n")
        if index.cut:
            text.append(Text(f"\nCut by the budget ({len(index.cut)}):\n", style="bold red"))
            for skill, line in index.cut:
                text.append(Text("  "))
                text.append(safe(f"{skill.name or skill.key} ({skill.path}, {len(line.encode('utf-8')):,} bytes)"))
                text.append("\n")
        if index.left_out:
            text.append(Text(f"\nNot offered to agents ({len(index.left_out)}):\n", style="bold"))
            for skill, why in index.left_out:
                text.append(Text("  "))
                text.append(safe(f"{skill.shown_name} ({skill.path}): {why}"))
                text.append("\n")
        self.query_one("#skill-budget", Static).update(text)

    # -- events and actions ----------------------------------------------------------------
    @on(DataTable.RowHighlighted, "#skills-table")
    def _highlighted(self, event: DataTable.RowHighlighted) -> None:
        if left_behind(event):
            return
        self._show(event.cursor_row)

    def action_reload(self) -> None:
        """Read the skills again (after editing files outside memtui)."""
        self.query_one("#skills-count", Static).update(Text("reading skills…", style="dim"))
        self.load()

    def action_show_budget(self) -> None:
        """Open the budget view."""
        self.query_one("#skill-tabs", TabbedContent).active = "tab-budget"

    def action_show_versions(self) -> None:
        """Open the versions view: node, owner, manifest, state, versions and their tests."""
        self.query_one("#skill-tabs", TabbedContent).active = "tab-versions"

    def action_budget(self, delta: int) -> None:
        """Change the index budget by ``delta`` bytes (never below 0) and redraw the view."""
        self.budget = max(0, self.budget + delta)
        self._show_budget()

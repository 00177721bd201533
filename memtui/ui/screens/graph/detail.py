"""The detail pane of the Graph area: one entity, its observations, its neighbourhood.

The entity's records (each with its findings) and relations are listed; its observations are
a list showing each one's provenance (which session, when: :mod:`memtui.core.graph.provenance`),
a long one cut (``v`` shows all of it); the neighbourhood tree is built lazily on expand,
children capped at :data:`MAX_CHILDREN`, an entity with findings marked (``⚠ n``) as in the
table. Every name and observation is shown as data (:func:`memtui.ui.text.safe`), never markup.

Choosing an end in the tree posts :class:`~.messages.EntitySelected`; Enter on an observation
posts :class:`~.messages.ObservationChosen`.
"""

from __future__ import annotations

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.containers import Vertical, VerticalScroll
from textual.widgets import OptionList, Static, Tree
from textual.widgets.option_list import Option
from textual.widgets.tree import TreeNode

from memtui.core import graph as g
from memtui.core.text import plural
from memtui.ui.screens.graph.messages import EntitySelected, ObservationChosen
from memtui.ui.screens.graph.model import GraphModel
from memtui.ui.text import join, safe, severity_text

#: Observations / relations listed in the detail pane before "… N more".
MAX_LISTED = 200
#: Children of one neighbourhood tree node before "… N more".
MAX_CHILDREN = 200
#: Characters of an observation shown in the list; ``v`` shows all of it.
OBSERVATION_SHOWN = 600

#: What a neighbourhood tree node holds: ``(entity name, depth, the relation that led to it)``.
NodeData = tuple[str, int, "g.Relation | None"]


class EntityDetail(Vertical):
    """The entity shown, its observations and its neighbourhood (see the module docstring).

    Attributes:
        model: the read shown (set by the screen before :meth:`show`).
        current: the entity shown, or ``None``.
        record_line: the line of the record selected when the name is written several times
            (edits go to that record), else ``None``.
    """

    DEFAULT_CSS = """
    EntityDetail { width: 1fr; }
    EntityDetail #entity-scroll { height: 1fr; }
    EntityDetail #observations { height: 1fr; }
    EntityDetail #neighbourhood { height: 1fr; border-top: solid $primary; }
    """

    def __init__(self, *, id: str | None = None) -> None:  # noqa: A002 - Textual's name
        super().__init__(id=id)
        self.model: GraphModel | None = None
        self.current: str | None = None
        self.record_line: int | None = None
        #: the observations listed, by option index: ``(entity, text)``
        self.observations: list[tuple[str, str]] = []
        #: ``(entity, file line)`` of a relation to highlight, kept until the entity's tree holds it
        #: (an audit jump can arrive before the tree is built, or be followed by a rebuild)
        self._relation_wanted: tuple[str, int] | None = None

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="entity-scroll"):
            yield Static(id="entity-detail")
        yield OptionList(id="observations")
        yield Tree(Text("neighbourhood"), id="neighbourhood")

    def on_mount(self) -> None:
        self.query_one("#observations", OptionList).border_title = "observations (provenance)"

    @property
    def neighbourhood(self) -> Tree:
        return self.query_one("#neighbourhood", Tree)

    def say(self, text: Text) -> None:
        """Show ``text`` where the entity is shown (reading, failed, nothing matches)."""
        self.query_one("#entity-detail", Static).update(text)

    def clear_entity(self, text: Text) -> None:
        """No entity is shown: ``text`` says why; the list and the tree are emptied."""
        self.current = None
        self.say(text)
        self.query_one("#observations", OptionList).clear_options()
        self.neighbourhood.clear()

    def show(self, name: str, line: int | None = None) -> None:
        """Show entity ``name``; when it is written several times, the record at ``line`` (else
        its first) is the selected one: its observations are listed and edits go to it."""
        if self.model is None:
            return
        model = self.model
        self.current = name
        records = model.graph.find(name)
        selected = next((r for r in records if r.line == line), records[0] if records else None)
        self.record_line = selected.line if selected is not None and len(records) > 1 else None
        text = Text()
        for record in records:
            chosen = len(records) > 1 and record is selected
            text.append(join(Text("▶ " if chosen else ""), safe(record.name, "bold"), Text("  "),
                             safe(record.entity_type, "italic"),
                             Text(f"  line {record.line}  ·  {plural(len(record.observations), 'observation')}"
                                  + ("  (selected: edits go to this record; D deletes it)" if chosen else "")
                                  + "\n", style="dim")))
            for finding in model.by_line.get(record.line, []):
                text.append(join(severity_text(finding.severity.value), Text(" "), safe(finding.message),
                                 Text("\n")))
        out, inc = model.outgoing.get(name, []), model.incoming.get(name, [])
        text.append(Text(f"relations: {len(out):,} out, {len(inc):,} in\n", style="bold"))
        for relation in out[:MAX_LISTED]:
            text.append(join(Text("  —"), safe(relation.relation_type), Text("→ "), safe(relation.target), Text("\n")))
        for relation in inc[:MAX_LISTED]:
            text.append(join(Text("  ←"), safe(relation.relation_type), Text("— "), safe(relation.source), Text("\n")))
        if len(out) > MAX_LISTED or len(inc) > MAX_LISTED:
            text.append(Text("  … more in the neighbourhood tree\n", style="dim"))
        self.say(text)
        self._list_observations(name, [selected] if self.record_line is not None and selected else records)
        tree = self.neighbourhood
        tree.clear()
        tree.root.set_label(join(safe(name, "bold"), model.mark(name)))
        tree.root.data = (name, 0, None)
        self._add_neighbours(tree.root)
        tree.root.expand()
        if self._relation_wanted is not None:
            if self._relation_wanted[0] == name:
                self._cursor_to_relation(self._relation_wanted[1])
            else:  # another entity was chosen: the jump is over
                self._relation_wanted = None

    def _list_observations(self, name: str, records: list[g.Entity]) -> None:
        assert self.model is not None
        listing = self.query_one("#observations", OptionList)
        listing.clear_options()
        self.observations = []
        origins = self.model.provenance.get(name, {})
        seen: set[str] = set()
        options: list[Option] = []
        texts = [t for record in records for t in record.observations]
        for text in texts:
            if text in seen:
                continue
            seen.add(text)
            if len(self.observations) >= MAX_LISTED:
                break
            prompt = join(Text("• "), safe(text, limit=OBSERVATION_SHOWN))
            if len(text) > OBSERVATION_SHOWN:
                prompt.append(Text("  (v shows all)", style="dim"))
            items = origins.get(text, [])
            if items:
                last = items[-1]
                where = f", line {last.line}" if last.line else ""
                prompt.append(Text(f"\n    from session {last.session} at {last.at}{where}"
                                   f"{f' (+{len(items) - 1} earlier)' if len(items) > 1 else ''}", style="dim"))
            options.append(Option(prompt, id=str(len(self.observations))))
            self.observations.append((name, text))
        if len(seen) < len(set(texts)):
            options.append(Option(Text(f"… {len(set(texts)) - len(seen):,} more observations", style="dim"),
                                  disabled=True))
        listing.add_options(options)
        if self.observations:
            listing.highlighted = 0

    def _add_neighbours(self, node: TreeNode) -> None:
        if node.data is None or self.model is None:
            return
        name, depth, _relation = node.data
        if depth >= 2:
            return
        model = self.model
        links = [(r, r.target, "→") for r in model.outgoing.get(name, [])]
        links += [(r, r.source, "←") for r in model.incoming.get(name, [])]
        for relation, other, arrow in links[:MAX_CHILDREN]:
            label = join(Text(f"{arrow} "), safe(relation.relation_type, "dim"), Text(" "), safe(other),
                         model.mark(other))
            if not model.graph.find(other):
                label.append(Text("  (not an entity)", style="red"))
            node.add(label, data=(other, depth + 1, relation), allow_expand=depth + 1 < 2)
        if len(links) > MAX_CHILDREN:
            node.add_leaf(Text(f"… {len(links) - MAX_CHILDREN:,} more", style="dim"), data=None)

    def highlighted_observation(self) -> tuple[str, str] | None:
        """``(entity, observation)`` highlighted in the list, or ``None``."""
        index = self.query_one("#observations", OptionList).highlighted
        if index is None or not (0 <= index < len(self.observations)):
            return None
        return self.observations[index]

    def chosen_relation(self) -> g.Relation | None:
        """The relation of the tree node under the cursor (a node below the root), or ``None``."""
        node = self.neighbourhood.cursor_node
        return node.data[2] if node is not None and node.data else None

    def reveal_relation(self, line: int) -> None:
        """Put the tree's cursor on the relation written at file ``line`` (once the tree has laid
        out its new lines, and again if the entity's tree is built anew before the user moves
        on), and focus the tree."""
        if self.current is not None:
            self._relation_wanted = (self.current, line)
        self._cursor_to_relation(line)
        self.neighbourhood.focus()

    def _cursor_to_relation(self, line: int) -> None:
        tree = self.neighbourhood
        node = next((n for n in tree.root.children if n.data and n.data[2] is not None
                     and n.data[2].line == line), None)
        # a node knows its line only once the tree has laid out its lines (``last_line`` lays
        # them out): moving before that, or after a refresh that had not run yet under load,
        # left the cursor where it was
        if node is not None and tree.last_line >= 0:
            tree.move_cursor(node)

    @on(Tree.NodeExpanded, "#neighbourhood")
    def _expanded(self, event: Tree.NodeExpanded) -> None:
        node = event.node
        if node.data and not node.children and node is not self.neighbourhood.root:
            self._add_neighbours(node)

    @on(Tree.NodeSelected, "#neighbourhood")
    def _go_to(self, event: Tree.NodeSelected) -> None:
        if event.node.data and event.node.data[1] > 0 and self.model is not None:
            name = event.node.data[0]
            if self.model.graph.find(name):
                self.post_message(EntitySelected(name))
            else:
                self.notify("that end is not an entity (a dangling relation)", markup=False)

    @on(OptionList.OptionSelected, "#observations")
    def _observation_chosen(self) -> None:
        chosen = self.highlighted_observation()
        if chosen is not None:
            self.post_message(ObservationChosen(*chosen))
        else:
            self.notify("choose an observation first", markup=False)

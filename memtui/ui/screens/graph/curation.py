"""Curating the graph in the Graph area: the questions, the history, the conflict.

- :class:`Curator` asks what each curating action needs (seed 002's curation: add, edit and
  delete an observation, create, rename, merge, retype, relate, unrelate, delete an entity or
  one of its records), tries the edit on the graph shown, asks to confirm what it will do, and
  posts :class:`~.messages.EditConfirmed`; the screen saves it.
- :class:`EditHistory` is the undo history (an editor's undo: each step is undone only while
  the graph still holds what that step wrote) and what was undone, for redo.
- :class:`ConflictBar` shows why a save was refused when the graph changed meanwhile, with
  the difference (as the Notes area shows its conflict, and ``memtui graph`` prints it).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widget import Widget
from textual.widgets import Static

from memtui.core import graph as g
from memtui.core.text import plural
from memtui.ui.screens.graph.messages import EditConfirmed
from memtui.ui.text import join, safe
from memtui.ui.widgets import AskText, Confirm

#: Steps of the undo history.
UNDO_DEPTH = 50
#: Lines of a conflict's difference shown.
DIFF_SHOWN = 400


@dataclass(frozen=True)
class Step:
    """One saved edit that can be undone.

    Attributes:
        before: the graph before the edit.
        written: sha256 of what the edit wrote (the undo needs the graph to hold it still).
        summary: what the edit did (``Saved.change.summary``).
        provenance_undo: the provenance records the edit moved, for the undo to put back.
        operation: the edit itself (redo does it again).
    """

    before: g.Graph
    written: str
    summary: str
    provenance_undo: tuple
    operation: g.Operation


@dataclass(frozen=True)
class Undone:
    """One undone edit that can be done again.

    Attributes:
        operation: the edit.
        written: sha256 of what the undo wrote (a redo needs the graph to hold it still).
        summary: what the edit did.
    """

    operation: g.Operation
    written: str
    summary: str


@dataclass
class EditHistory:
    """The Graph area's undo and redo (newest last), at most ``depth`` steps."""

    depth: int = UNDO_DEPTH
    steps: list[Step] = field(default_factory=list)
    undone: list[Undone] = field(default_factory=list)

    def saved(self, doing: str, before: g.Graph, operation: g.Operation, saved: g.Saved) -> None:
        """Record a save: ``doing`` is ``"do"`` (a new edit: redo is forgotten), ``"undo"`` (the
        newest step moves to :attr:`undone`) or ``"redo"``. An edit re-applied to a graph an
        agent changed meanwhile clears the history: no undo of it is safe."""
        if not saved.written:
            return
        if doing == "undo" and self.steps:
            step = self.steps.pop()
            self.undone.append(Undone(step.operation, saved.graph.source_sha256, step.summary))
        elif saved.reapplied:
            self.steps.clear()
            self.undone.clear()
        else:
            self.steps.append(Step(before, saved.graph.source_sha256, saved.change.summary, saved.provenance_undo,
                                   operation))
            del self.steps[:-self.depth]
            if doing == "redo" and self.undone:
                self.undone.pop()
            else:
                self.undone.clear()

    def undo(self) -> tuple[g.Restore, str] | None:
        """The operation that undoes the newest step, and its question; ``None`` when none."""
        if not self.steps:
            return None
        step = self.steps[-1]
        more = len(self.steps) - 1
        question = f"Undo the last action ({step.summary})?" + (
            f" {plural(more, 'earlier step')} can be undone after it." if more else "")
        return g.Restore(step.before, step.written, f"undid: {step.summary}", step.provenance_undo), question

    def redo(self, graph: g.Graph) -> tuple[g.Operation, str] | None:
        """The operation undone last and its question, when ``graph`` still holds what the undo
        wrote; ``None`` when there is none.

        Raises:
            GraphEditError: the graph changed after the undo (what could be redone is forgotten).
        """
        if not self.undone:
            return None
        last = self.undone[-1]
        if graph.source_sha256 != last.written:
            self.undone.clear()
            raise g.GraphEditError("the graph changed after the undo, so it cannot be redone without losing "
                                   "that change")
        return last.operation, f"Redo the action undone last ({last.summary})?"


class ConflictBar(VerticalScroll):
    """Why the last save was refused, with the difference; hidden until :meth:`show`."""

    DEFAULT_CSS = """
    ConflictBar { height: auto; max-height: 60%; display: none; background: $warning 20%; padding: 0 1; }
    ConflictBar.shown { display: block; }
    ConflictBar #graph-conflict-diff { text-wrap: nowrap; text-overflow: ellipsis; }
    """

    def compose(self) -> ComposeResult:
        yield Static(id="graph-conflict-text")
        yield Static(id="graph-conflict-diff")

    def show(self, sentence: str, diff: str) -> None:
        """Show the refusal's ``sentence`` and its unified ``diff`` (``-`` what memtui read,
        ``+`` what the graph holds now), with what to do."""
        self.query_one("#graph-conflict-text", Static).update(join(
            Text("Conflict ", style="bold"), Text("(F5 reads the graph again, Esc hides this): ", style="dim"),
            safe(sentence, limit=None)))
        styled = Text()  # one line each (cut, see the CSS): the changed ones stay in view
        lines = [line for line in diff.splitlines() if not line.startswith(("--- ", "+++ "))]  # the names: known
        for line in lines[:DIFF_SHOWN]:
            style = "green" if line.startswith("+") else "red" if line.startswith("-") else ""
            styled.append_text(safe(line, style, limit=None))
            styled.append("\n")
        styled.rstrip()
        self.query_one("#graph-conflict-diff", Static).update(styled)
        self.add_class("shown")
        self.scroll_home(animate=False)

    def hide(self) -> bool:
        """Hide the bar; True when it was shown."""
        shown = self.has_class("shown")
        self.remove_class("shown")
        return shown


#: Gives the graph to edit now, or ``None`` after saying why there is none (read-only, a save
#: still running, a kept read that is not live, the graph still being read).
GraphNow = Callable[[], "g.Graph | None"]


class Curator(Widget):
    """The curating questions, up to a confirmed edit (see the module docstring).

    Args:
        graph_now: the graph to edit now (:data:`GraphNow`); asked again before each question,
            since the graph may be read again while a question is open.
    """

    DEFAULT_CSS = """
    Curator { display: none; }
    """

    def __init__(self, graph_now: GraphNow, *, id: str | None = None) -> None:  # noqa: A002 - Textual's name
        super().__init__(id=id)
        self.graph_now = graph_now
        self.history = EditHistory()

    # -- asking ---------------------------------------------------------------------------------
    def ask(self, prompt: Text | str, then: Callable[[str], None], value: str = "") -> None:
        """Ask for one line of text; ``then(text)`` unless the question is cancelled."""
        def done(text: str | None) -> None:
            if text is not None:
                then(text)

        self.app.push_screen(AskText(prompt, value), done)

    def propose(self, operation: g.Operation, question: Text | str = "", doing: str = "do",
                again: Callable[[str], None] | None = None) -> None:
        """Try ``operation`` on the graph shown, ask to confirm what it will do, then post
        :class:`~.messages.EditConfirmed`.

        ``question`` is app text (``str``) or a :class:`Text` composed with ``safe()`` names;
        the confirmation adds the operation's future-tense sentence (``Change.will``) and notes.
        ``again``: when the operation is not possible (a mistyped name), called with the reason
        instead of a toast, so the question that asked for the value asks again with it kept.
        """
        graph = self.graph_now()
        if graph is None:
            return
        try:
            change = operation.apply(graph)
        except g.GraphEditError as exc:
            if again is not None:
                again(str(exc))
            else:
                self.notify(str(exc), title="Not possible", severity="warning", markup=False, timeout=10)
            return
        if not change.changed:
            self.notify(change.summary + " (nothing to do)", markup=False)
            return
        will = change.will or change.summary
        text = question if isinstance(question, Text) else Text(question or "Go ahead?")
        text = join(text, f"\n\nThis {will}.")
        for note in change.notes:
            text.append(f"\nNote: {note}.")

        def done(yes: bool | None) -> None:
            if yes:
                self.post_message(EditConfirmed(graph, operation, doing))

        self.app.push_screen(Confirm(text), done)

    def ask_operation(self, prompt: Text | str, build: Callable[[str], g.Operation],
                      question: Callable[[str], Text | str], value: str = "", reason: str = "") -> None:
        """Ask for one value, then :meth:`propose` the operation ``build(value)`` makes, with the
        confirmation ``question(value)``. A value the operation refuses (a mistyped entity name)
        asks again with the value kept and the reason above the prompt, instead of dropping
        what was typed."""
        shown = join(safe(reason, "bold yellow"), "\n", prompt) if reason else prompt

        def answered(text: str) -> None:
            self.propose(build(text), question(text),
                         again=lambda why: self.ask_operation(prompt, build, question, text, why))

        self.ask(shown, answered, value)

    # -- the actions ----------------------------------------------------------------------------
    def create(self, type_examples: tuple[Text | str, ...]) -> None:
        """Create an entity: its name, then its type (and an optional first observation)."""
        def with_name(name: str) -> None:
            if not name.strip():
                self.notify("an entity needs a name; nothing was created", severity="warning", markup=False)
                return

            def with_type(entity_type: str) -> None:
                if not entity_type.strip():
                    self.notify("an entity needs a type; nothing was created", severity="warning", markup=False)
                    return

                def with_observation(text: str) -> None:
                    observations = (text,) if text.strip() else ()
                    self.propose(g.CreateEntity(name, entity_type, observations),
                                 join("Create ", safe(name, "bold"), " (", safe(entity_type), ")",
                                      *((" with the observation ", safe(text)) if observations else ()), "?"))

                self.ask(join("A first observation about ", safe(name), " (empty: none):"), with_observation)

            self.ask(join("The type of ", safe(name), " (", *type_examples, "):"), with_type)

        self.ask("Name of the new entity:", with_name)

    def add_observation(self, name: str, key: str, which: str) -> None:
        """Add an observation to ``name`` (its record ``key`` when one is selected)."""
        self.ask(join("New observation for ", safe(name), which, ":"),
                 lambda text: self.propose(g.AddObservation(name, text, key),
                                           join("Add to ", safe(name, "bold"), which, ": ", safe(text), "?")))

    def edit_observation(self, name: str, old: str, key: str, which: str) -> None:
        """Replace the observation ``old`` of ``name``."""
        self.ask(join("Edit the observation of ", safe(name), which, ":"),
                 lambda new: self.propose(g.EditObservation(name, old, new, key),
                                          join("Replace ", safe(old), "\nwith ", safe(new), "\non ",
                                               safe(name, "bold"), which, "?")), old)

    def delete_observation(self, name: str, text: str, key: str, which: str) -> None:
        """Delete the observation ``text`` of ``name``."""
        self.propose(g.DeleteObservation(name, text, key),
                     join("Delete the observation ", safe(text), " of ", safe(name, "bold"), which, "?"))

    def delete_record(self, name: str, key: str, which: str, count: int) -> None:
        """Delete the record ``key`` of ``name``, one of its ``count`` records (its relations stay)."""
        self.propose(g.DeleteRecord(name, key),
                     join("Delete ", safe(name, "bold"), which, f", one of its {count} records? Its relations stay."))

    def rename(self, name: str) -> None:
        """Rename ``name`` (asked, with the old name to edit)."""
        self.ask_operation(join("Rename ", safe(name), " to:"), lambda new: g.RenameEntity(name, new),
                           lambda new: join("Rename ", safe(name, "bold"), " to ", safe(new, "bold"), "?"), name)

    def merge(self, into: str) -> None:
        """Merge an entity (asked) into ``into``; none: only ``into``'s own duplicate records."""
        def operation(text: str) -> g.Operation:
            source = text.strip()
            return g.MergeEntities((source,) if source else (), into)

        def question(text: str) -> Text:
            source = text.strip()
            what = (join("Merge ", safe(source, "bold"), " into ", safe(into, "bold")) if source
                    else join("Merge the duplicate records of ", safe(into, "bold")))
            return join(what, "? Their observations will be united, their relations rewired, and the old name "
                        "kept as an alias.")

        self.ask_operation(join("Merge which entity into ", safe(into), "? (empty: only its own duplicate records)"),
                           operation, question)

    def retype(self, graph: g.Graph, name: str) -> None:
        """Set the entityType of every entity of ``name``'s type (and its case variants)."""
        current = graph.entity(name).entity_type
        variants = g.type_variants(graph, current)
        count = sum(1 for e in graph.entities if e.entity_type in set(variants))
        shown = safe(", ".join(repr(v) for v in variants))
        self.ask_operation(join(f"Set the entityType of all {plural(count, 'entity', 'entities')} of type ", shown,
                                " to:"),
                           lambda new: g.Retype(tuple(variants), new),
                           lambda new: join("Set the entityType ", safe(repr(new)), " on every entity of type ",
                                            shown, "?"), current)

    def relate(self, source: str) -> None:
        """Create a relation from ``source``: its type, then its target."""
        def target_for(relation_type: str) -> None:
            self.ask_operation(join(safe(source), " —", safe(relation_type), "→ which entity?"),
                               lambda target: g.CreateRelation(source, target, relation_type),
                               lambda target: join("Create the relation ", safe(source, "bold"), " —",
                                                   safe(relation_type), "→ ", safe(target, "bold"), "?"))

        self.ask(join("Relation type from ", safe(source), " (for example works_at):"), target_for)

    def unrelate(self, relation: g.Relation) -> None:
        """Delete ``relation``."""
        self.propose(g.DeleteRelation(relation.source, relation.target, relation.relation_type),
                     join("Delete the relation ", safe(relation.source, "bold"), " —", safe(relation.relation_type),
                          "→ ", safe(relation.target, "bold"), "?"))

    def delete(self, name: str, relations: int) -> None:
        """Delete the entity ``name`` and its ``relations``."""
        self.propose(g.DeleteEntity(name), join("Delete the entity ", safe(name, "bold"), " and its ",
                                                plural(relations, "relation"), "?"))

    def undo(self) -> None:
        """Undo the newest step of the history (while the graph holds what it wrote)."""
        found = self.history.undo()
        if found is None:
            self.notify("nothing to undo", markup=False)
            return
        if self.graph_now() is None:
            return
        operation, question = found
        self.propose(operation, question, doing="undo")

    def redo(self) -> None:
        """Do again the step undone last (while the graph holds what the undo wrote)."""
        if not self.history.undone:
            self.notify("nothing to redo", markup=False)
            return
        graph = self.graph_now()
        if graph is None:
            return
        try:
            found = self.history.redo(graph)
        except g.GraphEditError as exc:
            self.notify(str(exc), severity="warning", markup=False)
            return
        if found is not None:
            operation, question = found
            self.propose(operation, question, doing="redo")

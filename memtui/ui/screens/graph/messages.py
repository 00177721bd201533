"""What the Graph area's panes tell the screen (Textual messages, bubbling up to it).

A pane posts; the screen reacts (shows the entity, opens a session history, saves an edit).
"""

from __future__ import annotations

from textual.message import Message

from memtui.core import graph as g


class EntitySelected(Message):
    """The person chose an entity: a row of the table, or an end in the neighbourhood tree.

    Attributes:
        name: the entity's name.
        line: the file line of the chosen record when the name is written several times, else
            ``None`` (its first record).
    """

    def __init__(self, name: str, line: int | None = None) -> None:
        super().__init__()
        self.name = name
        self.line = line


class ObservationChosen(Message):
    """Enter on an observation: open the session history it came from.

    Attributes:
        entity: the entity's name.
        text: the observation.
    """

    def __init__(self, entity: str, text: str) -> None:
        super().__init__()
        self.entity = entity
        self.text = text


class EditConfirmed(Message):
    """The person confirmed an edit: the screen saves ``operation`` on ``before``.

    Attributes:
        before: the graph the edit was tried on (and shown to the person).
        operation: the edit.
        doing: ``"do"`` (a new action), ``"undo"`` or ``"redo"`` (for the history).
    """

    def __init__(self, before: g.Graph, operation: g.Operation, doing: str = "do") -> None:
        super().__init__()
        self.before = before
        self.operation = operation
        self.doing = doing

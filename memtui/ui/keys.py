"""Keys you can find: binding ids, the ``[keys]`` keymap, the help screen, the
palette's ``Area: Action`` commands and a footer that never cuts a label.

- Every :class:`~textual.binding.Binding` of memtui has an ``id`` (``<area>.<action>``, e.g.
  ``graph.merge``; ``app.quit``, ``area.graph`` for the global ones). The user config's
  ``[keys]`` table (``~/.config/memtui/config.toml``) maps ids to keys, ``graph.merge = "M"``
  (several keys: ``"M,ctrl+m"``), applied with Textual's :meth:`App.set_keymap` (posting's
  model). Unknown ids and non-string values are reported once at start-up, never fatal.
- :class:`KeysHelp` (``?`` or ``F1``) lists every key of the current area, then the keys of
  lists and tables and the global ones, grouped, each with its id for rebinding.
- :func:`palette_commands` yields every action of every area as ``Area: Action``.
- The footer (:class:`memtui.ui.widgets.KeyFooter`) shows the screen's keys; screens import
  it from the widgets, never from here (this module lists every screen's keys).
"""

from __future__ import annotations

import textwrap

from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from rich.cells import cell_len
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from memtui.ui.widgets import key_label

#: Keys of lists and tables (the app's ``j``/``k`` plus the widgets' own), for the help screen.
LIST_KEYS = (
    ("j / ↓", "move down in a list, table or tree", "app.down"),
    ("k / ↑", "move up", "app.up"),
    ("enter", "open or choose the highlighted row", ""),
    ("tab / shift+tab", "next / previous pane", ""),
    ("pageup / pagedown", "a page up / down", ""),
    ("escape", "leave a text box, text kept (area keys work again); twice: clear it", ""),
)


def bindings_of(node_or_class) -> list[Binding]:  # noqa: ANN001
    """The :class:`Binding` objects a screen, widget or class declares (its own ``BINDINGS``,
    comma keys kept together, tuples turned into Bindings)."""
    cls = node_or_class if isinstance(node_or_class, type) else type(node_or_class)
    out: list[Binding] = []
    for item in getattr(cls, "BINDINGS", []):
        out.append(item if isinstance(item, Binding) else Binding(*item))
    return out


def all_ids(app_class: type) -> dict[str, str]:
    """Every binding id memtui declares, with its description (for ``[keys]`` checking).

    Args:
        app_class: the app's class (its global keys); passed in, so this module never imports
            the app, which imports it.
    """
    from memtui.ui.areas import AREAS
    from memtui.ui.screens.merge import MergeScreen
    from memtui.ui.widgets import AskText, Choose, Confirm

    ids: dict[str, str] = {}
    sources: list[object] = [app_class, AskText, Choose, Confirm, MergeScreen, KeysHelp]
    sources.extend(area.load() for area in AREAS)
    for source in sources:
        for binding in bindings_of(source):
            if binding.id:
                ids.setdefault(binding.id, binding.description or binding.action)
    return ids


def keymap_from(table: object, known: Iterable[str]) -> tuple[dict[str, str], list[str]]:
    """The keymap of a ``[keys]`` table and the warnings about it.

    Args:
        table: the parsed ``[keys]`` value (a mapping of binding id to key string).
        known: every binding id (:func:`all_ids`).

    Returns:
        ``(keymap, warnings)``: ids known and mapped to a non-empty string; a sentence for each
        entry left out (unknown id, not a string).
    """
    if table is None:
        return {}, []
    if not isinstance(table, dict):
        return {}, ["[keys] in the user config is not a table of binding ids; it was ignored"]
    known = set(known)
    keymap: dict[str, str] = {}
    warnings: list[str] = []
    for key_id, value in table.items():
        if key_id not in known:
            warnings.append(f"[keys] {key_id!r} is not a key of memtui (press ? to see each key's id); ignored")
        elif not isinstance(value, str) or not value.strip():
            warnings.append(f"[keys] {key_id!r} should be a key such as \"ctrl+e\"; ignored")
        else:
            keymap[key_id] = ",".join(part.strip() for part in value.split(",") if part.strip())
    return keymap, warnings


@dataclass(frozen=True, slots=True)
class Row:
    """One line of the help screen."""

    keys: str
    description: str
    id: str


def _rows(app, bindings: Iterable[Binding], keymap: dict[str, str]) -> list[Row]:  # noqa: ANN001
    rows: list[Row] = []
    seen: set[str] = set()
    for binding in bindings:
        if binding.system or binding.action in seen:
            continue
        seen.add(binding.action)
        description = binding.tooltip or binding.description or binding.action
        rows.append(Row(key_label(app, binding, keymap), description, binding.id or ""))
    return rows


def help_groups(app, screen) -> list[tuple[str, list[Row]]]:  # noqa: ANN001
    """The help screen's groups for ``screen``: its own keys, lists and tables, everywhere."""
    from memtui.ui.areas import AREAS

    keymap = dict(getattr(app, "_keymap", {}) or {})
    area = next((a for a in AREAS if a.mode == getattr(app, "current_mode", None)), None)
    title = f"{area.title} area" if area else "This screen"
    own = [b for b in bindings_of(screen) if not b.action.startswith(("leave(", "switch_mode("))]
    groups = [(title, _rows(app, own, keymap))]
    groups.append(("Lists and tables", [Row(k, d, i) for k, d, i in LIST_KEYS]))
    everywhere = [b for b in bindings_of(app) if not b.action.startswith("switch_mode(")]
    rows = [Row(a.key, f"the {a.title} area: {a.help}", f"area.{a.mode}") for a in AREAS]
    rows += _rows(app, everywhere, keymap)
    rows.append(Row("ctrl+p", "the command palette: every action of every area, themes, screenshot", ""))
    rows.append(Row("ctrl+q", "quit (asks first when a note is unsaved)", ""))
    groups.append(("Everywhere", rows))
    return groups


class KeysHelp(ModalScreen[None]):
    """Every key of the current area and the global ones, grouped (``?`` / ``F1``; Escape closes).

    Args:
        screen: the screen whose keys are listed (the one under this modal).
    """

    DEFAULT_CSS = """
    KeysHelp { align: center middle; }
    KeysHelp > VerticalScroll { width: 90%; max-width: 110; height: 90%; border: thick $primary;
                                background: $surface; padding: 0 1; }
    """

    BINDINGS = [Binding("escape,q,question_mark,f1", "close", "Close", id="help.close")]

    def __init__(self, screen) -> None:  # noqa: ANN001
        super().__init__()
        self._screen = screen

    def compose(self) -> ComposeResult:
        with VerticalScroll():
            yield Static(id="keys-help")

    def on_mount(self) -> None:
        self.query_one("#keys-help", Static).update(self.render_text())
        self.query_one(VerticalScroll).focus()

    def render_text(self) -> Text:
        """The whole help as text (tests read it)."""
        out = Text()
        # said first: the closing keys were only at the foot, below the fold of a long list
        close = next(b for b in self.BINDINGS if isinstance(b, Binding) and b.action == "close")
        keys = key_label(self.app, close, dict(getattr(self.app, "_keymap", {}) or {}))
        out.append(f"{keys}: close this list (↑ ↓ and PgUp/PgDn scroll it)\n\n", style="bold")
        groups = help_groups(self.app, self._screen)
        width = max((cell_len(r.keys) for _, rows in groups for r in rows), default=8)
        width = min(width, 24)
        room = min(110, int(self.app.size.width * 0.9)) - 6  # the box's inner width, less border, padding, scrollbar
        for title, rows in groups:
            out.append(f"{title}\n", style="bold underline")
            for row in rows:
                keys = row.keys if cell_len(row.keys) <= width else row.keys[: width - 1] + "…"
                out.append(f"  {keys:<{width}}  ", style="bold")
                # a long description wraps under itself, never back to the key column
                indent = " " * (width + 4)
                lines = textwrap.wrap(row.description, max(20, room - width - 4)) or [""]
                out.append(("\n" + indent).join(lines))
                if row.id:  # beside the description's last line when it fits, else under it, aligned
                    used = width + 4 + cell_len(lines[-1]) + 2 + cell_len(row.id)
                    gap = "  " if used <= room else "\n" + indent
                    out.append(f"{gap}{row.id}", style="dim")
                out.append("\n")
            out.append("\n")
        from memtui.userconfig import path as config_path

        out.append("Rebind a key in ", style="dim")
        out.append(str(config_path()), style="dim italic")
        out.append(' under [keys], by the id shown: graph.merge = "M".', style="dim")
        return out

    def action_close(self) -> None:
        self.dismiss(None)


#: Actions that are keys of a text box or of moving focus, not things to do: not in the palette.
NOT_IN_PALETTE = frozenset({"close_find", "clear_filter", "clear_query", "focus_next"})


def palette_commands(app) -> Iterator[tuple[str, str, str, str]]:  # noqa: ANN001
    """Every action of every area: ``(title "Area: Action", help, mode, action)``."""
    from memtui.ui.areas import AREAS

    keymap = dict(getattr(app, "_keymap", {}) or {})
    for area in AREAS:
        seen: set[str] = set()
        for binding in bindings_of(area.load()):
            if binding.action in seen or binding.action.startswith(("leave(", "switch_mode(")):
                continue
            if binding.action in NOT_IN_PALETTE:
                continue
            seen.add(binding.action)
            description = binding.description or binding.action
            why = binding.tooltip or description
            yield (f"{area.title}: {description}", f"{why} (key: {key_label(app, binding, keymap)})",
                   area.mode, binding.action)

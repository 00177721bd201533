"""Showing user text safely: never as Rich markup, invisible characters made visible (B17).

Every label, cell and message that holds user text (names, titles, paths, messages) is built
with :func:`safe`, which returns a :class:`rich.text.Text` (never parsed as markup) in which
newlines, tabs, zero-width and bidirectional control characters are shown as visible symbols,
so two different names never look the same.
"""

from __future__ import annotations

from rich.text import Text

from memtui.core.text import SHOWN_CHARS, visible as _visible


def visible(value: object, limit: int | None = SHOWN_CHARS) -> str:
    """``value`` as the TUI shows user text: :func:`memtui.core.text.visible` with symbols
    (``⏎`` ``⇥`` ``␍``, ``⟨U+200B⟩``), cut after ``limit`` characters."""
    return _visible(value, symbols=True, limit=limit)


def safe(value: object, style: str = "", limit: int | None = SHOWN_CHARS) -> Text:
    """A :class:`Text` of ``value`` (made :func:`visible`, cut after ``limit`` characters:
    issue 15 item 8), with an optional style. Never markup."""
    return Text(visible(value, limit), style=style, no_wrap=False, end="")


def join(*parts: Text | str) -> Text:
    """Concatenate parts; plain ``str`` parts are treated as literal text, never markup."""
    out = Text()
    for part in parts:
        out.append(part if isinstance(part, Text) else Text(part))
    return out


SEVERITY_ICON = {"error": "✖", "warning": "▲", "info": "•"}


def severity_text(severity: str) -> Text:
    """``✖ error`` / ``▲ warning`` / ``• info`` in the theme's colour for that severity."""
    styles = {"error": "bold red", "warning": "yellow", "info": "dim"}
    return Text(f"{SEVERITY_ICON.get(severity, '?')} {severity}", style=styles.get(severity, ""))

"""Showing user text safely: never as Rich markup, invisible characters made visible.

Every label, cell and message that holds user text (names, titles, paths, messages) is built
with :func:`safe`, which returns a :class:`rich.text.Text` (never parsed as markup) in which
newlines, tabs, zero-width and bidirectional control characters are shown as visible symbols,
so two different names never look the same.
"""

from __future__ import annotations

import re

from rich.text import Text

from memtui.core.text import SHOWN_CHARS, UNSAFE_BUT_CR, shown_text, visible as _visible


def visible(value: object, limit: int | None = SHOWN_CHARS) -> str:
    """``value`` as the TUI shows user text: :func:`memtui.core.text.visible` with symbols
    (``⏎`` ``⇥`` ``␍``, ``⟨U+200B⟩``), cut after ``limit`` characters."""
    return _visible(value, symbols=True, limit=limit)


def safe(value: object, style: str = "", limit: int | None = SHOWN_CHARS) -> Text:
    """A :class:`Text` of ``value`` (made :func:`visible`, cut after ``limit`` characters,
    so one long name cannot fill the screen), with an optional style. Never markup."""
    return Text(visible(value, limit), style=style, no_wrap=False, end="")


def as_data(text: str) -> str:
    """A multi-line user text (an article body, notes, a diff, a message) as the TUI may show
    it: :func:`memtui.core.text.shown_text`, the one rule for the terminal (line ends and tabs
    kept; every control, escape and bidi-override character as a visible ``⟨U+001B⟩``)."""
    return shown_text(text)


#: Where an editor keeps a character it must not show as it is (Supplementary Private Use
#: Area-B: ``U+100000`` + the character), so each keeps its place, one character for one.
EDITOR_PLANE = 0x100000
#: The characters an editor keeps aside: those of :data:`TERMINAL_UNSAFE` (a CR only when it
#: ends no CRLF), and every other character ``str.splitlines`` (so a ``TextArea``) would read as
#: a line end, which saving would otherwise turn into a real one.
_EDITOR_ASIDE = re.compile(f"\r(?!\n)|[{UNSAFE_BUT_CR}\u2028\u2029]")
_EDITOR_KEPT = re.compile("[\U00100000-\U0010ffff]")


def to_editor(text: str) -> str:
    """``text`` for a ``TextArea``: each character of ``_EDITOR_ASIDE`` moved to its private
    stand-in (:data:`EDITOR_PLANE`); :func:`from_editor` gives the same text back."""
    return _EDITOR_ASIDE.sub(lambda m: chr(EDITOR_PLANE + ord(m.group())), text) if _EDITOR_ASIDE.search(text) else text


def from_editor(text: str) -> str:
    """The text :func:`to_editor` was given, from what the editor holds."""
    if not _EDITOR_KEPT.search(text):
        return text
    return _EDITOR_KEPT.sub(lambda m: chr(ord(m.group()) - EDITOR_PLANE), text)


def editor_can_keep(text: str) -> bool:
    """Whether ``text`` goes through :func:`to_editor` and back unchanged: ``False`` when it
    already holds characters of :data:`EDITOR_PLANE` (which would come back as controls)."""
    return not _EDITOR_KEPT.search(text)


def stand_in(char: str) -> str:
    """The one-cell symbol an editor shows for a kept character (``EDITOR_PLANE`` + code):
    ``␛`` and the other control pictures for C0, ``␡`` for DEL, ``␦`` for the rest (C1,
    direction marks and overrides, line separators)."""
    code = ord(char) - EDITOR_PLANE
    if code < 0x20:
        return chr(0x2400 + code)
    return "\u2421" if code == 0x7F else "\u2426"


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


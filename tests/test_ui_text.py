"""The TUI's sentences: app text is never passed through the user-text sanitiser, and user
text inside it shows its invisible characters."""

from __future__ import annotations

from rich.text import Text

from memtui.ui.text import safe
from memtui.ui.widgets import message


def test_app_text_keeps_its_newlines_and_user_text_shows_them() -> None:
    assert message("line one\nline two").plain == "line one\nline two"
    assert "⏎" in safe("a\nb").plain
    composed = Text("Rename ")
    composed.append_text(safe("[/]\n"))
    assert message(composed).plain == "Rename [/]⏎"

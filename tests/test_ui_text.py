"""The TUI's sentences (issue 19 items 4, 8): no seed/issue references and no CLI commands to
type in what the TUI says; app text is never passed through the user-text sanitiser."""

from __future__ import annotations

import re

from rich.text import Text

from memtui.core.findings import CODES
from memtui.ui.text import for_tui, safe
from memtui.ui.widgets import message


def test_for_tui_drops_project_references_and_cli_clauses() -> None:
    assert for_tui("MEMORY.md is read-only (members edit MEMORY_CUSTOM.md, seed 002).") == (
        "MEMORY.md is read-only (members edit MEMORY_CUSTOM.md).")
    assert for_tui("a node is not listed in its parent's index (seed 000 §2 rule 4)") == (
        "a node is not listed in its parent's index")
    assert for_tui("no entity named 'x'; `memtui graph entities` lists them") == "no entity named 'x'"
    assert for_tui("saved (issue 19 item 6)") == "saved"
    assert for_tui("plain words (kept), 3 files") == "plain words (kept), 3 files"


def test_no_finding_meaning_names_a_seed_or_a_command_in_the_tui() -> None:
    for code, (_severity, meaning) in CODES.items():
        shown = for_tui(meaning)
        assert not re.search(r"seed \d{3}|§|issue \d+|`memtui ", shown), (code, shown)


def test_app_text_keeps_its_newlines_and_user_text_shows_them() -> None:
    assert message("line one\nline two").plain == "line one\nline two"
    assert "⏎" in safe("a\nb").plain
    composed = Text("Rename ")
    composed.append_text(safe("[/]\n"))
    assert message(composed).plain == "Rename [/]⏎"


def test_for_tui_keeps_the_space_before_a_dotted_path() -> None:
    """A new user read "fix: restore.memtui/store.json from a backup" in the TUI."""
    from memtui.ui.text import for_tui

    shown = for_tui("restore .memtui/store.json from a backup, or run `memtui store set-aside` to keep it aside")
    assert shown.startswith("restore .memtui/store.json from a backup")
    assert for_tui("a sentence , then more .") == "a sentence, then more."

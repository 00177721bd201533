"""Helpers shared by the governance tests: a session as a profile, and a proposal filed
through the CLI (one place, so the three test files that file the same proposal agree)."""

from __future__ import annotations

from pathlib import Path

from memtui.core.session import Session
from tests.test_governance import CURATOR
from tests.test_governance_cli import _run


def open_session(root: Path, profile: str | None = CURATOR) -> Session:
    """A test session on ``root`` acting as ``profile`` (the curator unless given)."""
    return Session.open(root, purpose="test", profile=profile)


def cli_propose(ws: Path, tmp_path: Path, *extra: str) -> int:
    """``memtui propose … --json`` of a one-paragraph ``support/experience/exp-1.md`` by the
    investigator, with ``extra`` arguments; the command's exit code."""
    src = tmp_path / "new.md"
    src.write_text("# Case one\n\nThe mechanism.\n")
    return _run(["propose", "-w", str(ws), "--node", "support/experience", "--article", "exp-1.md",
                 "--from", str(src), "--case", "C1", "--source-request", "SR1",
                 "--profile", "support.investigator", "--json", *extra])

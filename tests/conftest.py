"""Shared test fixtures.

Real inputs are read in place from ``../shared`` (beside the checkout, in CI too); their
text is never copied into the project.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
SHARED = Path(os.environ.get("MEMTUI_SHARED", REPO.parent / "shared"))
SAMPLE = REPO / "sample_workspace"


@pytest.fixture(scope="session")
def shared() -> Path:
    """The ``../shared`` folder (corpus, bug inputs, triage set)."""
    assert SHARED.is_dir(), f"../shared is missing: expected it at {SHARED}"
    return SHARED


@pytest.fixture
def sample_copy(tmp_path: Path) -> Path:
    """A private copy of the bundled sample workspace (tests never write the original)."""
    target = tmp_path / "ws"
    shutil.copytree(SAMPLE, target, symlinks=True)
    return target


@pytest.fixture(autouse=True)
def _isolated_user_dirs(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """Point the user config and data folders at a temporary place for every test."""
    home = tmp_path_factory.mktemp("userdirs")
    monkeypatch.setenv("MEMTUI_CONFIG_DIR", str(home / "config"))
    monkeypatch.setenv("MEMTUI_DATA_DIR", str(home / "data"))


@pytest.fixture
def graph_session(tmp_path: Path):
    """A writable :class:`~memtui.core.session.Session` on ``tmp_path`` (graph writes need one)."""
    from memtui.core.session import Session

    session = Session.open(tmp_path, purpose="test")
    yield session
    session.close()

"""What the areas may use of the running app: the workspace, its session, the tree, the last
audit, the search index and the signals that tell a screen something changed.

:class:`WorkspaceApp` declares them with their types; :class:`memtui.ui.app.MemtuiApp` is one.
The screens see the app through this class only (:class:`memtui.ui.screens.base.AreaScreen`),
so no screen imports the app module, which loads the screens.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

from textual.app import App
from textual.signal import Signal

if TYPE_CHECKING:
    from memtui.core.audit import AuditReport
    from memtui.core.search.index import IndexReport, SearchIndex
    from memtui.core.session import Session
    from memtui.core.tree.model import MemoryTree
    from memtui.core.watch import Changes
    from memtui.core.workspace import Workspace


class WorkspaceApp(App[int]):
    """The app as the areas see it (attributes set by :class:`memtui.ui.app.MemtuiApp`)."""

    #: the workspace open
    ws: Workspace
    #: the writer session (lock, store, audit log); read-only when another memtui holds the
    #: lock, with the sentence saying who
    session: Session
    #: the memory tree, read lazily
    tree_model: MemoryTree
    #: the last finished audit (``None`` while the first one runs)
    report: AuditReport | None
    #: findings of the last audit by workspace-relative path, and by the folder of their file
    findings_by_path: dict[str, list]
    findings_by_folder: dict[str, list]
    audit_ready: Signal[AuditReport]
    audit_progress: Signal[tuple[int, int]]
    #: the workspace's search index, searched by the Search area and the command palette
    search_index: SearchIndex
    #: held by every index update of this process (Whoosh allows one writer at a time)
    index_lock: threading.Lock
    index_report: IndexReport | None
    index_error: str | None
    index_existed: bool | None
    index_ready: Signal[IndexReport]
    index_progress: Signal[tuple[int, int]]
    #: every batch of workspace changes (any process), for the screens that show that data
    workspace_changed: Signal[Changes]

    def index_saved(self, paths: list[str]) -> None:
        """Make files just saved searchable at once (workspace-relative ``paths``)."""
        raise NotImplementedError  # memtui.ui.app.MemtuiApp does it

    @property
    def badge(self) -> str:
        """``"READ-ONLY · "`` when writes are refused, else ``""``: screens prefix their subtitle."""
        return "READ-ONLY · " if self.session.read_only else ""

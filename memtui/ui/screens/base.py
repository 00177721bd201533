"""The base of every area's screen: the running app, typed.

Screens read the app's workspace, session, tree model and audit report; through Textual's
``Screen.app`` (an ``App[Any]``) none of that was type-checked. :class:`AreaScreen` gives
``self.app`` the type :class:`memtui.ui.context.WorkspaceApp`, which declares what an area
may use of the app; no screen imports the app module (it loads the screens).
"""

from __future__ import annotations

from typing import cast

from textual.screen import Screen

from memtui.ui.context import WorkspaceApp


class AreaScreen(Screen):
    """A screen of one area of the TUI (see :mod:`memtui.ui.areas`)."""

    @property
    def app(self) -> WorkspaceApp:  # type: ignore[override]  # the same object, typed
        return cast(WorkspaceApp, super().app)

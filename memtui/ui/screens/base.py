"""The base of every area's screen: the running app, typed.

Screens read the app's workspace, session, tree model and audit report; through Textual's
``Screen.app`` (an ``App[Any]``) none of that was type-checked. :class:`AreaScreen` gives
``self.app`` the type :class:`memtui.ui.app.MemtuiApp` (imported for the type checker only:
a screen never imports the app module at run time, which imports the screens).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

from textual.screen import Screen

if TYPE_CHECKING:
    from memtui.ui.app import MemtuiApp


class AreaScreen(Screen):
    """A screen of one area of the TUI (see :mod:`memtui.ui.areas`)."""

    @property
    def app(self) -> MemtuiApp:  # type: ignore[override]  # the same object, typed
        return cast("MemtuiApp", super().app)

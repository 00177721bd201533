"""The base of every area's screen: the running app, typed, and core calls off the UI thread.

Screens read the app's workspace, session, tree model and audit report; through Textual's
``Screen.app`` (an ``App[Any]``) none of that was type-checked. :class:`AreaScreen` gives
``self.app`` the type :class:`memtui.ui.context.WorkspaceApp`, which declares what an area
may use of the app; no screen imports the app module (it loads the screens).

:meth:`AreaScreen.run_core` is the one way an area runs a core call: in a worker thread (the
UI never waits on the disk, git or the network), its result handed back on the UI thread, and
a memtui error turned into a toast with the error's sentence instead of a crash.
"""

from __future__ import annotations

import inspect

from collections.abc import Callable
from typing import TypeVar, cast

from textual.notifications import SeverityLevel
from textual.screen import Screen
from textual.worker import Worker

from memtui.core.errors import MemtuiError, ReadOnlyError
from memtui.ui.context import WorkspaceApp

T = TypeVar("T")


class AreaScreen(Screen):
    """A screen of one area of the TUI (see :mod:`memtui.ui.areas`)."""

    @property
    def app(self) -> WorkspaceApp:  # type: ignore[override]  # the same object, typed
        return cast(WorkspaceApp, super().app)

    def run_core(self, call: Callable[[], T], then: Callable[[T], object] | None = None, *, group: str,
                 title: str = "Not done", failed: Callable[[Exception], object] | None = None,
                 errors: tuple[type[Exception], ...] = (MemtuiError,), severity: SeverityLevel = "error",
                 toast: bool = True) -> Worker[None]:
        """Run ``call()`` in a worker thread of ``group`` (a newer call of the group replaces an
        older one), then ``then(result)`` on the UI thread.

        When ``call`` raises one of ``errors`` (memtui's errors by default; add ``OSError`` for
        a disk error), ``failed(error)`` runs on the UI thread, and then the error's sentence is
        shown as a toast titled ``title`` ("Read-only" for a
        :class:`~memtui.core.errors.ReadOnlyError`), unless ``toast`` is False or ``failed``
        returned True (it showed the error itself); ``then`` does not run.
        Any other exception is a bug and ends the app with its traceback, as Textual does.

        Returns:
            The worker (tests wait on it with ``app.workers.wait_for_complete()``).
        """

        def work() -> None:
            try:
                result = call()
            except errors as exc:
                self.app.call_from_thread(self._core_failed, exc, title, failed, severity, toast)
                return
            if then is not None:
                self.app.call_from_thread(self._deliver, then, result)  # type: ignore[arg-type]  # an async callback: Textual awaits it

        return self.run_worker(work, name=group, group=group, exclusive=True, thread=True)

    def _here(self) -> bool:
        """Whether the screen is still in the app and not being closed with it."""
        return self.is_attached and not (self._closing or self._closed or self.app._closing)

    def from_worker(self, callback: Callable[..., object], *args: object, **kwargs: object) -> None:
        """From a worker thread: run ``callback(*args, **kwargs)`` on the UI thread, unless the
        screen left the app meanwhile (the app closing, the area replaced): its widgets are gone."""
        self.app.call_from_thread(self._call_here, callback, args, kwargs)  # type: ignore[arg-type]  # an async callback: Textual awaits it

    async def _call_here(self, callback: Callable[..., object], args: tuple, kwargs: dict) -> None:
        if self._here():
            outcome = callback(*args, **kwargs)
            if inspect.isawaitable(outcome):  # an async callback, as call_from_thread allows
                await outcome

    async def _deliver(self, then: Callable[[T], object], result: T) -> None:
        """``then(result)``, unless the screen left the app while the worker ran (the app is
        closing, or the area was replaced): its widgets are gone, and the result is for no one."""
        if self._here():
            outcome = then(result)
            if inspect.isawaitable(outcome):  # an async ``then``, as call_from_thread allows
                await outcome

    def _core_failed(self, error: Exception, title: str, failed: Callable[[Exception], object] | None,
                     severity: SeverityLevel, toast: bool) -> None:
        if not self._here():
            return
        if failed is not None and failed(error) is True:
            return  # shown where it belongs (a conflict bar)
        if isinstance(error, ReadOnlyError):  # the holder sentence, under one title everywhere
            title = "Read-only"
        if toast:
            self.notify(str(error), title=title, severity=severity, markup=False, timeout=10)

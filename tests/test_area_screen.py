"""AreaScreen.run_core: a core call in a worker, its result on the UI thread, and a memtui error
shown as a toast with its sentence instead of a crash."""

from __future__ import annotations

import threading

import pytest
from textual.app import App

from memtui.core.errors import ConflictError, ReadOnlyError
from memtui.ui.screens.base import AreaScreen
from tests.conftest import settle


class Probe(AreaScreen):
    """An area that runs one core call when asked."""

    def __init__(self) -> None:
        super().__init__()
        self.results: list[object] = []
        self.failures: list[Exception] = []
        self.threads: list[str] = []

    def run(self, call) -> None:  # noqa: ANN001
        def traced():  # noqa: ANN202
            self.threads.append(threading.current_thread().name)
            return call()

        self.run_core(traced, self.results.append, group="probe", title="Not saved", failed=self.failures.append)


class Host(App):
    def on_mount(self) -> None:
        self.push_screen(Probe())


async def test_a_failing_core_call_shows_its_sentence_as_a_toast_and_nothing_crashes() -> None:
    app = Host()
    async with app.run_test() as pilot:
        screen = app.screen
        assert isinstance(screen, Probe)

        def refuse() -> None:
            raise ConflictError("notes/x.md changed on disk since you opened it; reload it first.")

        screen.run(refuse)
        await settle(pilot)
        toasts = [(n.title, n.message) for n in app._notifications]
        assert toasts == [("Not saved", "notes/x.md changed on disk since you opened it; reload it first.")]
        assert [type(e) for e in screen.failures] == [ConflictError] and screen.results == []
        assert screen.threads and screen.threads[0] != threading.main_thread().name  # off the UI thread
        assert app.is_running  # nothing crashed

        screen.run(lambda: (_ for _ in ()).throw(ReadOnlyError("another memtui (pid 7) holds the lock.")))
        await settle(pilot)
        assert [n.title for n in app._notifications][-1] == "Read-only"  # one title for the holder sentence

        screen.run(lambda: 42)
        await settle(pilot)
        assert screen.results == [42] and len(screen.failures) == 2


async def test_an_error_that_is_not_memtuis_is_not_hidden() -> None:
    app = Host()

    def bug() -> None:
        raise ZeroDivisionError("a bug")

    with pytest.raises(Exception) as caught:  # noqa: PT011 - Textual wraps it (WorkerFailed)
        async with app.run_test() as pilot:
            screen = app.screen
            assert isinstance(screen, Probe)
            screen.run(bug)
            await settle(pilot)
    chain = [caught.value, caught.value.__cause__, getattr(caught.value, "error", None)]
    assert any(isinstance(e, ZeroDivisionError) for e in chain), "a bug ends the app with its traceback"



async def test_a_result_that_arrives_after_its_screen_left_is_dropped_not_a_crash() -> None:
    """A worker that finishes after its area left (the app closing, the area replaced) hands
    its result, its error or a from_worker call to a screen whose widgets are gone: all are
    dropped, no toast."""
    app = Host()
    async with app.run_test() as pilot:
        screen = app.screen
        assert isinstance(screen, Probe)
        app.pop_screen()
        await pilot.pause()
        assert not screen.is_attached
        await screen._deliver(screen.results.append, 7)
        await screen._call_here(screen.results.append, (8,), {})  # what from_worker hands over
        screen._core_failed(ConflictError("changed on disk"), "Not saved", screen.failures.append, "error", True)
        await pilot.pause()
        assert screen.results == [] and screen.failures == []
        assert not app._notifications and app.is_running


async def test_an_async_then_is_awaited_on_the_ui_thread() -> None:
    """``then`` may be a coroutine function (an area switch awaits the new mode): it runs to
    its end, as Textual's call_from_thread runs one."""
    app = Host()
    async with app.run_test() as pilot:
        screen = app.screen
        assert isinstance(screen, Probe)
        ran: list[int] = []

        async def then(value: int) -> None:
            await pilot.pause()
            ran.append(value)

        screen.run_core(lambda: 5, then, group="async-then")
        await settle(pilot)
        assert ran == [5]

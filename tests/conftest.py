"""Shared test fixtures.

Real inputs are read in place from ``../shared`` (beside the checkout, in CI too); their
text is never copied into the project.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import threading
import time
from pathlib import Path
from typing import Callable, Iterator

import pytest

REPO = Path(__file__).resolve().parent.parent
SHARED = Path(os.environ.get("MEMTUI_SHARED", REPO.parent / "shared"))
SAMPLE = REPO / "sample_workspace"


def _isolate_git_identity() -> None:
    """Give every test (and every process it starts) git configuration of its own.

    The suite must pass on a machine with no git identity and must not depend on, or read, the
    machine's own git settings: git reads only a test configuration with a test author. Tests
    that check what happens with no identity point git at an empty configuration themselves
    (``tests.backup_helpers.isolate_git``).
    """
    import tempfile

    folder = Path(tempfile.mkdtemp(prefix="memtui-test-git-"))
    config = folder / "gitconfig"
    config.write_text("[user]\n\tname = memtui tests\n\temail = memtui-tests@example.invalid\n"
                      "[init]\n\tdefaultBranch = master\n", encoding="utf-8")
    os.environ["GIT_CONFIG_GLOBAL"] = str(config)
    os.environ["GIT_CONFIG_NOSYSTEM"] = "1"
    for name in ("GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL"):
        os.environ.pop(name, None)


_isolate_git_identity()


def _compile_memtui_once() -> None:
    """Write memtui's bytecode once, before the workers start.

    Where ``PYTHONDONTWRITEBYTECODE`` is set (it is on some CI machines) an editable install
    never caches bytecode, so every process a test starts (the CLI, the scan's worker
    processes, a fresh interpreter) compiled memtui from source again: about a fifth of each
    start's CPU. ``compileall`` writes the cache whatever that variable says, and Python reads
    an up-to-date cache either way. Only the controlling process compiles.
    """
    if os.environ.get("PYTEST_XDIST_WORKER"):
        return
    import compileall

    compileall.compile_dir(str(REPO / "memtui"), quiet=1)


_compile_memtui_once()


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Run the tests marked ``slow`` first (in their own order, the others after them in theirs).

    With ``-n 2`` the two workers then end together: a long test collected last (the torture
    tests sort near the end) left one worker running it alone while the other had finished.
    Each worker collects the same order, so pytest-xdist still sees one collection.
    """
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)


async def wait_for(pilot, condition: Callable[[], object], timeout: float = 60.0,  # noqa: ANN001
                   what: str = "the condition") -> None:
    """Let the app run (its workers, timers and messages) until ``condition()`` is true.

    The one waiting helper of the Pilot tests: it checks the condition after every turn of
    the app's message loop, never sleeps a fixed time, and fails with ``what`` after
    ``timeout`` seconds (a generous bound for a loaded CI machine, not a speed assertion).
    """
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"{what} did not happen within {timeout:g} s")
        await pilot.pause(0.02)


async def open_area(pilot, key: str):  # noqa: ANN001, ANN201
    """Press the area key ``key`` and wait until that area's screen is current and composed;
    returns the screen.

    ``pilot.press`` returns once the key is handled, which on a loaded machine can be before the
    area's screen has mounted its widgets: a query straight after it found none.
    """
    from memtui.ui.app import AREAS

    mode = next(area.mode for area in AREAS if area.key == key)
    app = pilot.app
    await pilot.press(key)
    await wait_for(pilot, lambda: app.current_mode == mode and app.screen.is_mounted,
                   what=f"the {mode} area shown")
    return app.screen


async def click(pilot, selector: str) -> None:  # noqa: ANN001
    """Click the widget ``selector`` of the current screen once it is laid out.

    A bar or dialog shown by a class change is laid out on a later refresh: a click before that
    lands where the widget is not yet (it did on a loaded machine).
    """
    await wait_for(pilot, lambda: any(w.region.area > 0 for w in pilot.app.screen.query(selector)),
                   what=f"{selector} laid out")
    await pilot.click(selector)


def until_watched(folder: Path, seen: list, thread: threading.Thread, timeout: float = 20.0) -> None:
    """Write a probe file in ``folder`` until the watcher running in ``thread`` has reported it
    in ``seen`` (the :class:`~memtui.core.watch.Changes` batches it yields): from then on the
    watches of ``folder`` are registered, so the write a test makes next is seen.

    The wait for a watcher to be ready, on its own report instead of a fixed sleep. Returns
    early when ``thread`` has ended (the test's assertions say why); fails after ``timeout``.
    """
    probe = folder / "watch-probe.txt"
    deadline = time.monotonic() + timeout
    writes = 0
    while thread.is_alive():
        writes += 1
        probe.write_text(f"probe {writes}\n", encoding="utf-8")
        again = time.monotonic() + 0.25  # write again if this one fell before the watch began
        while time.monotonic() < again:
            if any(path.endswith(f"{folder.name}/{probe.name}") for changes in list(seen) for path in changes.paths):
                return
            time.sleep(0.01)
        if time.monotonic() > deadline:
            raise AssertionError(f"the watcher reported no change of {probe} within {timeout:g} s")


#: Worker groups that run for the app's whole life (they never "complete").
LONG_LIVED = frozenset({"watch"})


async def settle(pilot) -> None:  # noqa: ANN001
    """Wait until every worker the test started has finished (not the app's long-lived ones,
    such as the workspace watcher), then let the app handle what they posted.

    A worker cancelled meanwhile has finished too (the app cancels its workers when it quits:
    on a loaded machine the first audit can still be running then); a worker that failed
    still fails the test.
    """
    from textual.worker import WorkerCancelled

    app = pilot.app
    for worker in [w for w in app.workers if w.group not in LONG_LIVED]:
        with contextlib.suppress(WorkerCancelled):
            await worker.wait()
    await pilot.pause()


@contextlib.contextmanager
def batch(store) -> Iterator[None]:  # noqa: ANN001 - Store
    """Write a store directly, as one batch (tests that set up records without a session)."""
    store.begin()
    try:
        yield
    except BaseException:
        store.rollback()
        raise
    store.commit()


def run_cli(capsys: pytest.CaptureFixture, *argv: str) -> tuple[int, str, str]:
    """Run ``memtui *argv`` in-process: ``(exit code, stdout, stderr)`` (usage errors and
    ``fail()`` exit by SystemExit; its code is returned)."""
    from memtui.cli import main

    try:
        code = main(list(argv))
    except SystemExit as exc:
        code = int(exc.code or 0)
    out = capsys.readouterr()
    return code, out.out, out.err


def seed(session, fn: Callable, action: str = "test.seed", target: str = ".memtui/store.json"):  # noqa: ANN001, ANN201
    """Run ``fn(tx)`` as one guarded write of ``session`` (tests that seed store records)."""
    return session.write(action, target, fn).result


@pytest.fixture(scope="session")
def shared() -> Path:
    """The ``../shared`` folder (corpus, bug inputs, triage set)."""
    assert SHARED.is_dir(), f"../shared is missing: expected it at {SHARED}"
    return SHARED


@pytest.fixture(scope="session")
def _indexed_sample(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The sample workspace with its search index built: made once per test process.

    Every app a test starts catches the workspace's index up with its files; on a fresh copy
    that is a whole build, a tenth of a TUI test's CPU. The index's manifest records each
    file's path relative to the workspace, its mtime, size and hash, and a copy keeps the
    mtimes, so a copy of this folder starts with an index that is up to date (the app then
    only checks it). Tests of building an index start from :func:`bare_sample_copy`.
    """
    from memtui.core.search.index import SearchIndex
    from memtui.core.workspace import Workspace

    target = tmp_path_factory.mktemp("sample-indexed") / "ws"
    shutil.copytree(SAMPLE, target, symlinks=True)
    report = SearchIndex(Workspace.open(target)).update()
    assert report.documents, "the sample workspace's index holds nothing"
    return target


@pytest.fixture
def sample_copy(tmp_path: Path, _indexed_sample: Path) -> Path:
    """A private copy of the bundled sample workspace, its search index already built (tests
    never write the original)."""
    target = tmp_path / "ws"
    shutil.copytree(_indexed_sample, target, symlinks=True)
    return target


@pytest.fixture
def bare_sample_copy(tmp_path: Path) -> Path:
    """A private copy of the bundled sample workspace as it ships: no ``.memtui`` state, no
    search index."""
    target = tmp_path / "ws"
    shutil.copytree(SAMPLE, target, symlinks=True)
    return target


@pytest.fixture(autouse=True)
def _isolated_user_dirs(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """Point the user config and data folders at a temporary place for every test."""
    home = tmp_path_factory.mktemp("userdirs")
    monkeypatch.setenv("MEMTUI_CONFIG_DIR", str(home / "config"))
    monkeypatch.setenv("MEMTUI_DATA_DIR", str(home / "data"))
    monkeypatch.setenv("MEMTUI_CACHE_DIR", str(home / "cache"))


@pytest.fixture
def graph_session(tmp_path: Path):
    """A writable :class:`~memtui.core.session.Session` on ``tmp_path`` (graph writes need one)."""
    from memtui.core.session import Session

    session = Session.open(tmp_path, purpose="test")
    yield session
    session.close()


@pytest.fixture(autouse=True)
def _notifications_are_plain_text(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every notification in the TUI is a plain ``str`` shown with ``markup=False``.

    A ``rich.text.Text`` passed to ``notify`` crashed the app when the toast was drawn (found
    by a new-user test after approving a proposal); user text must never be read as markup
    (DESIGN.md invariant 11). This guard makes any such call fail the test that makes it.
    """
    from textual.app import App

    original = App.notify

    def notify(self, message, *args, **kwargs):  # noqa: ANN001, ANN202
        assert isinstance(message, str), f"notify() got {type(message).__name__}, not str: {message!r}"
        assert kwargs.get("markup") is False, f"notify({message!r}) without markup=False"
        return original(self, message, *args, **kwargs)

    monkeypatch.setattr(App, "notify", notify)


try:  # property tests explore at random on a developer's machine, but CI runs a fixed sample
    from hypothesis import settings as _hypothesis_settings

    _hypothesis_settings.register_profile("ci", derandomize=True, print_blob=True)
    if os.environ.get("CI"):
        _hypothesis_settings.load_profile("ci")
except ImportError:  # pragma: no cover - hypothesis is in the test extra
    pass


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    """With ``MEMTUI_TEST_CPU=FILE``, append each test's CPU seconds (this process, all its
    threads, and the child processes it waited for) to FILE: where the suite's time goes,
    measured in CPU, which a loaded machine does not inflate the way it inflates wall time."""
    report = os.environ.get("MEMTUI_TEST_CPU")
    if not report:
        yield
        return
    import resource

    def used() -> float:
        own = time.process_time()
        children = resource.getrusage(resource.RUSAGE_CHILDREN)
        return own + children.ru_utime + children.ru_stime

    before = used()
    yield
    with open(report, "a", encoding="utf-8") as handle:
        handle.write(f"{used() - before:.3f}\t{item.nodeid}\n")

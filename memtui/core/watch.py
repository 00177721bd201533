"""Following a workspace: which parts changed, by this process or any other (DESIGN.md §4
invariant 2: "open views follow changes made by any process").

:func:`watch` yields :class:`Changes`: the workspace-relative paths that changed since the
last batch, grouped by :data:`TOPICS` (what a view shows), so a view refreshes only when its
data changed. It uses ``watchfiles`` (the Rust ``notify`` crate: inotify on Linux, FSEvents on
macOS, ReadDirectoryChangesW on Windows), which sleeps in the kernel between events — an idle
workspace costs no CPU and no polling — and batches a burst of events into one set.

What is not followed: memtui's own derived files (``.memtui/index``, the lock and its holder
record), temporary files of atomic writes (``.NAME.*.tmp``: the rename that follows is the
change), and folders such as ``.git`` and ``node_modules``.
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator

from memtui.core.workspace import GRAPH_FILE, MEMBER_NOTES, NOTEBOOK, OPERATOR_FILES, SERVER_GRAPH_FILE, Workspace

#: What a change is about, for the views: ``tree`` (articles and node indexes), ``graph``,
#: ``notes`` (member notes, notebook, operator files), ``skills``, ``store`` (governance,
#: audit log), ``sessions`` (session histories), ``config`` (``memtui.toml``), ``inbox``
#: (``proposals/inbox``), ``other``.
TOPICS = ("tree", "graph", "notes", "skills", "store", "sessions", "config", "inbox", "other")

_IGNORED_DIRS = frozenset({".git", "node_modules", "__pycache__", ".hg", ".svn"})
_IGNORED_STATE = frozenset({"index", "lock", "lock.holder.json"})


@dataclass(slots=True)
class Changes:
    """One batch of changes.

    Attributes:
        by_topic: :data:`TOPICS` → the workspace-relative paths (``/`` separators) of that
            topic that were added, changed or removed.
    """

    by_topic: dict[str, set[str]] = field(default_factory=dict)

    def add(self, shown: str, topic: str) -> None:
        """Record that ``shown`` (of ``topic``) changed."""
        self.by_topic.setdefault(topic, set()).add(shown)

    @property
    def topics(self) -> set[str]:
        """The topics with a change."""
        return set(self.by_topic)

    @property
    def paths(self) -> set[str]:
        """Every changed path."""
        return set().union(*self.by_topic.values()) if self.by_topic else set()

    def of(self, topic: str) -> list[str]:
        """The changed paths of ``topic``, sorted."""
        return sorted(self.by_topic.get(topic, ()))

    def merge(self, other: "Changes") -> None:
        """Add ``other``'s changes to these."""
        for topic, paths in other.by_topic.items():
            self.by_topic.setdefault(topic, set()).update(paths)


def topic_of(ws: Workspace, shown: str) -> str | None:
    """The topic of the workspace-relative path ``shown``, or ``None`` when it is not followed.

    Args:
        ws: the workspace (its memory folder may be the workspace itself).
        shown: a path relative to the workspace, with ``/``.

    Returns:
        One of :data:`TOPICS`, or ``None`` for memtui's derived files, temporary files and
        ignored folders.
    """
    parts = shown.split("/")
    name = parts[-1]
    if any(p in _IGNORED_DIRS for p in parts) or (name.startswith(".") and name.endswith(".tmp")):
        return None
    if parts[0] == ".memtui":
        if len(parts) > 1 and parts[1] in _IGNORED_STATE:
            return None
        return "store" if shown == ".memtui/store.json" else None
    if shown == "memtui.toml":
        return "config"
    if parts[0] in ("skills", "shared-skills", "shared-skills.d"):
        return "skills"
    if parts[0] == "sessions":
        return "sessions"
    if shown.startswith("proposals/inbox/"):
        return "inbox"
    prefix = ws.memory_rel
    inner = shown[len(prefix) + 1:] if prefix and shown.startswith(prefix + "/") else (None if prefix else shown)
    if inner is None:
        return "other"
    if inner in (GRAPH_FILE, SERVER_GRAPH_FILE):
        return "graph"
    if inner in (MEMBER_NOTES, NOTEBOOK, *OPERATOR_FILES):
        return "notes"
    if name.lower().endswith(".md") or "." not in name:
        return "tree"  # an article, a node index, or a folder of the tree
    return "other"


def classify(ws: Workspace, absolute: list[str]) -> Changes:
    """Group absolute paths reported by the watcher into :class:`Changes` (ignored ones left out)."""
    root = os.fspath(ws.root)
    out = Changes()
    for path in absolute:
        try:
            shown = Path(os.path.relpath(path, root)).as_posix()
        except ValueError:  # pragma: no cover - another drive on Windows
            continue
        if shown.startswith(".."):
            continue
        topic = topic_of(ws, shown)
        if topic is not None:
            out.add(shown, topic)
    return out


def folders(ws: Workspace) -> list[str]:
    """Every real folder of the workspace, absolute: symbolic links are not followed (the
    watcher of a recursive watch follows them, and listed a folder a link led to outside the
    workspace, found by the strace torture test), nor ignored folders and
    ``.memtui/index``."""
    root = os.fspath(ws.root)
    index = os.path.join(root, ".memtui", "index")
    out: list[str] = []
    for folder, dirs, _files in os.walk(root, followlinks=False):
        out.append(folder)
        dirs[:] = sorted(d for d in dirs if d not in _IGNORED_DIRS and os.path.join(folder, d) != index
                         and not os.path.islink(os.path.join(folder, d)))
    return out


def watch(ws: Workspace, stop: threading.Event, *, debounce_ms: int = 200) -> Iterator[Changes]:
    """Yield a :class:`Changes` for every batch of changes in ``ws`` until ``stop`` is set.

    Every real folder is watched on its own (:func:`folders`); a batch that adds a folder
    starts the watch again with it.

    Args:
        ws: the workspace to follow (the whole folder, recursively).
        stop: set it to end the iteration (it is checked at least every 300 ms).
        debounce_ms: events arriving within this many milliseconds form one batch.

    Yields:
        Non-empty :class:`Changes` (batches of only ignored paths are skipped).

    Raises:
        OSError: the folder cannot be watched (for example the inotify watch limit is
            reached); the caller says so and the views fall back to manual refresh.
    """
    import watchfiles

    def keep(_change: object, path: str) -> bool:
        name = os.path.basename(path)
        return not (name.startswith(".") and name.endswith(".tmp"))

    while not stop.is_set():
        watched = folders(ws)
        known = set(watched)
        grown = False
        aliases: dict[str, str] = {}
        try:
            targets = [target for target in (_watchable(folder, aliases) for folder in watched) if target]
            for batch in watchfiles.watch(*targets, watch_filter=keep, stop_event=stop, debounce=debounce_ms,
                                          step=50, rust_timeout=300, yield_on_timeout=False, recursive=False,
                                          raise_interrupt=False):
                paths = [_real(path, aliases) for _change, path in batch]
                changes = classify(ws, paths)
                if changes.by_topic:
                    yield changes
                if any(p not in known and os.path.isdir(p) and not os.path.islink(p) for p in paths):
                    grown = True  # a new folder: watch it too
                    break
        finally:
            for alias in aliases:
                os.close(int(alias.rsplit("/", 1)[1]))
        if not grown:
            return


#: Where Linux shows an open file descriptor as a path (a folder opened by its bytes).
_FD_PATHS = "/proc/self/fd"


def _watchable(folder: str, aliases: dict[str, str]) -> str | None:
    """``folder`` as a path the watcher (Rust, UTF-8 paths only) takes: itself when it is valid
    UTF-8, else the folder opened by its bytes and named ``/proc/self/fd/N`` (recorded in
    ``aliases``, closed by the caller), else ``None`` (not followed) where there is no such
    path. A workspace whose path is not UTF-8 (PEP 383 ``U+DCxx`` in ``folder``) is followed
    like any other."""
    try:
        folder.encode("utf-8")
        return folder
    except UnicodeEncodeError:
        pass
    if not os.path.isdir(_FD_PATHS):
        return None
    try:
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    except OSError:
        return None
    alias = f"{_FD_PATHS}/{fd}"
    aliases[alias] = folder
    return alias


def _real(path: str, aliases: dict[str, str]) -> str:
    """The workspace path of ``path`` as the watcher reported it (an alias made real)."""
    if aliases and path.startswith(_FD_PATHS):
        for alias, folder in aliases.items():
            if path == alias or path.startswith(alias + "/"):
                return folder + path[len(alias):]
    return path

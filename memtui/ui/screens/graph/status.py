"""The count line of the Graph area: what is shown, where it comes from, and how fresh it is.

It shows the page's counts (or a kept snapshot's listing), then where the graph is (a remote's
URL, last: the counts matter more at 80 columns), and whether what is shown is live, the kept
snapshot while the remote is read again ("as of 10:04, reading the remote… 5 s"), or offline
(``offline, as of 10:04``, with the reason in its tooltip). A read-only session puts a
``READ-ONLY`` badge first, with the holder sentence in the tooltip.
"""

from __future__ import annotations

import time

from rich.text import Text
from textual.timer import Timer
from textual.widgets import Static

from memtui.core.graph.backend import GraphBackend
from memtui.core.graph.snapshot import Snapshot, as_of
from memtui.ui.text import join, safe


class ReadStatus(Static):
    """The count line (see the module docstring).

    Attributes:
        backend: the graph's backend, once opened (its place and label are shown).
        read_at: when the graph shown was read (``time.time()``).
        offline: why the graph could not be read now ("" when it could).
        cached: the remote's kept snapshot shown until the live read replaces it (``None``:
            what is shown is live).
        reading_since: when the running read started (``time.monotonic()``), or ``None``.
        received: the bytes the running read has received.
        read_only: the holder sentence when the session may not write ("" when it may).
    """

    DEFAULT_CSS = """
    ReadStatus { width: 2fr; padding: 1 1 0 1; }
    """

    def __init__(self, *, id: str | None = None) -> None:  # noqa: A002 - Textual's name
        super().__init__(id=id)
        self.backend: GraphBackend | None = None
        self.read_at: float | None = None
        self.offline = ""
        self.cached: Snapshot | None = None
        self.reading_since: float | None = None
        self.received = 0
        self.read_only = ""
        #: the counts drawn last (redrawn with the read's time while a read runs)
        self._counts: Text | None = None
        self._tick: Timer | None = None

    def say(self, text: Text) -> None:
        """Show ``text``, after a ``READ-ONLY`` badge when writes are refused."""
        if self.read_only:
            text = join(Text(" READ-ONLY ", style="bold reverse"), Text(" "), text)
            self.tooltip = self.read_only
        self.update(text)

    def reading(self, count: int) -> None:
        """A read runs (``count`` bytes so far): say so, with the seconds it has taken."""
        if self.reading_since is None:
            self.reading_since = time.monotonic()
            self._tick = self.set_interval(1.0, self._redraw)
        self.received = count
        self._redraw()

    def read_done(self) -> None:
        """The read ended (read, or failed)."""
        self.reading_since = None
        if self._tick is not None:
            self._tick.stop()
            self._tick = None

    def _redraw(self) -> None:
        if self.reading_since is None:
            return
        if self._counts is not None:
            self.draw(self._counts)
        else:
            self.say(Text(self.reading_text(), style="dim"))

    def reading_text(self) -> str:
        """``"reading the remote… 5 s, 12.3 MB · URL"``: how long the running read has taken and
        what it has received (the place while nothing kept is shown)."""
        backend = self.backend
        where = f" · {backend.shown}" if backend is not None and not self.cached else ""  # last: it may not fit
        seconds = time.monotonic() - (self.reading_since or time.monotonic())
        got = f", {self.received / 1e6:,.1f} MB" if self.received >= 100_000 else ""
        if not self.received and seconds >= 3:  # a gateway may send a big answer only once it is whole
            got = ", nothing received yet"
        what = backend.label if backend is not None and backend.label else "graph"
        return f"reading the {what}… {seconds:.0f} s{got}{where}"

    def forget_counts(self) -> None:
        """Nothing is shown any more (the graph could not be read): a running read is said alone."""
        self._counts = None

    def draw(self, counts: Text) -> None:
        """The line for ``counts`` (what is shown), its place, and whether it is live, the kept
        snapshot while the remote is read, or offline."""
        self._counts = counts
        status = counts
        backend = self.backend
        if backend is not None and backend.label:  # last: the counts matter more at 80 columns
            status = join(status, Text(" · "), Text(f"{backend.label} ", style="bold"), safe(backend.shown))
        stamp = as_of(self.read_at) if self.read_at is not None else ""
        # memtui's last read ("as of 10:04"), or a restored backup's graph ("from the backup of …")
        since = self.cached.label() if self.cached is not None else f"as of {stamp}"
        if self.offline and self.read_at is not None:
            status = join(Text(f" offline, {since} ", style="bold reverse red"), Text(" F5 retries · "), status)
        elif self.cached is not None:
            label = self.reading_text() if self.reading_since is not None else "kept"
            status = join(Text(f" {since}, {label} ", style="bold reverse yellow"), Text(" "), status)
        self.say(status)
        kept = ("the graph of the restored backup, kept in the user cache; the live read replaces it"
                if self.cached is not None and self.cached.backup is not None else
                "memtui's last read of the remote, kept in the user cache; the live read replaces it")
        self.tooltip = self.offline or (kept if self.cached is not None else None) or (self.read_only or None)

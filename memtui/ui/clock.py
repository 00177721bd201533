"""The one clock of the TUI: ages ("3d"), the consolidation pass's today. Snapshot tests fix it
(deterministic snapshots), so no screen reads the system clock for what it shows."""

from __future__ import annotations

import datetime as _dt


def now() -> _dt.datetime:
    """The current time (UTC, aware)."""
    return _dt.datetime.now(_dt.timezone.utc)


def today() -> _dt.date:
    """Today's date in UTC."""
    return now().date()


def took(seconds: float) -> str:
    """How long some work took, as shown beside its result (``"9 ms"``, ``"2.8 s"``); the one
    formatter of durations, which the snapshot tests fix (a duration differs every run)."""
    return f"{seconds * 1000:.0f} ms" if seconds < 1 else f"{seconds:.1f} s"

"""One page of a longer list: what a list command's ``--json`` gives (seed 004).

Every list memtui prints as data is a page: the items of this page, how many the filter
matched in all (``total``), and where the next page starts (``next``, ``None`` on the last
page), so a script can tell a short list from a cut one and read the rest. The cursor is an
offset into the filtered list, except where a list has a stable order of its own (the audit
log pages by entry id, so entries written meanwhile never shift a page).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Page(Generic[T]):
    """One page of a list.

    Attributes:
        items: this page's items, in the list's order.
        total: how many items the whole filtered list holds (``len(items)`` or more).
        next: the cursor of the next page (an offset, or the key the list pages by), or
            ``None`` when this page is the last.
    """

    items: list[T]
    total: int
    next: int | None = None

    @classmethod
    def of(cls, items: Sequence[T], offset: int = 0, limit: int | None = None) -> "Page[T]":
        """The page of ``items`` starting at ``offset`` with at most ``limit`` items (all the
        rest when ``None``).

        Raises:
            ValueError: ``offset`` is negative or ``limit`` is below 1 (the CLI rejects both
                before calling; a negative value here is a bug, never clamped).
        """
        if offset < 0:
            raise ValueError(f"a page offset is 0 or more, not {offset}")
        if limit is not None and limit < 1:
            raise ValueError(f"a page holds 1 item or more, not {limit}")
        end = len(items) if limit is None else offset + limit
        shown = list(items[offset:end])
        return cls(shown, len(items), end if end < len(items) else None)

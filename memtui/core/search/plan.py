"""A parsed query: the plan :func:`memtui.core.search.query.parse` makes and the engine
(:mod:`memtui.core.search.engine`) matches. Nothing here knows Whoosh."""

from __future__ import annotations

from dataclasses import dataclass

#: Shortest prefix accepted before ``*`` (letters).
PREFIX_MIN = 3
#: Marks a prefix (not a term) in a ranking's highlight set.
PREFIX_MARK = "\x01"


@dataclass(slots=True)
class Item:
    """One item of a query: ``kind`` is ``word``, ``phrase``, ``prefix``, ``fuzzy`` or
    ``and``; ``text`` is what was typed (a prefix without its ``*``, normalised); ``weight``
    scales a word's score (below 1 for the words of a pasted ticket that were set apart:
    :data:`memtui.core.search.reading.ASIDE_WEIGHT`)."""

    kind: str
    text: str
    weight: float = 1.0

"""The search index as the rest of memtui sees it: :class:`SearchIndex` and its errors and
report. The index itself lives in :mod:`memtui.core.search.engine.index`, the one package
that speaks to Whoosh; this module is its public face, so callers outside search
never name the engine."""

from memtui.core.search.engine.index import (IndexBusyError, IndexReport, IndexWriteError, SearchIndex,
                                             is_damage)

__all__ = ["IndexBusyError", "IndexReport", "IndexWriteError", "SearchIndex", "is_damage"]

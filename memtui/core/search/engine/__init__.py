"""The search engine: the only package of memtui that imports Whoosh (an
import-linter contract in ``pyproject.toml`` holds it). It stores documents
(:mod:`~memtui.core.search.engine.index`), matches query plans
(:mod:`~memtui.core.search.engine.matching`) and carries the fixes to Whoosh's own defects
(:mod:`~memtui.core.search.engine.whoosh_fixes`). The rest of search speaks in documents
(:mod:`memtui.core.search.sources`), plans (:mod:`memtui.core.search.plan`) and scored
stored fields."""

from memtui.core.search.engine.lean import import_whoosh

import_whoosh()  # before any module of the engine imports Whoosh (see lean)

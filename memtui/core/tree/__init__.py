"""The memory tree (seed 000 §1): :mod:`~memtui.core.tree.model` (nodes, articles, owners),
:mod:`~memtui.core.tree.index` (node indexes, read and written in one place),
:mod:`~memtui.core.tree.audit` (what is wrong in a node) and :mod:`~memtui.core.tree.boot`
(what a node's agent boots with)."""

from __future__ import annotations

from memtui.core.tree.index import (  # noqa: F401 - the package's public face
    IndexEntry as IndexEntry,
    IndexRedirect as IndexRedirect,
    NodeIndex as NodeIndex,
    index_line as index_line,
    is_local_link as is_local_link,
    iter_links as iter_links,
    parse_index as parse_index,
)
from memtui.core.tree.model import (  # noqa: F401 - the package's public face
    Article as Article,
    MemoryTree as MemoryTree,
)

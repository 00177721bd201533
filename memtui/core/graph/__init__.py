"""The knowledge graph (seed 002): ``memory/graph.jsonl`` read losslessly, edited by operations, written by the one guarded write.

Rooms of this package, lowest first (an import-linter contract keeps the order):

- :mod:`~memtui.core.graph.format`: entities, relations and lines; lenient, lossless reading;
- :mod:`~memtui.core.graph.operations`: edits, each a pure function from graph to graph;
- :mod:`~memtui.core.graph.provenance`: which session an observation came from (kept in the store);
- :mod:`~memtui.core.graph.commit`: the graph's share of the guarded write;
- :mod:`~memtui.core.graph.audit` and :mod:`~memtui.core.graph.export`: findings and other formats.

This face re-exports the format, the operations and the commit, so callers write
``from memtui.core import graph as g`` and ``g.load(...)``, ``g.commit(...)``.
"""

from __future__ import annotations

from memtui.core.graph.format import (  # noqa: F401 - the package's public face
    BLANK as BLANK,
    BOM as BOM,
    DIFF_LIMIT as DIFF_LIMIT,
    ENTITY as ENTITY,
    ENTITY_KEYS as ENTITY_KEYS,
    Entity as Entity,
    Graph as Graph,
    GraphConflictError as GraphConflictError,
    GraphEditError as GraphEditError,
    INVALID as INVALID,
    LEGACY as LEGACY,
    Line as Line,
    MALFORMED as MALFORMED,
    MAX_GRAPH_BYTES as MAX_GRAPH_BYTES,
    OTHER as OTHER,
    RELATION as RELATION,
    RELATION_KEYS as RELATION_KEYS,
    Relation as Relation,
    degrees as degrees,
    entity_line as entity_line,
    entity_page as entity_page,
    entity_filter as entity_filter,
    fold_name as fold_name,
    fold_type as fold_type,
    load as load,
    loads as loads,
    parse_line as parse_line,
    relation_line as relation_line,
    server_json as server_json,
    server_view as server_view,
)
from memtui.core.graph.operations import (  # noqa: F401 - the package's public face
    ALIAS_PREFIX as ALIAS_PREFIX,
    AddObservation as AddObservation,
    Change as Change,
    ConvertLegacy as ConvertLegacy,
    CreateEntity as CreateEntity,
    CreateRelation as CreateRelation,
    DeleteEntity as DeleteEntity,
    DeleteRecord as DeleteRecord,
    DeleteObservation as DeleteObservation,
    DeleteRelation as DeleteRelation,
    EditObservation as EditObservation,
    ImportRecords as ImportRecords,
    MergeEntities as MergeEntities,
    Operation as Operation,
    RenameEntity as RenameEntity,
    Repair as Repair,
    ReplaceRecords as ReplaceRecords,
    Restore as Restore,
    Retype as Retype,
    repair_rejects as repair_rejects,
    type_variants as type_variants,
)
from memtui.core.graph.commit import (  # noqa: F401 - the package's public face
    Saved as Saved,
    action_name as action_name,
    commit as commit,
    conflict_diff as conflict_diff,
    describe as describe,
    retry_of as retry_of,
)

"""The audit of the tree's eval sets (:mod:`memtui.core.evalsets`), with what only governance
knows: whether a set is a governed version.

It lives beside the ledger, not in :mod:`memtui.core.evalsets`, so that the eval sets (which the
ledger reads to tell a set from an article) never import the ledger back.
"""

from __future__ import annotations

from memtui.core.evalsets import all_sets, load, set_file, set_path, unknown_ids
from memtui.core.findings import Finding
from memtui.core.governance.model import Ledger
from memtui.core.store import Store
from memtui.core.tree.model import MemoryTree
from memtui.core.workspace import Workspace


def audit_findings(ws: Workspace) -> list[Finding]:
    """The findings of every eval set of the tree (contributed to the audit): unreadable or
    oversized files, bad lines, duplicate case ids, cases with no language, ids that are not
    entries of the memory, and sets that are not a governed version (``eval-set-untracked``)."""
    sets = all_sets(ws)
    if not sets:
        return []
    from memtui.core.search.triage import entry_ids

    from memtui.core.skills.gating import skill_ids

    ids = set(entry_ids(ws).values()) | skill_ids(ws)  # a case may name a skill (skill:NAME)
    tree = MemoryTree(ws)
    tracked = _tracked(ws)
    findings: list[Finding] = []
    for node in sets:
        es = load(ws, node, tree)
        findings.extend(es.findings)
        findings.extend(unknown_ids(es.cases, ids, es.place))
        if tracked is not None and set_path(node) not in tracked:
            findings.append(Finding.make(
                "eval-set-untracked", ws.shown(set_file(ws, node)),
                "this eval set is not a governed version, so no change of it is recorded",
                f"the owner records it: `memtui adopt {set_path(node)}`, or files it as a proposal"))
    return findings


def _tracked(ws: Workspace) -> set[str] | None:
    """Memory-relative paths the store holds versions of (``None`` when the store cannot be read)."""
    store = Store.open(ws, read_only=True)
    try:
        return None if store.damaged else set(Ledger(store).tracked())
    finally:
        store.close()

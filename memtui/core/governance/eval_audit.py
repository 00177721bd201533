"""The audit of the tree's eval sets (:mod:`memtui.core.evalsets`), with what only governance
knows: whether a set is a governed version.

It lives beside the ledger, not in :mod:`memtui.core.evalsets`, so that the eval sets (which the
ledger reads to tell a set from an article) never import the ledger back.
"""

from __future__ import annotations

from memtui.core.evalsets import EVAL_DIR, all_sets, load, set_file, set_path, unknown_ids
from memtui.core.findings import Finding
from memtui.core.governance.model import Ledger
from memtui.core.store import Store
from memtui.core.tree.model import MemoryTree
from memtui.core.workspace import Workspace


def audit_findings(ws: Workspace, sets: list[str] | None = None) -> list[Finding]:
    """The findings of every eval set of the tree (contributed to the audit): unreadable or
    oversized files, bad lines, duplicate case ids, cases with no language, ids that are not
    entries of the memory, and sets that are not a governed version (``eval-set-untracked``).
    ``sets``: the nodes holding one (:func:`memtui.core.evalsets.all_sets`), when known."""
    sets = all_sets(ws) if sets is None else sets
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


def audit_findings_after(ws: Workspace, memo: dict, changed: list[str] | None) -> list[Finding]:
    """:func:`audit_findings` after ``changed`` paths changed: the tree is walked for its eval
    sets again only when a change can add or remove one (a folder, a path under ``evals``, a
    folder above a known set gone); with no set there is nothing to check, and with sets every
    set is checked again (a case's ids name articles anywhere in the memory).

    Args:
        ws: the workspace.
        memo: this check's state from the last call (``{}`` the first time): the set nodes.
        changed: workspace-relative paths (``/``) added, changed or removed since; ``None``
            walks the tree.
    """
    sets: list[str] | None = memo.get("sets")
    if sets is None or changed is None or _may_move_sets(ws, changed, sets):
        sets = all_sets(ws)
    memo["sets"] = sets
    return audit_findings(ws, sets) if sets else []


def _may_move_sets(ws: Workspace, changed: list[str], sets: list[str]) -> bool:
    """True when one of the workspace-relative ``changed`` paths can add or remove an eval set."""
    import os

    prefix = ws.memory_rel
    for path in changed:
        if prefix and not (path == prefix or path.startswith(prefix + "/")):
            continue
        inner = path[len(prefix) + 1:] if prefix else path
        parts = inner.split("/")
        if not inner or EVAL_DIR in parts or os.path.isdir(ws.memory / inner):
            return True
        if any(node == inner or node.startswith(inner + "/") for node in sets):
            return True
    return False


def _tracked(ws: Workspace) -> set[str] | None:
    """Memory-relative paths the store holds versions of (``None`` when the store cannot be read)."""
    store = Store.open(ws, read_only=True)
    try:
        return None if store.damaged else set(Ledger(store).tracked())
    finally:
        store.close()

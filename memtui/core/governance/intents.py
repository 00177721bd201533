"""Governance changes as one guarded write: an activation, retirement, rollback or revert
changes article, node index and store together (seed 000 §2 rule 4, §7.4b).

:func:`plan_files` says which files a publication changes (the article, its node index line,
and for a new node its parent's line); :func:`apply_plan` puts them on the
:class:`~memtui.core.session.Tx` of :meth:`memtui.core.session.Session.write`, which writes
them with the store's state changes and the audit entry as one change that survives a crash
(several files become an intent that the next write completes).
"""

from __future__ import annotations

import os
from pathlib import PurePosixPath
from typing import Any


from memtui.core import atomic, frontmatter
from memtui.core.evalsets import is_set_path
from memtui.core.store import Store
from memtui.core.tree.model import MemoryTree
from memtui.core.workspace import NODE_INDEX, Workspace
from memtui.core.governance.model import GovernanceError, Ledger, RefusedError, T_VERSIONS, Version, mem_path, read_or_none, sha_or_none, shown_path, node_of, now, title_and_line
from memtui.core.governance.rules import chain_untrusted, check_disk, next_number
from memtui.core.tree.index import index_with_line, index_with_redirect, index_without_line, new_node_index


_FROZEN = ("content", "sha256", "provenance", "article", "number", "created", "author", "id")


_ALLOWED = {("proposed", "active"), ("proposed", "rejected"), ("active", "retired")}


def transition(store: Store, version: Version, state: str, field_name: str, decision: dict[str, Any],
                provenance: dict[str, Any] | None = None) -> None:
    """Move ``version`` to ``state`` recording ``decision`` in ``field_name``; the only edit
    ever made to a version record. Decided records (retired, rejected) are never edited.
    ``provenance`` (only on proposed→active, the decision itself) adds provenance facts that
    the decision establishes, such as ``human_reviewed``.

    Raises:
        GovernanceError: the transition is not one of proposed→active/rejected, active→retired.
    """
    if (version.state, state) not in _ALLOWED:
        raise GovernanceError(f"version {version.id} is {version.state}; it cannot become {state} "
                              "(decided records are never edited).")
    update: dict[str, Any] = {"state": state, field_name: decision}
    if provenance and (version.state, state) == ("proposed", "active"):
        update["provenance"] = {**version.provenance, **provenance}
    store.table(T_VERSIONS).update(update, doc_ids=[version.doc_id])


def insert_version(store: Store, data: dict[str, Any]) -> Version:
    """Insert the version record ``data`` into the store's versions table and return it as a :class:`Version`."""
    doc_id = store.table(T_VERSIONS).insert(data)
    return Version.from_doc(_Doc(data, doc_id))


class _Doc(dict):
    def __init__(self, data: dict[str, Any], doc_id: int):
        super().__init__(data)
        self.doc_id = doc_id


def version_record(ws: Workspace, ledger: Ledger, article: str, content: str, *, author: str | None,
                    profile_version: str | None, provenance: dict[str, Any], state: str,
                    title: str | None = None, one_liner: str | None = None,
                    new_node: dict[str, Any] | None = None, intake_key: str | None = None,
                    decision: dict[str, Any] | None = None) -> dict[str, Any]:
    """The record of a new version of ``article`` (number, based-on, title and index line, provenance), not yet stored."""
    active = ledger.active(article)
    number = next_number(ledger, article)
    listed = _listed_line(ws, article)
    auto_title, auto_line = title_and_line(content, PurePosixPath(article).stem,
                                           listed[1] if listed else "")
    based_on = active.number if active else None
    prov = {"kind": "proposal", "case": None, "source_request": None, "sources": [],
            "human_reviewed": False, "untrusted": False, **provenance}
    if chain_untrusted(ledger, based_on, article) and prov.get("kind") != "baseline":
        prov["untrusted"] = True
    return {
        "id": f"{article}@{number}", "article": article, "node": node_of(article), "number": number,
        "state": state, "content": content, "sha256": atomic.sha256(content.encode("utf-8")),
        "created": now(), "author": author, "profile_version": profile_version, "provenance": prov,
        "based_on": based_on, "base_hash": active.sha256 if active else None,
        "title": title or (listed[0] if listed and not _has_meta_title(content) else auto_title),
        "one_liner": one_liner or auto_line, "new_node": new_node, "decision": decision,
        "retirement": None, "intake_key": intake_key,
    }


def _has_meta_title(content: str) -> bool:
    meta = frontmatter.split(content).meta
    return isinstance(meta, dict) and isinstance(meta.get("title"), str)


def _listed_line(ws: Workspace, article: str) -> tuple[str, str] | None:
    node = node_of(article)
    index = MemoryTree(ws).index(node)
    for e in index.entries:
        if e.path == article:
            return e.title, e.one_liner or ""
    return None


def plan_files(ws: Workspace, version: Version, content: str | None) -> list[dict[str, Any]]:
    """File writes that put ``content`` (``None``: remove) in place with its index lines."""
    files: list[dict[str, Any]] = []
    node = version.node
    article_path = mem_path(ws, version.article)
    files.append({"path": shown_path(ws, version.article), "old": sha_or_none(read_or_none(article_path)),
                  "new": content})
    if is_set_path(version.article):  # a node's eval set is listed in no index
        return files
    index_rel = f"{node}/{NODE_INDEX}" if node else NODE_INDEX
    index_path = mem_path(ws, index_rel)
    index_bytes = read_or_none(index_path)
    target = PurePosixPath(version.article).name
    if index_bytes is None:
        if content is None:
            return files
        spec = version.new_node or {}
        if not spec.get("owner"):
            raise RefusedError(f"{node or 'the root'} is not a node yet (no AGENTS.md); a new node is "
                               "created only with an owner: propose with --new-node-owner",
                               reference="seed 000 §2 rule 4")
        index_text = new_node_index(spec.get("title") or PurePosixPath(node).name, spec["owner"],
                                    spec.get("one_liner") or "")
        tree = MemoryTree(ws)
        parent = tree.parent_node(node)
        if parent is None:
            raise GovernanceError("the root node cannot be created by a proposal")
        parent_rel = f"{parent}/{NODE_INDEX}" if parent else NODE_INDEX
        parent_path = mem_path(ws, parent_rel)
        parent_bytes = read_or_none(parent_path)
        if parent_bytes is None:
            raise GovernanceError(f"the parent node {parent or 'root'} has no AGENTS.md to list the new node in")
        child_target = os.path.relpath(f"{node}/{NODE_INDEX}", parent or ".").replace(os.sep, "/")
        parent_text = index_with_line(parent_bytes.decode("utf-8"), parent, child_target,
                                      spec.get("title") or PurePosixPath(node).name,
                                      spec.get("one_liner") or "", child=True)
        files.append({"path": shown_path(ws, parent_rel), "old": sha_or_none(parent_bytes), "new": parent_text})
        old_index = None
    else:
        try:
            index_text = index_bytes.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise GovernanceError(f"{index_rel} is not UTF-8 text; fix it before publishing here") from exc
        old_index = sha_or_none(index_bytes)
    if content is None:
        new_index = index_without_line(index_text, node, target)
    else:
        new_index = index_with_line(index_text, node, target, version.title, version.one_liner)
    if old_index is None or new_index != index_text:
        files.append({"path": shown_path(ws, index_rel), "old": old_index, "new": new_index})
    return files


def decision_record(session, action: str, why: str = "") -> dict[str, Any]:  # noqa: ANN001
    """The record of a decision: the action, who took it (the session's profile), when and why."""
    return {"action": action, "by": session.profile, "at": now(), "why": why}


def apply_plan(tx, files: list[dict[str, Any]]) -> None:  # noqa: ANN001 - Tx
    """Put the file writes of :func:`plan_files` on ``tx`` (each checked against the bytes it
    was planned from)."""
    for f in files:
        tx.replace(f["path"], None if f["new"] is None else f["new"].encode("utf-8"), base=f["old"])


def activation(tx, ledger: Ledger, version: Version, why: str,  # noqa: ANN001 - Tx
               decision_action: str = "activate", extra_detail: dict[str, Any] | None = None,
               decision_extra: dict[str, Any] | None = None,
               provenance: dict[str, Any] | None = None) -> Version:
    """Publish ``version`` (already stored, proposed) within ``tx``: the article and its index
    line, the previous active version retired, ``version`` active, the audit detail.

    Raises:
        ConflictError: the article on disk differs from its active version (or is untracked).
    """
    session = tx.session
    check_disk(session, ledger, version)
    active = ledger.active(version.article)
    apply_plan(tx, plan_files(session.ws, version, version.content))
    store = tx.session.store
    tx.table(T_VERSIONS)
    if active is not None:
        transition(store, active, "retired", "retirement",
                    {**decision_record(session, "retire", f"superseded by version {version.number}"),
                     "superseded_by": version.id})
    transition(store, ledger.get(version.id), "active", "decision",
                {**decision_record(session, decision_action, why), **(decision_extra or {})}, provenance or None)
    tx.detail.update({"version": version.id, "retired": active.id if active else None, **(extra_detail or {})})
    if version.merge:
        _retire_merged(tx, ledger, version)
    return ledger.get(version.id)


def merge_target(ledger: Ledger, version: Version) -> Version:
    """The active version a merge proposal ``version`` retires (seed 000 §4 step 5).

    Raises:
        GovernanceError: that article is no longer active at the version the merge was filed
            on (it changed or was retired since: file the merge again).
    """
    spec = version.merge or {}
    article = str(spec.get("retire") or "")
    current = ledger.active(article)
    if current is None or current.id != spec.get("retire_version"):
        now_is = f"{current.id} is active now" if current else "it is not active any more"
        raise GovernanceError(f"{version.id} merges {spec.get('retire_version')} into {version.article}, but "
                              f"{now_is}: file the merge again")
    return current


def _retire_merged(tx, ledger: Ledger, version: Version) -> None:  # noqa: ANN001 - Tx
    """Within ``tx``: retire the article a merge proposal names, and put a redirect line to
    ``version``'s article in place of its index line, so old links still lead somewhere."""
    session = tx.session
    ws = session.ws
    current = merge_target(ledger, version)
    tx.replace(shown_path(ws, current.article), None, base=current.sha256)  # ConflictError on an edit
    index_rel = f"{current.node}/{NODE_INDEX}" if current.node else NODE_INDEX
    shown = shown_path(ws, index_rel)
    data = tx.read(shown)
    if data is not None:
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise GovernanceError(f"{index_rel} is not UTF-8 text; fix it before merging here") from exc
        new_target = os.path.relpath(version.article, current.node or ".").replace(os.sep, "/")
        redirected = index_with_redirect(text, current.node, PurePosixPath(current.article).name,
                                         current.title, new_target, version.title)
        tx.replace(shown, redirected.encode("utf-8"), base=atomic.sha256(data))
    transition(session.store, current, "retired", "retirement",
                {**decision_record(session, "merge", f"merged into {version.id}"), "merged_into": version.id})
    tx.detail["merged"] = current.id

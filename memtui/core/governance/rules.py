"""The rules of governed knowledge: who may activate, when a proposal is eligible, what blocks a publication (seed 000 §2 rule 7, §7.4b).
"""

from __future__ import annotations

import os
from pathlib import PurePosixPath


from memtui.core import atomic
from memtui.core.errors import ConfinementError, ConflictError
from memtui.core.findings import Finding
from memtui.core.session import T_INTENTS
from memtui.core.evalsets import has_set, set_path
from memtui.core.store import Store
from memtui.core.tree.model import MemoryTree
from memtui.core.workspace import NODE_INDEX, Workspace
from memtui.core.governance.model import Eligibility, Ledger, RefusedError, Use, Version, mem_path, read_or_none, sha_or_none, shown_path, node_of


def owner_of(ws: Workspace, node: str) -> tuple[str | None, str]:
    """The owner of ``node`` (DESIGN.md §1: front matter, ``[owners]``, else inherited)."""
    return MemoryTree(ws).owner(node)


def require_owner(session, node: str, action: str) -> str:  # noqa: ANN001 - Session
    """The acting profile, when it owns ``node``.

    Raises:
        RefusedError: no acting profile, no owner, or another owner (named in the sentence).
    """
    shown = node or "the root node"
    owner, _how = owner_of(session.ws, node)
    if not session.profile:
        raise RefusedError(f"no acting profile to {action} in {shown}: pass --as PROFILE or set "
                           "[user] profile in memtui.toml")
    if owner is None:
        raise RefusedError(f"{shown} has no owner, so nobody may {action} there; set `owner:` in its "
                           f"AGENTS.md or [owners] in memtui.toml")
    if owner != session.profile:
        raise RefusedError(f"{shown} is owned by {owner}; you act as {session.profile}")
    return owner


def _root_case(case: str, origin: str, origin_of: str | None) -> str:
    return origin_of if origin in ("mirror", "subcase", "fork") and origin_of else case


def eligibility(ledger: Ledger, version: Version) -> Eligibility:
    """Whether ``version`` may be promoted by uses (seed 000 §7.4b), and why not yet.

    A use counts when it is a ``pass``, was recorded against the version's hash, and its case
    is not the proposing case nor a mirror, subcase or fork of it; two counted uses must have
    distinct source-request ids (also distinct from the proposal's) and not be mirrors,
    subcases or forks of each other. Any ``contradiction`` blocks. A proposal filed on an older
    active version than the one active now needs review. When validation cases are assigned to
    the version (seed 000 §7.4b: "a curator/owner may assign a proposed article revision to two
    explicit read-only validation cases"), only uses by those cases count.
    """
    reasons: list[str] = []
    prov = version.provenance
    proposing = prov.get("case") or ""
    proposing_sr = prov.get("source_request") or ""
    uses = ledger.uses(version.id)
    assigned = [str(a.get("case")) for a in ledger.assignments(version.id) if a.get("case")]
    contradictions = [u for u in uses if u.verdict == "contradiction"]
    for u in contradictions:
        reasons.append(f"case {u.case} recorded a contradiction ({u.check})")
    candidates: list[Use] = []
    for u in uses:
        if u.verdict != "pass":
            continue
        if u.hash != version.sha256:
            reasons.append(f"the use by case {u.case} was recorded against another hash "
                           f"({(u.hash or '')[:12]}), not this content")
            continue
        root = _root_case(u.case, u.origin, u.origin_of)
        if u.case == proposing or root == proposing:
            how = "is the proposing case" if u.case == proposing else f"is a {u.origin} of the proposing case {proposing}"
            reasons.append(f"the use by case {u.case} does not count: it {how}")
            continue
        if proposing_sr and u.source_request == proposing_sr:
            reasons.append(f"the use by case {u.case} has the proposal's own source request {u.source_request}")
            continue
        if assigned and u.case not in assigned:
            reasons.append(f"the use by case {u.case} does not count: the validation cases assigned are "
                           f"{', '.join(assigned)}")
            continue
        candidates.append(u)
    counted: list[Use] = []
    for u in candidates:
        clash = None
        for c in counted:
            if c.source_request == u.source_request:
                clash = f"cases {c.case} and {u.case} share the source request {u.source_request}"
            elif _root_case(u.case, u.origin, u.origin_of) in (c.case, _root_case(c.case, c.origin, c.origin_of)) \
                    or _root_case(c.case, c.origin, c.origin_of) == u.case:
                clash = f"case {u.case} is a {u.origin} of case {c.case}, not an independent use"
        if clash:
            reasons.append(clash)
        elif len(counted) < 2:
            counted.append(u)
    if len(counted) < 2:
        need = 2 - len(counted)
        reasons.append(f"{need} more independent passing use{'s' if need > 1 else ''} needed "
                    f"({len(counted)} of 2)")
    active = ledger.active(version.article)
    if version.state == "proposed" and active is not None and version.based_on != active.number:
        reasons.append(f"it was filed on version {version.based_on or 'none'} but version "
                       f"{active.number} is active now: review the diff")
    by_uses = len(counted) >= 2 and not contradictions and not (
        version.state == "proposed" and active is not None and version.based_on != active.number)
    return Eligibility(by_uses, counted, [] if by_uses else reasons)


def next_number(ledger: Ledger, article: str) -> int:
    """The number the next version of ``article`` gets (1 for the first)."""
    return max((v.number for v in ledger.versions(article)), default=0) + 1


def chain_untrusted(ledger: Ledger, number: int | None, article: str) -> bool:
    """Whether version ``number`` of ``article`` derives from untrusted input (``False`` when there is none)."""
    if number is None:
        return False
    for v in ledger.versions(article):
        if v.number == number:
            return v.untrusted
    return False


def check_disk(session, ledger: Ledger, version: Version) -> None:  # noqa: ANN001 - Session
    """Refuse to publish over an unrecorded edit or an untracked file (ConflictError)."""
    active = ledger.active(version.article)
    on_disk = read_or_none(mem_path(session.ws, version.article))
    if active is not None and sha_or_none(on_disk) != active.sha256:
        raise ConflictError(
            f"{shown_path(session.ws, version.article)} differs from its active version {active.number} "
            "(an unrecorded edit); adopt it (`memtui adopt`) or revert it before publishing a new version.")
    if active is None and on_disk is not None and version.provenance.get("kind") != "external edit":
        raise ConflictError(
            f"{shown_path(session.ws, version.article)} exists but is untracked; adopt it first "
            f"(`memtui adopt {version.article}`) so its current text is kept as a version.")


def stale_base(ledger: Ledger, version: Version) -> str | None:
    """Why ``version`` (a proposal) is built on an outdated base, or ``None`` when its base is
    the version active now (seed 000 §7.4b: a change is a new version based on the active one).

    Returns a sentence such as ``"based on @1, but @2 is active now: file the change again
    on @2"``; a proposal for a new article (no base) is never stale while nothing is active.
    """
    active = ledger.active(version.article)
    if active is not None and version.based_on != active.number:
        base = f"@{version.based_on}" if version.based_on else "no version"
        return (f"based on {base}, but @{active.number} is active now: file the change again "
                f"on @{active.number}")
    if active is None and version.based_on is not None:
        return (f"based on @{version.based_on}, but that version was retired and nothing is active "
                "now: file the change again as a new article")
    return None


def untracked(ws: Workspace, store: Store, under: str | None = None) -> list[str]:
    """Articles in the tree (memory-relative) with no accepted version (active or retired),
    under ``under`` (a node folder, memory-relative); an article with only proposals counts."""
    tracked = {a for a, vs in Ledger(store).tracked().items() if any(v.state in ("active", "retired") for v in vs)}
    tree = MemoryTree(ws)
    out = []
    prefix = (under or "").strip("/")
    for node in tree.walk_nodes():
        if prefix and not (node == prefix or node.startswith(prefix + "/") or prefix.startswith(node)):
            continue
        for path in tree.article_files(node):
            if path in tracked:
                continue
            if prefix and not (path == prefix or path.startswith(prefix + "/")):
                continue
            out.append(path)
        evals = set_path(node)  # the node's eval set is governed like its articles
        if has_set(ws, node) and evals not in tracked and (not prefix or evals == prefix
                                                            or evals.startswith(prefix + "/")):
            out.append(evals)
    return out


def edited_outside(ws: Workspace, ledger: Ledger, article: str) -> bool:
    """Whether ``article``'s bytes on disk differ from its active version (an edit outside governance)."""
    active = ledger.active(article)
    if active is None:
        return False
    data = read_or_none(mem_path(ws, article))
    return data is not None and atomic.sha256(data) != active.sha256


def entry_states(ws: Workspace, node: str, store: Store | None = None) -> dict[str, tuple[str, int | None]]:
    """State and version of the articles of ``node`` for the tree view.

    Returns:
        ``{memory-relative article path: (state, active version number or None)}`` for every
        article with a record: ``active``, ``edited`` (unrecorded edit), ``retired`` or
        ``proposed`` (only proposals, nothing published yet). Articles absent from the result
        are untracked.
    """
    own = store is None
    store = store or Store.open(ws, read_only=True)
    try:
        out: dict[str, tuple[str, int | None]] = {}
        ledger = Ledger(store)
        prefix = f"{node}/" if node else ""
        for article, versions in ledger.tracked().items():
            if not article.startswith(prefix) or "/" in article[len(prefix):]:
                continue
            active = next((v for v in versions if v.state == "active"), None)
            if active is not None:
                state = "edited" if edited_outside(ws, ledger, article) else "active"
                out[article] = (state, active.number)
            elif any(v.state == "retired" for v in versions):
                out[article] = ("retired", None)
            elif any(v.state == "proposed" for v in versions):
                out[article] = ("proposed", None)
        return out
    finally:
        if own:
            store.close()


def audit_findings(ws: Workspace) -> list[Finding]:
    """``unrecorded-edit``, ``active-missing``, ``untracked`` and ``governance-pending``
    findings (contributed to :data:`memtui.core.audit.CHECKS`). Reads the store read-only.

    ``untracked`` is one info finding per node that has untracked articles (one line per
    node, not one per article), and only once the workspace is governed (the store holds a
    version): a tree that never used governance is not flagged everywhere.
    """
    return audit_findings_after(ws, {}, None)


def audit_findings_after(ws: Workspace, memo: dict, changed: list[str] | None) -> list[Finding]:
    """:func:`audit_findings` after ``changed`` paths changed: with the store unchanged, only
    the recorded articles at or below a changed path are read and hashed again, and only the
    nodes of changed articles are listed again for untracked ones (the whole tree when a
    changed path is not an article: a folder, an eval set).

    Args:
        ws: the workspace.
        memo: this check's state from the last call (``{}`` the first time): what the store
            records and each article's and node's findings.
        changed: workspace-relative paths (``/``) added, changed or removed since; ``None``,
            or a change under ``.memtui`` (the store), reads everything again.
    """
    store = Store.open(ws, read_only=True)
    try:
        if store.damaged:
            memo.clear()
            return []
        whole = changed is None or "edits" not in memo or any(
            p == ".memtui" or p.startswith(".memtui/") for p in changed)
        if whole:
            ledger = Ledger(store)
            tracked = ledger.tracked()
            active = {a: v for a, vs in tracked.items() if (v := next((x for x in vs if x.state == "active"), None))}
            accepted = {a for a, vs in tracked.items() if any(v.state in ("active", "retired") for v in vs)}
            memo.update(active=active, accepted=accepted, governed=bool(tracked),
                        pending=bool(store.table(T_INTENTS).all()))
            edits = {a: _edit_findings(ws, a, v) for a, v in active.items()}
            nodes = _untracked_by_node(ws, accepted) if tracked else {}
        else:
            active, accepted = memo["active"], memo["accepted"]
            prefix = ws.memory_rel
            inner = [p[len(prefix) + 1:] if prefix else p for p in changed or ()
                     if not prefix or p.startswith(prefix + "/")]
            edits = dict(memo["edits"])
            wanted = set(inner)
            for article, version in active.items():
                if article in wanted or any(article.startswith(p + "/") for p in inner):
                    edits[article] = _edit_findings(ws, article, version)
            nodes = memo["nodes"]
            if memo["governed"]:
                if any(not p.endswith(".md") or p.rsplit("/", 1)[-1] == NODE_INDEX or os.path.isdir(ws.memory / p)
                       for p in inner):
                    nodes = _untracked_by_node(ws, accepted)  # a node, a folder or an eval set: the whole tree
                else:
                    nodes = dict(nodes)
                    tree = MemoryTree(ws)
                    for node in {node_of(p) for p in inner}:
                        if node in nodes:
                            nodes[node] = _untracked_in(ws, tree, node, accepted)
        memo.update(edits=edits, nodes=nodes)
        findings = [f for found in edits.values() for f in found]
        for node, names in nodes.items():
            if not names:
                continue
            shown = shown_path(ws, f"{node}/{NODE_INDEX}" if node else NODE_INDEX)
            listed = ", ".join(names[:5]) + (f" and {len(names) - 5} more" if len(names) > 5 else "")
            findings.append(Finding.make(
                "untracked", shown, f"{len(names)} article{'s' if len(names) != 1 else ''} not recorded "
                f"as versions: {listed}", f"adopt them as a baseline: `memtui adopt {node}`".rstrip()))
        if memo["pending"]:
            findings.append(Finding.make("governance-pending", ".memtui/store.json",
                                         "a change was interrupted and is not complete yet",
                                         "run any memtui command that writes (the next write completes it)"))
        return findings
    finally:
        store.close()


def _edit_findings(ws: Workspace, article: str, active: Version) -> list[Finding]:
    """``active-missing`` or ``unrecorded-edit`` for one recorded article (none when its bytes
    are its active version's, or it lies behind a link leading outside)."""
    try:
        data = read_or_none(mem_path(ws, article))
    except ConfinementError:
        return []
    shown = shown_path(ws, article)
    if data is None:
        return [Finding.make(
            "active-missing", shown, f"version {active.number} is active but the file is missing",
            f"the owner puts it back (`memtui adopt --revert {article}`) or retires it "
            f"(`memtui retire {article}`)")]
    if atomic.sha256(data) != active.sha256:
        return [Finding.make(
            "unrecorded-edit", shown,
            f"differs from its active version {active.number} (edited outside governance)",
            f"the owner adopts it (`memtui adopt {article}`) or reverts it (`memtui adopt --revert {article}`)")]
    return []


def _untracked_by_node(ws: Workspace, accepted: set[str]) -> dict[str, list[str]]:
    """Every node of the walk (root first) → the names of its untracked articles and eval set
    (:func:`untracked`'s, grouped by node; empty lists kept, so a node's list can be redone)."""
    tree = MemoryTree(ws)
    return {node: _untracked_in(ws, tree, node, accepted) for node in tree.walk_nodes()}


def _untracked_in(ws: Workspace, tree: MemoryTree, node: str, accepted: set[str]) -> list[str]:
    """The names of ``node``'s articles (and eval set) with no accepted version, as
    :func:`untracked` lists them."""
    names = [PurePosixPath(path).name for path in tree.article_files(node) if path not in accepted]
    evals = set_path(node)
    if has_set(ws, node) and evals not in accepted:
        names.append(PurePosixPath(evals).name)
    return names

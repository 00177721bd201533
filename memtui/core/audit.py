"""The audit: every finding in a workspace (DESIGN.md §4 invariant 10).

:func:`run` walks the whole memory tree (each node through
:func:`memtui.core.tree.audit.audit_node`, in worker processes for large trees), reads every
node index and article once, and returns an :class:`AuditReport`. Each kind of problem is a
:class:`~memtui.core.findings.Finding` with a place and a fix; a bad file never stops the walk.

Other areas contribute their findings through :data:`CHECKS`: ``"module:function"`` names of
callables ``(workspace) -> list[Finding]`` (the skills catalogue, the graph, …), imported
when an audit runs so that ``memtui.core.audit`` stays cheap to import.

After outside changes :func:`rerun` gives the same findings, auditing again only the nodes the
changed paths can affect; the checks of :data:`AFTER` (those walking the whole tree) keep their
state in the report and look again only at the changed folders, indexes and sets.
"""

from __future__ import annotations

import os
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable

from memtui.core.errors import MemtuiError
from memtui.core.files import read_text, rel
from memtui.core.notes import glued_findings
from memtui.core.text import plural
from memtui.core.findings import Finding, Severity, sort_key
from memtui.core.procs import process_context, worker_count
from memtui.core.tree.model import MemoryTree
from memtui.core.workspace import NODE_INDEX, Workspace
from memtui.core.tree.audit import ArticleCache, check_links, check_symlink, audit_node


#: ``(done, total)`` node counts; called from the auditing thread.
Progress = Callable[[int, int], None]


#: Checks other areas contribute, as ``"module:function"`` names of ``(workspace) -> findings``.
CHECKS: tuple[str, ...] = (
    "memtui.core.skills:audit_findings",
    "memtui.core.graph.backend:workspace_findings",
    "memtui.core.governance:audit_findings",
    "memtui.core.tree.integrity:audit_findings",
    "memtui.core.scan.workspace:audit_findings",
    "memtui.core.sessions:audit_findings",
    "memtui.core.strays:audit_findings",
    "memtui.core.store:audit_findings",
    "memtui.core.governance.eval_audit:audit_findings",
    "memtui.core.auditlog:audit_findings",
    "memtui.core.governance.promotion:audit_findings",
)


#: A check's module may name the workspace-relative paths its findings depend on in
#: ``AUDIT_READS`` (files or folders): after changes to none of them its last findings stand.
#: Entries of :data:`CHECKS` that can look again at only what changed: the check's name →
#: ``"module:function"`` of ``(workspace, memo, changed, ...) -> findings``, where ``memo`` is the
#: check's own state kept in the report between audits (``{}`` the first time) and ``changed``
#: the workspace-relative paths changed since (``None``: look at everything). The others are
#: cheap and run whole every time.
AFTER: dict[str, str] = {
    "memtui.core.tree.integrity:audit_findings": "memtui.core.tree.integrity:audit_findings_after",
    "memtui.core.strays:audit_findings": "memtui.core.strays:audit_findings_after",
    "memtui.core.governance.eval_audit:audit_findings": "memtui.core.governance.eval_audit:audit_findings_after",
    "memtui.core.governance.promotion:audit_findings": "memtui.core.governance.promotion:audit_findings_after",
    "memtui.core.governance:audit_findings": "memtui.core.governance.rules:audit_findings_after",
}


def _function(name: str) -> Callable[..., list[Finding]]:
    import importlib

    module, _, function = name.partition(":")
    return getattr(importlib.import_module(module), function)


def _contributed(ws: Workspace, offline: bool = False, tree: MemoryTree | None = None,
                 memos: dict[str, dict] | None = None, changed: list[str] | None = None,
                 nodes: list[str] | None = None) -> list[Finding]:
    """The findings of every entry of :data:`CHECKS`; a check whose function takes an
    ``offline`` keyword gets the audit's (the remote graph's check: read nothing over the network),
    one that takes ``tree`` gets the audit's :class:`MemoryTree` (its walk of the nodes is reused),
    one that takes ``nodes`` the audit's list of them.

    With ``memos`` (each check's state, filled here; the previous audit's given), the checks of
    :data:`AFTER` look again only at ``changed`` (workspace-relative paths; ``None``: at
    everything)."""
    import inspect

    findings: list[Finding] = []
    for name in CHECKS:
        after = AFTER.get(name) if memos is not None else None
        check = _function(after or name)
        parameters = inspect.signature(check).parameters
        extra: dict[str, Any] = {}
        if "offline" in parameters:
            extra["offline"] = offline
        if "tree" in parameters and tree is not None:
            extra["tree"] = tree
        if "nodes" in parameters and nodes is not None:
            extra["nodes"] = nodes
        if after is not None and memos is not None:
            memo = dict(memos.get(name, {}))  # a copy: the previous report keeps its own
            findings.extend(check(ws, memo, changed if memos.get(name) else None, **extra))
            memos[name] = memo
            continue
        reads = _reads(name)
        kept = memos.get(name) if memos is not None and changed is not None and reads else None
        if kept is not None and not any(p == r or p.startswith(r + "/") for p in changed or () for r in reads):
            findings.extend(kept["findings"])  # nothing it reads changed
            continue
        found = check(ws, **extra)
        if memos is not None and reads:
            memos[name] = {"findings": list(found)}
        findings.extend(found)
    return findings


def _reads(name: str) -> tuple[str, ...]:
    """The workspace-relative paths (files or folders) the check ``name`` reads, when its module
    says so in ``AUDIT_READS``: after changes elsewhere its last findings stand."""
    import importlib

    return tuple(getattr(importlib.import_module(name.partition(":")[0]), "AUDIT_READS", ()))


@dataclass(slots=True)
class NodeAudit:
    """One node's part of an audit (:func:`memtui.core.tree.audit.audit_node`).

    Attributes:
        findings: the node's findings, unsorted.
        articles: the articles it read.
        indexed: whether the node has its ``AGENTS.md`` (the report counts those nodes).
        deps: absolute paths outside the node's folder whose change can change its findings.
    """

    findings: list[Finding]
    articles: int
    indexed: bool
    deps: frozenset[str]


@dataclass(slots=True)
class AuditReport:
    """What :func:`run` found.

    Attributes:
        findings: sorted by severity, path, line.
        nodes: number of nodes (folders with ``AGENTS.md``).
        articles: number of article files read.
        seconds: wall time of the audit.
        allowed: findings left out because the operator allowed them (``memtui audit allow``).
    """

    findings: list[Finding] = field(default_factory=list)
    nodes: int = 0
    articles: int = 0
    seconds: float = 0.0
    allowed: list[Finding] = field(default_factory=list)
    #: each node's own part of the audit in the walk's order, kept so :func:`rerun` can audit
    #: only what changed
    by_node: dict[str, "NodeAudit"] = field(default_factory=dict, repr=False, compare=False)
    #: the state the checks of :data:`AFTER` keep between audits, by check
    memos: dict[str, dict] = field(default_factory=dict, repr=False, compare=False)

    @property
    def counts(self) -> dict[str, int]:
        """``{"error": n, "warning": n, "info": n}``."""
        counter = Counter(f.severity.value for f in self.findings)
        return {s.value: counter.get(s.value, 0) for s in Severity}

    @property
    def has_errors(self) -> bool:
        """True when any finding is an error (``memtui audit`` then exits 1)."""
        return any(f.severity is Severity.ERROR for f in self.findings)

    def summary(self) -> str:
        """``"41 nodes, 92 articles: 0 errors, 1 warning, 2 notes"``."""
        c = self.counts
        allowed = f", {len(self.allowed)} allowed" if self.allowed else ""
        return (f"{plural(self.nodes, 'node')}, {plural(self.articles, 'article')}: "
                f"{plural(c['error'], 'error')}, {plural(c['warning'], 'warning')}, {plural(c['info'], 'note')}"
                f"{allowed}")

    def by_path(self) -> dict[str, list[Finding]]:
        """Findings grouped by workspace-relative path."""
        out: dict[str, list[Finding]] = {}
        for finding in self.findings:
            out.setdefault(finding.path, []).append(finding)
        return out


def _allowances(ws: Workspace, findings: list[Finding]) -> tuple[list[Finding], list[Finding]]:
    """Leave out the findings the operator allowed (:mod:`memtui.core.scan.allow`)."""
    if not any(f.fingerprint for f in findings):
        return findings, []
    from memtui.core.scan import allow
    from memtui.core.store import Store

    store = Store.open(ws, read_only=True)
    return allow.split(findings, allow.keys(None if store.damaged else store))


def _audit_workspace_files(ws: Workspace) -> list[Finding]:
    findings: list[Finding] = []
    for path in [ws.member_notes, ws.notebook, *ws.operator_files]:
        if os.path.islink(path):
            problem = check_symlink(ws, path, rel(ws.root, path))
            if problem:
                findings.append(problem)
                continue
        if path.is_file():
            read = read_text(path, rel(ws.root, path), ws.config.max_file_bytes)
            findings.extend(read.findings)
            if read.ok:
                findings.extend(check_links(ws, read.text, path, rel(ws.root, path), 1))
                if path in (ws.member_notes, ws.notebook):  # the files agents append to
                    findings.extend(glued_findings(rel(ws.root, path), read.text))
    return findings


#: Above this many nodes the audit spreads the nodes over worker processes (one per core).
PARALLEL_NODES = 150


_CHUNK = 40


def _audit_one(ws: Workspace, tree: MemoryTree, node: str, cache: "ArticleCache | None") -> NodeAudit:
    deps: set[str] = set()
    found, count = audit_node(ws, tree, node, cache, deps)
    return NodeAudit(found, count, tree.index(node).exists, frozenset(deps))


def _audit_chunk(root: str, nodes: list[str], cache: "ArticleCache | None" = None
                 ) -> tuple[dict[str, NodeAudit], tuple[list[str], dict[str, list]]]:
    """Worker-process entry: audit ``nodes`` of the workspace at ``root``; also returns the
    cache entries it reused or made."""
    ws = Workspace.open(root)
    tree = MemoryTree(ws)
    done = {node: _audit_one(ws, tree, node, cache) for node in nodes}
    return done, ((cache.hits, cache.new) if cache is not None else ([], {}))


def run(ws: Workspace, progress: Progress | None = None, tree: MemoryTree | None = None,
        parallel: bool | None = None, use_cache: bool = True, offline: bool = False) -> AuditReport:
    """Audit the whole workspace.

    Args:
        ws: the opened workspace.
        progress: called with ``(done, total)`` node counts as the walk advances.
        tree: a tree to reuse (its caches), else a new one.
        parallel: spread nodes over worker processes; default: when there are more than
            :data:`PARALLEL_NODES` nodes and more than one core. Findings are the same either way.
        use_cache: reuse the results of unchanged articles from the last audit of this
            workspace (:class:`ArticleCache`, in the user cache folder); findings are the same.
        offline: read nothing over the network: a remote graph's findings come from its last
            read kept (:mod:`memtui.core.graph.snapshot`), said so by a ``graph-remote-cached``
            note. Online (the default) the remote graph is read within ``[graph] timeout``, and
            a read that fails falls back to that last read the same way
            (:func:`memtui.core.graph.backend.remote_findings`).

    Returns:
        An :class:`AuditReport` with findings sorted by :func:`~memtui.core.findings.sort_key`.
    """
    started = time.perf_counter()
    tree = tree or MemoryTree(ws)
    report = AuditReport()
    report.findings.extend(ws.findings)
    nodes = list(tree.walk_nodes())
    total = len(nodes)
    cache = ArticleCache.load(ws) if use_cache else None
    workers = worker_count()
    if parallel is None:
        parallel = total > PARALLEL_NODES and workers > 1
    if parallel:
        from concurrent.futures import ProcessPoolExecutor, as_completed

        chunks = [nodes[i:i + _CHUNK] for i in range(0, total, _CHUNK)]
        context = process_context()
        if (cache is None or not cache.entries) and context.get_start_method() == "fork":
            from memtui.core import scan

            # a cold audit: every worker will scan. Before a fork the workers inherit the
            # configured detectors; spawned workers (the TUI's: it runs threads) load their
            # own, so the TUI process does not hold detectors it never uses (RSS)
            scan.prepare()
        done = 0
        with ProcessPoolExecutor(max_workers=workers, mp_context=context) as pool:
            futures = {pool.submit(_audit_chunk, os.fspath(ws.root), chunk,
                                   cache.subset(chunk) if cache is not None else None): len(chunk)
                       for chunk in chunks}
            for future in as_completed(futures):
                audited, made = future.result()
                report.by_node.update(audited)
                if cache is not None:
                    cache.hits.extend(made[0])  # entries that worker reused
                    cache.new.update(made[1])  # and the ones it made
                done += futures[future]
                if progress:
                    progress(done, total)
    else:
        for done, node in enumerate(nodes, 1):
            report.by_node[node] = _audit_one(ws, tree, node, cache)
            if progress and (done % 25 == 0 or done == total):
                progress(done, total)
    if cache is not None and (cache.new or len(cache.hits) != len(cache.entries)):
        cache.save(ws)
    return _finish(ws, report, nodes, offline, started, tree)


def _finish(ws: Workspace, report: AuditReport, nodes: list[str], offline: bool, started: float,
            tree: MemoryTree | None = None, previous: AuditReport | None = None,
            changed: list[str] | None = None) -> AuditReport:
    """The report from its nodes' parts (``report.by_node``, put in the order of ``nodes``) and
    the workspace-wide checks: after ``changed`` paths (given the ``previous`` report) the
    checks of :data:`AFTER` look again only at what changed, the others run whole (they are cheap)."""
    report.by_node = {node: report.by_node[node] for node in nodes}
    report.memos = dict(previous.memos) if previous is not None else {}
    for node in nodes:
        part = report.by_node[node]
        report.findings.extend(part.findings)
        report.articles += part.articles
    report.nodes = sum(1 for n in nodes if report.by_node[n].indexed)
    report.findings.extend(_audit_workspace_files(ws))
    report.findings.extend(_contributed(ws, offline, tree, report.memos, changed, nodes))
    # one finding once: a link met by two checks (the root node's folder and the member notes
    # beside it) was reported twice
    report.findings, report.allowed = _allowances(ws, list(dict.fromkeys(report.findings)))
    report.findings.sort(key=sort_key)
    report.seconds = time.perf_counter() - started
    return report


#: Changed paths after which only a whole audit will do: the settings (owners, limits) shape
#: every node's findings.
_WHOLE_AGAIN = ("memtui.toml",)


def rerun(ws: Workspace, previous: AuditReport, changed: "Iterable[str]", tree: MemoryTree | None = None,
          offline: bool = True, cache: "ArticleCache | None" = None) -> AuditReport:
    """The audit after ``changed`` paths changed, given the ``previous`` report: the same
    findings as :func:`run` would give now, auditing again only the nodes those paths can
    affect, and letting the workspace-wide checks of :data:`AFTER` look again only at what the
    paths touched (the other workspace-wide checks run whole; they are cheap).

    A node is audited again when a changed path is in its folder, is its folder or a folder
    above it, is an ``AGENTS.md`` above it (owners, the parent's list), or is (or holds) one of
    the paths its findings read elsewhere (:attr:`NodeAudit.deps`); new nodes are audited, gone
    ones dropped. The tree is walked for its nodes only when an ``AGENTS.md`` came or went or
    a folder changed; else the nodes are the previous report's. A change to the settings, or a
    ``previous`` without its nodes' parts, runs the whole audit.

    Args:
        ws: the workspace ``previous`` was made of.
        previous: the last report (:func:`run` or :func:`rerun`).
        changed: workspace-relative paths (``/``) added, changed or removed since.
        tree: a tree read after the changes, else a new one.
        offline: as for :func:`run` (the app's audits after changes read nothing remote).
        cache: the article cache to use and fill in memory (kept between reruns by the caller),
            else the saved one is loaded; a rerun never writes it (it met only some files).
    """
    paths = sorted(set(changed))
    if not previous.by_node or any(p in _WHOLE_AGAIN for p in paths):
        return run(ws, tree=tree, offline=offline)
    started = time.perf_counter()
    tree = tree or MemoryTree(ws)
    root = os.fspath(ws.root)
    memory = os.fspath(ws.memory)
    gone = [os.path.normpath(os.path.join(root, p)) for p in paths]
    indexes_changed = [os.path.dirname(g) for g in gone if os.path.basename(g) == NODE_INDEX]
    folders = {node: os.path.join(memory, node) if node else memory for node in previous.by_node}
    if _reshaped(gone, folders.values()):
        nodes = list(tree.walk_nodes())
    else:  # no node came or went: the nodes are those of the previous audit
        nodes = list(previous.by_node)
    parents = {os.path.dirname(g) for g in gone}
    gone_set = set(gone)
    below = [g + os.sep for g in gone]
    # paths that may have held others (a folder, or gone): a dependency below them counts too
    holders = ["\n" + g + os.sep for g in gone if os.path.isdir(g) or not os.path.isfile(g)]

    def affected(node: str, part: NodeAudit | None) -> bool:
        if part is None:
            return True
        folder = folders.get(node) or os.fspath(tree.abs(node))
        if folder in parents or folder in gone_set or any(folder.startswith(b) for b in below):
            return True
        for above in indexes_changed:
            if folder == above or folder.startswith(above + os.sep):
                return True
        if part.deps:
            if not gone_set.isdisjoint(part.deps):
                return True
            if holders:
                text = "\n" + "\n".join(part.deps)
                if any(h in text for h in holders):
                    return True
        return False

    report = AuditReport()
    report.findings.extend(ws.findings)
    todo = {n for n in nodes if affected(n, previous.by_node.get(n))}
    if todo and cache is None:
        cache = ArticleCache.load(ws)
    for node in nodes:
        report.by_node[node] = _audit_one(ws, tree, node, cache) if node in todo else previous.by_node[node]
    if cache is not None:  # kept in memory for the next rerun; the next whole audit saves it
        cache.entries.update(cache.new)
        cache.new = {}
        cache.hits = []
    return _finish(ws, report, nodes, offline, started, tree, previous, paths)


def _reshaped(changed: list[str], folders: "Iterable[str]") -> bool:
    """True when one of the ``changed`` absolute paths can add or remove a node: an
    ``AGENTS.md`` that came or went, a path that is a folder now, or one that is gone and was a
    node's folder or a folder above one. ``folders``: the absolute folders of the nodes before."""
    known = set(folders)
    for path in changed:
        if os.path.basename(path) == NODE_INDEX:
            if os.path.isfile(path) != (os.path.dirname(path) in known):
                return True
            continue
        if os.path.isdir(path):
            return True
        if not os.path.lexists(path):
            prefix = path + os.sep
            if path in known or any(folder.startswith(prefix) for folder in known):
                return True
    return False


def allow(session: Any, code: str, place: str, reason: str, *, client_id: str | None = None) -> Any:
    """Allow the ``code`` findings at ``place`` as false positives (``memtui audit allow``), with
    :mod:`memtui.core.scan.allow`'s records: the allowance needs the findings this audit shows.

    One :meth:`~memtui.core.session.Session.write` (action ``audit.allow``, target the path):
    the allowances land in the store with the audit entry; the next audit and backup leave
    those values out.

    Args:
        session: a writable session.
        code: a code of :data:`memtui.core.scan.ALLOWABLE` (``secret``, ``pii-email``, …).
        place: ``PATH:LINE`` or ``PATH`` as the audit shows it (every such finding of the file).
        reason: why it is no secret or no one's data (kept in the record and the audit entry).

    Returns:
        The :class:`~memtui.core.session.Written`; ``result`` lists the records inserted.

    Raises:
        MemtuiError: an unknown code, no reason, or no such open finding at ``place``.
    """
    from memtui.core import scan
    from memtui.core.scan.allow import parse_place, record

    if code not in scan.ALLOWABLE:
        raise MemtuiError(f"{code!r} cannot be allowed; only findings of a value can: "
                          f"{', '.join(sorted(scan.ALLOWABLE))}")
    if not reason or not reason.strip():
        raise MemtuiError("say why with --reason: the reason is kept with the allowance and in the audit log")
    path, line = parse_place(place)
    report = run(session.ws, offline=True)  # the findings shown; a remote graph's from its last read
    found = [f for f in report.findings if f.code == code and f.path == path and (line is None or f.line == line)]
    if not found:
        already = [f for f in report.allowed if f.code == code and f.path == path and (line is None or f.line == line)]
        if already:
            raise MemtuiError(f"the {code} finding at {place} is already allowed")
        raise MemtuiError(f"there is no open {code} finding at {place}; `memtui audit` shows the places")

    def change(tx: Any) -> list[dict[str, Any]]:
        made = record(tx, found, reason.strip(), session.profile)
        tx.detail.update({"code": code, "place": place, "reason": reason.strip(),
                          "fingerprints": [d["fingerprint"] for d in made]})
        return made

    return session.write("audit.allow", path, change, client_id=client_id,
                         request={"code": code, "place": place, "reason": reason.strip()})

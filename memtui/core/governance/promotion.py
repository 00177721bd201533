"""The promotion rules measured: what became of versions promoted by two uses and by review.

seed 000 §7.4b: "The two-independent-uses promotion rule is the initial rule … it might
promote a wrong article that happened not to be contradicted twice. Measure it … before relying
on it — the same held-out set as § 7.2 — and the rule is revised from that measurement."

:func:`history` reads the ledger: every version activated by an approval, with the rule that
promoted it (``uses``: eligible by two independent uses, no human review; ``review``: a human
reviewed it), and what happened to it afterwards — contested, contradicted (a use with verdict
``contradiction``), rolled back (a rollback replaced it), retired (by its owner, or by a merge) —
with the days from its activation to each. Versions that entered otherwise (adopted baselines,
rollbacks, external edits) are not promoted by either rule and are left out.

:func:`held_out` runs held-out triage cases (the format of :mod:`memtui.core.search.triage`,
seed 000 §7.2) through memtui's search and says, for each promoted version still active, whether
it surfaced as a right precedent (among the answer for a case it is relevant to), a false one
(the first answer of a case it is not relevant to), only as another answer, or never.

:func:`summarise` groups both per node and per rule: the evidence an owner needs to keep or
revise the rule for a domain (the per-node setting ``promotion: review``,
:func:`required_rule`).
"""

from __future__ import annotations

import os

import datetime as _dt
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from memtui.core.governance.model import Ledger, Version
from memtui.core.store import Store
from memtui.core.workspace import Workspace

#: The promotion rules (seed 000 §7.4b): two independent uses, or human review.
RULES = ("uses", "review")
#: What can happen to a promoted version afterwards, in the order they are shown.
EVENTS = ("contested", "contradicted", "rolled back", "retired")
#: Outcomes on held-out cases.
OUTCOMES = ("right precedent", "false precedent", "other answer", "never surfaced", "not in the memory")
#: The per-node setting that requires review instead of two uses (front matter of the node's
#: AGENTS.md, or ``[promotion]`` in memtui.toml, inherited like an owner).
SETTING = "promotion"


def _time(value: Any) -> _dt.datetime | None:
    try:
        t = _dt.datetime.fromisoformat(str(value))
    except (TypeError, ValueError):
        return None
    return t if t.tzinfo else t.replace(tzinfo=_dt.timezone.utc)


def _days(start: _dt.datetime | None, end: _dt.datetime | None) -> float | None:
    if start is None or end is None:
        return None
    return round(max(0.0, (end - start).total_seconds()) / 86400, 2)


def rule_of(version: Version) -> str | None:
    """``uses`` or ``review`` for a version activated by an approval, else ``None``."""
    d = version.decision or {}
    if d.get("action") != "activate" or version.state not in ("active", "retired"):
        return None
    return "review" if d.get("human_reviewed") or version.provenance.get("human_reviewed") else "uses"


@dataclass(slots=True)
class Promoted:
    """One promoted version and what became of it.

    Attributes:
        version: its id; article, node: where it lives; rule: ``uses`` or ``review``.
        activated: when it was activated (ISO 8601).
        events: ``{event: days after activation}`` for each of :data:`EVENTS` that happened
            (the first time).
        state: its state now.
        held_out: its outcome on held-out cases (one of :data:`OUTCOMES`), ``None`` when no
            cases were given; cases: the case ids behind that outcome.
    """

    version: str
    article: str
    node: str
    rule: str
    activated: str
    state: str
    events: dict[str, float | None] = field(default_factory=dict)
    held_out: str | None = None
    cases: list[str] = field(default_factory=list)

    @property
    def troubled(self) -> bool:
        """True when it was later contested, contradicted, rolled back or retired by its owner."""
        return bool(self.events)

    def to_json(self) -> dict[str, Any]:
        return {"version": self.version, "article": self.article, "node": self.node, "rule": self.rule,
                "activated": self.activated, "state": self.state, "events": dict(self.events),
                "held_out": self.held_out, "cases": list(self.cases)}


def history(store: Store, domain: str | None = None) -> list[Promoted]:
    """Every version promoted by uses or by review (under ``domain``, a node, when given), with
    the events that followed its activation."""
    ledger = Ledger(store)
    prefix = (domain or "").strip("/")
    contests_by_version: dict[str, list[Any]] = {}
    for c in ledger.contests():
        contests_by_version.setdefault(c.version, []).append(c)
    out: list[Promoted] = []
    for article, versions in sorted(ledger.tracked().items()):
        for v in versions:
            rule = rule_of(v)
            if rule is None or (prefix and not (v.node == prefix or v.node.startswith(prefix + "/"))):
                continue
            start = _time((v.decision or {}).get("at"))
            events: dict[str, float | None] = {}
            contests = sorted(contests_by_version.get(v.id, []), key=lambda c: str(getattr(c, "time", "")))
            if contests:
                events["contested"] = _days(start, _time(getattr(contests[0], "time", None)))
            against = [u for u in ledger.uses(v.id) if u.verdict == "contradiction"
                       and (start is None or (_time(u.time) or start) >= start)]
            seen = [t for t in (_time(u.time) for u in against) if t is not None]
            if against:
                events["contradicted"] = _days(start, min(seen)) if seen else None
            if v.state == "retired":
                r = v.retirement or {}
                when = _days(start, _time(r.get("at")))
                successor = next((w for w in versions if w.id == r.get("superseded_by")), None)
                if successor is not None and successor.provenance.get("kind") == "rollback":
                    events["rolled back"] = when
                elif r.get("action") == "retire" and not r.get("superseded_by"):
                    events["retired"] = when
            out.append(Promoted(v.id, article, v.node, rule, str((v.decision or {}).get("at") or ""),
                                v.state, events))
    return out


def held_out(ws: Workspace, promoted: list[Promoted], cases_files: list[Path], k: int = 5,
             progress: Callable[[int, int], None] | None = None) -> dict[str, Any]:
    """Run held-out cases through memtui's search and set each promoted version's outcome.

    Args:
        ws: the workspace (its search index is updated first, as ``eval triage`` does).
        promoted: from :func:`history`; their ``held_out`` and ``cases`` are set.
        cases_files: triage cases files (JSON lines: id, ticket, relevant, near_miss, …).
        k: how many of a case's answers count as surfaced.

    Returns:
        ``{"cases": n, "k": k}``.

    Raises:
        memtui.core.search.triage.CasesError: a cases file cannot be used.
    """
    from memtui.core.search import confidence, triage
    from memtui.core.search.index import SearchIndex

    cases = triage.load_cases(*cases_files)
    index = SearchIndex(ws)
    index.update(progress=progress)
    ids = triage.entry_ids(ws)
    answers = {c.id: c.assess(confidence.DEFAULT, confidence.LIKELY).ranked[:k]
               for c in triage.candidates(index, cases, ids)}
    for p in promoted:
        shown = ws.shown(ws.memory / p.article)
        eid = ids.get(shown)
        if p.state != "active" or eid is None:
            p.held_out, p.cases = "not in the memory", []
            continue
        right = [c.id for c in cases if eid in answers.get(c.id, []) and eid in c.relevant]
        false = [c.id for c in cases if answers.get(c.id, [])[:1] == [eid] and eid not in c.relevant]
        other = [c.id for c in cases if eid in answers.get(c.id, []) and c.id not in right and c.id not in false]
        if false:
            p.held_out, p.cases = "false precedent", false
        elif right:
            p.held_out, p.cases = "right precedent", right
        elif other:
            p.held_out, p.cases = "other answer", other
        else:
            p.held_out, p.cases = "never surfaced", []
    return {"cases": len(cases), "k": k}


def summarise(promoted: list[Promoted]) -> list[dict[str, Any]]:
    """Per node and rule (both rules for every node with a promoted version): how many versions, how many later troubled (each event), the median
    days to the first trouble, and the held-out outcomes (when measured)."""
    groups: dict[tuple[str, str], list[Promoted]] = {}
    for node in {p.node for p in promoted}:  # both rules for every node, side by side
        for rule in RULES:
            groups[(node, rule)] = []
    for p in promoted:
        groups[(p.node, p.rule)].append(p)
    rows = []
    for (node, rule), items in sorted(groups.items()):
        firsts = sorted(min(d for d in p.events.values() if d is not None)
                        for p in items if any(d is not None for d in p.events.values()))
        median = firsts[len(firsts) // 2] if firsts else None
        rows.append({
            "node": node, "rule": rule, "promoted": len(items),
            "troubled": sum(1 for p in items if p.troubled),
            "events": {e: sum(1 for p in items if e in p.events) for e in EVENTS},
            "median_days_to_trouble": median,
            "held_out": ({o: sum(1 for p in items if p.held_out == o) for o in OUTCOMES}
                         if any(p.held_out is not None for p in items) else None),
        })
    return rows


def required_rule(ws: Workspace, node: str, tree: Any = None) -> tuple[str, str]:
    """The promotion rule ``node`` requires (seed 000 §7.4b: revised per domain from its
    measurement): ``("review", where)`` when the nearest setting up the chain — the node's
    AGENTS.md front matter ``promotion:``, then ``[promotion]`` in memtui.toml, then its parent,
    as for owners — says ``review``; else ``("uses", where or "")``. ``tree``: a
    :class:`~memtui.core.tree.model.MemoryTree` of ``ws`` to reuse (one is read otherwise)."""
    from memtui.core.tree.model import MemoryTree

    tree = tree or MemoryTree(ws)
    current: str | None = node
    while current is not None:
        value = tree.index(current).meta.get(SETTING)
        how = "front matter"
        if not (isinstance(value, str) and value.strip()):
            value, how = ws.config.promotion.get(current), "memtui.toml"
        if isinstance(value, str) and value.strip().lower() in RULES:
            return value.strip().lower(), f"{current or 'root'} ({how})"
        current = tree.parent_node(current)
    return "uses", ""


def _own_rule(ws: Workspace, node: str, tree: Any) -> tuple[str, str]:
    """The rule ``node`` sets itself, as :func:`required_rule` would return it from ``node``'s own
    step (``("", "")`` when the node sets none: its rule comes from above). The node's
    ``AGENTS.md`` is parsed only when its bytes name the setting (an audit after each outside
    change reads every node's rule: parsing every index made it a whole pass over the tree)."""
    value: Any = None
    file = os.path.join(os.fspath(tree.abs(node)), "AGENTS.md")
    try:
        with open(file, "rb", opener=_no_follow) as handle:
            named = SETTING.encode() in handle.read()
    except OSError:  # a link (read through the tree, which confines it), or none
        named = os.path.islink(file)
    if named:
        value = tree.index(node).meta.get(SETTING)
    how = "front matter"
    if not (isinstance(value, str) and value.strip()):
        value, how = ws.config.promotion.get(node), "memtui.toml"
    if isinstance(value, str) and value.strip().lower() in RULES:
        return value.strip().lower(), f"{node or 'root'} ({how})"
    return "", ""


def _no_follow(path: str, flags: int) -> int:
    return os.open(path, flags | getattr(os, "O_NOFOLLOW", 0))


def _days_text(d: float | None) -> str:
    return "?" if d is None else f"{d:g} d"


def _row_sentence(r: dict[str, Any]) -> str:
    """One node and rule as a sentence (for narrow screens)."""
    events = ", ".join(f"{name} {n}" for name, n in r["events"].items() if n)
    text = f"{r['node'] or '(root)'} · by {r['rule']}: {r['promoted']} promoted, {r['troubled']} later troubled"
    if events:
        text += f" ({events}; median {_days_text(r['median_days_to_trouble'])} to the first)"
    if r["held_out"] is not None:
        text += "; held-out: " + ", ".join(f"{name} {n}" for name, n in r["held_out"].items() if n)
    return text


def report_lines(promoted: list[Promoted], rows: list[dict[str, Any]], required: dict[str, tuple[str, str]],
                 measured: dict[str, Any] | None, compact: bool = False) -> list[str]:
    """The measurement as lines for people (``eval promotion`` and the Proposals area): a
    heading, the table per node and rule (``compact``: one sentence each, for a narrow
    screen), one line per version, the rule each node requires."""
    by_rule = {r: sum(1 for p in promoted if p.rule == r) for r in RULES}
    held = (f"; held-out: {measured['cases']} cases, an answer's first {measured['k']}" if measured
            else "; no held-out cases given")
    out = [f"promotion rules measured: {len(promoted)} promoted versions ({by_rule['uses']} by two uses, "
           f"{by_rule['review']} by review){held}"]
    if compact:
        out += [_row_sentence(r) for r in rows]
        rows = []
    head = (f"{'node':<28}{'rule':<8}{'promoted':>9}{'troubled':>9}{'contested':>10}{'contra.':>8}"
            f"{'rollbk':>7}{'retired':>8}{'median':>8}")
    if measured:
        head += f"{'right':>6}{'false':>6}{'other':>6}{'never':>6}{'gone':>5}"
    if rows:
        out.append(head)
    for r in rows:
        e = r["events"]
        node = r["node"] or "(root)"
        node = node if len(node) <= 27 else "…" + node[-26:]
        line = (f"{node:<28}{r['rule']:<8}{r['promoted']:>9}{r['troubled']:>9}"
                f"{e['contested']:>10}{e['contradicted']:>8}{e['rolled back']:>7}{e['retired']:>8}"
                f"{_days_text(r['median_days_to_trouble']) if r['troubled'] else '—':>8}")
        if measured and r["held_out"] is not None:
            h = r["held_out"]
            line += (f"{h['right precedent']:>6}{h['false precedent']:>6}{h['other answer']:>6}"
                     f"{h['never surfaced']:>6}{h['not in the memory']:>5}")
        out.append(line)
    for p in promoted:
        events = ", ".join(f"{name} after {_days_text(d)}" for name, d in p.events.items()) or "no trouble since"
        cases = f" ({', '.join(p.cases[:5])}{' …' if len(p.cases) > 5 else ''})" if p.cases else ""
        held_out = f"; held-out: {p.held_out}{cases}" if p.held_out else ""
        out.append(f"  {p.version}  by {p.rule}  {p.state}: {events}{held_out}")
    for n, (rule, where) in required.items():
        says = "human review" if rule == "review" else "two independent uses or review"
        out.append(f"{n or '(root)'} promotes by {says}" + (f" (set in {where})" if where else " (the initial rule)"))
    return out


def audit_findings(ws: Workspace, tree: Any = None) -> list[Any]:
    """``promotion-review-required``: one note per node that sets its own promotion rule to
    review (contributed to :data:`memtui.core.audit.CHECKS`), so the audit shows where two
    independent uses no longer promote. Never raises for a bad tree (a node that cannot be
    read has its own findings). ``tree``: the audit's
    :class:`~memtui.core.tree.model.MemoryTree` of ``ws`` (its walk is reused), else one is read."""
    return audit_findings_after(ws, {}, None, tree)


def audit_findings_after(ws: Workspace, memo: dict, changed: list[str] | None, tree: Any = None,
                         nodes: list[str] | None = None) -> list[Any]:
    """:func:`audit_findings` after ``changed`` paths changed: each node's own rule is read again
    only when its ``AGENTS.md`` changed or the node is new (a rule is set in the node's own
    index or in ``memtui.toml``, whose change audits everything).

    Args:
        ws: the workspace.
        memo: this check's state from the last call (``{}`` the first time): each node's rule.
        changed: workspace-relative paths (``/``) added, changed or removed since; ``None``
            reads every node's rule.
        tree: the audit's tree, else one is read.
        nodes: the nodes in the walk's order (:meth:`MemoryTree.walk_nodes`), when known.
    """
    from memtui.core.findings import Finding
    from memtui.core.tree.model import MemoryTree

    tree = tree or MemoryTree(ws)
    known: dict[str, tuple[str, str]] = {} if changed is None else memo.get("rules", {})
    again: set[str] = set()  # nodes whose index changed
    moved: list[str] = []  # changed paths that may be folders: the nodes at or below them read again
    for path in changed or ():
        node, article = tree.place(path)
        if node is None:
            continue
        if path.rsplit("/", 1)[-1] == "AGENTS.md":
            again.add(node)
        elif article is None:
            moved.append(node)

    def read_again(node: str) -> bool:
        return node not in known or node in again or any(
            node == m or not m or node.startswith(m + "/") for m in moved)

    rules: dict[str, tuple[str, str]] = {}
    out = []
    for node in (tree.walk_nodes() if nodes is None else nodes):
        rule, where = _own_rule(ws, node, tree) if read_again(node) else known[node]
        rules[node] = (rule, where)
        if rule == "review":
            index = f"{node}/AGENTS.md" if node else "AGENTS.md"
            place = ws.shown(ws.memory / index) if "front matter" in where else "memtui.toml"
            out.append(Finding.make(
                "promotion-review-required", place,
                f"{node or 'the root node'} and the nodes below it promote only by human review (set in {where})",
                "measure the rule with `memtui eval promotion --domain NODE --cases FILE` before changing it"))
    memo["rules"] = rules
    return out

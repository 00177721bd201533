"""The distinct counters of an entry (seed 000 §5): occurrences, verified reuses, clean executions.

seed 000 §5: "Occurrence, verified reuse and clean platform execution are distinct counters.
Proposed SQL and owner reports can teach a mechanism but do not count as an executed platform
write. […] mirrors, forks and subcases retain their shared origin."

- an **occurrence** is a case that met the entry's symptom (``occurrences`` records, written by
  :func:`occurred`);
- a **verified reuse** is a use with a verdict (``uses`` records, :func:`~memtui.core.governance.actions.use`);
- a **clean execution** is a use whose case executed a platform write following the entry
  (``execution: "executed"``) with a passing verdict. A use that only proposed SQL or an owner
  report (``execution: "proposed"``) is a reuse, never an execution.

Each counter gives the records and the distinct **origins**: a mirror, fork or subcase counts
as the case it derives from, so one origin is counted once.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from memtui.core.governance.model import (
    GovernanceError, Ledger, ORIGINS, shown_path, normalise_article, now)
from memtui.core.store import Store

#: Occurrences: a case met the symptom of an entry.
T_OCCURRENCES = "occurrences"
#: What a use did with the platform: nothing recorded, only proposed (SQL, an owner report), or
#: executed a write.
EXECUTIONS = ("none", "proposed", "executed")


def origin_of(case: str, origin: str | None, derived_from: str | None) -> str:
    """The shared origin of a case: the case it mirrors, forks or is a subcase of, else itself."""
    return derived_from if origin in ("mirror", "subcase", "fork") and derived_from else case


@dataclass(slots=True)
class Counter:
    """One counter: ``records`` recorded, from ``origins`` distinct origins (the count)."""

    records: int = 0
    origins: list[str] = field(default_factory=list)

    @property
    def count(self) -> int:
        """The counter's value: its distinct origins."""
        return len(self.origins)

    def add(self, case: str, origin: str | None, derived_from: str | None) -> None:
        self.records += 1
        root = origin_of(case, origin, derived_from)
        if root not in self.origins:
            self.origins.append(root)

    def to_json(self) -> dict[str, Any]:
        return {"count": self.count, "records": self.records, "origins": list(self.origins)}


@dataclass(slots=True)
class Counters:
    """The three counters of one entry (all its versions).

    Attributes:
        article: the entry, memory-relative.
        occurrences: cases that met the symptom.
        verified_reuses: uses with a verdict (pass or contradiction).
        clean_executions: uses that executed a platform write and passed.
        proposed_only: uses that only proposed a write (shown, never counted as executions).
    """

    article: str
    occurrences: Counter = field(default_factory=Counter)
    verified_reuses: Counter = field(default_factory=Counter)
    clean_executions: Counter = field(default_factory=Counter)
    proposed_only: Counter = field(default_factory=Counter)

    def summary(self) -> str:
        """``occurrences 3 · verified reuses 2 · clean executions 1`` (distinct origins)."""
        return (f"occurrences {self.occurrences.count} · verified reuses {self.verified_reuses.count} · "
                f"clean executions {self.clean_executions.count}")

    def to_json(self) -> dict[str, Any]:
        return {"article": self.article, "occurrences": self.occurrences.to_json(),
                "verified_reuses": self.verified_reuses.to_json(),
                "clean_executions": self.clean_executions.to_json(),
                "proposed_only": self.proposed_only.to_json(),
                "rule": "seed 000 §5: distinct counters; a mirror, fork or subcase counts as its origin"}


def _occurrences_by_article(store: Store) -> dict[str, list[dict[str, Any]]]:
    """Occurrence records by article, kept with the store's parse (read once per change)."""
    def build(tables: dict[str, dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
        out: dict[str, list[dict[str, Any]]] = {}
        for _, doc in sorted(tables.get(T_OCCURRENCES, {}).items(), key=lambda kv: int(kv[0])):
            out.setdefault(str(doc.get("article")), []).append(doc)
        return out
    return store.derived("counters.occurrences", build)


def counters(store: Store, article: str) -> Counters:
    """The counters of ``article`` (memory-relative) over all its versions.

    Uses recorded by an older memtui carry no ``execution``: they count as reuses only.
    """
    article = normalise_article(article)
    out = Counters(article)
    for doc in _occurrences_by_article(store).get(article, []):
        out.occurrences.add(str(doc.get("case")), doc.get("origin"), doc.get("origin_of"))
    ledger = Ledger(store)
    for v in ledger.versions(article):
        for u in ledger.uses(v.id):
            out.verified_reuses.add(u.case, u.origin, u.origin_of)
            if u.execution == "executed" and u.verdict == "pass":
                out.clean_executions.add(u.case, u.origin, u.origin_of)
            elif u.execution == "proposed":
                out.proposed_only.add(u.case, u.origin, u.origin_of)
    return out


def occurred(session, article: str, *, case: str, source_request: str, origin: str = "independent",  # noqa: ANN001
             origin_of: str | None = None, symptom: str = "", client_id: str | None = None) -> dict[str, Any]:
    """Record that ``case`` met the symptom of the entry ``article`` (an occurrence, seed 000 §5).

    Anyone may record one; it changes nothing in the tree and promotes nothing.

    Args:
        article: the entry, memory-relative; it must have a recorded version.
        case, source_request: the case and its source-request id (required).
        origin, origin_of: as for a use (a mirror, fork or subcase names its origin case).
        symptom: what the case saw, in its words (optional).
        client_id: the request's id; a retry with the same id is recorded once (seed 004).

    Returns:
        The stored occurrence record.

    Raises:
        GovernanceError: unknown entry, missing ids, bad origin. ClientIdConflict: the client id
        names another request. ReadOnlyError: the session is read-only.
    """
    article = normalise_article(article)
    if origin not in ORIGINS:
        raise GovernanceError(f"origin must be one of {', '.join(ORIGINS)}, not {origin!r}.")
    if origin != "independent" and not (origin_of or "").strip():
        raise GovernanceError(f"a {origin} must name the case it derives from (--origin-of CASE).")
    if not case.strip() or not source_request.strip():
        raise GovernanceError("an occurrence needs its case id and source-request id.")
    if not Ledger(session.store).versions(article):
        raise GovernanceError(f"{article} has no recorded version; record occurrences of entries memtui "
                              "governs (adopt it first with `memtui adopt`).")
    request = {"article": article, "case": case.strip(), "source_request": source_request.strip(),
               "origin": origin, "origin_of": (origin_of or "").strip() or None, "symptom": symptom.strip()}

    def change(tx) -> dict[str, Any]:  # noqa: ANN001 - Tx
        record = {**request, "time": now(), "by": session.profile}
        tx.table(T_OCCURRENCES).insert(record)
        tx.detail.update({"case": record["case"], "origin": origin})
        return record

    done = session.write("governance.occurred", shown_path(session.ws, article), change, client_id=client_id,
                         request=request)
    if done.retried:
        return {**request, "time": done.entry.time, "by": done.entry.profile}
    return done.result

"""False positives the operator allowed: ``memtui audit allow CODE PLACE --reason …``.

An allowance is a store record (table :data:`TABLE`), written through
:meth:`~memtui.core.session.Session.write` with an audit entry::

    {"code": "secret", "fingerprint": "1a5d44a2dca19669", "path": "memory/MEMORY.md",
     "line": 12, "reason": "…", "by": "profile", "time": "…"}

It names the value by its fingerprint, not by its line, so it survives edits around it, and
it holds wherever the same value appears under the same code (its copies in the store and the
backup tree included): a value that is no secret is no secret anywhere. The audit and
``memtui backup`` leave allowed findings out.
"""

from __future__ import annotations

import datetime as _dt
from typing import Any, Iterable

from memtui.core.errors import MemtuiError
from memtui.core.findings import Finding

TABLE = "allowed"


def keys(store: Any) -> set[tuple[str, str]]:
    """``{(code, fingerprint)}`` of every allowance in ``store`` (a :class:`~memtui.core.store.Store`)."""
    if store is None or TABLE not in store.tables():
        return set()
    return {(d.get("code"), d.get("fingerprint")) for d in store.table(TABLE).all()}


def split(findings: Iterable[Finding], allowed: set[tuple[str, str]]) -> tuple[list[Finding], list[Finding]]:
    """``(open, allowed)``: the findings an allowance covers, and the rest."""
    kept: list[Finding] = []
    gone: list[Finding] = []
    for finding in findings:
        if finding.fingerprint and (finding.code, finding.fingerprint) in allowed:
            gone.append(finding)
        else:
            kept.append(finding)
    return kept, gone


def parse_place(place: str) -> tuple[str, int | None]:
    """``"memory/x.md:12"`` → ``("memory/x.md", 12)``; no line → ``(path, None)``.

    Raises:
        MemtuiError: the place is empty.
    """
    place = place.strip()
    if not place:
        raise MemtuiError("give the place as PATH or PATH:LINE, as the audit shows it")
    path, _, line = place.rpartition(":")
    if path and line.isdigit():
        return path, int(line)
    return place, None


def record(tx: Any, findings: list[Finding], reason: str, profile: str | None) -> list[dict[str, Any]]:
    """Insert allowances for ``findings`` inside a :meth:`Session.write` (``tx``); the ones
    already allowed are skipped. Returns the records inserted."""
    table = tx.table(TABLE)
    have = {(d.get("code"), d.get("fingerprint")) for d in table.all()}
    now = _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")
    made: list[dict[str, Any]] = []
    for finding in findings:
        key = (finding.code, finding.fingerprint)
        if not finding.fingerprint or key in have:
            continue
        have.add(key)
        doc = {"code": finding.code, "fingerprint": finding.fingerprint, "path": finding.path,
               "line": finding.line, "reason": reason, "by": profile, "time": now}
        table.insert(doc)
        made.append(doc)
    return made


def records(store: Any) -> list[dict[str, Any]]:
    """Every allowance in ``store``, oldest first."""
    if store is None or TABLE not in store.tables():
        return []
    return [dict(d) for d in store.table(TABLE).all()]

"""Stale entries (seed 000 §7.3: "entries carry the environment and version observed;
re-verify before relying"; DESIGN.md §1 *stale*).

An article carries, in its front matter, ``environment`` (where it was observed, e.g.
``production``), ``observed_version`` (the version running there then) and ``verified_at``
(the day it was last checked against the running system). It is **stale** when

- it was last verified more than ``[consolidate] stale_after_days`` days ago, where "last
  verified" is the later of ``verified_at`` and the last passing re-verification
  (:class:`~memtui.core.governance.Check`) of its active version; or
- ``memtui.toml``'s ``[environments]`` records a newer version of its environment than the
  one observed (the last passing check's ``observed_version`` replaces the front matter's).

An article that carries none of these fields says nothing about its age and is never stale.
Versions compare as PEP 440 versions (``packaging``); two that are not both PEP 440 versions
compare only when equal (then not stale), and the entry's reason says they could not be
compared.
"""

from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass
from typing import Any

from packaging.version import InvalidVersion, Version as _PepVersion

#: Front matter fields of the staleness rule.
FIELDS = ("environment", "observed_version", "verified_at")


def parse_day(value: Any) -> _dt.date | None:
    """A ``verified_at`` value (a YAML date, a datetime, or ISO 8601 text) as a date, else ``None``."""
    if isinstance(value, _dt.datetime):
        return value.date()
    if isinstance(value, _dt.date):
        return value
    if isinstance(value, str) and value.strip():
        text = value.strip()
        try:
            return _dt.datetime.fromisoformat(text.replace("Z", "+00:00")).date()
        except ValueError:
            try:
                return _dt.date.fromisoformat(text[:10])
            except ValueError:
                return None
    return None


def newer(running: str, observed: str) -> bool | None:
    """True when version ``running`` is newer than ``observed``, False when not, ``None``
    when they cannot be compared (not both PEP 440 versions, and not equal)."""
    if running.strip() == observed.strip():
        return False
    try:
        return _PepVersion(running) > _PepVersion(observed)
    except InvalidVersion:
        return None


@dataclass(slots=True)
class Staleness:
    """Why an entry is stale: ``reasons`` (sentences), the day it was last verified, and the
    version observed and running now (``None`` where unknown)."""

    reasons: list[str]
    verified: _dt.date | None
    environment: str | None
    observed: str | None
    running: str | None

    def to_json(self) -> dict[str, Any]:
        return {"reasons": list(self.reasons), "verified": self.verified.isoformat() if self.verified else None,
                "environment": self.environment, "observed_version": self.observed,
                "running_version": self.running}


def staleness(meta: dict[str, Any], checks: list[Any], *, environments: dict[str, str],
              stale_after_days: int, today: _dt.date) -> Staleness | None:
    """Whether an entry is stale (module docstring), and why.

    Args:
        meta: the article's front matter.
        checks: the passing re-verifications of its active version, oldest first
            (:class:`~memtui.core.governance.Check`).
        environments: ``[environments]`` (names case-folded).
        stale_after_days: ``[consolidate] stale_after_days``.
        today: the day to measure from.

    Returns:
        A :class:`Staleness` with at least one reason, or ``None`` when not stale.
    """
    if not any(meta.get(f) not in (None, "") for f in FIELDS) and not checks:
        return None
    environment = meta.get("environment")
    environment = str(environment).strip() if environment not in (None, "") else None
    observed = meta.get("observed_version")
    observed = str(observed).strip() if observed not in (None, "") else None
    verified = parse_day(meta.get("verified_at"))
    for check in checks:
        day = parse_day(check.time)
        if day is not None and (verified is None or day > verified):
            verified = day
        if check.observed_version:
            observed = check.observed_version
            environment = check.environment or environment
    reasons: list[str] = []
    if verified is not None and (today - verified).days > stale_after_days:
        reasons.append(f"last verified {verified.isoformat()}, {(today - verified).days} days ago "
                       f"(stale after {stale_after_days})")
    running = environments.get(environment.casefold()) if environment else None
    if running is not None and observed is not None:
        moved = newer(running, observed)
        if moved:
            reasons.append(f"{environment} runs {running} now; the entry observed {observed}")
        elif moved is None:
            reasons.append(f"{environment} runs {running!r} now and the entry observed {observed!r}; "
                           "the two cannot be compared as versions")
    elif running is not None and observed is None and environment is not None:
        reasons.append(f"{environment} runs {running} now; the entry does not say which version it observed")
    if not reasons:
        return None
    return Staleness(reasons, verified, environment, observed, running)

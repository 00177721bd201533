"""Version pinning (seed 000 §7.4b): "A case records the article versions it relied on. When
a later case contradicts an article, the earlier case's reasoning is still reconstructable."

:func:`case_pins` answers "what did case X rely on?" with each version's state *now*;
:func:`version_pins` answers "which cases leaned on this version?", so a retraction shows
the past cases that relied on the retracted text. Read-only.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from memtui.core.governance.model import GovernanceError, Ledger


@dataclass(slots=True)
class Pinned:
    """One pin with the pinned version's state now.

    Attributes:
        case: the case that relied on it.
        version: the version id (``article@N``); article: its article.
        hash: the content hash the case saw.
        time: when it was pinned (ISO 8601 UTC).
        state: ``active``, ``retired``, ``proposed``, ``rejected``, or ``unknown`` (no such
            version in the store).
        marks: the article's marks when this version is the active one (``contested``,
            ``untrusted``), else ``()``.
        active_now: the article's active version now, when it is another one (else ``None``).
        same_content: the hash the case saw is the version's own content.
    """

    case: str
    version: str
    article: str
    hash: str
    time: str
    state: str
    marks: tuple[str, ...]
    active_now: str | None
    same_content: bool

    @property
    def status(self) -> str:
        """``"active"``, ``"active, contested"``, ``"retired (active now: x@3)"`` …"""
        words = ", ".join([self.state, *self.marks])
        if self.active_now:
            words += f" (active now: {self.active_now})"
        return words

    def to_json(self) -> dict[str, Any]:
        return {"case": self.case, "version": self.version, "article": self.article, "hash": self.hash,
                "time": self.time, "state": self.state, "marks": list(self.marks), "status": self.status,
                "active_now": self.active_now, "same_content": self.same_content}


def _pinned(ledger: Ledger, pin: dict[str, Any]) -> Pinned:
    version_id = str(pin.get("version") or "")
    if version_id.startswith(_SKILL):
        return _skill_pinned(ledger, pin, version_id)
    article = version_id.rsplit("@", 1)[0]
    try:
        version = ledger.get(version_id)
    except GovernanceError:
        return Pinned(str(pin.get("case")), version_id, article, str(pin.get("hash") or ""),
                      str(pin.get("time") or ""), "unknown", (), None, False)
    active = ledger.active(version.article)
    marks = ledger.marks(version.article) if active is not None and active.id == version.id else ()
    return Pinned(str(pin.get("case")), version.id, version.article, str(pin.get("hash") or ""),
                  str(pin.get("time") or ""), version.state, marks,
                  active.id if active is not None and active.id != version.id else None,
                  pin.get("hash") == version.sha256)


def case_pins(ledger: Ledger, case: str) -> list[Pinned]:
    """The versions ``case`` relied on, oldest pin first, each with its state now.

    Raises:
        GovernanceError: no case id given.
    """
    if not (case or "").strip():
        raise GovernanceError("name the case (--case ID).")
    pins = sorted(ledger.pins(case.strip()), key=lambda p: (str(p.get("time")), str(p.get("version"))))
    return [_pinned(ledger, p) for p in pins]


def version_pins(ledger: Ledger, version_id: str) -> list[Pinned]:
    """The cases that pinned ``version_id`` (``article@N``, or a skill's ``skill:NAME@N``),
    oldest first.

    Raises:
        GovernanceError: no such version.
    """
    if version_id.startswith(_SKILL):
        from memtui.core.skills.versions import SkillLedger

        version_id = SkillLedger(ledger.store).get(version_id).id
    else:
        ledger.get(version_id)
    pins = [p for p in ledger.pins() if p.get("version") == version_id]
    pins.sort(key=lambda p: (str(p.get("time")), str(p.get("case"))))
    return [_pinned(ledger, p) for p in pins]


#: A skill version's id starts so (``skill:parcel-trace@2``; memtui.core.skills.versions).
_SKILL = "skill:"


def _skill_pinned(ledger: Ledger, pin: dict[str, Any], version_id: str) -> Pinned:
    """A pin of a skill version, with that version's state now (seed 000 Part II §10)."""
    from memtui.core.skills.versions import pinned_state

    state, name, sha, active_now = pinned_state(ledger.store, version_id)
    return Pinned(str(pin.get("case")), version_id, f"{_SKILL}{name or version_id[len(_SKILL):].rsplit('@', 1)[0]}",
                  str(pin.get("hash") or ""), str(pin.get("time") or ""), state, (), active_now,
                  bool(sha) and pin.get("hash") == sha)

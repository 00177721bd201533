"""What a piece of knowledge is, and where it goes: the classes of the migration and the
dreaming pass, and a class suggested from cheap signals that a person confirms.

- **Migration** (seed 000 §7.1 pass 2): each inherited item is a *mechanic* (it must always
  happen: a pipeline phase, a gate, a skill — not an article), an *article* (a pattern worth
  recalling), an *experience* entry (a past case, §5), an *index-line* only, or *drop*
  (superseded, environment-specific, or v1's own operation, §7.5).
- **Dreaming** (seed 000 §4 step 2): each harvested candidate is a *skill* candidate, an
  *article*, an *experience* entry, an *index-line* only, or *nothing* (with a justification).

:func:`suggest` reads only the text, its file name and its one-liner; it never decides alone:
the operator confirms or overrides each class (``memtui migrate classify``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Iterable

#: The classes of the migration's pass 2 (seed 000 §7.1).
MIGRATE_CLASSES = ("mechanic", "article", "experience", "index-line", "drop")
#: The classes of the dreaming pass (seed 000 §4 step 2).
HARVEST_CLASSES = ("skill", "article", "experience", "index-line", "nothing")
#: Every class a proposal may carry (``proposals list --class``).
CLASSES = tuple(dict.fromkeys(MIGRATE_CLASSES + HARVEST_CLASSES))
#: The migration classes whose items become proposals (the others leave no article).
KEPT = ("mechanic", "article", "experience")

# §7.5: v1's own operation — tool invocation quirks, connection state, session workarounds.
_V1_OPERATION = re.compile(
    r"\b(workaround|quirk|tool call|mcp|cli flag|reconnect|re-?login|vpn|ssh tunnel|"
    r"session (?:expired|expires|restart|handling)|restart the session|context window|token limit|"
    r"rate limit of the tool|сесията|заобиколно|рестартирай)\b", re.I)
# a checklist of steps that must always happen: a mechanic
_ALWAYS = re.compile(r"\b(always|never|must|every time|before (?:any|each|every)|винаги|никога|задължително)\b", re.I)
_STEP = re.compile(r"^\s*(?:[-*]|\d+[.)])\s+(?:\[[ x]\]\s+)?\S", re.M)
# a dated incident: an experience entry
_DATED_NAME = re.compile(r"(?:^|[-_])(?:20\d\d[-_]\d\d[-_]\d\d|\d\d[-_.]\d\d[-_.]20\d\d)(?:[-_.]|$)")
_INCIDENT = re.compile(r"\b(incident|ticket|тикет|случай|customer wrote|клиентът|клиентка|on (?:mon|tues|wednes|thurs|fri|satur|sun)day)\b", re.I)
_DATE = re.compile(r"\b(?:20\d\d-\d\d-\d\d|\d{1,2}\.\d{1,2}\.20\d\d)\b")
_WORD = re.compile(r"[^\W\d_]{3,}")


@dataclass(slots=True)
class Suggestion:
    """A suggested class, why (one sentence, shown to the operator), and of what it is a
    near-duplicate (``None`` when it is not)."""

    cls: str
    reason: str
    duplicate_of: str | None = None

    def to_json(self) -> dict[str, str | None]:
        return {"class": self.cls, "reason": self.reason, "duplicate_of": self.duplicate_of}


def words(text: str) -> set[str]:
    """The lower-cased words of three letters or more in ``text`` (any script)."""
    return {w.lower() for w in _WORD.findall(text)}


def resemblance(a: set[str], b: set[str]) -> float:
    """The Jaccard resemblance of two word sets (0…1; 0 for two empty sets)."""
    return len(a & b) / len(a | b) if a and b else 0.0


#: Word resemblance from which two texts are near-duplicates.
NEAR_DUPLICATE = 0.7


def suggest(name: str, text: str, one_liner: str = "",
            others: Iterable[tuple[str, set[str]]] = ()) -> Suggestion:
    """The class cheap signals suggest for one inherited item (seed 000 §7.1 pass 2, §7.5).

    Args:
        name: its file name (a date in it marks a diary of one incident).
        text: its text.
        one_liner: its line in the inherited index.
        others: ``(label, words)`` of the texts it may duplicate — the domain's active articles,
            and the items already looked at (the first of two duplicates is kept).

    Returns:
        The first signal that holds, in this order: a v1 tool quirk or session workaround →
        ``drop``; a near-duplicate (:data:`NEAR_DUPLICATE`) of an active article →
        ``index-line``, of an earlier item → ``drop``; three or more steps with "always",
        "never", "must" … → ``mechanic``; a dated incident → ``experience``; else ``article``.
    """
    head = f"{name}\n{one_liner}\n{text[:4000]}"
    quirk = _V1_OPERATION.search(head)
    if quirk:
        return Suggestion("drop", f"describes v1's own operation ({quirk.group(0)!r}): a tool quirk or a "
                                  "session workaround is not carried into the tree")
    mine = words(text)
    for label, theirs in others:
        if resemblance(mine, theirs) >= NEAR_DUPLICATE:
            if label.startswith("memory/"):
                return Suggestion("index-line", f"a near-duplicate of the active article {label}: "
                                                "an index line pointing there is enough", label)
            return Suggestion("drop", f"a near-duplicate of {label}, which is kept", label)
    steps = len(_STEP.findall(text))
    always = len(_ALWAYS.findall(text))
    if steps >= 3 and always >= 2:
        return Suggestion("mechanic", f"a checklist of {steps} steps that must always happen: make it a "
                                      "gate or a skill, not an article to remember")
    if _DATED_NAME.search(name) or (_DATE.search(text[:600]) and _INCIDENT.search(text[:1500])):
        return Suggestion("experience", "a dated incident: a past case, written as an experience entry")
    return Suggestion("article", "a pattern of the running system worth recalling")


def classification(cls: str, reason: str) -> dict[str, str]:
    """The ``classification`` a proposal keeps: ``{"class", "reason"}``.

    Raises:
        ValueError: ``cls`` is not one of :data:`CLASSES`, or ``reason`` is empty.
    """
    if cls not in CLASSES:
        raise ValueError(f"{cls!r} is not a class; use one of {', '.join(CLASSES)}")
    if not reason.strip():
        raise ValueError("a class needs its reason")
    return {"class": cls, "reason": reason.strip()}


def class_of(version: Any) -> str | None:
    """The class a proposal (a :class:`memtui.core.governance.Version`) carries, or ``None``."""
    kept = getattr(version, "classification", None)
    return kept.get("class") if isinstance(kept, dict) else None


def of_class(versions: Iterable[Any], cls: str) -> list[Any]:
    """The versions of ``versions`` whose class is ``cls`` (``proposals list --class``, the
    Proposals area's filter), in their order."""
    return [v for v in versions if class_of(v) == cls]

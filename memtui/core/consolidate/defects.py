"""Cases that met a skill defect (seed 000 Part II §11): "a case that met a skill defect closes
with three artefacts — the delivered work, the amended skill or tool, and the memory entry
naming what it could not do before"; and "improvisation stops at two attempts — after two
failures … the agent asks the peer who owns it".

A case met a defect when a use with the verdict ``skill-defect`` was recorded against a skill
version (``memtui use --skill NAME@N --verdict skill-defect --check WHAT``). Its artefacts are
read from what the store already holds, nothing is declared twice:

- **the amended skill**: a skill proposal filed by the case (``memtui propose --skill NAME
  --case C``);
- **the delivered work**: a passing use by the case of another version of that skill (the
  corrected run produced the result);
- **the memory entry**: an article version or proposal filed by the case (``memtui propose
  --node … --case C``).

A case missing any of them is a ``skill-defect`` candidate of the consolidation pass; one with
two defect uses of the same skill says to ask the skill's owner.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

from memtui.core.store import Store

#: The use verdict that marks a skill defect.
DEFECT = "skill-defect"

#: Failed attempts after which the case asks the owner (seed 000 §11: two attempts).
ATTEMPTS = 2

_SKILL = "skill:"


@dataclass(slots=True)
class DefectCase:
    """One case that met a defect of one skill.

    Attributes:
        case: the case. skill: the skill's name. versions: the defective versions, in order.
        what: the checks recorded with the defect uses (what it could not do).
        delivered, amended, entry: the artefact found for each, or ``None``.
        owner: the skill's owner (the node owner of its latest defective version), when known.
    """

    case: str
    skill: str
    versions: list[str] = field(default_factory=list)
    what: list[str] = field(default_factory=list)
    delivered: str | None = None
    amended: str | None = None
    entry: str | None = None
    node: str = ""

    @property
    def missing(self) -> list[str]:
        return [name for name, have in (("the delivered work", self.delivered), ("the amended skill", self.amended),
                                        ("the memory entry", self.entry)) if not have]

    @property
    def ask_owner(self) -> bool:
        return len(self.versions) >= ATTEMPTS

    def to_json(self) -> dict[str, Any]:
        return {"case": self.case, "skill": self.skill, "versions": list(self.versions), "what": list(self.what),
                "delivered": self.delivered, "amended": self.amended, "entry": self.entry,
                "missing": self.missing, "ask_owner": self.ask_owner}


def defect_cases(store: Store) -> list[DefectCase]:
    """Every (case, skill) with a ``skill-defect`` use, with its artefacts (module docstring);
    ``[]`` from a damaged store (its own finding says so)."""
    if getattr(store, "damaged", False):
        return []
    tables = store.derived("defects.tables", lambda t: {k: t.get(k, {}) for k in
                                                        ("uses", "skill_versions", "versions")})
    uses = [tables["uses"][i] for i in sorted(tables["uses"], key=int)]
    skill_versions = list(tables["skill_versions"].values())
    nodes = {str(v.get("id")): str(v.get("node") or "") for v in skill_versions}
    found: dict[tuple[str, str], DefectCase] = {}
    for u in uses:
        version = str(u.get("version") or "")
        if u.get("verdict") != DEFECT or not version.startswith(_SKILL):
            continue
        skill = version[len(_SKILL):].rsplit("@", 1)[0]
        case = str(u.get("case") or "")
        item = found.setdefault((case, skill), DefectCase(case, skill))
        item.versions.append(version)
        item.node = nodes.get(version, item.node)
        if u.get("check"):
            item.what.append(str(u["check"]))
    for (case, skill), item in found.items():
        item.amended = next((str(v.get("id")) for v in skill_versions
                             if v.get("skill") == skill and (v.get("provenance") or {}).get("case") == case), None)
        item.delivered = next((str(u.get("version")) for u in uses
                               if u.get("case") == case and u.get("verdict") == "pass"
                               and str(u.get("version") or "").startswith(f"{_SKILL}{skill}@")
                               and u.get("version") not in item.versions), None)
        item.entry = next((str(v.get("id")) for v in tables["versions"].values()
                           if (v.get("provenance") or {}).get("case") == case), None)
    return sorted(found.values(), key=lambda d: (d.skill, d.case))


def candidates(store: Store, owner: Callable[[str], str | None], make: Callable[..., Any]) -> list[Any]:
    """``skill-defect`` candidates: defect cases missing an artefact, or at their second attempt."""
    out = []
    for item in defect_cases(store):
        if not item.missing and not item.ask_owner:
            continue
        who = owner(item.node)
        reason = f"case {item.case} met a defect of the skill {item.skill} ({', '.join(item.versions)})"
        if item.missing:
            reason += ": it closes with " + ", ".join(item.missing) + " still missing"
        if item.ask_owner:
            reason += f"; {len(item.versions)} attempts failed: ask the owner ({who or 'nobody owns it'}) " \
                      "rather than trying again"
        out.append(make("skill-defect", item.node, who, [f"{_SKILL}{item.skill}", f"case {item.case}"], reason,
                        "ask the owner" if item.ask_owner else "close the case with its three artefacts",
                        f"memtui propose --skill {item.skill} --from FOLDER --case {item.case} …; "
                        f"memtui use --skill {item.skill}@N --case {item.case} --verdict pass …; "
                        f"memtui propose --node NODE --article … --case {item.case}",
                        [who], item.to_json()))
    return out

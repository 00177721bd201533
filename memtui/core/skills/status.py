"""A skill's governance at a glance: its binding and owner, its manifest, its content hash and
state, and the findings that keep it from being published (seed 000 Part II §8, §10).

These findings are not part of ``memtui skills check`` by default nor of ``memtui audit``
(``skills check --governance`` adds them), except those of a manifest the skill has: a broken
manifest is a catalogue finding too (:func:`memtui.core.skills.manifest.present_findings`),
listed once.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from memtui.core.evalsets import has_set, set_path
from memtui.core.files import is_inside
from memtui.core.findings import Finding, sort_key
from memtui.core.skills.binding import Binding, bind
from memtui.core.skills.content import ContentError, read_content
from memtui.core.skills.gating import gate_sets
from memtui.core.skills.manifest import MANIFEST_FILE, Manifest, read_manifest
from memtui.core.skills.model import Catalogue, Skill
from memtui.core.workspace import Workspace


@dataclass(slots=True)
class SkillStatus:
    """One skill's governance.

    Attributes:
        skill: the catalogue's skill.
        binding: its node and owner.
        manifest: its manifest, checked.
        sha256: the content hash of its folder now, or ``None`` when the folder cannot be
            taken as a version (``content_error`` says why).
        state: ``untracked`` (no version recorded), ``published`` (the folder holds the
            published version), ``edited`` (it differs from it), ``retired``.
        published: the published version id, or ``None``.
        proposals: ids of its open proposals.
        last_test: the latest recorded test run on the folder's content now, or ``None``.
        findings: binding, manifest, content and unrecorded-edit findings, most severe first.
    """

    skill: Skill
    binding: Binding
    manifest: Manifest
    sha256: str | None
    content_error: str | None = None
    state: str = "untracked"
    published: str | None = None
    proposals: list[str] = field(default_factory=list)
    last_test: dict[str, Any] | None = None
    #: the eval sets (memory nodes) its manifest gates it on (:mod:`memtui.core.skills.gating`)
    gated_on: list[str] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)

    @property
    def name(self) -> str:
        return self.skill.key

    def to_json(self) -> dict[str, Any]:
        return {"skill": self.skill.key, "path": self.skill.path, "binding": self.binding.to_json(),
                "owner": self.binding.owner, "manifest": self.manifest.to_json(), "sha256": self.sha256,
                "content_error": self.content_error, "state": self.state, "published": self.published,
                "proposals": list(self.proposals), "last_test": self.last_test, "gated_on": list(self.gated_on),
                "findings": [f.to_json() for f in self.findings]}


def governed(cat: Catalogue) -> list[Skill]:
    """The skills governance speaks of: top-level skills of a root agents load (not nested,
    not a scope's source copy), shadowed ones included."""
    return [s for s in cat.skills if s.nested_in is None and s.loadable]


def skill_status(ws: Workspace, skill: Skill, store: Any = None) -> SkillStatus:
    """The :class:`SkillStatus` of ``skill``; ``store`` (a :class:`~memtui.core.store.Store`)
    adds what is recorded (versions, proposals, test runs). Never raises for bad input."""
    folder_rel = skill.path.rsplit("/", 1)[0]
    if not is_inside(ws.root, skill.folder):  # a link leading outside: nothing behind it is read (invariant 4)
        outside = "the skill folder is a symbolic link leading outside the workspace; memtui reads nothing there"
        status = SkillStatus(skill, Binding(None, "", None, ""), Manifest(f"{folder_rel}/{MANIFEST_FILE}"),
                             None, outside)
        status.findings.append(Finding.make("skill-content-unusable", folder_rel, outside,
                                            "copy the skill into the workspace, or remove the link"))
        return status
    try:
        text: str | None = skill.skill_md.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError):
        text = None
    binding = bind(ws, skill.folder, text, skill.path)
    manifest = read_manifest(skill.folder, f"{folder_rel}/{MANIFEST_FILE}")
    try:
        sha: str | None = read_content(skill.folder, confine_to=ws.root).sha256
        problem: str | None = None
    except (ContentError, OSError) as exc:
        sha, problem = None, str(exc)
    status = SkillStatus(skill, binding, manifest, sha, problem)
    if binding.finding is not None:
        status.findings.append(binding.finding)
    status.findings.extend(manifest.findings)
    status.gated_on = gate_sets(manifest.data)
    for node in status.gated_on:
        if not has_set(ws, node):
            status.findings.append(Finding.make(
                "skill-gate-without-eval-set", manifest.place,
                f"the manifest gates the skill on the eval set of {node or 'the root node'}, but "
                f"memory/{set_path(node)} does not exist, so publishing a version of it is refused",
                "name the node whose eval set gates it (verification: eval_set), or that node's owner "
                "proposes the set"))
    if problem is not None:
        status.findings.append(Finding.make(
            "skill-content-unusable", folder_rel, f"the skill folder cannot be kept as a version: {problem}",
            "keep only plain UTF-8 text files in the skill folder"))
    if store is not None and not getattr(store, "damaged", False):
        from memtui.core.skills.versions import SkillLedger

        ledger = SkillLedger(store)
        active = ledger.active(skill.key)
        versions = ledger.versions(skill.key)
        status.proposals = [v.id for v in versions if v.state == "proposed"]
        if active is not None:
            status.published = active.id
            status.state = "published" if sha == active.sha256 else "edited"
            if sha != active.sha256 and problem is None:
                status.findings.append(Finding.make(
                    "skill-unrecorded-edit", folder_rel,
                    f"the folder differs from the published version {active.id} (changed outside governance)",
                    f"propose the change (`memtui propose --skill {skill.key} --from FOLDER`) and publish it, "
                    f"or put the published version back (`memtui skills revert {skill.key}`)"))
        elif any(v.state == "retired" for v in versions):
            status.state = "retired"
        if sha is not None:
            status.last_test = ledger.last_test(skill.key, sha)
    status.findings.sort(key=sort_key)
    return status


def governance_findings(ws: Workspace, cat: Catalogue, store: Any = None) -> list[Finding]:
    """The findings of :func:`skill_status` for every :func:`governed` skill that the catalogue
    does not hold already (a present manifest's), most severe first."""
    out: list[Finding] = []
    for skill in governed(cat):
        out.extend(f for f in skill_status(ws, skill, store).findings if f not in skill.findings)
    return sorted(out, key=sort_key)

"""Discovery: which skills an agent really gets (seed 002).

The agent's root ``skills/`` and the administrator's ``shared-skills/``; on a name present in
both the administrator's copy wins and the shadowed copy is shown; the four-scope cascade
``tenant → tenant-agent → subscription → subscription-agent`` (later wins by name) decides what
``shared-skills/`` holds.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Iterable


from memtui.core.files import is_inside, rel, text_name
from memtui.core.findings import Finding, sort_key
from memtui.core.workspace import Workspace
from memtui.core.skills.model import AGENT_ROOT, CASCADE_DIR, Catalogue, SCOPES, SHARED_ROOT, SKILL_FILE, Skill, SKIP_DIRS
from memtui.core.skills.manifest import MANIFEST_FILE, present_findings
from memtui.core.skills.rules import parse_skill


def scan_root(path: str | os.PathLike[str], root_label: str, *, base: Path | None = None,
              confine_to: Path | None = None, limit: int | None = None) -> list[Skill]:
    """Find every ``SKILL.md`` under a skill root (a folder of skill folders).

    Args:
        path: the root folder (``skills/``, ``shared-skills/``, a scope folder, or any
            bare folder of skill folders such as a corpus collection or a bug input).
        root_label: the label stored in :attr:`Skill.root`.
        base: paths are shown relative to this folder (default: ``path`` itself).
        confine_to: symbolic links leading outside this folder are not followed
            (default: ``base``); such a link is a ``symlink-outside`` finding on a
            placeholder skill so it does not vanish.
        limit: size limit of one read, in bytes.

    Returns:
        Skills sorted by path: ``<path>/<name>/SKILL.md`` are the ones agents load; a
        ``SKILL.md`` deeper inside a skill folder is returned too, marked
        ``skill-nested`` (qdrant-scaling); one deeper inside a plain folder is marked
        ``skill-nested`` as well, saying agents do not load it. A missing root gives ``[]``.
    """
    root = Path(path)
    base = Path(base) if base is not None else root
    confine_to = Path(confine_to) if confine_to is not None else base
    if not root.is_dir():
        return []
    skills: list[Skill] = []
    skill_dirs: dict[Path, Skill] = {}
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        here = Path(dirpath)
        kept = []
        for d in sorted(dirnames):
            if d in SKIP_DIRS or not text_name(d):  # a name that is not UTF-8: the audit reports it
                continue
            full = here / d
            if full.is_symlink():
                # os.walk does not descend links: a linked skill folder is read here, once,
                # and only when it stays inside the workspace (invariant 4).
                if not is_inside(confine_to, full):
                    placeholder = Skill(key=d, folder=full, path=rel(base, full / SKILL_FILE),
                                        root=root_label)
                    placeholder.findings.append(Finding.make(
                        "symlink-outside", rel(base, full),
                        f"skill folder is a symbolic link to {os.path.realpath(full)}, "
                        "outside the workspace; memtui does not follow it",
                        "copy the skill into the workspace, or remove the link"))
                    skills.append(placeholder)
                elif (full / SKILL_FILE).is_file():
                    _add(full, root, base, root_label, skills, skill_dirs, limit)
                continue
            kept.append(d)
        dirnames[:] = kept
        if here != root and SKILL_FILE in filenames:
            _add(here, root, base, root_label, skills, skill_dirs, limit)
    skills.sort(key=lambda s: s.path)
    return skills


def _add(folder: Path, root: Path, base: Path, label: str, skills: list[Skill],
         skill_dirs: dict[Path, Skill], limit: int | None) -> None:
    skill = parse_skill(folder, rel(base, folder / SKILL_FILE), label, limit=limit)
    skill.findings.extend(present_findings(folder, rel(base, folder / MANIFEST_FILE)))
    parent = next((skill_dirs[a] for a in folder.parents if a in skill_dirs), None)
    if parent is not None:
        skill.nested_in = parent.path
        skill.findings.append(Finding.make(
            "skill-nested", skill.path,
            f"lies inside the skill {parent.key!r} ({parent.path}); agents load only "
            f"<root>/<name>/{SKILL_FILE}, so it is reached through its parent's body, "
            "never from the index",
            "keep it if the parent's body points to it; move it to its own folder in the root "
            "to make it a skill of its own"))
    elif folder.parent != root:
        skill.nested_in = rel(base, folder.parent)
        skill.findings.append(Finding.make(
            "skill-nested", skill.path,
            f"lies {len(folder.relative_to(root).parts)} folders deep; agents load only "
            f"<root>/<name>/{SKILL_FILE}, so no agent gets it",
            "move the folder directly into the root"))
    skill.findings.sort(key=sort_key)
    skill_dirs[folder] = skill
    skills.append(skill)


def _looks_like_root(folder: Path) -> bool:
    try:
        return any((child / SKILL_FILE).is_file() for child in folder.iterdir()
                   if child.is_dir() and child.name not in SKIP_DIRS)
    except OSError:
        return False


def load_catalogue(ws: Workspace) -> Catalogue:
    """Build the catalogue of a workspace.

    Roots, in precedence order (seed 002):

    1. ``skills/`` — the agent's own;
    2. ``shared-skills/`` — the administrator's; wins on a folder name present in both, and
       the agent's copy is kept in the list, marked ``skill-shadowed``;
    3. when ``shared-skills.d/`` holds any of the four scope folders, their skills are
       listed with :attr:`Skill.scope`; a later scope wins by name over an earlier one
       (``skill-scope-overridden``). If ``shared-skills/`` exists, each of its skills gets
       the scope it came from and a mismatch is a ``skill-cascade-mismatch`` finding; if
       it does not, the flattened cascade *is* the shared root.

    A folder with neither root but with skill folders inside (a corpus
    collection) is read as one root labelled ``"folder"``; a folder of such collections
    (``corpus/skills``) as one root per collection, labelled with its name, where the same
    key in two collections is a ``skill-name-duplicate`` finding on each.

    Args:
        ws: the opened workspace.

    Returns:
        A :class:`Catalogue`. Never raises for bad skills; every SKILL.md appears.
    """
    limit = ws.config.max_file_bytes
    cat = Catalogue(base=ws.root)
    roots = dict(ws.skill_roots)
    cascade_dir = ws.root / CASCADE_DIR
    linked_out = set()
    for label, folder in [*roots.items(), (CASCADE_DIR, cascade_dir)]:  # a root linked out: read nothing there
        problem = ws.linked_outside(folder)
        if problem is not None:
            cat.findings.append(problem)
            linked_out.add(label)
    scopes_present = [] if CASCADE_DIR in linked_out else [s for s in SCOPES if (cascade_dir / s).is_dir()]
    has_roots = any(p.is_dir() for p in roots.values()) or bool(scopes_present)
    if not has_roots:
        _load_plain_folder(ws, cat)
        return cat

    agent, shared = ([] if label in linked_out else
                     scan_root(roots[label], label, base=ws.root, confine_to=ws.root, limit=limit)
                     for label in (AGENT_ROOT, SHARED_ROOT))
    for label in (AGENT_ROOT, SHARED_ROOT):
        if roots[label].is_dir() and label not in linked_out:
            cat.roots[label] = roots[label]

    scoped, winner_scope = _scan_scopes(ws, cat, scopes_present, limit)

    if scopes_present and roots[SHARED_ROOT].is_dir() and SHARED_ROOT not in linked_out:
        admin = _check_flattening(cat, shared, scoped, winner_scope)
    elif scopes_present:
        # no mounted root: the flattened cascade is the administrator's root
        cat.roots[SHARED_ROOT] = cascade_dir
        admin = list(winner_scope.values())
    else:
        admin = [s for s in shared if s.nested_in is None]

    _mark_shadowed(agent, admin)
    cat.skills = agent + shared + scoped
    _mark_duplicates([s for s in cat.skills if s.shadowed_by is None and s.loadable])
    return cat


def _load_plain_folder(ws: Workspace, cat: Catalogue) -> None:
    """Fill ``cat`` from a folder with neither skills root: itself as one root of skill
    folders, or each of its sub-folders that is one (a corpus of collections)."""
    limit = ws.config.max_file_bytes
    if _looks_like_root(ws.root):
        cat.roots["folder"] = ws.root
        cat.skills = scan_root(ws.root, "folder", base=ws.root, limit=limit)
    else:
        collections = [c for c in sorted(ws.root.iterdir())
                       if c.is_dir() and c.name not in SKIP_DIRS and _looks_like_root(c)]
        for coll in collections:
            cat.roots[coll.name] = coll
            cat.skills.extend(scan_root(coll, coll.name, base=ws.root, confine_to=ws.root, limit=limit))
    _mark_duplicates(cat.skills)


def _scan_scopes(ws: Workspace, cat: Catalogue, scopes: list[str],
                 limit: int) -> tuple[list[Skill], dict[str, Skill]]:
    """The skills of the publication ``scopes`` present, in cascade order, and the one that
    wins each name (a later scope over an earlier one, which gets ``skill-scope-overridden``)."""
    cascade_dir = ws.root / CASCADE_DIR
    scoped: list[Skill] = []
    winner_scope: dict[str, Skill] = {}
    for scope in scopes:
        label = f"{CASCADE_DIR}/{scope}"
        cat.roots[label] = cascade_dir / scope
        found = scan_root(cascade_dir / scope, label, base=ws.root, confine_to=ws.root, limit=limit)
        for skill in found:
            skill.scope = scope
            if skill.nested_in is not None:
                continue
            earlier = winner_scope.get(skill.key)
            if earlier is not None:
                earlier.shadowed_by = skill.path
                earlier.findings.append(Finding.make(
                    "skill-scope-overridden", earlier.path,
                    f"scope {earlier.scope!r} is overridden by scope {scope!r} ({skill.path}): "
                    "later scopes win by name",
                    f"nothing to do if intended; the cascade order is {' → '.join(SCOPES)}"))
                earlier.findings.sort(key=sort_key)
            winner_scope[skill.key] = skill
        scoped.extend(found)
    return scoped, winner_scope


def _check_flattening(cat: Catalogue, shared: list[Skill], scoped: list[Skill],
                      winner_scope: dict[str, Skill]) -> list[Skill]:
    """``shared-skills/`` is the mounted flattening of the scopes: the scope copies are its
    sources, never loaded themselves; each mounted skill learns the scope it came from, and a
    skill in one but not the other is a ``skill-cascade-mismatch``. Returns the
    administrator's skills (the mounted ones)."""
    top_shared = {s.key: s for s in shared if s.nested_in is None}
    for skill in scoped:
        skill.loadable = False
    for key, skill in top_shared.items():
        origin = winner_scope.get(key)
        if origin is None:
            cat.findings.append(Finding.make(
                "skill-cascade-mismatch", skill.path,
                f"shared skill {key!r} comes from none of the scopes in {CASCADE_DIR}/",
                f"publish it at a scope, or remove it from {SHARED_ROOT}/"))
        else:
            skill.scope = origin.scope
    for key, origin in winner_scope.items():
        if key not in top_shared:
            cat.findings.append(Finding.make(
                "skill-cascade-mismatch", origin.path,
                f"scope {origin.scope!r} publishes {key!r}, but {SHARED_ROOT}/ does not hold it",
                f"re-publish so {SHARED_ROOT}/ is the flattening of the scopes"))
    return list(top_shared.values())


def _mark_shadowed(agent: list[Skill], admin: list[Skill]) -> None:
    """Mark each of the agent's own skills that an administrator's skill of the same name
    shadows (``skill-shadowed``): agents get the administrator's copy."""
    admin_by_key = {s.key: s for s in admin}
    for skill in agent:
        if skill.nested_in is not None:
            continue
        winner = admin_by_key.get(skill.key)
        if winner is not None:
            skill.shadowed_by = winner.path
            skill.findings.append(Finding.make(
                "skill-shadowed", skill.path,
                f"shadowed by the administrator's copy {winner.path}: agents get that one",
                "rename your skill to keep both; the administrator's copy always wins"))
            skill.findings.sort(key=sort_key)


def _mark_duplicates(skills: Iterable[Skill]) -> None:
    """Same key (or same front matter name) twice among skills that neither shadow the other."""
    groups: dict[str, list[Skill]] = {}
    for skill in skills:
        if skill.nested_in is not None:
            continue
        groups.setdefault(skill.key, []).append(skill)
        if skill.name and skill.name != skill.key:
            groups.setdefault(skill.name, []).append(skill)
    for name, group in groups.items():
        unique = {id(s): s for s in group}
        if len(unique) < 2:
            continue
        for skill in unique.values():
            others = [o.path for o in unique.values() if o is not skill]
            if any(o in skill.duplicate_of for o in others):
                continue
            skill.duplicate_of.extend(o for o in others if o not in skill.duplicate_of)
            skill.findings.append(Finding.make(
                "skill-name-duplicate", skill.path,
                f"the name {name!r} is also used by {', '.join(others)}",
                "rename one of them: an agent given both cannot tell them apart"))
            skill.findings.sort(key=sort_key)


def load_folder(path: str | os.PathLike[str]) -> Catalogue:
    """Open ``path`` as a workspace and build its catalogue (see :func:`load_catalogue`).

    Raises:
        WorkspaceError: ``path`` is not a readable folder.
    """
    return load_catalogue(Workspace.open(path))


def audit_findings(ws: Workspace) -> list[Finding]:
    """Every skill finding of ``ws`` (catalogue and skills), for :mod:`memtui.core.audit`.

    The workspace's own roots count (``skills/``, ``shared-skills/``, ``shared-skills.d/``),
    and a folder that is itself a folder of skill folders (no ``memory/``):
    ``memtui audit -w FOLDER`` reports what ``memtui skills check`` reports. A plain memory
    tree contributes nothing, so its sub-folders are never reported as skills.
    """
    has_roots = any(p.is_dir() for p in ws.skill_roots.values()) or (ws.root / CASCADE_DIR).is_dir()
    if not has_roots and ws.memory == ws.root and _looks_like_root(ws.root):
        has_roots = True
    if not has_roots:
        return []
    return load_catalogue(ws).all_findings()

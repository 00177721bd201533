"""Skills the modules gate on: an amended version re-runs an eval set before it is used
(seed 000 Part II §10: "a skill the modules gate on re-runs its eval set as well (CR-4)"; §11).

**How a skill says it is gated.** Its manifest's ``verification`` part names the eval set a
module gates it on, in one of its checks::

    "verification": [{"check": "the lost-parcel tickets still find the trace",
                      "eval_set": "support/parcels-lost"}]

``eval_set`` is a memory node (relative to ``memory/``; ``"."`` is the root node) holding
``evals/cases.jsonl`` (:mod:`memtui.core.evalsets`). A skill whose manifest names no eval set
is not gated: publishing, rolling back or reverting it runs no evaluation, as before.

**What a skill version changes in the measured memory.** A skill's ``SKILL.md`` is indexed
with the memory (kind ``skill``): the triage search a user gets finds it like an article.
In the eval set a skill is gated on, a hit on its ``SKILL.md`` counts as the entry
``skill:NAME`` (:data:`ENTRY_PREFIX`): a case may name it as its precedent (``"relevant":
["skill:parcel-trace"]``) or as a wrong one (``near_miss``), and it ranks beside the
articles for every other case of that set. So the figures of the set are the same triage
figures as for an article change (hit@1, hit@5, MRR, false-precedent rate, the grep
baseline), measured with the skill's folder as it is before, and as it will be after, the
change. Skills not gated on a set stay out of its figures.

**Which sets a change runs.** Those named by the content published now *and* by the content
it replaces: a version that drops its gate is measured by the gate it leaves (the cases that
name it lose their precedent, a regression to accept with a reason).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from memtui.core import evalsets
from memtui.core.skills.manifest import MANIFEST_FILE, read_manifest
from memtui.core.skills.model import SKILL_FILE
from memtui.core.workspace import Workspace

#: The prefix of a skill's entry id in an eval set (``skill:parcel-trace``).
ENTRY_PREFIX = "skill:"


def _node(value: Any) -> str | None:
    """An ``eval_set`` value as a memory-relative node (``""`` the root), or ``None``."""
    if not isinstance(value, str) or not value.strip():
        return None
    node = value.strip().strip("/")
    node = node[len("memory/"):] if node.startswith("memory/") else node
    return "" if node in (".", "memory") else node


def gate_sets(data: dict[str, Any] | None) -> list[str]:
    """The eval sets (memory nodes) a manifest's ``verification`` names, in order, each once."""
    out: list[str] = []
    checks = (data or {}).get("verification")
    for check in checks if isinstance(checks, list) else []:
        node = _node(check.get("eval_set")) if isinstance(check, dict) else None
        if node is not None and node not in out:
            out.append(node)
    return out


def files_gate_sets(files: dict[str, str] | None) -> list[str]:
    """The eval sets named by the manifest among a version's ``files`` (none when it has no
    readable manifest)."""
    text = (files or {}).get(MANIFEST_FILE)
    if text is None:
        return []
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        return []
    return gate_sets(data if isinstance(data, dict) else None)


def _skill_folders(ws: Workspace) -> list[tuple[str, Path]]:
    """``(name, folder)`` of every skill folder of both roots (a root linked outside is not read)."""
    out = []
    for root in ws.skill_roots.values():
        if not root.is_dir() or ws.linked_outside(root) is not None:
            continue
        for folder in sorted(root.iterdir()):
            if folder.is_dir() and (folder / SKILL_FILE).is_file():
                out.append((folder.name, folder))
    return out


def skill_ids(ws: Workspace) -> set[str]:
    """``skill:NAME`` of every skill of the workspace: the skill ids an eval set may name."""
    return {ENTRY_PREFIX + name for name, _ in _skill_folders(ws)}


def gated_ids(ws: Workspace, node: str) -> dict[str, str]:
    """The entries the skills gated on ``node``'s eval set add to its measured memory: the
    ``SKILL.md`` path (workspace-relative, as the search names it) → ``skill:NAME``."""
    out = {}
    for name, folder in _skill_folders(ws):
        manifest = read_manifest(folder, ws.shown(folder / MANIFEST_FILE))
        if node in gate_sets(manifest.data):
            out[ws.shown(folder / SKILL_FILE)] = ENTRY_PREFIX + name
    return out


def check_sets(ws: Workspace, nodes: list[str], skill: str) -> None:
    """Refuse to gate on a set that cannot be run: no such file, unreadable, bad lines, no
    cases, or cases naming ids that are neither an article's nor a skill's.

    Raises:
        memtui.core.evalsets.EvalSetError: the sentence names the set, what is wrong and what to
            do; nothing was changed.
    """
    from memtui.core.search.triage import entry_ids

    known: set[str] | None = None
    for node in nodes:
        where = evalsets.set_path(node)
        if not os.path.isfile(evalsets.set_file(ws, node)):
            raise evalsets.EvalSetError(
                f"{skill} is gated on the eval set of {node or 'the root node'}, but memory/{where} does not "
                "exist; its owner proposes the set, or the skill's manifest names the set it means "
                "(verification: eval_set). Nothing was changed.")
        es = evalsets.load(ws, node)
        bad = [f for f in es.findings if f.severity.value == "error"]
        if not bad and not es.cases:
            raise evalsets.EvalSetError(f"the eval set of {node or 'the root node'} that {skill} is gated on holds "
                                        "no cases, so it measures nothing; add cases to it. Nothing was changed.")
        if known is None:
            known = set(entry_ids(ws).values()) | skill_ids(ws)
        bad += evalsets.unknown_ids(es.cases, known, es.place)
        if bad:
            raise evalsets.EvalSetError(
                f"the eval set of {node or 'the root node'} that {skill} is gated on cannot be run: "
                + "; ".join(f.message for f in bad[:5]) + (f" (and {len(bad) - 5} more)" if len(bad) > 5 else "")
                + f". Its owner corrects memory/{where}; then try again. Nothing was changed.")

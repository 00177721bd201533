"""The occurrence ladder (seed 000 Part II §9): "the platform counts occurrences on the fix
signature; the third occurrence proposes the skill or the article, the seventh and the
twentieth refine it with the evidence of use. A wrong existing claim is corrected at once,
outside the ladder" (that is ``memtui contest``, not this).

The **fix signature** of an experience entry (seed 000 §5) is its ``symptom``, ``systems``,
``mechanism`` and ``fix_shape``, each normalised (case, accents, quotes, white space; systems
as a set), hashed. Its **occurrences** are the distinct cases that met it: each experience
entry carrying the signature is one (its ``id``, else its path), and every occurrence of an
entry recorded with :func:`memtui.core.governance.counters.occurred` (``memtui occurred ENTRY
--case C --source-request R``, the same record the entry's occurrence counter reads) adds its case. At 3, 7 and 20 cases the signature is a ``ladder``
candidate of the consolidation pass.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from typing import Any, Callable

from memtui.core.governance.counters import T_OCCURRENCES
from memtui.core.search.analysis import normalize
from memtui.core.store import Store
from memtui.core.tree import shape
from memtui.core.tree.model import MemoryTree

#: The rungs: the third occurrence proposes, the seventh and the twentieth refine.
STEPS = (3, 7, 20)

_QUOTES = re.compile(r"[\"'`„“”«»‚‘’]")


def _norm(value: Any) -> str:
    return " ".join(_QUOTES.sub("", normalize(str(value))).split())


def fix_signature(meta: dict[str, Any]) -> str | None:
    """The fix signature of an experience entry's front matter (module docstring), or ``None``
    when it lacks its symptom, mechanism or fix shape."""
    parts = [meta.get(k) for k in ("symptom", "mechanism", "fix_shape")]
    if not all(isinstance(p, str) and p.strip() for p in parts):
        return None
    systems = meta.get("systems")
    listed = sorted({_norm(s) for s in systems if isinstance(s, str)} if isinstance(systems, list)
                    else {_norm(systems)} if isinstance(systems, str) else set())
    text = "\n".join([_norm(parts[0]), ",".join(listed), _norm(parts[1]), _norm(parts[2])])
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


@dataclass(slots=True)
class Rung:
    """One fix signature and its occurrences.

    Attributes:
        signature: the hashed fix signature.
        entries: the experience entries carrying it (memory-relative paths), sorted.
        cases: the distinct cases that met it, in the order first seen.
        fix_shape: the entries' fix shape, as written in the first.
    """

    signature: str
    entries: list[str] = field(default_factory=list)
    cases: list[str] = field(default_factory=list)
    fix_shape: str = ""

    @property
    def count(self) -> int:
        return len(self.cases)

    @property
    def step(self) -> int | None:
        """The highest rung reached (3, 7 or 20), or ``None`` below 3."""
        reached = [s for s in STEPS if self.count >= s]
        return reached[-1] if reached else None

    def sentence(self) -> str:
        """What the rung asks for, in one sentence naming the cases."""
        shown = ", ".join(self.cases[:10]) + (f" and {len(self.cases) - 10} more" if len(self.cases) > 10 else "")
        if self.step == STEPS[0]:
            ask = "propose a skill or an article"
        else:
            ask = "refine the existing skill or article with the evidence of use"
        return f"{self.count} cases share this fix signature: {ask} (cases {shown})"


def rungs(entries: dict[str, dict[str, Any]], store: Store | None) -> dict[str, Rung]:
    """Every fix signature of ``entries`` (``{path: front matter}`` of experience entries) with
    its occurrences, the recorded ones of ``store`` included."""
    out: dict[str, Rung] = {}
    for path in sorted(entries):
        meta = entries[path]
        sig = fix_signature(meta)
        if sig is None:
            continue
        rung = out.setdefault(sig, Rung(sig, fix_shape=str(meta.get("fix_shape") or "")))
        rung.entries.append(path)
        case = meta.get("id") if isinstance(meta.get("id"), str) and meta.get("id") else path
        if case not in rung.cases:
            rung.cases.append(str(case))
    if store is not None and not getattr(store, "damaged", False):
        rows = store.derived("ladder.occurrences", lambda tables: [
            tables.get(T_OCCURRENCES, {})[i] for i in sorted(tables.get(T_OCCURRENCES, {}), key=int)])
        for row in rows:
            recorded = entries.get(str(row.get("article") or ""))
            found = out.get(fix_signature(recorded) or "") if recorded is not None else None
            case = str(row.get("case") or "")
            if found is not None and case and case not in found.cases:
                found.cases.append(case)
    return out


def candidates(entries: dict[str, tuple[str, dict[str, Any]]], store: Store | None,
               owner: Callable[[str], str | None], make: Callable[..., Any]) -> list[Any]:
    """The ``ladder`` candidates of the consolidation pass.

    Args:
        entries: ``{path: (node, front matter)}`` of the experience entries read.
        store: the store (recorded occurrences), or ``None``.
        owner: the owner of a node.
        make: the consolidation pass's candidate class (called as it is).
    """
    found = rungs({p: meta for p, (_, meta) in entries.items()}, store)
    out = []
    for rung in found.values():
        if rung.step is None:
            continue
        node = entries[rung.entries[0]][0]
        ask = "propose a skill or an article" if rung.step == STEPS[0] else "refine the skill or article"
        command = ("memtui propose --skill NAME --from FOLDER … (or memtui propose --node NODE --article …)"
                   if rung.step == STEPS[0] else "memtui propose --skill NAME --from FOLDER … with the cases as evidence")
        out.append(make("ladder", node, owner(node), list(rung.entries), rung.sentence(), ask, command,
                        [owner(entries[p][0]) for p in rung.entries],
                        {"signature": rung.signature, "cases": list(rung.cases), "count": rung.count,
                         "step": rung.step, "fix_shape": rung.fix_shape}))
    return out


def rung_of(ws: Any, store: Store, article: str) -> Rung | None:
    """The rung of the fix signature of the experience entry ``article`` (memory-relative) with
    every occurrence recorded so far, or ``None`` when it is not an experience entry with a fix
    signature (``ws``: the :class:`~memtui.core.workspace.Workspace`)."""
    entries = _experience_entries(MemoryTree(ws))
    meta = entries.get(article)
    sig = fix_signature(meta) if meta is not None else None
    return rungs(entries, store).get(sig) if sig else None


def _experience_entries(tree: MemoryTree) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for node in tree.walk_nodes():
        if not shape.is_experience(node):
            continue
        for path in tree.article_files(node):
            article = tree.read_article(path)
            if article.ok and isinstance(article.meta, dict):
                out[path] = article.meta
    return out


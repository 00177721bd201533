"""The occurrence ladder (seed 000 Part II §9): "the platform counts occurrences on the fix
signature; the third occurrence proposes the skill or the article, the seventh and the
twentieth refine it with the evidence of use. A wrong existing claim is corrected at once,
outside the ladder" (that is ``memtui contest``, not this).

The **fix signature** of an experience entry (seed 000 §5) is its ``symptom``, ``systems``,
``mechanism`` and ``fix_shape``, each normalised (case, accents, quotes, white space; systems
as a set), hashed. Its **occurrences** are the distinct cases that met it: each experience
entry carrying the signature is one (its ``id``, else its path), and every occurrence recorded
with :func:`record` (``memtui occurrence ENTRY --case C --source-request R``) in the
``occurrences`` table adds its case. At 3, 7 and 20 cases the signature is a ``ladder``
candidate of the consolidation pass.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from typing import Any, Callable

from memtui.core.errors import MemtuiError
from memtui.core.search.analysis import normalize
from memtui.core.store import Store
from memtui.core.tree import shape
from memtui.core.tree.model import MemoryTree

#: The store table of recorded occurrences.
T_OCCURRENCES = "occurrences"

#: The rungs: the third occurrence proposes, the seventh and the twentieth refine.
STEPS = (3, 7, 20)

_QUOTES = re.compile(r"[\"'`„“”«»‚‘’]")


class OccurrenceError(MemtuiError):
    """An occurrence cannot be recorded as given (not an experience entry, no fix signature,
    the case already counted); ``str(exc)`` says why."""


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
            found = out.get(str(row.get("signature")))
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


def record(session: Any, article: str, *, case: str, source_request: str, client_id: str | None = None) -> dict[str, Any]:
    """Record that ``case`` met the fix signature of the experience entry ``article``
    (memory-relative), as one guarded write (``consolidate.occurrence``).

    Returns:
        ``{"row": the recorded row, "count": occurrences of the signature now, "step": the rung
        reached (3, 7, 20) or None}``.

    Raises:
        OccurrenceError: not an experience entry, no fix signature, missing case or source
            request, or the case already counted for this signature.
    """
    if not case.strip() or not source_request.strip():
        raise OccurrenceError("an occurrence needs its case id and source-request id.")
    path = article.strip().strip("/")
    path = path[len("memory/"):] if path.startswith("memory/") else path
    tree = MemoryTree(session.ws)
    node = path.rsplit("/", 1)[0] if "/" in path else ""
    if not shape.is_experience(node) or not path.endswith(".md"):
        raise OccurrenceError(f"{article!r} is not an experience entry (an article in an experience node).")
    read = tree.read_article(path)
    meta = read.meta if read.ok and isinstance(read.meta, dict) else {}
    sig = fix_signature(meta)
    if sig is None:
        raise OccurrenceError(f"{path} has no fix signature: it needs symptom, mechanism and fix_shape.")
    siblings = _experience_entries(tree)

    def change(tx: Any) -> dict[str, Any]:
        rung = rungs(siblings, session.store).get(sig)
        if rung is not None and case.strip() in rung.cases:
            raise OccurrenceError(f"case {case.strip()} is counted for this fix signature already.")
        row = {"signature": sig, "entry": path, "case": case.strip(), "source_request": source_request.strip(),
               "time": _now(), "by": session.profile}
        tx.table(T_OCCURRENCES).insert(row)
        tx.hashes(None, None)
        count = (rung.count if rung else 0) + 1
        tx.detail.update({"entry": path, "signature": sig, "case": case.strip(), "count": count})
        return {"row": row, "count": count, "step": max([s for s in STEPS if count >= s], default=None)}

    shown = f"{session.ws.memory_rel}/{path}" if session.ws.memory_rel else path
    done = session.write("consolidate.occurrence", shown, change, client_id=client_id,
                         request={"entry": path, "case": case.strip(), "source_request": source_request.strip()})
    if done.retried:
        rung = rungs(siblings, session.store).get(sig)
        count = rung.count if rung else 0
        return {"row": None, "count": count, "step": max([s for s in STEPS if count >= s], default=None)}
    return done.result


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


def _now() -> str:
    from memtui.core.governance.model import now

    return now()

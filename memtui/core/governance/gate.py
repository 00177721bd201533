"""Dependency-scoped evaluation: a change is measured before it lands (seed 000 §7.4b, §7.2).

Approving (a merge too), rolling back, retiring or refreshing an article re-runs the eval
sets of the domains it sits in — its node and the ancestors that hold an eval set
(:func:`memtui.core.evalsets.domains_of`), not every set — on the memory **as it will be
after the change**, beside the same figures before:

1. a scratch copy of the workspace is made under ``.memtui/evals/<pid>-<id>/``: the memory
   tree and the skill roots (a skill is searched with the memory, and the skills gated on a
   set are entries of it: :mod:`memtui.core.skills.gating`) as hard links (a copy where links
   cannot be made), the store as a copy, the search index's segment files as hard links and
   its other files as copies (:meth:`memtui.core.search.index.SearchIndex.mirror_to`: Whoosh
   never rewrites a segment file); the live files, store and index are only read;
2. the scratch index is brought up to date and every case of each set is run through the
   same search a user gets (:mod:`memtui.core.search.triage`): the figures *before*. They
   and the answer per case are recorded in ``.memtui/evals-before/`` under a digest of what
   they depend on (:func:`_before_key`: the memory tree, the index as copied, the
   calibration, the code); the next evaluation of the same domain on the same memory and
   index (a regression refused, then accepted; a dialog cancelled, then confirmed) recalls
   them instead of searching again. A record is written whole or not at all, and one made
   for anything else is never used. The articles' ids are recorded there too, with each
   file's size, time and inode: the next evaluation reads only the files that changed;
3. the very same action is replayed in the scratch copy (its own guarded write there), the
   files it changed are re-indexed there (the same index object: its searcher keeps the
   readers of the segments the change left), and the cases run again: the figures *after*;
4. the scratch copy is removed (a killed evaluation leaves it behind; the next one removes
   it, and nothing else reads it).

Every case is searched after the change: a case whose answers "cannot change" cannot be told
apart soundly, since BM25's statistics (document count, average length, each word's rarity)
move with any change, and a pasted ticket's words are chosen by their rarity.

A domain whose figures get worse (hit@1, hit@5, MRR — of the answers shown, or of every
candidate before the confidence cut — lower, the false-precedent rate higher) makes the change a **regression**: refused (:class:`RegressionRefused`) unless the
caller accepts it with a reason. The evaluation is recorded in the same guarded write as the
change (in the version's provenance, or the retirement, and in the audit entry), after a
check that the memory is still the one that was measured (:func:`inside`): a change that
landed meanwhile — another approval — makes the evaluation stale, and :func:`run` measures
again. So an approval is recorded with its evaluation or not at all.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, TypeVar

from memtui.core import evalsets
from memtui.core.errors import BusyError
from memtui.core.governance.model import GovernanceError, RefusedError
from memtui.core.workspace import Workspace

T = TypeVar("T")

#: ``progress(stage, done, total)``: ``stage`` says what is measured now (a sentence).
Progress = Callable[[str, int, int], None]

#: Passed as ``evaluation`` to an action replayed inside the scratch copy: measure nothing.
SKIP: Any = object()
#: The cut-off of hit@k used for the figures (the triage README's k).
K = 5
#: The figures compared before and after, and which way is better (+1: higher is better).
#: ``mrr_all`` ranks every candidate, before the confidence cut: a precedent that sinks in the
#: ranking is a loss even while the cut hides it.
FIGURES: tuple[tuple[str, int], ...] = (("hit@1", 1), (f"hit@{K}", 1), ("mrr", 1), ("mrr_all", 1),
                                         ("false_precedent_rate", -1))
#: Case changes kept in a recorded evaluation, per domain (the figures are kept whole).
KEEP_CASES = 50
#: Attempts to measure and record when other changes keep landing meanwhile.
ATTEMPTS = 3
#: Folder (under ``.memtui``) of the scratch copies.
SCRATCH = "evals"
_EPS = 1e-9


class RegressionRefused(RefusedError):
    """The change makes a domain's figures worse and no reason to accept that was given."""

    def __init__(self, message: str, evaluation: "Evaluation"):
        super().__init__(message)
        self.evaluation = evaluation


class StaleEvaluation(GovernanceError):
    """The memory changed between the evaluation and the write: it must be measured again."""


@dataclass(slots=True)
class CaseChange:
    """One case whose answer changed: the first relevant entry's rank in the candidate list
    before and after (``None``: not among them), the top answer shown before and after."""

    case: str
    relevant: list[str]
    before_rank: int | None
    after_rank: int | None
    before_entry: str | None
    after_entry: str | None
    before_top: str | None
    after_top: str | None
    near_miss: list[str] = field(default_factory=list)

    @property
    def worse(self) -> bool:
        """The precedent fell or left, or a false precedent came to the top."""
        if self.relevant:
            if self.before_rank is not None and (self.after_rank is None or self.after_rank > self.before_rank):
                return True
            return self.after_top in self.near_miss and self.before_top not in self.near_miss
        return self.after_top is not None and self.before_top is None

    def sentence(self) -> str:
        """``c017: the precedent was exp-020 at rank 1, after this change rank 6``."""
        def rank(r: int | None) -> str:
            return f"rank {r}" if r is not None else "not among the first 30 answers"

        if self.relevant:
            entry = self.before_entry or self.after_entry or self.relevant[0]
            if self.before_rank is None:
                head = f"the precedent {entry} was not among the first 30 answers"
            else:
                head = f"the precedent was {entry} at rank {self.before_rank}"
            out = f"{self.case}: {head}, after this change {rank(self.after_rank)}"
            if self.after_entry and self.before_entry and self.after_entry != self.before_entry:
                out += f" ({self.after_entry})"
            if self.after_top != self.before_top and self.after_top in self.near_miss:
                out += f"; the top answer is now {self.after_top}, a wrong precedent"
            return out
        return (f"{self.case} (no precedent exists): the top answer was {self.before_top or 'nothing'}, "
                f"after this change {self.after_top or 'nothing'}")

    def to_json(self) -> dict[str, Any]:
        """The change as recorded: ids, ranks, tops, ``worse`` and the sentence."""
        return {"case": self.case, "relevant": self.relevant, "before_rank": self.before_rank,
                "after_rank": self.after_rank, "before_entry": self.before_entry,
                "after_entry": self.after_entry, "before_top": self.before_top, "after_top": self.after_top,
                "worse": self.worse, "sentence": self.sentence()}


@dataclass(slots=True)
class DomainResult:
    """One domain's eval set measured before and after a change.

    ``before``/``after``: ``{"cases", "hit@1", "hit@5", "mrr", "mrr_all", "false_precedent_rate",
    "baseline_hit@5", "beats"}`` (rates 0…1, ``None`` with nothing to average);
    ``set_changed``: the change is to the eval set itself (its cases differ, so the figures
    are recorded but not compared); ``findings``: problems of the set (unknown ids …).
    """

    node: str
    owner: str | None
    before: dict[str, Any]
    after: dict[str, Any]
    changes: list[CaseChange] = field(default_factory=list)
    set_changed: bool = False
    findings: list[str] = field(default_factory=list)

    @property
    def worse(self) -> list[str]:
        """The figures that got worse (empty when none, or when the set itself changed)."""
        if self.set_changed:
            return []
        out = []
        for name, sign in FIGURES:
            b, a = self.before.get(name), self.after.get(name)
            if b is None or a is None:
                continue
            if (a - b) * sign < -_EPS:
                out.append(name)
        return out

    def to_json(self, keep: int = KEEP_CASES) -> dict[str, Any]:
        """The domain as recorded: figures, what got worse, the case changes (the first
        ``keep``; ``cases_changed`` counts them all)."""
        return {"node": self.node or ".", "owner": self.owner, "before": self.before, "after": self.after,
                "worse": self.worse, "set_changed": self.set_changed, "findings": self.findings,
                "cases_changed": len(self.changes), "changes": [c.to_json() for c in self.changes[:keep]]}


@dataclass(slots=True)
class Evaluation:
    """What a change does to the eval sets of its domains.

    ``basis``: a fingerprint of the memory tree that was measured (:func:`tree_digest`);
    ``accepted``: the reason a regression was accepted with (``None``: not accepted).
    """

    action: str
    target: str
    domains: list[DomainResult]
    basis: str
    seconds: float
    accepted: str | None = None
    by: str | None = None

    @property
    def regressed(self) -> bool:
        """True when any domain's figures got worse."""
        return any(d.worse for d in self.domains)

    def to_json(self) -> dict[str, Any]:
        """The evaluation as recorded with the version: ``{"action", "target", "at", "k",
        "regressed", "accepted_regression", "reason", "by", "seconds", "domains": [...]}``."""
        return {"action": self.action, "target": self.target, "k": K, "regressed": self.regressed,
                "accepted_regression": bool(self.regressed and self.accepted), "reason": self.accepted,
                "by": self.by, "seconds": round(self.seconds, 3),
                "domains": [d.to_json() for d in self.domains]}

    def summary(self) -> dict[str, Any]:
        """The audit entry's short form: per domain its hit@5 before and after."""
        return {"regressed": self.regressed, "accepted_regression": bool(self.regressed and self.accepted),
                "reason": self.accepted,
                "domains": {d.node or ".": {"before": d.before.get(f"hit@{K}"), "after": d.after.get(f"hit@{K}"),
                                            "worse": d.worse} for d in self.domains}}


def lines(record: dict[str, Any] | None, *, cases: bool = True) -> list[str]:
    """The sentences showing a recorded evaluation (:meth:`Evaluation.to_json`) to people:
    per domain its figures before → after, then the cases that changed."""
    if not record:
        return []
    out = []
    for d in record.get("domains") or []:
        b, a = d.get("before") or {}, d.get("after") or {}
        head = f"eval set of {d.get('node')}: {a.get('cases', b.get('cases', 0))} cases"
        if d.get("set_changed"):
            head += " (the set itself changes)"
        out.append(head)
        for name, _ in FIGURES:
            if name not in b and name not in a:
                continue
            mark = "  worse" if name in (d.get("worse") or []) else ""
            out.append(f"  {label(name):<21}{_pct(b.get(name), name):>6} → {_pct(a.get(name), name)}{mark}")
        out.append(f"  {'grep baseline hit@5':<21}{_pct(b.get('baseline_hit@5'), 'x'):>6} → "
                   f"{_pct(a.get('baseline_hit@5'), 'x')}: {_beats(a)}")
        for f in d.get("findings") or []:
            out.append(f"  note: {f}")
        if cases:
            for c in d.get("changes") or []:
                out.append(f"  {c.get('sentence')}")
            more = int(d.get("cases_changed") or 0) - len(d.get("changes") or [])
            if more > 0:
                out.append(f"  … and {more} more cases changed")
    if record.get("accepted_regression"):
        out.append(f"regression accepted by {record.get('by') or '?'}: {record.get('reason')}")
    return out


def verdict(record: dict[str, Any] | None) -> str:
    """One phrase for lists: ``figures unchanged`` / ``worse in support/x (accepted)`` …"""
    if not record:
        return ""
    worse = [d.get("node") for d in record.get("domains") or [] if d.get("worse")]
    if not worse:
        return "eval: no domain worse"
    return f"eval: worse in {', '.join(str(w) for w in worse)}" + (" (accepted)" if record.get("accepted_regression") else "")


def label(name: str) -> str:
    """A figure's name as people read it (``mrr_all`` → ``MRR of all answers``)."""
    return {"false_precedent_rate": "false-precedent rate", "mrr": "MRR",
            "mrr_all": "MRR of all answers"}.get(name, name)


def _pct(value: Any, name: str) -> str:
    if value is None:
        return "—"
    if name in ("mrr", "mrr_all"):
        return f"{value:.2f}"
    return f"{value * 100:.1f}%"


def _beats(fig: dict[str, Any]) -> str:
    return {True: "beats it", False: "does NOT beat it", None: "no cases"}[fig.get("beats")]


# -- the scratch copy ---------------------------------------------------------------------

def _measured_roots(ws: Workspace) -> list[Path]:
    """The folders whose files make the measured memory: the memory tree, and the skill roots
    (a skill's ``SKILL.md`` is searched with it; :mod:`memtui.core.skills.gating`) when they
    are real folders of the workspace outside the memory tree."""
    from memtui.core.files import is_inside

    roots = [ws.memory]
    if ws.memory != ws.root:
        roots += [r for r in ws.skill_roots.values()
                  if r.is_dir() and not r.is_symlink() and is_inside(ws.root, r) and ws.linked_outside(r) is None]
    return roots


def tree_digest(ws: Workspace) -> str:
    """A fingerprint of every file of the measured memory (the memory tree and the skill
    roots; path, size, time, inode): equal when nothing under it changed. Hidden folders
    (``.memtui``, ``.git``) are left out."""
    h = hashlib.sha256()
    for base in _measured_roots(ws):
        root = str(base)
        for folder, dirs, files in os.walk(root):
            dirs[:] = sorted(d for d in dirs if not d.startswith("."))
            for name in sorted(files):
                path = os.path.join(folder, name)
                try:
                    st = os.lstat(path)
                except OSError:
                    continue
                h.update(f"{os.path.relpath(path, ws.root)}\0{st.st_size}\0{st.st_mtime_ns}\0{st.st_ino}\n".encode(
                    "utf-8", "surrogateescape"))
    return h.hexdigest()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True
    return True


def clear_leftovers(ws: Workspace) -> None:
    """Remove scratch copies whose process is gone (a killed evaluation's)."""
    folder = ws.state_dir / SCRATCH
    try:
        names = os.listdir(folder)
    except OSError:
        return
    for name in names:
        pid = name.split("-", 1)[0]
        if pid.isdigit() and int(pid) != os.getpid() and not _alive(int(pid)):
            shutil.rmtree(folder / name, ignore_errors=True)


def _mirror(src: Path, dst: Path, skip: set[str]) -> None:
    """``src`` mirrored into ``dst``: files as hard links (copies where a link cannot be
    made), symbolic links as the same links; ``skip`` names top-level entries left out."""
    dst.mkdir(parents=True, exist_ok=True)
    for folder, dirs, files in os.walk(src):
        rel = os.path.relpath(folder, src)
        target = dst if rel == "." else dst / rel
        if rel == ".":
            dirs[:] = [d for d in dirs if d not in skip]
        keep = []
        for d in dirs:
            p = os.path.join(folder, d)
            if os.path.islink(p):
                os.symlink(os.readlink(p), target / d)
            else:
                (target / d).mkdir(exist_ok=True)
                keep.append(d)
        dirs[:] = keep
        for name in files:
            if rel == "." and name in skip:
                continue
            p = os.path.join(folder, name)
            if os.path.islink(p):
                os.symlink(os.readlink(p), target / name)
                continue
            try:
                os.link(p, target / name, follow_symlinks=False)
            except OSError:
                shutil.copy2(p, target / name)


class Scratch:
    """A scratch copy of ``ws`` (module docstring, step 1); a context manager that removes it."""

    def __init__(self, ws: Workspace):
        from memtui.core.files import is_inside
        from memtui.core.search.index import SearchIndex

        self.live = ws
        if not is_inside(ws.root, ws.state_dir):  # a .memtui linked out of the workspace: never written
            raise OSError(f"{ws.shown(ws.state_dir)} leads outside the workspace")
        clear_leftovers(ws)
        self.root = ws.state_dir / SCRATCH / f"{os.getpid()}-{uuid.uuid4().hex[:10]}"
        self.root.mkdir(parents=True)
        try:
            if ws.memory == ws.root:
                _mirror(ws.root, self.root, {".memtui", ".git"})
            else:
                _mirror(ws.memory, self.root / ws.memory_rel, {".git"})
                for skill_root in _measured_roots(ws)[1:]:  # the skills searched with the memory
                    _mirror(skill_root, self.root / skill_root.relative_to(ws.root), {".git"})
                for name in ("memtui.toml",):
                    if (ws.root / name).is_file():
                        shutil.copy2(ws.root / name, self.root / name)
            state = self.root / ".memtui"
            state.mkdir(exist_ok=True)
            store = ws.state_dir / "store.json"
            if store.is_file():
                shutil.copy2(store, state / "store.json")
            index = ws.state_dir / "index"
            if index.is_dir() and not index.is_symlink():
                SearchIndex(ws).mirror_to(state / "index")
            self.ws = Workspace.open(self.root)
        except BaseException:
            self.close()
            raise

    def close(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)

    def __enter__(self) -> "Scratch":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _files(ws: Workspace) -> dict[str, tuple[int, int, int]]:
    """Workspace-relative path → (inode, size, mtime) of every file of the measured memory."""
    out = {}
    for root in _measured_roots(ws):
        for folder, dirs, files in os.walk(root):
            dirs[:] = [d for d in dirs if not d.startswith(".")]
            for name in files:
                p = os.path.join(folder, name)
                try:
                    st = os.lstat(p)
                except OSError:
                    continue
                out[ws.shown(Path(p))] = (st.st_ino, st.st_size, st.st_mtime_ns)
    return out


# -- the figures before, recalled ---------------------------------------------------------------

#: Folder (under ``.memtui``) of each domain's figures before its last evaluated change.
RECALL_DIR = "evals-before"


def _before_key(ws: Workspace, basis: str, node: str) -> str | None:
    """What the figures of ``node``'s eval set before a change depend on, as one digest: the
    memory tree (``basis``, :func:`tree_digest`: the set, the articles, their ids and the
    node indexes), ``ws``'s search index as it is (its tables of contents and manifest: the
    index measured is it brought up to date from those files), the confidence calibration,
    the cut-offs and the code of search, of the skills' gating and of this module (file stamps). ``None`` when the
    index cannot be read (nothing is recalled then)."""
    from memtui.core.search import confidence, triage

    h = hashlib.sha256(f"{basis}\0{node}\0{K}\0{triage.CANDIDATES}\0{confidence.LIKELY}\0"
                       f"{confidence.DEFAULT!r}\0".encode())
    index = ws.state_dir / "index"
    try:
        names = sorted(os.listdir(index))
        tocs = [n for n in names if n.startswith("_") and n.endswith(".toc")]
        if not tocs:
            return None
        for name in [*tocs, "manifest.sqlite"]:
            h.update(name.encode("utf-8", "surrogateescape") + b"\0" + (index / name).read_bytes())
        code = Path(__file__).resolve().parents[1]  # memtui/core: search, the eval sets, this module
        for sub in ("search", "search/engine"):
            for f in sorted((code / sub).glob("*.py")):
                st = f.stat()
                h.update(f"{f.name}\0{st.st_size}\0{st.st_mtime_ns}\n".encode())
        for f in (Path(__file__), code / "evalsets.py", code / "skills" / "gating.py"):
            st = f.stat()
            h.update(f"{f.name}\0{st.st_size}\0{st.st_mtime_ns}\n".encode())
    except OSError:
        return None
    return h.hexdigest()


def _recall_path(ws: Workspace, node: str) -> Path:
    return ws.state_dir / RECALL_DIR / f"{hashlib.sha256(node.encode('utf-8', 'surrogateescape')).hexdigest()[:16]}.json"


def _recalled(ws: Workspace, node: str, key: str) -> tuple[dict[str, Any], dict[str, Any]] | None:
    """The figures and answers per case of ``node`` recorded under ``key`` (``None`` when
    none are, or they were recorded for another memory, index or code)."""
    from memtui.core import jsonio

    try:
        data = jsonio.loads((_recall_path(ws, node)).read_bytes())
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("key") != key or data.get("node") != node:
        return None
    fig, per = data.get("figures"), data.get("per")
    return (fig, per) if isinstance(fig, dict) and isinstance(per, dict) else None


def _remember(ws: Workspace, node: str, key: str, figures: dict[str, Any], per: dict[str, Any]) -> None:
    """Record ``node``'s figures before a change under ``key`` (atomically: a killed write
    leaves the previous record or none; a record that cannot be written is not an error)."""
    import json

    from memtui.core import atomic

    path = _recall_path(ws, node)
    try:
        path.parent.mkdir(exist_ok=True)
        atomic.write_bytes(path, json.dumps(
            {"key": key, "node": node, "figures": figures, "per": per}).encode(), durable=False)
    except OSError:
        pass


#: File (under :data:`RECALL_DIR`) of the articles' ids as last read: ``{"files": {path:
#: [size, mtime_ns, inode, id]}}`` (:func:`memtui.core.search.triage.entry_ids`).
IDS_FILE = "entry-ids.json"


def _entry_ids(ws: Workspace, sws: Workspace) -> dict[str, str]:
    """The ids of the articles of the scratch copy ``sws``
    (:func:`memtui.core.search.triage.entry_ids`), reading again only the files whose size,
    time or inode differ from those recorded in ``ws``'s :data:`RECALL_DIR` (the copy's
    files are links to the live ones: the same inodes); the record is rewritten whole
    (atomically) when a file was read. A record that cannot be read or written is not an
    error: every file is read then."""
    import json

    from memtui.core import atomic, jsonio
    from memtui.core.search import triage

    path = ws.state_dir / RECALL_DIR / IDS_FILE
    try:
        data = jsonio.loads(path.read_bytes())
        files = data.get("files") if isinstance(data, dict) else None
    except (OSError, ValueError):
        files = None
    remembered: dict[str, list] = files if isinstance(files, dict) else {}
    before = dict(remembered)  # entry_ids replaces or removes entries, never changes one
    ids = triage.entry_ids(sws, remembered)
    if remembered != before:
        try:
            path.parent.mkdir(exist_ok=True)
            atomic.write_bytes(path, json.dumps({"files": remembered}).encode(), durable=False)
        except OSError:
            pass
    return ids


# -- measuring ------------------------------------------------------------------------------

def run_set(ws: Workspace, index: Any, cases: list[Any], ids: dict[str, str],
             progress: Callable[[int, int], None] | None = None) -> tuple[dict[str, Any], dict[str, Any]]:
    """``(figures, per case {"entries", "top"})`` of ``cases`` on ``ws``'s memory, searched in
    ``index`` (up to date): figures ``{"cases", "hit@1", "hit@5", "mrr", "false_precedent_rate",
    "mrr_all", "baseline_hit@5", "beats"}`` (seed 000 §7.2: the grep baseline on the same cases;
    ``mrr_all`` over every candidate, before the confidence cut)."""
    from memtui.core.search import confidence, triage

    cands = []
    step = max(1, len(cases) // 20)
    if progress:
        progress(0, len(cases))
    for i in range(0, len(cases), step):
        cands.extend(triage.candidates(index, cases[i:i + step], ids))
        if progress:
            progress(min(len(cases), i + step), len(cases))
    ours = [c.assess(confidence.DEFAULT, confidence.LIKELY) for c in cands]
    base = triage.grep_baseline(ws, cases, ids, k=K)
    m = triage.metrics(cases, ours, K)
    b = triage.metrics(cases, base, K)
    rel = {c.id: c.relevant for c in cases}
    rr = [next((1.0 / (i + 1) for i, e in enumerate(c.entries) if e in rel[c.id]), 0.0) for c in cands if rel[c.id]]
    fig = {"cases": len(cases), "hit@1": m["hit@1"], f"hit@{K}": m[f"hit@{K}"], "mrr": m["mrr"],
           "mrr_all": sum(rr) / len(rr) if rr else None,
           "false_precedent_rate": m["false_precedent_rate"], f"baseline_hit@{K}": b[f"hit@{K}"],
           "beats": (None if m[f"hit@{K}"] is None else (m[f"hit@{K}"] or 0) > (b[f"hit@{K}"] or 0))}
    per = {c.id: {"entries": c.entries, "top": (o.ranked[0] if o.ranked else None)} for c, o in zip(cands, ours, strict=True)}
    return fig, per


def _changes(cases: list[Any], before: dict[str, Any], after: dict[str, Any]) -> list[CaseChange]:
    out = []
    for c in cases:
        b, a = before.get(c.id), after.get(c.id)
        if b is None or a is None:
            continue

        def first(entries: list[str], c: Any = c) -> tuple[int | None, str | None]:
            return next(((i + 1, e) for i, e in enumerate(entries) if e in c.relevant), (None, None))

        br, be = first(b["entries"])
        ar, ae = first(a["entries"])
        if (br, be, b["top"]) == (ar, ae, a["top"]):
            continue
        out.append(CaseChange(c.id, list(c.relevant), br, ar, be, ae, b["top"], a["top"], list(c.near_miss)))
    out.sort(key=lambda ch: (not ch.worse, ch.case))
    return out


def _patched_ids(ws: Workspace, ids: dict[str, str], changed: list[str]) -> dict[str, str]:
    """``ids`` (:func:`memtui.core.search.triage.entry_ids`) after ``changed`` files changed."""
    from memtui.core.files import read_text
    from memtui.core.frontmatter import split
    from memtui.core.workspace import NODE_INDEX

    out = {k: v for k, v in ids.items() if k not in changed}
    for shown in changed:
        path = ws.root / shown
        if not shown.endswith(".md") or path.name == NODE_INDEX or not path.is_file():
            continue
        tf = read_text(path, shown, note_encoding=False)
        meta = split(tf.text).meta if tf.ok else {}
        if isinstance(meta, dict) and meta.get("id") is not None:
            out[shown] = str(meta["id"]).strip()
    return dict(sorted(out.items()))


def measure(session: Any, action: str, target: str, nodes: list[str], replay: Callable[[Any], Any],
            progress: Progress | None = None, sets: tuple[str, ...] = (),
            profile: str | None = None) -> Evaluation | None:
    """Measure a change (module docstring): ``None`` when none of ``nodes`` (memory-relative
    node folders the change touches) sits in a domain with an eval set.

    Args:
        session: the live session (its profile acts in the scratch copy too).
        action, target: what is measured, for the record (``approve``, ``support/x.md@3``).
        replay: called with a session on the scratch copy; makes the change there.
        progress: told each stage (``progress(stage, done, total)``).
        sets: nodes whose eval set the change itself writes (measured even when the set is new).
        profile: the profile that makes the change in the scratch copy (default: the session's).

    Raises:
        memtui.core.evalsets.EvalSetError: a cycle of ancestors, or an eval set that the
            change makes unusable (unknown ids, duplicates, too large).
        Whatever ``replay`` raises (the change is refused in the scratch copy as it would be
        live); memtui.core.search.index.IndexWriteError: the scratch index cannot be written.
    """
    from memtui.core.search.index import SearchIndex
    from memtui.core.session import Session
    from memtui.core.skills import gating  # the skills gated on a set are entries of its memory
    from memtui.core.tree.model import MemoryTree

    ws = session.ws
    domains = evalsets.domains_of(ws, nodes)
    domains = [*[n for n in sets if n not in domains], *domains]
    if not domains:
        return None
    started = time.perf_counter()
    basis = tree_digest(ws)

    def tell(stage: str) -> Callable[[int, int], None]:
        return lambda done, total: progress(stage, done, total) if progress else None

    try:
        scratch = Scratch(ws)
    except OSError as exc:
        raise evalsets.EvalSetError(
            f"the change cannot be measured: memtui could not make its scratch copy in {ws.shown(ws.state_dir)}/"
            f"{SCRATCH} ({exc.strerror or exc}); free some space or make the folder writable. "
            "Nothing was changed.") from exc
    with scratch:
        sws = scratch.ws
        tell("copying the memory")(1, 1)
        # keyed on the copy (its files are links to the live ones, its index the live one's):
        # what is recalled or recorded is what this evaluation measures
        copied = tree_digest(sws)
        keys = {node: _before_key(sws, copied, node) for node in domains}
        index = SearchIndex(sws)
        index.update(progress=tell("bringing the scratch index up to date"))
        ids = _entry_ids(ws, sws)
        tree = MemoryTree(sws)
        sets_before = {node: evalsets.load(sws, node, tree) for node in domains}
        before: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {}
        gated_before = {node: gating.gated_ids(sws, node) for node in domains}
        for node, es in sets_before.items():
            key = keys[node]
            recalled = _recalled(ws, node, key) if key else None
            if recalled is None:
                before[node] = run_set(sws, index, es.cases, {**ids, **gated_before[node]},
                                       tell(f"measuring {node or '.'} before the change"))
                if key:
                    _remember(ws, node, key, *before[node])
            else:
                before[node] = recalled
                tell(f"{node or '.'} before the change: recalled from the last evaluation")(1, 1)
        files_before = _files(sws)
        skill_ids = gating.skill_ids(sws)
        s = Session.open(sws, purpose="evaluation", profile=profile or session.profile)
        try:
            replay(s)
        finally:
            s.close()
        files_after = _files(sws)
        changed = sorted(p for p in set(files_before) | set(files_after) if files_before.get(p) != files_after.get(p))
        # the same index object: its searcher keeps the readers of the segments the change left
        index.update(only=changed, progress=tell("indexing the change"))
        ids_after = _patched_ids(sws, ids, changed)
        known = set(ids_after.values()) | gating.skill_ids(sws)
        tree = MemoryTree(sws)
        results = []
        for node in domains:
            es_after = evalsets.load(sws, node, tree)
            set_changed = evalsets.set_path(node) in {_mem_rel(sws, p) for p in changed}
            if set_changed:
                bad = [f for f in es_after.findings if f.severity.value == "error"]
                bad += evalsets.unknown_ids(es_after.cases, known, es_after.place)
                if bad:
                    raise evalsets.EvalSetError(
                        f"the eval set of {node or 'the root'} would not be usable after this change: "
                        + "; ".join(f.message for f in bad[:5])
                        + (f" (and {len(bad) - 5} more)" if len(bad) > 5 else "") + ". Nothing was changed.")
            after_fig, after_per = run_set(sws, index, es_after.cases, {**ids_after, **gating.gated_ids(sws, node)},
                                            tell(f"measuring {node or '.'} after the change"))
            before_fig, before_per = before[node]
            changes = [] if set_changed else _changes(es_after.cases, before_per, after_per)
            notes = [f.message for f in evalsets.unknown_ids(sets_before[node].cases, set(ids.values()) | skill_ids,
                                                             sets_before[node].place)]
            results.append(DomainResult(node, es_after.owner, before_fig, after_fig, changes, set_changed,
                                        notes[:10]))
    return Evaluation(action, target, results, basis, time.perf_counter() - started, by=profile or session.profile)


def _mem_rel(ws: Workspace, shown: str) -> str:
    prefix = f"{ws.memory_rel}/" if ws.memory_rel else ""
    return shown[len(prefix):] if prefix and shown.startswith(prefix) else shown


def inside(tx: Any, evaluation: Any, accept: str | None) -> dict[str, Any] | None:
    """Within the guarded write of the change: check the memory is the one measured, and
    return the record to keep with the version (``None`` when nothing was measured).

    Raises:
        StaleEvaluation: a file of the memory tree changed since the evaluation.
        RegressionRefused: the evaluation is a regression and ``accept`` gives no reason.
    """
    if evaluation is None or evaluation is SKIP:
        return None
    if tree_digest(tx.session.ws) != evaluation.basis:
        raise StaleEvaluation("the memory changed while this change was measured; it is measured again")
    refuse(evaluation, accept)
    evaluation.accepted = (accept or "").strip() or None if evaluation.regressed else None
    tx.detail["evaluation"] = evaluation.summary()
    from memtui.core.governance.model import now

    at = now()
    for d in evaluation.domains:  # the domain's last figures are those it has after this change
        evalsets.record_figures(tx.table(evalsets.T_FIGURES), d.node, d.after, at,
                                f"{evaluation.action} {evaluation.target}")
    return evaluation.to_json()


def refuse(evaluation: Evaluation | None, accept: str | None) -> None:
    """Raise :class:`RegressionRefused` when ``evaluation`` is a regression not accepted with
    a reason (seed 000 §7.4b: a change lands with its measurement)."""
    if evaluation is None or evaluation is SKIP or not evaluation.regressed or (accept or "").strip():
        return
    worse = [f"{d.node or '.'} ({', '.join(label(n) for n in d.worse)})" for d in evaluation.domains if d.worse]
    cases = [c.sentence() for d in evaluation.domains for c in d.changes if c.worse][:3]
    raise RegressionRefused(
        f"this change makes the eval figures of {', '.join(worse)} worse"
        + (": " + "; ".join(cases) if cases else "")
        + ". Nothing was changed; to make it anyway, accept the regression with a reason "
        "(--accept-regression --reason WHY).", evaluation)


def run(session: Any, measure_it: Callable[[], Evaluation | None], act: Callable[[Any], T],
        evaluation: Any = None, accept: str | None = None) -> T:
    """Measure (unless ``evaluation`` is given, or :data:`SKIP`), refuse a regression not
    accepted, then ``act(evaluation)``; when the memory changed meanwhile
    (:class:`StaleEvaluation`), measure again, up to :data:`ATTEMPTS` times.

    Raises:
        RegressionRefused: as :func:`refuse`. BusyError: other changes kept landing.
        ReadOnlyError: the session may not write (nothing is measured).
        Whatever ``measure_it`` or ``act`` raise.
    """
    if evaluation is SKIP:
        return act(SKIP)
    session.require_writable()  # refused before anything is measured
    for attempt in range(ATTEMPTS):
        ev = evaluation if (attempt == 0 and evaluation is not None) else measure_it()
        refuse(ev, accept)
        try:
            return act(ev)
        except StaleEvaluation:
            continue
    raise BusyError("other changes kept landing while this change was measured; nothing was changed. "
                    "Try again in a moment.")

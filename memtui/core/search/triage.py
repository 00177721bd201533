"""The triage test (seed 000 §7.2): does the memory surface the right precedent?

Each case is a resolved ticket as it first arrived, with the entry ids that are its right
precedent (``relevant``) and look-alikes that are wrong (``near_miss``); the format and the
metrics are those of ``../shared/triage/README.md``. Every ticket goes through the same
:func:`memtui.core.search.query.search` a user gets; results are mapped to entry ids (the
front matter ``id``; an index line counts as the entry it lists) and cut at the
confidence threshold.

**Confidence** of a result (:func:`memtui.core.search.query.confidence`): its BM25F score
per query word. A result below the threshold is not shown as a precedent, so a ticket with
no precedent in the memory gets an empty answer. The setting is
``[search] precedent_threshold`` in ``memtui.toml`` (default :data:`DEFAULT_THRESHOLD`).

The baseline (:func:`grep_baseline`) is the seed's v1 retrieval as the README defines it:
ticket words of 3+ letters, lower-cased, counted as substrings of each index one-liner;
ties in file order; top 5; no threshold.
"""

from __future__ import annotations

import json
import re
import statistics
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from memtui.core.files import read_text
from memtui.core.frontmatter import split
from memtui.core.search.index import SearchIndex
from memtui.core.search.query import search
from memtui.core.tree import parse_index
from memtui.core.workspace import NODE_INDEX, Workspace

#: Default confidence threshold (``[search] precedent_threshold``). Calibrated once on the
#: dev cases and fixed: tickets without a precedent topped at 1.35, the first true
#: precedents started at 1.52 (one at 0.78 that no threshold can keep without letting every
#: no-precedent ticket through); 1.4 lies between. It is a property of the scoring (BM25F
#: score per query word), not of any corpus's words; it was 2.0 while each field's weight
#: multiplied its score instead of its term frequency (schema 5).
DEFAULT_THRESHOLD = 1.4
#: Candidates fetched per ticket before mapping to entries and cutting at the threshold.
CANDIDATES = 30


@dataclass(slots=True)
class Case:
    """One triage case: ``id``, ``ticket``, ``language``, ``relevant``, ``near_miss``."""

    id: str
    ticket: str
    language: str = ""
    relevant: list[str] = field(default_factory=list)
    near_miss: list[str] = field(default_factory=list)


@dataclass(slots=True)
class Ranked:
    """The answer for one case: entry ids best first, their confidences, time in ms."""

    id: str
    ranked: list[str]
    scores: list[float]
    ms: float

    def to_json(self) -> dict[str, Any]:
        """``{"id", "ranked", "scores", "ms"}`` — one line of the ``--results`` file."""
        return {"id": self.id, "ranked": self.ranked, "scores": [round(s, 4) for s in self.scores],
                "ms": round(self.ms, 2)}


class CasesError(ValueError):
    """The cases file cannot be used; the message names the line and the problem."""


def load_cases(path: Path) -> list[Case]:
    """Read a JSON-lines cases file (``../shared/triage/`` format).

    Raises:
        CasesError: the file is unreadable, a line is not JSON, or a case lacks ``id`` or
            ``ticket`` (the message gives the line number).
    """
    try:
        text = path.read_text("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise CasesError(f"{path} cannot be read: {exc}") from exc
    cases = []
    for n, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            raise CasesError(f"{path}:{n}: not JSON ({exc.msg})") from exc
        if not isinstance(obj, dict) or not isinstance(obj.get("id"), str) or not isinstance(obj.get("ticket"), str):
            raise CasesError(f'{path}:{n}: a case needs a text "id" and a text "ticket"')
        cases.append(Case(obj["id"], obj["ticket"], str(obj.get("language", "")),
                          [str(x) for x in obj.get("relevant") or []],
                          [str(x) for x in obj.get("near_miss") or []]))
    return cases


def threshold_setting(ws: Workspace) -> float:
    """``[search] precedent_threshold`` of ``memtui.toml``, else :data:`DEFAULT_THRESHOLD`."""
    section = ws.config.raw.get("search", {})
    value = section.get("precedent_threshold") if isinstance(section, dict) else None
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else DEFAULT_THRESHOLD


def entry_ids(ws: Workspace) -> dict[str, str]:
    """Workspace-relative article path → front matter ``id`` for every article with one."""
    out: dict[str, str] = {}
    for path in sorted(ws.memory.rglob("*.md")):
        if path.name == NODE_INDEX or not path.is_file():
            continue
        tf = read_text(path, ws.shown(path), note_encoding=False)
        meta = split(tf.text).meta if tf.ok else {}
        if isinstance(meta, dict) and meta.get("id") is not None:
            out[ws.shown(path)] = str(meta["id"]).strip()
    return out


def run_memtui(index: SearchIndex, cases: list[Case], threshold: float,
               ids: dict[str, str]) -> list[Ranked]:
    """Rank entries for every case with memtui's search; only results at or above
    ``threshold`` are kept."""
    out = []
    for case in cases:
        started = time.perf_counter()
        res = search(index, case.ticket, limit=CANDIDATES, snippets=False)
        ranked: list[str] = []
        scores: list[float] = []
        for hit in res.hits:
            eid = hit.entry_id or ids.get(hit.target or hit.path, "")
            if hit.kind == "index-line":
                eid = ids.get(hit.target, "")
            if not eid or eid in ranked:
                continue
            conf = hit.confidence
            if conf < threshold:
                continue
            ranked.append(eid)
            scores.append(conf)
        out.append(Ranked(case.id, ranked, scores, (time.perf_counter() - started) * 1000))
    return out


_BASE_WORD = re.compile(r"[^\W\d_]{3,}")


def grep_baseline(ws: Workspace, cases: list[Case], ids: dict[str, str], k: int = 5) -> list[Ranked]:
    """The seed's v1 retrieval (README "Reference point"): substring counts over one-liners."""
    lines: list[tuple[str, str]] = []  # (lower-cased line, entry id)
    prefix = f"{ws.memory_rel}/" if ws.memory_rel else ""
    for agents in sorted(ws.memory.rglob(NODE_INDEX)):
        tf = read_text(agents, ws.shown(agents), note_encoding=False)
        if not tf.ok:
            continue
        node = ws.shown(agents.parent)[len(prefix):] if agents.parent != ws.memory else ""
        text_lines = tf.text.lstrip("\ufeff").splitlines()
        for entry in parse_index(tf.text, node, ws.shown(agents)).entries:
            if entry.path and prefix + entry.path in ids and entry.line <= len(text_lines):
                lines.append((text_lines[entry.line - 1].lower(), ids[prefix + entry.path]))
    out = []
    for case in cases:
        started = time.perf_counter()
        wanted = {w.lower() for w in _BASE_WORD.findall(case.ticket)}
        scored = [(sum(1 for w in wanted if w in text), i, eid) for i, (text, eid) in enumerate(lines)]
        scored = [s for s in scored if s[0] > 0]
        scored.sort(key=lambda s: (-s[0], s[1]))
        ranked: list[str] = []
        scores: list[float] = []
        for count, _, eid in scored:
            if eid not in ranked:
                ranked.append(eid)
                scores.append(float(count))
            if len(ranked) == k:
                break
        out.append(Ranked(case.id, ranked, scores, (time.perf_counter() - started) * 1000))
    return out


def _pct(values: list[float], q: float) -> float | None:
    if not values:
        return None
    values = sorted(values)
    idx = min(len(values) - 1, max(0, int(round(q * (len(values) - 1)))))
    return values[idx]


def metrics(cases: list[Case], results: list[Ranked], k: int = 5) -> dict[str, Any]:
    """The triage README's metrics for ``results`` (a case without a result is empty).

    Returns:
        ``{"cases", "with_relevant", "hit@1", "hit@k", "mrr", "false_precedent_rate",
        "false_near_miss_rate", "false_no_precedent_rate", "first_relevant_rank_mean",
        "first_relevant_rank_median", "first_relevant_ms_median", "first_relevant_ms_p90",
        "ms_median", "hit@k_by_language": {lang: rate}, "k"}`` — rates in 0…1, ``None``
        where a metric has no case to average over.
    """
    by_id = {r.id: r for r in results}
    with_rel = [c for c in cases if c.relevant]
    hit1 = hitk = 0
    rr: list[float] = []
    ranks: list[int] = []
    first_ms: list[float] = []
    fp_near = fp_none = 0
    lang_total: dict[str, int] = {}
    lang_hit: dict[str, int] = {}
    for c in cases:
        r = by_id.get(c.id) or Ranked(c.id, [], [], 0.0)
        if r.ranked and r.ranked[0] in c.near_miss:
            fp_near += 1
        elif not c.relevant and r.ranked:
            fp_none += 1
        if not c.relevant:
            continue
        lang_total[c.language] = lang_total.get(c.language, 0) + 1
        rank = next((i + 1 for i, e in enumerate(r.ranked) if e in c.relevant), None)
        rr.append(1.0 / rank if rank else 0.0)
        if rank == 1:
            hit1 += 1
        if rank and rank <= k:
            hitk += 1
            ranks.append(rank)
            first_ms.append(r.ms)
            lang_hit[c.language] = lang_hit.get(c.language, 0) + 1
    n = len(with_rel)
    ms_all = [by_id[c.id].ms for c in cases if c.id in by_id]
    return {
        "k": k,
        "cases": len(cases),
        "with_relevant": n,
        "hit@1": hit1 / n if n else None,
        f"hit@{k}": hitk / n if n else None,
        "mrr": sum(rr) / n if n else None,
        "false_precedent_rate": (fp_near + fp_none) / len(cases) if cases else None,
        "false_near_miss_rate": fp_near / len(cases) if cases else None,
        "false_no_precedent_rate": fp_none / len(cases) if cases else None,
        "first_relevant_rank_mean": statistics.fmean(ranks) if ranks else None,
        "first_relevant_rank_median": statistics.median(ranks) if ranks else None,
        "first_relevant_ms_median": statistics.median(first_ms) if first_ms else None,
        "first_relevant_ms_p90": _pct(first_ms, 0.9),
        "ms_median": statistics.median(ms_all) if ms_all else None,
        f"hit@{k}_by_language": {lang: lang_hit.get(lang, 0) / total
                                  for lang, total in sorted(lang_total.items())},
    }


@dataclass(slots=True)
class TriageReport:
    """Both systems' metrics on the same cases, the threshold, and memtui's ranked lists."""

    memtui: dict[str, Any]
    baseline: dict[str, Any]
    threshold: float
    results: list[Ranked]
    index: dict[str, Any]

    def to_json(self) -> dict[str, Any]:
        """``{"threshold", "memtui": metrics, "baseline": metrics, "index": update report}``."""
        return {"threshold": self.threshold, "memtui": self.memtui, "baseline": self.baseline,
                "index": self.index}


def run(ws: Workspace, cases: list[Case], k: int = 5, threshold: float | None = None,
        progress: Callable[[int, int], None] | None = None) -> TriageReport:
    """Update the index, run every case through memtui's search and through the baseline.

    Args:
        ws: the workspace whose memory is tested (its index is updated first).
        cases: from :func:`load_cases`.
        k: the cut-off of hit@k (the README uses 5).
        threshold: the confidence threshold; ``None`` reads :func:`threshold_setting`.
        progress: passed to the index update.

    Raises:
        memtui.core.search.index.IndexBusyError / IndexWriteError: the index cannot be updated.
    """
    index = SearchIndex(ws)
    report = index.update(progress=progress)
    thr = threshold_setting(ws) if threshold is None else threshold
    ids = entry_ids(ws)
    ours = run_memtui(index, cases, thr, ids)
    base = grep_baseline(ws, cases, ids, k=k)
    return TriageReport(metrics(cases, ours, k), metrics(cases, base, k), thr, ours, report.to_json())

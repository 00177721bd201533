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
from memtui.core.search import confidence
from memtui.core.search.index import SearchIndex
from memtui.core.search.query import search
from memtui.core.tree import MemoryTree, parse_index
from memtui.core.workspace import NODE_INDEX, Workspace

#: Candidates fetched per ticket before mapping to entries and assessing them.
CANDIDATES = 30
#: Folds of the cross-validation when none is asked for.
DEFAULT_FOLDS = 5


@dataclass(slots=True)
class Case:
    """One triage case: ``id``, ``ticket``, ``language``, ``relevant``, ``near_miss`` and
    ``style``, the way the ticket is written (``forwarded-email``, ``relayed``, ``log`` …;
    ``""`` when the case does not say)."""

    id: str
    ticket: str
    language: str = ""
    relevant: list[str] = field(default_factory=list)
    near_miss: list[str] = field(default_factory=list)
    style: str = ""


@dataclass(slots=True)
class Ranked:
    """The answer for one case: the entry ids shown as precedents best first, their
    probabilities (``scores``), time in ms, the ``possible`` ones below the cut, and the
    answer's probability (``likelihood``; ``None`` for an answer with no calibration, such
    as the baseline's)."""

    id: str
    ranked: list[str]
    scores: list[float]
    ms: float
    possible: list[str] = field(default_factory=list)
    likelihood: float | None = None

    def to_json(self) -> dict[str, Any]:
        """``{"id", "ranked", "scores", "ms", "possible", "likelihood"}`` — one line of the
        ``--results`` file."""
        return {"id": self.id, "ranked": self.ranked, "scores": [round(s, 4) for s in self.scores],
                "ms": round(self.ms, 2), "possible": self.possible,
                "likelihood": None if self.likelihood is None else round(self.likelihood, 4)}


@dataclass(slots=True)
class Candidates:
    """Every entry a ticket's search found, best first, before any cut: entry ids, their
    BM25F scores, the query's word count, the search time (ms), per entry its
    ``coverage`` and ``agreement``, ``known``, the share of the query's words the index holds,
    and ``keyed``, the share of those held only under a sound key
    (see :mod:`memtui.core.search.confidence`; ``None`` where not measured)."""

    id: str
    entries: list[str]
    scores: list[float]
    query_words: int
    ms: float
    coverage: list[float | None] = field(default_factory=list)
    agreement: list[float | None] = field(default_factory=list)
    known: float | None = None
    keyed: float | None = None

    def features(self) -> tuple[float, ...] | None:
        """The confidence features of this list (:func:`memtui.core.search.confidence.features`)."""
        return confidence.features(self.scores, True, self.agreement[0] if self.agreement else None)

    def without(self, entries: list[str]) -> "Candidates":
        """The same list with ``entries`` taken out: what the search answers when those
        entries were never written (the rest scores alike: BM25 of one document does not
        depend on another's, but for the slightly different word rarities)."""
        keep = [i for i, e in enumerate(self.entries) if e not in entries]

        def pick(values: list) -> list:  # noqa: ANN001
            return [values[i] for i in keep if i < len(values)]

        return Candidates(self.id, pick(self.entries), pick(self.scores), self.query_words, self.ms,
                          pick(self.coverage), pick(self.agreement), self.known, self.keyed)

    def assess(self, calibration: confidence.Calibration, likely: float = confidence.LIKELY) -> Ranked:
        """The answer ``calibration`` gives: the first entries when the answer is likely
        (``scores`` holds its probability for each), else none, and ``possible`` ones."""
        x = self.features()
        p = 0.0 if x is None else calibration.probability(x)
        kinds = confidence.verdicts(p, len(self.entries), likely)
        ranked = [e for e, k in zip(self.entries, kinds, strict=False) if k == "likely"]
        return Ranked(self.id, ranked, [p] * len(ranked), self.ms,
                      [e for e, k in zip(self.entries, kinds, strict=False) if k == "possible"], p)


class CasesError(ValueError):
    """The cases file cannot be used; the message names the line and the problem."""


def load_cases(*paths: Path) -> list[Case]:
    """Read one or more JSON-lines cases files (``../shared/triage/`` format), in order.

    Raises:
        CasesError: a file is unreadable, a line is not JSON, a case lacks ``id`` or
            ``ticket`` (the message gives the line number), or two cases share an ``id``.
    """
    cases: list[Case] = []
    seen: dict[str, str] = {}
    for path in paths:
        for case in _load_file(path):
            if case.id in seen:
                raise CasesError(f"{path}: case id {case.id!r} is also in {seen[case.id]}; ids must be unique")
            seen[case.id] = str(path)
            cases.append(case)
    return cases


def _load_file(path: Path) -> list[Case]:
    try:
        text = path.read_text("utf-8")
    except FileNotFoundError as exc:
        raise CasesError(f"{path} cannot be read: no such file") from exc
    except UnicodeDecodeError as exc:
        raise CasesError(f"{path} cannot be read: it is not UTF-8 text (byte {exc.start})") from exc
    except OSError as exc:
        raise CasesError(f"{path} cannot be read: {(exc.strerror or str(exc)).lower()}") from exc
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
                          [str(x) for x in obj.get("near_miss") or []],
                          # a ticket with no precedent says how it is written in "form"
                          str(obj.get("form") or obj.get("style") or "")))
    return cases


def entry_ids(ws: Workspace, remembered: dict[str, list] | None = None) -> dict[str, str]:
    """Workspace-relative article path → front matter ``id`` for every article with one.

    ``remembered``: ``path → [size, mtime_ns, inode, id or None]`` of files read before
    (the evaluation of a change keeps them, :mod:`memtui.core.governance.gate`); a file whose
    size, time and inode are as remembered is not read again (the same trust as
    :func:`memtui.core.governance.gate.tree_digest`); the map is brought up to date in
    place (read files added, gone ones removed)."""
    out: dict[str, str] = {}
    seen: set[str] = set()
    for path in sorted(ws.memory.rglob("*.md")):
        if path.name == NODE_INDEX or not path.is_file():
            continue
        shown = ws.shown(path)
        stamp: list | None = None
        if remembered is not None:
            try:
                st = path.stat()
            except OSError:
                st = None
            if st is not None:
                stamp = [st.st_size, st.st_mtime_ns, st.st_ino]
                seen.add(shown)
                known = remembered.get(shown)
                if isinstance(known, list) and len(known) == 4 and known[:3] == stamp:
                    if known[3] is not None:
                        out[shown] = known[3]
                    continue
        tf = read_text(path, shown, note_encoding=False)
        meta = split(tf.text).meta if tf.ok else {}
        got = str(meta["id"]).strip() if isinstance(meta, dict) and meta.get("id") is not None else None
        if got is not None:
            out[shown] = got
        if remembered is not None and stamp is not None:
            remembered[shown] = [*stamp, got]
    if remembered is not None:
        for gone in [k for k in remembered if k not in seen]:
            del remembered[gone]
    return out


def candidates(index: SearchIndex, cases: list[Case], ids: dict[str, str]) -> list[Candidates]:
    """Search every case's ticket with memtui's :func:`~memtui.core.search.query.search` (the
    one a user gets) and map the hits to entry ids (an index line counts as the entry it
    lists; each entry once, at its best hit)."""
    out = []
    for case in cases:
        started = time.perf_counter()
        res = search(index, case.ticket, limit=CANDIDATES, snippets=False, count=False)  # total unused
        entries: list[str] = []
        scores: list[float] = []
        covered: list[float | None] = []
        agreed: list[float | None] = []
        for hit in res.hits:
            eid = hit.entry_id or ids.get(hit.target or hit.path, "")
            if hit.kind == "index-line":
                eid = ids.get(hit.target, "")
            if not eid:
                continue
            if eid in entries:  # an index line and its article: the entry holds what either holds
                i = entries.index(eid)
                covered[i] = _max(covered[i], hit.coverage)
                agreed[i] = _max(agreed[i], hit.agreement)
                continue
            entries.append(eid)
            scores.append(hit.score)
            covered.append(hit.coverage)
            agreed.append(hit.agreement)
        out.append(Candidates(case.id, entries, scores, res.query_words, (time.perf_counter() - started) * 1000,
                              covered, agreed, res.known, res.keyed))
    return out


def _max(a: float | None, b: float | None) -> float | None:
    return b if a is None else a if b is None else max(a, b)


def examples(cases: list[Case], cands: list[Candidates],
             counterfactual: bool = True) -> tuple[list[tuple[float, ...]], list[int], list[float]]:
    """One feature vector per case (:func:`memtui.core.search.confidence.features`) and its
    label: 1 when a relevant entry is among the first
    :data:`~memtui.core.search.confidence.ANSWER_SIZE` candidates, else 0 (a ticket with no
    precedent is always 0). With ``counterfactual``, each case with a precedent adds a second
    example, labelled 0: its list with the relevant entries taken out
    (:meth:`Candidates.without`), a ticket whose precedent the memory does not hold.
    Lists that found nothing are left out.

    Returns:
        ``(features, labels, weights)``. A case weighs 1; the counterfactual examples
        share the weight of the cases with no precedent among ``cases`` (at least one
        case's), so they shape what a missing precedent looks like without changing how
        often one is missing (the cases' own proportion).
    """
    by_id = {c.id: c for c in cases}
    xs: list[tuple[float, ...]] = []
    ys: list[int] = []
    cf: list[tuple[float, ...]] = []
    for cand in cands:
        case = by_id[cand.id]
        x = cand.features()
        if x is not None:
            xs.append(x)
            ys.append(int(any(e in case.relevant for e in cand.entries[:confidence.ANSWER_SIZE])))
        if counterfactual and case.relevant:
            x = cand.without(case.relevant).features()
            if x is not None:
                cf.append(x)
    weights = [1.0] * len(xs)
    if cf:
        share = max(1, sum(1 for c in cases if not c.relevant)) / len(cf)
        xs.extend(cf)
        ys.extend([0] * len(cf))
        weights.extend([share] * len(cf))
    return xs, ys, weights


def counterfactual_cases(cases: list[Case]) -> list[Case]:
    """Each case with a precedent as a ticket with none (``relevant`` empty, id ``…/cf``):
    the cases :meth:`Candidates.without` answers."""
    return [Case(c.id + "/cf", c.ticket, c.language, [], list(c.near_miss), c.style) for c in cases if c.relevant]


def counterfactual_candidates(cases: list[Case], cands: list[Candidates]) -> list[Candidates]:
    """The candidates of :func:`counterfactual_cases`: each list without its relevant entries."""
    by_id = {c.id: c for c in cands}
    out = []
    for c in cases:
        if c.relevant and c.id in by_id:
            cf = by_id[c.id].without(c.relevant)
            cf.id = c.id + "/cf"
            out.append(cf)
    return out


def fit(cases: list[Case], cands: list[Candidates]) -> confidence.Calibration:
    """The calibration fitted on ``cases`` (see :func:`examples`).

    Raises:
        ValueError: the cases hold no right or no wrong candidate.
    """
    xs, ys, weights = examples(cases, cands)
    return confidence.fit(xs, ys, cases=len(cases), weights=weights)


def split_folds(cases: list[Case], k: int) -> list[list[Case]]:
    """``cases`` split into ``k`` folds: the tickets with no precedent first, then each
    language's, dealt round-robin in file order, so every fold holds about equal shares of
    each."""
    out: list[list[Case]] = [[] for _ in range(k)]
    order = sorted(range(len(cases)), key=lambda i: (bool(cases[i].relevant), cases[i].language, i))
    for n, i in enumerate(order):
        out[n % k].append(cases[i])
    return out


#: What a leave-one-out fold can hold: every case of one way of writing, or of one language.
GROUPINGS = ("style", "language")
#: The group of a case whose ``style`` (or ``language``) is not given.
UNSTATED = "(unstated)"


def group_folds(cases: list[Case], by: str) -> list[tuple[str, list[Case]]]:
    """``cases`` split by ``by`` (a value of :data:`GROUPINGS`): one fold per style or
    language, named, in name order; cases that do not say are the fold :data:`UNSTATED`.

    Raises:
        ValueError: ``by`` is not a grouping.
    """
    if by not in GROUPINGS:
        raise ValueError(f"a fold can hold one {' or one '.join(GROUPINGS)}, not {by!r}")
    groups: dict[str, list[Case]] = {}
    for c in cases:
        groups.setdefault(getattr(c, by) or UNSTATED, []).append(c)
    return sorted(groups.items())


def cross_validate(cases: list[Case], cands: list[Candidates], k: int | str,
                   likely: float = confidence.LIKELY) -> tuple[list[Ranked], list[Ranked]]:
    """Cross-validation: each fold's answers come from a calibration fitted on the other
    folds only (never on the fold's own cases, nor on their counterfactual lists).

    Args:
        k: the number of folds (:func:`split_folds`), or a value of :data:`GROUPINGS`: one
            fold per style or language (:func:`group_folds`), so each way of writing is
            answered by a calibration that never saw it.

    Returns:
        The answers to ``cases``, and the answers to their :func:`counterfactual_cases`
        (each by the calibration that did not see its case).

    Raises:
        ValueError: ``k`` is under 2 or over the number of cases, the grouping leaves fewer
            than two folds, or a training part holds no right or no wrong candidate.
    """
    if isinstance(k, str):
        parts = [p for _, p in group_folds(cases, k)]
        if len(parts) < 2:
            other = " or ".join(f"--leave-out {g}" for g in GROUPINGS if g != k)
            only = group_folds(cases, k)[0][0] if cases else UNSTATED
            if only == UNSTATED:
                raise ValueError(f"leaving one {k} out needs cases of at least two {k}s, and none of these cases "
                                 f'says its {k}: add a "{k}" field to the cases, or use {other}')
            raise ValueError(f"leaving one {k} out needs cases of at least two {k}s; these are all {only!r}: "
                             f"add cases of another {k}, or use {other}")
    else:
        if not 2 <= k <= len(cases):
            raise ValueError(f"--folds must be between 2 and the number of cases ({len(cases)})")
        parts = split_folds(cases, k)
    by_id = {c.id: c for c in cands}
    out: dict[str, Ranked] = {}
    cf_out: dict[str, Ranked] = {}
    for i, part in enumerate(parts):
        train = [c for j, p in enumerate(parts) if j != i for c in p]
        cal = fit(train, [by_id[c.id] for c in train])
        for c in part:
            out[c.id] = by_id[c.id].assess(cal, likely)
            if c.relevant:
                cf = by_id[c.id].without(c.relevant)
                cf.id = c.id + "/cf"
                cf_out[cf.id] = cf.assess(cal, likely)
    return [out[c.id] for c in cases], [cf_out[c.id + "/cf"] for c in cases if c.relevant]


#: Bins of a reliability table: equal widths of predicted probability.
RELIABILITY_BINS = 5


def reliability(cases: list[Case], cands: list[Candidates], answers: list[Ranked],
                bins: int = RELIABILITY_BINS) -> dict[str, Any]:
    """How well the answers' probabilities hold: predicted against observed, per bin.

    The event a probability predicts is the one it was fitted on (:func:`examples`): a right
    precedent among the first :data:`~memtui.core.search.confidence.ANSWER_SIZE` candidates.

    Args:
        cases: the cases; cands: their candidates; answers: answers with ``likelihood`` set
            (from :func:`cross_validate`: each by a calibration that did not see the case).
        bins: equal-width bins over 0…1.

    Returns:
        ``{"cases", "ece", "rows": [{"low", "high", "cases", "predicted", "observed"}]}``:
        per non-empty bin the mean predicted probability and the observed rate; ``ece`` the
        expected calibration error, the bins' ``|predicted - observed|`` weighted by their
        share of the cases (``None`` with no case).
    """
    by_cand = {c.id: c for c in cands}
    by_answer = {a.id: a for a in answers}
    rows: list[list[float]] = [[0, 0.0, 0.0] for _ in range(bins)]  # cases, sum p, sum y
    n = 0
    for case in cases:
        a = by_answer.get(case.id)
        cand = by_cand.get(case.id)
        if a is None or a.likelihood is None or cand is None:
            continue
        p = a.likelihood
        y = float(any(e in case.relevant for e in cand.entries[:confidence.ANSWER_SIZE]))
        b = min(bins - 1, int(p * bins))
        rows[b][0] += 1
        rows[b][1] += p
        rows[b][2] += y
        n += 1
    out = [{"low": i / bins, "high": (i + 1) / bins, "cases": int(r[0]),
            "predicted": r[1] / r[0], "observed": r[2] / r[0]} for i, r in enumerate(rows) if r[0]]
    ece = sum(r["cases"] / n * abs(r["predicted"] - r["observed"]) for r in out) if n else None
    return {"cases": n, "ece": ece, "rows": out}


def leave_one_out(cases: list[Case], cands: list[Candidates], by: str, k: int = 5,
                  likely: float = confidence.LIKELY) -> dict[str, Any]:
    """Leave one style (or language) out: each group's cases answered by a calibration fitted
    on the other groups (:func:`cross_validate`), with figures per left-out group and pooled.

    Returns:
        ``{"by", "pooled": {"metrics", "reliability", "counterfactual_answered"},
        "groups": {name: {"metrics", "reliability"}}}`` (:func:`metrics`,
        :func:`reliability`).

    Raises:
        ValueError: as :func:`cross_validate`.
    """
    answers, cf_answers = cross_validate(cases, cands, by, likely)
    by_case = {a.id: a for a in answers}
    groups = {}
    for name, part in group_folds(cases, by):
        mine = [by_case[c.id] for c in part]
        groups[name] = {"metrics": metrics(part, mine, k), "reliability": reliability(part, cands, mine)}
    return {"by": by,
            "pooled": {"metrics": metrics(cases, answers, k), "reliability": reliability(cases, cands, answers),
                       "counterfactual_answered": (sum(1 for r in cf_answers if r.ranked) / len(cf_answers)
                                                   if cf_answers else None)},
            "groups": groups}


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
    return grep_rank(lines, cases, k)


def grep_rank(lines: list[tuple[str, str]], cases: list[Case], k: int = 5) -> list[Ranked]:
    """The baseline's ranking over ``lines``, ``(lower-cased one-liner, entry id)`` in file
    order: per case, the entries whose lines hold the most of the ticket's words of 3+
    letters as substrings, ties in line order, each entry once, top ``k``, no threshold
    (``../shared/triage/README.md`` "Reference point"; the migration's gate measures an
    inherited ``MEMORY.md`` with it, seed 000 §7.2)."""
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
        "ms_median", "hit@k_by_language": {lang: rate}, "hit@k_by_style": {style: rate},
        "false_precedent_rate_by_language": {lang: rate}, "false_precedent_rate_by_style":
        {style: rate}, "k"}`` — rates in 0…1, ``None`` where a metric has no case to average
        over; a case that names no style counts under :data:`UNSTATED` (the by-style rows
        are left out when no case names one).
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
    style_total: dict[str, int] = {}
    style_hit: dict[str, int] = {}
    fp_by: dict[str, dict[str, list[int]]] = {"language": {}, "style": {}}  # name -> [false, cases]
    styled = any(c.style for c in cases)
    for c in cases:
        r = by_id.get(c.id) or Ranked(c.id, [], [], 0.0)
        false = bool(r.ranked) and (r.ranked[0] in c.near_miss or not c.relevant)
        if r.ranked and r.ranked[0] in c.near_miss:
            fp_near += 1
        elif not c.relevant and r.ranked:
            fp_none += 1
        for axis, name in (("language", c.language), ("style", c.style or UNSTATED)):
            row = fp_by[axis].setdefault(name, [0, 0])
            row[0] += false
            row[1] += 1
        if not c.relevant:
            continue
        style = c.style or UNSTATED
        style_total[style] = style_total.get(style, 0) + 1
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
            style_hit[style] = style_hit.get(style, 0) + 1
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
        f"hit@{k}_by_style": {style: style_hit.get(style, 0) / total
                               for style, total in sorted(style_total.items())} if styled else {},
        "false_precedent_rate_by_language": {name: f / t for name, (f, t) in sorted(fp_by["language"].items())},
        "false_precedent_rate_by_style": ({name: f / t for name, (f, t) in sorted(fp_by["style"].items())}
                                          if styled else {}),
    }


@dataclass(slots=True)
class TriageReport:
    """Both systems' metrics on the same cases, memtui's answers, and how its cut was made.

    Attributes:
        memtui: metrics of memtui's answers with ``calibration`` (the shipped one, or the
            one ``fit`` made on these very cases: then these figures are in-sample).
        baseline: the grep baseline's metrics.
        likely: the probability cut.
        results: memtui's answers per case.
        index: the index update report.
        calibration: the calibration used for ``memtui``.
        fitted: ``calibration`` was fitted on these cases.
        kfold: with ``folds``, the metrics of the cross-validated answers, else ``None``.
        folds: the number of folds (0: none).
        no_cut: metrics of the ranking with no cut at all (every candidate shown).
        fold_metrics: with ``folds``, the metrics of each fold's cross-validated answers
            (fold order of :func:`folds`), else empty.
        counterfactual: ``{"memtui", "kfold", "no_cut"}``: the share (0…1) of
            :func:`counterfactual_cases` (each case with a precedent, the precedent taken
            out) given an answer anyway — a false precedent — by ``calibration``, by the
            cross-validated calibrations (``None`` without ``folds``), and with no cut.
    """

    memtui: dict[str, Any]
    baseline: dict[str, Any]
    likely: float
    results: list[Ranked]
    index: dict[str, Any]
    calibration: confidence.Calibration
    fitted: bool = False
    kfold: dict[str, Any] | None = None
    folds: int = 0
    no_cut: dict[str, Any] | None = None
    counterfactual: dict[str, float | None] = field(default_factory=dict)
    #: ``{"node": {node: metrics}, "owner": {owner: metrics}}`` (:func:`by_domain`)
    domains: dict[str, dict[str, dict[str, Any]]] = field(default_factory=dict)
    fold_metrics: list[dict[str, Any]] = field(default_factory=list)
    #: With ``folds``, the :func:`reliability` of the cross-validated answers, else ``None``.
    kfold_reliability: dict[str, Any] | None = None
    #: Per grouping asked for (``"style"``, ``"language"``): :func:`leave_one_out`.
    left_out: dict[str, dict[str, Any]] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """``{"likely", "calibration": {"features", "coef", "intercept", "cases", "lower", "upper", "fitted_here"},
        "memtui", "kfold" (or null), "kfold_reliability" (or null), "folds", "fold_metrics", "no_cut",
        "counterfactual", "baseline", "index", "domains", "left_out"}``."""
        cal = self.calibration
        return {"likely": self.likely,
                "calibration": {"features": list(confidence.FEATURES), "coef": [round(c, 4) for c in cal.coef],
                                "intercept": round(cal.intercept, 4), "cases": cal.cases,
                                "lower": [round(v, 4) for v in cal.lower], "upper": [round(v, 4) for v in cal.upper],
                                "fitted_here": self.fitted},
                "memtui": self.memtui, "kfold": self.kfold, "kfold_reliability": self.kfold_reliability,
                "folds": self.folds, "left_out": self.left_out,
                "fold_metrics": self.fold_metrics, "no_cut": self.no_cut,
                "counterfactual": self.counterfactual, "baseline": self.baseline, "index": self.index,
                "domains": self.domains}


def run(ws: Workspace, cases: list[Case], k: int = 5, likely: float = confidence.LIKELY,
        folds: int = 0, refit: bool = False,
        progress: Callable[[int, int], None] | None = None, leave_out: tuple[str, ...] = ()) -> TriageReport:
    """Update the index, run every case through memtui's search and through the baseline.

    Args:
        ws: the workspace whose memory is tested (its index is updated first).
        cases: from :func:`load_cases`.
        k: the cut-off of hit@k (the README uses 5).
        likely: the probability from which a candidate is shown as a precedent.
        folds: when 2 or more, also cross-validate the calibration over that many folds.
        refit: fit the calibration on ``cases`` and use it (in-sample figures; its
            coefficients are in the report) instead of the shipped
            :data:`memtui.core.search.confidence.DEFAULT`.
        progress: passed to the index update.
        leave_out: values of :data:`GROUPINGS`: for each, :func:`leave_one_out` (one fold per
            style or language).

    Raises:
        memtui.core.search.index.IndexBusyError / IndexWriteError: the index cannot be updated.
        ValueError: ``folds`` out of range, a ``leave_out`` grouping with one group, or
            ``refit``/``folds``/``leave_out`` on cases that hold no right or no wrong candidate.
    """
    index = SearchIndex(ws)
    report = index.update(progress=progress)
    ids = entry_ids(ws)
    cands = candidates(index, cases, ids)
    cal = fit(cases, cands) if refit else confidence.DEFAULT
    ours = [c.assess(cal, likely) for c in cands]
    cf_cands = counterfactual_candidates(cases, cands)

    def answered(results: list[Ranked]) -> float | None:
        return sum(1 for r in results if r.ranked) / len(results) if results else None

    counter = {"memtui": answered([c.assess(cal, likely) for c in cf_cands]),
               "no_cut": answered([Ranked(c.id, c.entries, c.scores, c.ms) for c in cf_cands]), "kfold": None}
    kfold = None
    per_fold: list[dict[str, Any]] = []
    kfold_rel = None
    if folds:
        answers, cf_answers = cross_validate(cases, cands, folds, likely)
        kfold = metrics(cases, answers, k)
        kfold_rel = reliability(cases, cands, answers)
        counter["kfold"] = answered(cf_answers)
        by_case = {a.id: a for a in answers}
        per_fold = [metrics(part, [by_case[c.id] for c in part], k) for part in split_folds(cases, folds)]
    no_cut = metrics(cases, [Ranked(c.id, c.entries, c.scores, c.ms) for c in cands], k)
    left = {by: leave_one_out(cases, cands, by, k, likely) for by in leave_out}
    base = grep_baseline(ws, cases, ids, k=k)
    return TriageReport(metrics(cases, ours, k), metrics(cases, base, k), likely, ours, report.to_json(),
                        cal, refit, kfold, folds, no_cut, counter, by_domain(cases, ours, base, entry_domains(ws, ids), k),
                        per_fold, kfold_rel, left)


#: The domain of a case whose precedent is not an entry of the memory (an unknown id).
UNKNOWN_DOMAIN = "(unknown)"


def entry_domains(ws: Workspace, ids: dict[str, str]) -> dict[str, tuple[str, str]]:
    """Entry id → ``(node, owner)``: the node the entry's article lies in (its nearest node
    folder, ``"."`` for the root) and that node's resolved owner (``"(no owner)"`` when none).

    Args:
        ws: the workspace.
        ids: :func:`entry_ids` of ``ws``.
    """
    tree = MemoryTree(ws)
    owners: dict[str, str] = {}
    out: dict[str, tuple[str, str]] = {}
    for shown, entry in ids.items():
        try:
            memory_rel = (ws.root / shown).relative_to(ws.memory).as_posix()
        except ValueError:
            continue
        node = tree.parent_node(memory_rel) or ""
        if node not in owners:
            owners[node] = tree.owner(node)[0] or "(no owner)"
        out.setdefault(entry, (node or ".", owners[node]))
    return out


def by_domain(cases: list[Case], results: list[Ranked], baseline: list[Ranked],
              domains: dict[str, tuple[str, str]], k: int = 5) -> dict[str, dict[str, dict[str, Any]]]:
    """The triage metrics per domain, by node and by owner (seed 000 §7.2: the triage test is
    "recorded per domain", and a domain that does not beat its baseline is not migrated).

    A case belongs to the domain of its first relevant entry; a case with no precedent
    belongs to none. A false precedent (the top answer is a near miss, or any answer to a case
    with no precedent) is charged to the domain of the entry that was answered: the domain
    whose memory misled.

    Args:
        cases: the cases; results / baseline: memtui's and the baseline's answers to them.
        domains: :func:`entry_domains`.
        k: the cut-off of hit@k.

    Returns:
        ``{"node": {name: row}, "owner": {name: row}}``, each row ``{"cases", "hit@1",
        "hit@k", "baseline_hit@k", "beats_baseline", "answers", "false_precedents",
        "false_precedent_rate"}``: hits over the domain's cases with a precedent; ``answers``
        the cases whose top answer is one of the domain's entries, and the rate the share of
        those that were false. Rates are 0…1, ``None`` where there is nothing to average.
    """
    ours = {r.id: r for r in results}
    base = {r.id: r for r in baseline}
    out: dict[str, dict[str, dict[str, Any]]] = {}
    for axis, pick in (("node", 0), ("owner", 1)):
        rows: dict[str, dict[str, Any]] = {}

        def row(name: str, rows: dict[str, dict[str, Any]] = rows) -> dict[str, Any]:
            return rows.setdefault(name, {"cases": 0, "hit1": 0, "hitk": 0, "base": 0, "answers": 0, "false": 0})

        def domain(entry: str, pick: int = pick) -> str:
            return domains[entry][pick] if entry in domains else UNKNOWN_DOMAIN

        for c in cases:
            r = ours.get(c.id) or Ranked(c.id, [], [], 0.0)
            if r.ranked:
                answered = row(domain(r.ranked[0]))
                answered["answers"] += 1
                if r.ranked[0] not in c.relevant:
                    answered["false"] += r.ranked[0] in c.near_miss or not c.relevant
            if not c.relevant:
                continue
            mine = row(domain(c.relevant[0]))
            mine["cases"] += 1
            rank = next((i + 1 for i, e in enumerate(r.ranked) if e in c.relevant), None)
            mine["hit1"] += rank == 1
            mine["hitk"] += bool(rank and rank <= k)
            b = base.get(c.id)
            mine["base"] += bool(b and any(e in c.relevant for e in b.ranked[:k]))
        out[axis] = {name: {"cases": v["cases"],
                            "hit@1": v["hit1"] / v["cases"] if v["cases"] else None,
                            f"hit@{k}": v["hitk"] / v["cases"] if v["cases"] else None,
                            f"baseline_hit@{k}": v["base"] / v["cases"] if v["cases"] else None,
                            "beats_baseline": v["hitk"] > v["base"] if v["cases"] else None,
                            "answers": v["answers"], "false_precedents": v["false"],
                            "false_precedent_rate": v["false"] / v["answers"] if v["answers"] else None}
                     for name, v in sorted(rows.items())}
    return out

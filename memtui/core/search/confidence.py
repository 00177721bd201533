"""How likely a search's answer holds the right precedent: a calibrated probability.

A BM25F score is comparable within one query only. Whether a pasted ticket has a precedent
among its best results shows less in the scores themselves than in their *shape*: a ticket
with a precedent has a best result that stands out; a ticket with none gives a flat list of
partial matches. A ranked list gets three features, each a ratio within the list or a share
of the ticket, so none moves with a ticket's length, language or noise:

- ``lead``: ``log`` of the best score over the second item's (capped at :data:`MAX_LEAD`):
  how far the best stands out from the next;
- ``spread``: ``log`` of the best score over the :data:`ANSWER_SIZE`-th item's (capped
  likewise): how far it stands out from the tail;
- ``agreement``: the share of the query's word weight (idf) that the best item's symptom,
  aliases, title and summary hold (:func:`memtui.core.search.query.agreement`): a
  precedent's symptom is the customer's phrase, so a ticket agrees with it there, not only
  somewhere in a long analysis. A pasted ticket's set-apart words (quoted history,
  signature) weigh half (:mod:`memtui.core.search.reading`).

Features that were dropped because they moved with the way a ticket is written, judged by
leaving one way of writing (and one language) out of the fit: the best score per query word
and the query's word count (a forwarded e-mail has many words: its right answers read as
"not confident"), the share of the ticket's words the memory knows and the share it knows
only by sound (they differ by language by construction), and the best item's coverage of
the whole ticket (it falls with every word of noise). The figures are in the changelog.

A logistic model turns them into the probability that the first :data:`ANSWER_SIZE` items
hold a right precedent (:class:`Calibration`, Platt's method: J. Platt, "Probabilistic
outputs for support vector machines", 1999). It is fitted by :func:`fit` — L2-regularised
maximum likelihood with a fixed penalty, by Newton's method — on triage cases
(``memtui eval triage --fit``) and judged on cases it was not fitted on: k-fold
(``--folds K``) and one way of writing or one language left out at a time (``--leave-out
style``/``language``), with a reliability table. The training examples are each case as it
is and, for each case with a precedent, the same ranked list with its right precedents
taken out: what the memory answers a ticket whose precedent was never written
(:func:`memtui.core.search.triage.examples`). When the probability is at least
:data:`LIKELY` (more likely right than wrong: no tuned number), the first
:data:`ANSWER_SIZE` items are the answer, labelled ``likely``; otherwise the best
:data:`POSSIBLE_SHOWN` are labelled ``possible``, so an uncertain answer still shows its
candidates instead of nothing.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

#: Probability from which the answer is shown as likely: more likely right than wrong.
LIKELY = 0.5
#: Items of a likely answer (the triage test's hit@5 looks at five).
ANSWER_SIZE = 5
#: Items labelled ``possible`` when the answer is not likely.
POSSIBLE_SHOWN = 3
#: Cap of the best score's lead over a later item (or over none).
MAX_LEAD = 10.0
#: Names of the features, in the order of :attr:`Calibration.coef`.
FEATURES = ("lead", "spread", "agreement")
#: L2 penalty on the (standardised) coefficients; fixed, not tuned: it only keeps the fit
#: finite when the training cases are separable.
RIDGE = 1.0


@dataclass(frozen=True, slots=True)
class Calibration:
    """A logistic model over :data:`FEATURES`: ``p = 1 / (1 + exp(-(intercept + coef·x)))``.

    Attributes:
        coef: one coefficient per feature (raw, not standardised, units).
        intercept: the constant term.
        cases: how many triage cases it was fitted on (0: not fitted).
        lower, upper: per feature, the least and greatest value among the examples it was
            fitted on (empty: no bounds). A value outside is read as the bound: the model is
            never extrapolated.
    """

    coef: tuple[float, ...]
    intercept: float
    cases: int = 0
    lower: tuple[float, ...] = ()
    upper: tuple[float, ...] = ()

    def probability(self, x: Sequence[float]) -> float:
        """The probability (0…1) for one feature vector from :func:`features`, each value
        held within :attr:`lower`…:attr:`upper`."""
        if self.lower and self.upper:
            x = [min(hi, max(lo, v)) for v, lo, hi in zip(x, self.lower, self.upper, strict=False)]
        z = self.intercept + sum(c * v for c, v in zip(self.coef, x, strict=False))
        return 1.0 / (1.0 + math.exp(-max(-60.0, min(60.0, z))))


#: The shipped calibration: ``memtui eval triage --fit --cases ../shared/triage/dev-cases.jsonl
#: --cases bench/triage/cases-2.jsonl --cases bench/triage/cases-3.jsonl --cases
#: bench/triage/cases-4.jsonl`` (344 cases); its leave-one-style-out and leave-one-language-out
#: figures are in the changelog. Refit it when the scoring changes.
DEFAULT = Calibration(coef=(1.3737, 0.8659, 4.8160), intercept=-2.1164, cases=344,
                      lower=(0.0009, 0.0422, 0.0000), upper=(2.3026, 2.3026, 1.0000))


def _lead(best: float, other: float | None) -> float:
    return math.log(min(MAX_LEAD, best / other) if other and other > 0 else MAX_LEAD)


def features(scores: Sequence[float], complete: bool = True,
             agreement: float | None = None) -> tuple[float, ...] | None:
    """The feature vector of a ranked list of distinct items (see the module docstring).

    Args:
        scores: BM25F scores, best first, one per distinct item (an index line and the
            article it lists are one item).
        complete: ``scores`` holds every match; when false, a missing second or
            :data:`ANSWER_SIZE`-th item means "not fetched", and counts as a tie.
        agreement: the best item's share (0…1) of the query's word weight in its symptom,
            aliases, title and summary; ``None`` (not measured) counts as 1, as for a query
            with no plain word.

    Returns:
        ``(lead, spread, agreement)``, or ``None`` for an empty list.
    """
    if not scores or scores[0] <= 0:
        return None
    best = scores[0]

    def nth(i: int) -> float | None:
        if i < len(scores):
            return scores[i]
        return None if complete else best

    return (_lead(best, nth(1)), _lead(best, nth(ANSWER_SIZE - 1)), 1.0 if agreement is None else agreement)


def probability(scores: Sequence[float], calibration: Calibration | None = None,
                complete: bool = True, agreement: float | None = None) -> float:
    """``calibration``'s (default :data:`DEFAULT`) probability that the first
    :data:`ANSWER_SIZE` of ``scores`` hold a right precedent; 0 for an empty list
    (``agreement``: see :func:`features`)."""
    x = features(scores, complete, agreement)
    return 0.0 if x is None else (calibration or DEFAULT).probability(x)


def verdicts(p: float, items: int, likely: float = LIKELY) -> list[str]:
    """Labels for ``items`` ranked items of an answer of probability ``p``: ``"likely"``
    for the first :data:`ANSWER_SIZE` when ``p >= likely``, else ``"possible"`` for the
    first :data:`POSSIBLE_SHOWN`; ``""`` for the rest."""
    shown, label = (ANSWER_SIZE, "likely") if p >= likely else (POSSIBLE_SHOWN, "possible")
    return [label if i < shown else "" for i in range(items)]


def fit(xs: Sequence[Sequence[float]], ys: Sequence[int], cases: int = 0,
        ridge: float = RIDGE, iterations: int = 50, weights: Sequence[float] | None = None) -> Calibration:
    """Fit a :class:`Calibration` by L2-regularised maximum likelihood (Newton's method on
    standardised features; the intercept is not penalised).

    Args:
        xs: feature vectors (:func:`features`).
        ys: 1 where the item is a right precedent, else 0.
        cases: recorded in the result (how many triage cases the examples came from).
        weights: each example's weight in the likelihood (default 1 each).

    Raises:
        ValueError: no examples, or only one class among them (nothing to calibrate).
    """
    if not xs or len(xs) != len(ys):
        raise ValueError("fit needs as many labels as feature vectors, and at least one")
    if len(set(ys)) < 2:
        raise ValueError("fit needs both right and wrong precedents among the examples")
    d = len(xs[0])
    ws = list(weights) if weights is not None else [1.0] * len(xs)
    total = sum(ws)
    mean = [sum(w * x[j] for x, w in zip(xs, ws, strict=False)) / total for j in range(d)]
    sd = [max(1e-9, math.sqrt(sum(w * (x[j] - mean[j]) ** 2 for x, w in zip(xs, ws, strict=False)) / total)) for j in range(d)]
    rows = [[1.0] + [(x[j] - mean[j]) / sd[j] for j in range(d)] for x in xs]
    w = [0.0] * (d + 1)
    for _ in range(iterations):
        grad = [0.0] * (d + 1)
        hess = [[0.0] * (d + 1) for _ in range(d + 1)]
        for r, y, wt in zip(rows, ys, ws, strict=False):
            z = sum(a * b for a, b in zip(w, r, strict=False))
            p = 1.0 / (1.0 + math.exp(-max(-60.0, min(60.0, z))))
            for a in range(d + 1):
                grad[a] += wt * (p - y) * r[a]
                for b in range(d + 1):
                    hess[a][b] += wt * p * (1 - p) * r[a] * r[b]
        for a in range(1, d + 1):
            grad[a] += ridge * w[a]
            hess[a][a] += ridge
        step = _solve(hess, grad)
        w = [a - b for a, b in zip(w, step, strict=False)]
        if max(abs(s) for s in step) < 1e-9:
            break
    coef = tuple(w[j + 1] / sd[j] for j in range(d))
    intercept = w[0] - sum(w[j + 1] * mean[j] / sd[j] for j in range(d))
    return Calibration(coef=coef, intercept=intercept, cases=cases,
                       lower=tuple(min(x[j] for x in xs) for j in range(d)),
                       upper=tuple(max(x[j] for x in xs) for j in range(d)))


def _solve(a: list[list[float]], b: list[float]) -> list[float]:
    """``a⁻¹ b`` by Gaussian elimination with partial pivoting (a is small and positive
    definite here)."""
    n = len(b)
    m = [row[:] + [b[i]] for i, row in enumerate(a)]
    for c in range(n):
        piv = max(range(c, n), key=lambda r: abs(m[r][c]))
        m[c], m[piv] = m[piv], m[c]
        if abs(m[c][c]) < 1e-12:
            continue
        for r in range(n):
            if r != c:
                f = m[r][c] / m[c][c]
                for k in range(c, n + 1):
                    m[r][k] -= f * m[c][k]
    return [m[i][n] / m[i][i] if abs(m[i][i]) >= 1e-12 else 0.0 for i in range(n)]

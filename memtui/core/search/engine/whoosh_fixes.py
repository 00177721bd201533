"""Fixes to defects of whoosh-reloaded 2.7.5 that the ranking relies on.

Applied once, on import of :mod:`memtui.core.search.engine.index`; each is idempotent, and
each has a test in ``tests/test_search_whoosh_matchers.py`` that fails without it (re-check
them when Whoosh is upgraded). The defect, in Whoosh's own terms, then the fix:

1. ``FilterMatcher.next()`` (``whoosh.matching.wrappers``; the wrapper of every posting
   list of a segment with deleted documents) drops the child's "entered a new block"
   answer, so the top-N collector never re-checks block quality and scores every posting
   of every segment that has a deletion (one saved edit made OR queries many times slower);
   and ``FilterMatcher.skip_to_quality()`` can stop on a deleted document. Fixed: both pass
   the child's answer on and move past deleted documents.
   Test: ``test_filter_matcher_reports_new_blocks_and_skips_by_quality``.
2. ``DisjunctionMaxMatcher`` (``whoosh.matching.binary``; a query word over two fields):
   - ``score()`` takes the maximum of both sides even when one is positioned on a *later*
     document, so a document can get another document's score: ranking depended on
     document numbers (a parallel build ranked ties differently);
   - ``replace()`` returns an empty matcher when one side ran out after pruning, dropping
     the other side's remaining documents;
   - the ``tiebreak`` is ignored: ``whoosh.query.compound.make_weighted_tree``, which builds
     the matcher tree of a ``DisjunctionMax``, drops its keyword arguments.
   Fixed: a document's score is ``best + tiebreak × other`` for the sides at that document
   (pair by pair down Whoosh's binary tree), the quality bounds say the same
   (``(1 − t)·max + t·sum`` of the sides' bounds is a bound), and pruning gives a side up
   only where even the other side's best cannot lift a document to the threshold, so
   pruning never changes a kept document's score.
   Tests: ``test_dismax_scores_each_document_by_its_own_fields``,
   ``test_dismax_replace_keeps_both_sides_while_either_can_count``,
   ``test_pruned_top_n_equals_the_exhaustive_ranking``.
3. ``WrappingMatcher.skip_to_quality()`` (``whoosh.matching.wrappers``) divides by the
   wrapper's boost, so a zero-boost clause (memtui's filters are AND clauses of zero
   weight, see :mod:`memtui.core.search.engine.matching`) raises ``ZeroDivisionError``
   when pruning asks it for quality; and ``IntersectionMatcher.skip_to_quality()`` asks
   both sides. Fixed: a zero-boost side has no quality to skip by; the scored side alone
   is skipped and the filter follows it.
   Test: ``test_a_zero_weight_filter_clause_does_not_break_pruning``.
4. ``SpanWrappingMatcher.next()`` (``whoosh.query.spans``; phrases) returns nothing, never
   that it entered a new posting block, so the top-N collector never asks a phrase to skip
   by quality and every document holding all the words has its positions checked; its
   ``skip_to_quality()`` is the wrapper's, which would stop on any document holding the
   words. Fixed: ``next()`` says so, ``skip_to_quality()`` lands on a phrase match, and
   blocks that cannot reach the page are skipped while looking for the next match (a
   phrase's score is its words' score, so the block bound holds).
   Tests: ``test_phrase_matcher_reports_new_blocks_and_skips_to_a_phrase_match``,
   ``test_pruned_phrase_search_returns_only_phrase_matches``.
5. ``TopCollector._collect()`` (``whoosh.collectors``) sets its pruning bar (the page's
   worst score) only when a document displaces another, not when the page first fills, so
   pruning starts one page late. Fixed: the bar is set as the page fills.
   Test: ``test_top_collector_prunes_from_the_moment_the_page_is_full``.
"""

from __future__ import annotations


def _patch_filter_matcher() -> None:
    from whoosh.matching import wrappers

    cls = wrappers.FilterMatcher
    if cls.__dict__.get("_memtui_patched"):
        return

    def next_(self):  # noqa: ANN001, ANN202
        entered = self.child.next()
        return self._find_next() or entered

    def skip_to_quality(self, minquality):  # noqa: ANN001, ANN202
        skipped = self.child.skip_to_quality(minquality / self.boost)
        self._find_next()
        return skipped

    cls.next = next_
    cls.skip_to_quality = skip_to_quality
    cls._memtui_patched = True


def _patch_disjunction_max() -> None:
    from whoosh.matching import binary

    cls = binary.DisjunctionMaxMatcher
    if cls.__dict__.get("_memtui_patched"):
        return
    cls.score = _dm_score
    cls.max_quality = _dm_max_quality
    cls.block_quality = _dm_block_quality
    cls.replace = _dm_replace
    cls.skip_to_quality = _dm_skip_to_quality
    cls.copy = _dm_copy
    cls._memtui_patched = True


# -- fix 2: DisjunctionMaxMatcher's methods (self is the matcher) -----------------------------

def _dm_combine(self, x: float, y: float) -> float:
    return x + self.tiebreak * y if x >= y else y + self.tiebreak * x


def _dm_score(self):  # noqa: ANN001, ANN202
    a, b = self.a, self.b
    if not a.is_active():
        return b.score()
    if not b.is_active():
        return a.score()
    ai, bi = a.id(), b.id()
    if ai < bi:
        return a.score()
    if bi < ai:
        return b.score()
    return _dm_combine(self, a.score(), b.score())


def _dm_bound(self, quality: str) -> float:
    """``combine`` of the sides' ``max_quality``/``block_quality`` (an upper bound)."""
    a, b = self.a, self.b
    if not a.is_active():
        return getattr(b, quality)()
    if not b.is_active():
        return getattr(a, quality)()
    return _dm_combine(self, getattr(a, quality)(), getattr(b, quality)())


def _dm_max_quality(self):  # noqa: ANN001, ANN202
    return _dm_bound(self, "max_quality")


def _dm_block_quality(self):  # noqa: ANN001, ANN202
    return _dm_bound(self, "block_quality")


def _dm_room(self, minquality: float, other: float) -> float:
    """The score one side needs so that, with the other side at most ``other``, a
    document can still reach ``minquality``: below it, ``combine`` stays under."""
    if other >= minquality:
        return 0.0
    if not self.tiebreak:
        return minquality
    below = (minquality - other) / self.tiebreak  # this side the lesser one
    return below if below <= other else minquality - self.tiebreak * other


def _dm_replace(self, minquality=0):  # noqa: ANN001, ANN202
    from whoosh.matching.mcore import NullMatcher

    a, b = self.a, self.b
    a_active, b_active = a.is_active(), b.is_active()
    if not (a_active or b_active):
        return NullMatcher()
    if not a_active:
        return b.replace(minquality)
    if not b_active:
        return a.replace(minquality)
    if minquality and _dm_max_quality(self) < minquality:
        return NullMatcher()
    if minquality:
        # a side may drop what scores below room(): such documents cannot reach
        # minquality even with the other side's best, so no kept score changes
        na = a.replace(_dm_room(self, minquality, b.max_quality()))
        nb = b.replace(_dm_room(self, minquality, a.max_quality()))
    else:
        na, nb = a.replace(0), b.replace(0)
    if not na.is_active():
        return nb
    if not nb.is_active():
        return na
    if na is not a or nb is not b:
        return type(self)(na, nb, tiebreak=self.tiebreak)
    return self


def _dm_skip_to_quality(self, minquality):  # noqa: ANN001, ANN202
    a, b = self.a, self.b
    if not a.is_active():
        return b.skip_to_quality(minquality)
    if not b.is_active():
        return a.skip_to_quality(minquality)
    skipped = 0
    aq, bq = a.block_quality(), b.block_quality()
    while a.is_active() and b.is_active() and _dm_combine(self, aq, bq) < minquality:
        if aq <= bq:
            skipped += a.skip_to_quality(_dm_room(self, minquality, bq))
            aq = a.block_quality() if a.is_active() else 0.0
        else:
            skipped += b.skip_to_quality(_dm_room(self, minquality, aq))
            bq = b.block_quality() if b.is_active() else 0.0
    return skipped


def _dm_copy(self):  # noqa: ANN001, ANN202
    return type(self)(self.a.copy(), self.b.copy(), tiebreak=self.tiebreak)



def _patch_weighted_tree() -> None:
    from bisect import insort

    from whoosh.query import compound

    if getattr(compound.make_weighted_tree, "_memtui_patched", False):
        return

    def make_weighted_tree(fn, ls, **kwargs):  # noqa: ANN001, ANN202
        """Whoosh's Huffman-like tree of ``fn`` over ``(weight, matcher)`` pairs, passing
        ``kwargs`` (the DisMax tiebreak) to every node; ties in weight keep list order."""
        if not ls:
            raise ValueError("Called make_weighted_tree with empty list")
        items = sorted(((w, i, m) for i, (w, m) in enumerate(ls)), key=lambda t: (t[0], t[1]))
        order = len(items)
        while len(items) > 1:
            a, b = items.pop(0), items.pop(0)
            order += 1
            insort(items, (a[0] + b[0], order, fn(a[2], b[2], **kwargs)), key=lambda t: (t[0], t[1]))
        return items[0][2]

    make_weighted_tree._memtui_patched = True  # type: ignore[attr-defined]
    compound.make_weighted_tree = make_weighted_tree


def _patch_zero_boost() -> None:
    from whoosh.matching import binary, wrappers

    wrap = wrappers.WrappingMatcher
    if wrap.__dict__.get("_memtui_zero_boost"):
        return
    wrap_skip = wrap.skip_to_quality

    def wrapped_skip_to_quality(self, minquality):  # noqa: ANN001, ANN202
        if not self.boost:
            return 0  # a zero-weight side has no quality to skip by
        return wrap_skip(self, minquality)

    inter = binary.IntersectionMatcher
    inter_skip = inter.skip_to_quality

    def intersection_skip_to_quality(self, minquality):  # noqa: ANN001, ANN202
        a, b = self.a, self.b
        if a.is_active() and b.is_active():
            for lead, other in ((a, b), (b, a)):
                if other.max_quality() == 0:  # a filter: the scored side must reach it alone
                    skipped = lead.skip_to_quality(minquality)
                    if lead.is_active() and other.is_active() and lead.id() != other.id():
                        self._find_next()
                    return skipped
        return inter_skip(self, minquality)

    wrap.skip_to_quality = wrapped_skip_to_quality
    wrap._memtui_zero_boost = True
    inter.skip_to_quality = intersection_skip_to_quality


def _patch_span_pruning() -> None:
    from whoosh.query import spans

    cls = spans.SpanWrappingMatcher
    if cls.__dict__.get("_memtui_patched"):
        return

    def skip_by_quality(self) -> None:  # noqa: ANN001
        minq = getattr(self, "_memtui_minq", 0)
        child = self.child
        if minq and child.is_active() and child.supports_block_quality():
            child.skip_to_quality(minq)

    def find_next(self):  # noqa: ANN001, ANN202
        if not self.is_active():
            return False
        child = self.child
        entered = False
        found = self._get_spans()
        while child.is_active() and not found:
            if child.next():
                entered = True
                skip_by_quality(self)
            if not child.is_active():
                return True
            found = self._get_spans()
        self._spans = found
        return entered

    def next_(self):  # noqa: ANN001, ANN202
        entered = bool(self.child.next())
        if entered:
            skip_by_quality(self)
        return self._find_next() or entered

    def skip_to_quality(self, minquality):  # noqa: ANN001, ANN202
        self._memtui_minq = minquality
        skipped = self.child.skip_to_quality(minquality)
        self._find_next()
        return skipped

    cls._find_next = find_next
    cls.next = next_
    cls.skip_to_quality = skip_to_quality
    cls._memtui_patched = True


def _patch_top_collector() -> None:
    from whoosh import collectors

    cls = collectors.TopCollector
    if cls.__dict__.get("_memtui_patched"):
        return
    collect = cls._collect

    def _collect(self, global_docnum, score):  # noqa: ANN001, ANN202
        key = collect(self, global_docnum, score)
        items = self.items
        if len(items) >= self.limit and items and not self.minscore:
            self.minscore = items[0][0]  # the page just filled: its worst score is the bar
        return key

    cls._collect = _collect
    cls._memtui_patched = True


def apply() -> None:
    """Apply every fix (idempotent)."""
    _patch_top_collector()
    _patch_span_pruning()
    _patch_zero_boost()
    _patch_filter_matcher()
    _patch_disjunction_max()
    _patch_weighted_tree()
